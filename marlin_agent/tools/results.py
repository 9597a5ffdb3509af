"""What the agent's tools return: typed records, each carrying what the call cost."""

from __future__ import annotations

from pydantic import Field

from marlin_agent.domain import SCHEMA_VERSION, Event, Moment, Record, SchemaVersion, VideoRef
from marlin_agent.library.records import SearchHit


class Cost(Record):
    marlin_calls: int = 0
    seconds: float = 0.0
    marlin_seconds: float = Field(0.0, description="Of ``seconds``, the time spent waiting for Marlin's answers.")


class VideoEntry(Record):
    video: VideoRef
    url: str = Field("", description="The page it was fetched from, for footage that came from a URL.")
    duration: float
    chunks_indexed: int
    has_audio: bool
    has_transcript: bool


class VideoList(Record):
    schema_version: SchemaVersion = SCHEMA_VERSION
    videos: list[VideoEntry]
    roots: list[str] = Field([], description="The folders the MCP server may read (empty elsewhere).")
    cost: Cost = Cost()


class SearchHits(Record):
    query: str
    hits: list[SearchHit]
    cost: Cost = Cost()


class SpanCaption(Record):
    video: VideoRef
    start: float
    end: float
    scenes: list[str] = Field(description="Scene paragraphs of the chunks covering the span, in time order.")
    events: list[Event] = Field(description="Events overlapping the span, in the video's seconds.")
    fresh: bool = Field(description="True when Marlin captioned the span just now; False when read from the index.")
    cost: Cost = Cost()


class GroundedSpan(Record):
    start: float
    end: float
    window_start: float
    window_end: float


class Grounding(Record):
    """Marlin's unverified spans for an event, one per window it was shown."""

    video: VideoRef
    event: str
    spans: list[GroundedSpan]
    failures: list[str] = Field(default=[], description="Windows whose request failed, with the reason.")
    cost: Cost = Cost()


class TranscriptLines(Record):
    video: VideoRef
    start: float
    end: float
    lines: list[Event]
    note: str = ""
    cost: Cost = Cost()


class Verification(Record):
    moment: Moment
    passed: bool = Field(description="Confidence reached the agent's threshold.")
    threshold: float
    cost: Cost = Cost()


class ClipFile(Record):
    video: VideoRef
    start: float
    end: float
    path: str
    cost: Cost = Cost()
