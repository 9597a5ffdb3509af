"""What the library stores, as typed records: videos, captioned and failed chunks, the segments
search returns, shard runs and a watch's rows. Every store keeps these, whatever it is built on."""

from __future__ import annotations

from datetime import datetime, timezone

from pydantic import BaseModel

from marlin_agent.domain import ChunkCaption, Record, VideoRef

SCHEMA_VERSION = "2"
SEGMENT_KINDS = ("event", "scene", "transcript")


class VideoRecord(BaseModel):
    id: str
    path: str
    title: str = ""
    url: str = ""
    uploader: str = ""
    external_id: str = ""
    duration: float
    declared_duration: float | None = None  # the metadata's claim, when the streams held more
    fps: float
    width: int
    height: int
    has_audio: bool
    chunk_seconds: float
    chunks_planned: int
    transcript_source: str = ""  # "": not transcribed; "none": transcribed, and nothing was said
    model: str = ""
    prompt_version: int = 0
    indexed_at: str = ""

    @property
    def transcribed(self) -> bool:
        """Whether it has a transcript with something in it (a video without sound never has)."""
        return self.transcript_source not in ("", "none")


class ChunkWrite(BaseModel):
    video_id: str
    index: int
    caption: ChunkCaption
    model: str
    prompt_version: int


class FailureWrite(BaseModel):
    video_id: str
    start: float
    end: float
    code: str
    message: str


class Writes(BaseModel):
    """What one write stores: video records, captioned chunks and failed chunks, and the
    chunks it retires (with their segments and failures): those of an older chunk plan."""

    videos: list[VideoRecord] = []
    chunks: list[ChunkWrite] = []
    failures: list[FailureWrite] = []
    retired: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.videos or self.chunks or self.failures or self.retired)

    def __add__(self, other: Writes) -> Writes:
        return Writes(videos=self.videos + other.videos, chunks=self.chunks + other.chunks,
                      failures=self.failures + other.failures, retired=self.retired + other.retired)


class ShardRun(BaseModel):
    """One shard's run, as it last reported: each shard writes only its own row, so shards
    running at once never write the same row (which an object store's merge cannot promise)."""

    id: str  # "I/N"
    index: int
    count: int
    status: str  # running | finished
    host: str = ""
    started_at: str = ""
    finished_at: str = ""
    chunks_planned: int = 0
    chunks_done: int = 0
    chunks_failed: int = 0


class WatchRow(BaseModel):
    """One record of a standing question's state; ``record`` is its JSON (marlin_agent/watch owns the shapes)."""

    id: str
    watch: str
    kind: str
    record: str
    at: str


class SearchHit(Record):
    video: VideoRef
    start: float
    end: float
    text: str
    source: str  # event | scene | transcript
    score: float


class ChunkFailureRecord(Record):
    id: str
    video_id: str
    start: float
    end: float
    code: str
    message: str
    attempts: int
    at: str


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Segment(Record):
    """One searchable thing a video holds: a chunk's scene, a caption event or a transcript line."""

    id: str
    video_id: str
    chunk_id: str
    kind: str  # event | scene | transcript
    start: float
    end: float
    text: str
    model: str = ""
    prompt_version: int = 0
    words: str = ""  # a transcript line's words and their times, as JSON


def chunk_id(video_id: str, start: float, end: float) -> str:
    return f"{video_id}:{start:.3f}-{end:.3f}"


def chunk_window(segment_chunk_id: str) -> tuple[float, float]:
    """The window (seconds) a chunk's caption was told in, read back from its id."""
    start, _, end = segment_chunk_id.rpartition(":")[2].partition("-")
    return float(start), float(end)


class RepairReport(BaseModel):
    """What ``index --repair`` did to the index (``library.health.repair``)."""

    uri: str
    rebuilt: list[str] = []
    restored: list[str] = []
    forgotten_chunks: int = 0
    problems_left: list[str] = []
