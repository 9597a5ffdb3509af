"""Typed records shared across the package and its front doors.

All times are seconds in the video's own time unless a name says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema, computed_field

from marlin_agent.file_names import path_text, text_path

# A path in documents other programs read (MCP output schemas, --json): a plain string in JSON
# Schema, since "format": "path" is pydantic's own and not a standard format. A name that is not
# UTF-8 is written with its odd bytes spelled \udcXX, and read back to the same file.
FilePath = Annotated[Path, BeforeValidator(lambda v: str(text_path(v)) if isinstance(v, str) else v),
                     PlainSerializer(path_text, return_type=str, when_used="json"),
                     WithJsonSchema({"type": "string", "description": "An absolute file path."})]

SCHEMA_VERSION = "1"
# Every document a front door hands out (the CLI's --json, the MCP server's results) opens with
# this field: the same models go out of both doors, so their shapes cannot drift apart.
SchemaVersion = Annotated[str, Field(description="The version of this document's shape.")]


# The two shapes of progress a caller can be told about, named once. (An indexing run
# reports richer events: see ``indexing.reports.IndexProgress``.)
Say = Callable[[str], None]
"""A line about long work (installs, engine starts, set-up checks), for a person to read."""
ChunkProgress = Callable[[int, int], None]
"""Chunks done and chunks in all, as one video is captioned or grounded."""


class Record(BaseModel):
    model_config = ConfigDict(frozen=True)


class VideoInfo(Record):
    """What probing a file found out about it."""

    path: FilePath
    content_id: str = Field(description="Hash of the file's bytes: stable across moves and renames.")
    size_bytes: int
    duration: float
    fps: float
    width: int = Field(description="Displayed width, after rotation.")
    height: int = Field(description="Displayed height, after rotation.")
    rotation: int = Field(description="Counter-clockwise display rotation in degrees (0, 90, 180, 270).")
    has_audio: bool
    codec: str
    declared_duration: float | None = Field(None, description="What the file's metadata claimed, when its streams "
                                            "hold more footage than that (``duration`` is then the streams' end).")


class Chunk(Record):
    """A piece of a video sent to Marlin in one request."""

    index: int
    start: float
    end: float

    @computed_field
    @property
    def duration(self) -> float:
        return round(self.end - self.start, 6)


class StagedClip(Record):
    """A chunk re-encoded into a small server-ready file."""

    chunk: Chunk
    path: FilePath
    width: int
    height: int
    fps: float
    frames: int
    size_bytes: int


class Event(Record):
    start: float
    end: float
    text: str


class Caption(Record):
    """Marlin's caption of one clip, in the clip's own time."""

    scene: str
    events: list[Event]
    raw: str
    format_ok: bool


class Span(Record):
    """Marlin's grounding of one event in one clip, in the clip's own time."""

    start: float
    end: float
    raw: str
    format_ok: bool


class ChunkCaption(Record):
    """A chunk's caption with event times moved into the video's time."""

    start: float
    end: float
    scene: str
    events: list[Event]
    raw: str
    format_ok: bool


class ChunkFailure(Record):
    start: float
    end: float
    code: str
    message: str


class Candidate(Record):
    """A span Marlin proposed for an event: unverified, since find always answers."""

    start: float
    end: float
    chunk_start: float
    chunk_end: float
    raw: str
    format_ok: bool


class Usage(Record):
    """What a request spent: one record for a client's running count and for an answer's total."""

    marlin_calls: int = 0
    marlin_prompt_tokens: int = Field(0, description="As the Marlin server reported them (video frames included).")
    marlin_completion_tokens: int = 0
    planner_tokens: int = 0
    seconds: float = 0.0


class VideoCaption(Record):
    schema_version: SchemaVersion = SCHEMA_VERSION
    video: VideoInfo
    chunks: list[ChunkCaption]
    events: list[Event]
    failures: list[ChunkFailure] = []
    usage: Usage = Usage()


class FindResult(Record):
    schema_version: SchemaVersion = SCHEMA_VERSION
    query: str
    video: VideoInfo
    candidates: list[Candidate]
    failures: list[ChunkFailure] = []
    usage: Usage = Usage()


class Evidence(Record):
    """One signal for or against a moment, kept whether it helped or not."""

    kind: str = Field(description="grounding (where the span came from), or the kind of a verification signal: "
                      "caption_event | fresh_caption | transcript | contradiction | best_match | similarity | "
                      "lexical | lexical_conflict | lexical_swap | lexical_none | lexical_action | lexical_thing | "
                      "lexical_best | regrounding | judge")
    text: str
    start: float
    end: float
    score: float = Field(description="How strongly this signal supports the moment, 0..1.")


class VideoRef(Record):
    id: str
    path: str
    title: str


class Moment(Record):
    video: VideoRef
    start: float
    end: float
    confidence: float
    evidence: list[Evidence]
    clip: str | None = None
    spoken: bool = Field(False, description="Answered from what is said over the span (its transcript lines), not "
                                            "from what is seen: a question about speech, or a topic a line words.")


class TraceStep(Record):
    step: str
    detail: str
    marlin_calls: int = 0
    seconds: float = 0.0
    marlin_seconds: float = Field(0.0, description="Of ``seconds``, the time spent waiting for Marlin's answers; "
                                                   "the rest is the agent's own work.")


class Relation(Record):
    """What a before/after/between answer is relative to: the anchor's own verified moment(s)."""

    kind: Literal["before", "after", "between"]
    anchor: Moment
    anchor_end: Moment | None = Field(None, description="The second anchor of a 'between' question.")


class Answer(Record):
    schema_version: SchemaVersion = SCHEMA_VERSION
    question: str
    found: bool
    answer: str
    moments: list[Moment]
    form: str = Field("when", description="What the question asked for: when, every, count, first, last, before, "
                      "after, between, duration; unsupported when it asked something else (the answer says what).")
    count: int | None = Field(None, description="For 'how many': the occurrences verified (each one a moment).")
    ordinal: int | None = Field(None, description="For 'the second (third, ...) time': which occurrence was asked "
                                "for, in time order (form 'first'); none for the first or last time itself.")
    relation: Relation | None = Field(None, description="For before/after/between: the anchor's verified moment.")
    duration: float | None = Field(None, description="For 'how long': the seconds the moment lasts.")
    rejected: list[Moment] = Field(default=[], description="Candidates that did not pass verification, with why.")
    trace: list[TraceStep] = []
    usage: Usage = Usage()
    incomplete: str | None = Field(None, description="Why the answer may be partial (a budget, a failing planner, "
                                   "Marlin calls that failed); it then rests on the evidence that was gathered.")
    fallback: str | None = Field(None, description="Why the pipeline planner answered in place of the LLM planner "
                                 "(it could not finish, or found nothing and the pipeline checked); None otherwise.")
    calibration: str = Field("", description="Whose weights turned evidence into confidences: fitted for the "
                             "entailment model in use, priors, or uncalibrated (with the command that fits them).")
