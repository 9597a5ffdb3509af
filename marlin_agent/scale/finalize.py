"""``index --finalize``: after the shards of a job, compact the library once and say what is missing."""

from __future__ import annotations

import asyncio
import time

from pydantic import BaseModel, Field

from marlin_agent.config import Settings
from marlin_agent.domain import SCHEMA_VERSION, SchemaVersion
from marlin_agent.library.access import open_library
from marlin_agent.library.store import Library


class UnfinishedVideo(BaseModel):
    id: str
    path: str
    chunks_planned: int
    chunks_done: int


class FinalizeReport(BaseModel):
    """What ``index --finalize`` found and did once every shard had finished."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    videos: int
    chunks_done: int
    chunks_missing: int
    chunks_failed: int
    segments: int
    vector_index: bool
    shards: int = Field(description="N of the latest sharded job that wrote here (0: none).")
    shards_missing: list[int] = Field(description="Shards of that job that never started: their videos may be "
                                      "missing altogether, so chunks_missing cannot count them.")
    shards_unfinished: list[int] = Field(description="Shards that started and did not finish (killed, or still "
                                         "running).")
    unfinished: list[UnfinishedVideo] = Field([], description="Videos with chunks still to caption: run the "
                                              "shards (or a plain `index`) again.")
    seconds: float


def finalize(library: Library) -> FinalizeReport:
    """After the shards of a job: compact the tables, build the vector index once, and say what
    is not complete: shards that never started or never finished, videos with chunks missing."""
    started = time.monotonic()
    library.optimize()
    done = library.done_chunk_ids()
    per_video: dict[str, int] = {}
    for i in done:
        video_id = i.split(":", 1)[0]
        per_video[video_id] = per_video.get(video_id, 0) + 1
    unfinished, missing = [], 0
    for video in library.list_videos():
        have = per_video.get(video.id, 0)
        if have < video.chunks_planned:
            missing += video.chunks_planned - have
            unfinished.append(UnfinishedVideo(id=video.id, path=video.path, chunks_planned=video.chunks_planned,
                                              chunks_done=have))
    counts = library.counts()
    runs = library.shard_runs()
    latest = max(runs, key=lambda r: r.started_at).count if runs else 0
    job = {r.index: r for r in runs if r.count == latest}
    return FinalizeReport(videos=counts.get("videos", 0), chunks_done=len(done), chunks_missing=missing,
                          shards=latest, shards_missing=[i for i in range(latest) if i not in job],
                          shards_unfinished=sorted(i for i, r in job.items() if r.status != "finished"),
                          chunks_failed=len(library.failures()), segments=counts.get("segments", 0),
                          vector_index=library.has_vector_index(), unfinished=unfinished,
                          seconds=round(time.monotonic() - started, 2))


async def finalize_library(settings: Settings) -> FinalizeReport:
    library = await asyncio.to_thread(open_library, settings)
    return await asyncio.to_thread(finalize, library)
