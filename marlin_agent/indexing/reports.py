"""What an index run reports: per video, for the whole run, and as it goes (for a progress display)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from marlin_agent.domain import SCHEMA_VERSION, ChunkFailure, SchemaVersion
from marlin_agent.library.records import RepairReport
from marlin_agent.media.sources import SkippedSource

# ``index --recaption``: every chunk again (a new model or prompt), or only the failed ones.
Recaption = Literal["all", "failed"]
# How a shard takes its share: chunk by chunk (``index``: the work spreads evenly however long
# each video is), or whole videos (``extract``: a row may need every chunk of its video).
ShardBy = Literal["chunk", "video"]


class VideoOutcome(BaseModel):
    id: str
    path: str
    title: str
    status: str  # new | updated | unchanged | partial | failed
    chunks_done: int
    chunks_planned: int = Field(description="The video's chunks; in a sharded run, this shard's share of them.")
    chunks_failed: int
    transcript: str
    failures: list[ChunkFailure] = Field([], description="This run's failed chunks, each with why.")
    note: str = Field("", description="Anything odd about the file the run worked around (e.g. a false duration).")


class IndexReport(BaseModel):
    schema_version: SchemaVersion = SCHEMA_VERSION
    videos_new: int = 0
    videos_updated: int = 0
    videos_unchanged: int = 0
    videos_partial: int = 0
    videos_failed: int = 0
    videos_other_shards: int = Field(0, description="Videos whose every chunk belongs to another shard.")
    shard: str = Field("", description="I/N in a sharded run.")
    chunks_captioned: int = 0
    chunks_failed: int = 0
    transcript_lines: int = 0
    minutes_of_footage: float = 0.0
    marlin_calls: int = 0
    marlin_prompt_tokens: int = 0
    marlin_completion_tokens: int = 0
    seconds: float = 0.0
    videos: list[VideoOutcome] = []
    failed: list[SkippedSource] = []
    repair: RepairReport | None = Field(None, description="What `index --repair` found and mended before indexing.")


@dataclass
class IndexProgress:
    """What a progress display needs: one video's chunks, and the run's chunks overall."""

    video: str  # "" before any video has been looked at
    video_done: int
    video_total: int
    overall_done: int
    overall_total: int
    looking: int = 0  # videos still to be probed and compared with the index: the total may grow
    # What this video is at: captioning (its chunks), then transcribing and writing (its chunks are
    # all captioned; the transcript and the index writes take the rest), then done.
    phase: str = "captioning"


