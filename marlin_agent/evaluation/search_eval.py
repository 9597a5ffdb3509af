"""``eval search``: does hybrid search put the right video, and the right moment, near the top?

For each annotated query over a library of the annotated videos: recall@1/5/10 of a hit
in the right video, and of a hit in the right video overlapping the true span.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.evaluation.timelens import GroundingItem, find_video

DEPTHS = (1, 5, 10)


class SearchReport(BaseModel):
    suite: str
    queries: int
    video_recall: dict[str, float]
    moment_recall: dict[str, float]
    missing_videos: int


async def run_search(items: list[GroundingItem], videos: Path, settings: Settings, suite: str,
                     on_progress: Callable | None = None) -> SearchReport:
    from marlin_agent.indexing.run import index_inputs
    from marlin_agent.library.access import open_library

    paths = {v: find_video(videos, v) for v in dict.fromkeys(i.video_id for i in items)}
    present = [str(p) for p in paths.values() if p is not None]
    library = await asyncio.to_thread(open_library, settings)
    report = await index_inputs(present, settings, library, on_progress)
    ids = {Path(v.path).resolve(): v.id for v in report.videos}
    library_ids = {vid: ids.get(p.resolve()) for vid, p in paths.items() if p is not None}
    video_hits = {k: 0 for k in DEPTHS}
    moment_hits = {k: 0 for k in DEPTHS}
    scored = [i for i in items if library_ids.get(i.video_id)]
    for item in scored:
        hits = await asyncio.to_thread(library.search, item.query, max(DEPTHS), list(ids.values()))
        target = library_ids[item.video_id]
        in_video = [n for n, h in enumerate(hits) if h.video.id == target]
        on_span = [n for n, h in enumerate(hits) if h.video.id == target and h.start < item.span[1]
                   and h.end > item.span[0]]
        for k in DEPTHS:
            video_hits[k] += bool(in_video and in_video[0] < k)
            moment_hits[k] += bool(on_span and on_span[0] < k)
    n = len(items) or 1
    # Queries whose video is missing count as misses, so the figure is over the whole file.
    return SearchReport(suite=suite, queries=len(items),
                        video_recall={f"R@{k}": round(100 * video_hits[k] / n, 2) for k in DEPTHS},
                        moment_recall={f"R@{k}": round(100 * moment_hits[k] / n, 2) for k in DEPTHS},
                        missing_videos=sum(1 for p in paths.values() if p is None))
