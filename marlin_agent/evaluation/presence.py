"""``eval presence``: does verification tell events that happen from events that do not?

Positives are the annotated queries on their own videos. Negatives are queries that do
not occur in a video: taken from the file's optional ``"negatives"`` list per video, or
built by pairing each query with another video whose own queries do not include it.
Each pair runs ``find --verify``; its confidence is the best moment's (accepted or not).
The report gives precision, recall and F1 of ``found`` at the configured threshold, the
whole curve, and the threshold that maximises F1 — the figure the default is set from.
"""

from __future__ import annotations

import json
import time
from contextlib import AsyncExitStack
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.errors import MarlinAgentError, VideoNotFound
from marlin_agent.evaluation.log import QueryLog, write_json
from marlin_agent.evaluation.metrics import PresencePoint, best_threshold, presence_curve, presence_point
from marlin_agent.evaluation.timelens import GroundingItem, find_video


class PresenceCase(BaseModel):
    video_id: str
    query: str
    present: bool

    @property
    def key(self) -> str:
        return f"{self.video_id}>>>{self.query}>>>{'present' if self.present else 'absent'}"


class PresenceResult(PresenceCase):
    confidence: float
    found: bool
    marlin_calls: int = 0
    seconds: float = 0.0
    error: str | None = None


class PresenceReport(BaseModel):
    suite: str
    cases: int
    positives: int
    negatives: int
    threshold: float
    at_threshold: PresencePoint
    best: PresencePoint
    curve: list[PresencePoint]
    errors: int
    marlin_calls: int


def presence_cases(items: list[GroundingItem], annotations: Path) -> list[PresenceCase]:
    """Every annotated query as a positive, and as many negatives (explicit, else built by pairing)."""
    raw = json.loads(annotations.read_text(encoding="utf-8"))
    videos = list(dict.fromkeys(item.video_id for item in items))
    queries = {v: {i.query.lower() for i in items if i.video_id == v} for v in videos}
    cases = [PresenceCase(video_id=i.video_id, query=i.query, present=True) for i in items]
    explicit = [PresenceCase(video_id=v, query=q, present=False) for v in videos for q in raw[v].get("negatives", [])]
    if explicit:
        return cases + explicit
    for n, item in enumerate(items):
        for step in range(1, len(videos)):
            other = videos[(videos.index(item.video_id) + step + n) % len(videos)]
            if other != item.video_id and item.query.lower() not in queries[other]:
                cases.append(PresenceCase(video_id=other, query=item.query, present=False))
                break
    return cases


async def run_presence(cases: list[PresenceCase], videos: Path, settings: Settings, out: Path, suite: str,
                       on_progress: Callable[[int, int], None] | None = None) -> PresenceReport:
    from marlin_agent.planners.run import verifier

    log = QueryLog(out / "presence.jsonl", PresenceResult)
    done = log.done()
    paths = {v: find_video(videos, v) for v in dict.fromkeys(c.video_id for c in cases)}
    todo = [c for c in cases if c.key not in done]
    needed = sorted({str(paths[c.video_id]) for c in todo if paths[c.video_id] is not None})
    async with AsyncExitStack() as stack:
        ids, verify = {}, None
        if needed:
            report, verify = await stack.enter_async_context(verifier(needed, settings))
            ids = {str(Path(v.path).resolve()): v.id for v in report.videos}
        for n, case in enumerate(cases):
            if case.key not in done:
                row = await _check(case, paths[case.video_id], ids, verify, videos)
                log.add(row)
                done[case.key] = row
            if on_progress:
                on_progress(n + 1, len(cases))
    rows = [done[case.key] for case in cases]
    write_json(out / "presence_curve.json", [p.model_dump() for p in _curve(rows)])
    return presence_report(rows, settings.agent.threshold, suite)


async def _check(case: PresenceCase, path: Path | None, ids: dict[str, str], verify, videos: Path) -> PresenceResult:
    started = time.monotonic()
    library_id = ids.get(str(path.resolve())) if path is not None else None
    try:
        if library_id is None:
            raise VideoNotFound(f"video {case.video_id} is not in {videos} or could not be indexed")
        answer = await verify(case.query, library_id)
        best = max((m.confidence for m in answer.moments + answer.rejected), default=0.0)
        row = PresenceResult(**case.model_dump(), confidence=best, found=answer.found,
                             marlin_calls=answer.usage.marlin_calls)
    except MarlinAgentError as exc:
        if getattr(exc, "stops_run", False):
            raise
        row = PresenceResult(**case.model_dump(), confidence=0.0, found=False, error=f"{exc.code}: {exc.message}")
    return row.model_copy(update={"seconds": round(time.monotonic() - started, 3)})


def _curve(rows: list[PresenceResult]) -> list[PresencePoint]:
    return presence_curve([r.confidence for r in rows], [r.present for r in rows])


def presence_report(rows: list[PresenceResult], threshold: float, suite: str) -> PresenceReport:
    confidences, truth = [r.confidence for r in rows], [r.present for r in rows]
    curve = _curve(rows)
    return PresenceReport(suite=suite, cases=len(rows), positives=sum(truth), negatives=len(rows) - sum(truth),
                          threshold=threshold, at_threshold=presence_point(confidences, truth, threshold),
                          best=best_threshold(curve), curve=curve, errors=sum(1 for r in rows if r.error),
                          marlin_calls=sum(r.marlin_calls for r in rows))
