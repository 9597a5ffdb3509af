"""What a watch keeps and reports: its footage, the alerts it raised and the gaps it saw.

Every record is a pydantic model, stored as JSON in the library's ``watch`` table (``state``)
and printed as it is by ``watch --json``. Times on a *timeline* are seconds: for a live stream
they are the wall clock (epoch seconds), so segments recorded one after the other meet; for a file
in a folder they are the file's own seconds, so a file is its own timeline.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, Field

from marlin_agent.domain import Evidence, Record, VideoRef


def stamp(epoch: float | None = None) -> str:
    """An instant as ISO 8601 in UTC (now, when not given)."""
    moment = datetime.fromtimestamp(epoch, timezone.utc) if epoch is not None else datetime.now(timezone.utc)
    return moment.isoformat(timespec="milliseconds")


def short_hash(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]


class WatchSpec(BaseModel):
    """Which footage a watch follows. Its id comes from the sources alone, so a watch restarted with
    the same sources (in any order) resumes, and its questions may change between runs."""

    id: str
    sources: list[str]

    @classmethod
    def of(cls, sources: list[str]) -> WatchSpec:
        ordered = sorted(dict.fromkeys(sources))
        return cls(id="w" + short_hash(*ordered)[:11], sources=ordered)


FootageStatus = Literal["pending", "judged", "failed"]


class Footage(BaseModel):
    """One piece of new footage: a file that settled in a watched folder, or a recorded segment."""

    key: str = Field(description="Unique within the watch: a file's path, size and time, or a segment's name.")
    source: str = Field(description="The watched folder or stream it came from.")
    path: str
    kind: Literal["file", "segment"]
    timeline: str = Field(description="Footage on one timeline can continue from piece to piece (a stream's).")
    origin: float = Field(description="Where the piece's 0 s lies on its timeline (a segment: its first frame's "
                          "wall-clock time, epoch seconds; a file: 0).")
    wall_start: float | None = Field(None, description="The wall-clock time of its first frame, when known.")
    duration: float | None = None
    stream_end: float | None = Field(None, description="A segment's end in the stream's own timestamps.")
    questions: list[str] = Field(description="The questions standing when it arrived: the ones it is judged for.")
    judged: list[str] = []
    status: FootageStatus = "pending"
    error: str = ""
    video_id: str = ""
    found_at: str = Field(default_factory=stamp)

    def todo(self) -> list[str]:
        return [q for q in self.questions if q not in self.judged]


class Gap(Record):
    """Time a stream was not recorded: it dropped, or the watch was not running."""

    type: Literal["gap"] = "gap"
    source: str
    start: str
    end: str
    seconds: float
    reason: str


class Occurrence(BaseModel):
    """The latest occurrence of a question's event on one timeline: later moments that touch it are the
    same occurrence; ``alerted_end`` (the end of the last alerted one) is what the cooldown counts from."""

    question: str
    timeline: str
    alert_id: str
    end: float
    alerted_end: float


DeliveryStatus = Literal["pending", "delivered", "failed"]


class Alert(Record):
    """One occurrence of a standing question's event, verified like an answer of ``ask``."""

    type: Literal["alert"] = "alert"
    id: str = Field(description="Stable across restarts: the same occurrence judged twice keeps its id "
                    "(receivers may drop a repeated id).")
    watch: str
    question: str
    source: str
    video: VideoRef
    start: float = Field(description="Seconds into the video file.")
    end: float
    wall_start: str | None = Field(None, description="The wall-clock time it began (recorded streams), ISO 8601.")
    wall_end: str | None = None
    confidence: float
    evidence: list[Evidence]
    answer: str
    clip: str | None = None
    thumbnail: str | None = None
    raised_at: str = Field(default_factory=stamp)
    deliveries: dict[str, DeliveryStatus] = Field(default={}, description="Each notify target (as written, "
                                                  "secrets unexpanded) and whether the alert reached it.")
    errors: dict[str, str] = {}

    def pending(self) -> list[str]:
        return [target for target, status in self.deliveries.items() if status == "pending"]


class FootageCounts(BaseModel):
    pending: int = 0
    judged: int = 0
    failed: int = 0


class WatchStatus(Record):
    """What one watch has done, read from the library: the MCP tool ``watch_status`` returns it."""

    id: str
    sources: list[str]
    questions: list[str]
    footage: FootageCounts
    alerts: int
    recent_alerts: list[Alert]
    gaps: list[Gap]
    failed: list[Footage] = Field(default=[], description="Footage that could not be judged, with why.")
    last_judged_at: str | None = None


class WatchStatusList(BaseModel):
    """Every watch a caller may see (MCP `watch_status`, REST `/api/v1/watch`)."""

    watches: list[WatchStatus]

    @staticmethod
    def alerts_json(alerts) -> str:
        return json.dumps({"alerts": [a.model_dump(mode="json") for a in alerts]})
