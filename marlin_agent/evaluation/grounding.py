"""``eval grounding``: Marlin find (raw) or the whole agent on TimeLens-format annotations.

Raw mode asks Marlin directly, chunking long videos as the product does, and keeps the
first-ranked candidate. Agent mode indexes each video and runs ``find --verify``; its
prediction is the best verified moment, or, when nothing passed, the best candidate (the
benchmark assumes every queried event exists, so an empty answer would only score 0).

Every run is scored the way the benchmark scores a results file: the run writes one, and
the figures come from that file's entries (a key twice counts once), IoU thresholded
exactly. ``round_seconds`` rounds predicted times to whole seconds first, as the
benchmark's own inference does (Python's ``round``: halves go to the even second).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.errors import MarlinAgentError, VideoUnreadable
from marlin_agent.evaluation.log import QueryLog, write_json
from marlin_agent.evaluation.metrics import NO_PREDICTION, GroundingScores, grounding_scores, temporal_iou
from marlin_agent.evaluation.timelens import GroundingItem, ResultsFile, find_video, first_span, split_key
from marlin_agent.marlin.client import MarlinClient
from marlin_agent.marlin.parse import strip_think

Mode = Literal["raw", "agent"]
Rounding = Literal["none", "whole seconds"]


class QueryResult(BaseModel):
    key: str
    video_id: str
    query: str
    gt: tuple[float, float]
    prediction: tuple[float, float] | None
    iou: float  # exact, as predicted (before any rounding of the results file)
    duration: float | None = None
    answer: str = ""
    found: bool | None = None
    confidence: float | None = None
    marlin_calls: int = 0
    seconds: float = 0.0
    error: str | None = None


class GroundingReport(BaseModel):
    suite: str
    mode: str
    scores: GroundingScores  # over the results file's entries, as the benchmark counts
    rounding: Rounding = "none"
    entries: int
    duplicate_entries: int = 0  # keys the file gave more than once (the last value counts)
    annotations_without_entry: int | None = None  # scoring a file against annotations: what it lacks
    entries_without_annotation: int | None = None  # ... and what it has that they do not
    missing_videos: int = 0
    errors: int = 0
    marlin_calls: int = 0
    predictions_path: str | None = None
    per_query_path: str | None = None


async def _predict_raw(item: GroundingItem, path: Path, settings: Settings, client) -> QueryResult:
    from marlin_agent.marlin.scan import find_in_video

    result = await find_in_video(item.query, path, settings, client)
    best = result.candidates[0] if result.candidates else None
    prediction = (best.start, best.end) if best else None
    return _result(item, path, prediction, answer=best.raw if best else "", marlin_calls=len(result.candidates)
                   + len(result.failures))


async def _predict_agent(item: GroundingItem, path: Path, verify, library_id: str) -> QueryResult:
    answer = await verify(item.query, library_id)
    best = (answer.moments or answer.rejected or [None])[0]
    prediction = (best.start, best.end) if best else None
    return _result(item, path, prediction, answer=answer.answer, found=answer.found,
                   confidence=best.confidence if best else 0.0, marlin_calls=answer.usage.marlin_calls)


def _result(item: GroundingItem, path: Path | None, prediction, **fields) -> QueryResult:
    return QueryResult(key=item.key(path.name if path else None), video_id=item.video_id, query=item.query,
                       gt=item.span, prediction=prediction, duration=item.duration,
                       iou=temporal_iou(item.span, prediction or NO_PREDICTION), **fields)


def _rounded(span: tuple[float, float], rounding: Rounding) -> tuple[float, float]:
    if rounding == "none":
        return span
    return float(round(span[0])), float(round(span[1]))


def predictions_document(rows: list[QueryResult], rounding: Rounding = "none") -> dict[str, dict]:
    """The benchmark's results format: the predicted pair (rounded if asked), the answer
    without any ``<think>`` preamble, and the video's duration, as its inference writes."""
    document = {}
    for r in rows:
        entry: dict = {"timestamps": [list(_rounded(r.prediction, rounding))] if r.prediction else [],
                       "answers": strip_think(r.answer)}
        if r.duration is not None:
            entry["duration"] = r.duration
        document[r.key] = entry
    return document


async def run_grounding(items: list[GroundingItem], videos: Path, settings: Settings, mode: Mode, out: Path,
                        suite: str, on_progress: Callable[[int, int], None] | None = None,
                        rounding: Rounding = "none") -> GroundingReport:
    """Predict every query (resuming from ``out/per_query.jsonl``) and score the lot."""
    from marlin_agent.app.ask import find_verify_session

    log = QueryLog(out / "per_query.jsonl", QueryResult)
    done = {(r.video_id, r.query, tuple(r.gt)): r for r in log.done().values()}
    todo = [item for item in items if item.match not in done]
    finished = len(items) - len(todo)
    if on_progress:
        on_progress(finished, len(items))
    # Agent mode verifies inside one library, indexed once up front; raw mode only needs Marlin.
    gate = asyncio.Semaphore(settings.server.concurrency if mode == "raw" else 1)
    paths = {v: find_video(videos, v) for v in dict.fromkeys(i.video_id for i in todo)}

    async with AsyncExitStack() as stack:
        if mode == "raw":
            client = await stack.enter_async_context(MarlinClient(settings.server))
        elif todo:
            needed = sorted({str(p) for p in paths.values() if p is not None})
            report, verify = await stack.enter_async_context(find_verify_session(needed, settings))
            ids = {str(Path(v.path).resolve()): v.id for v in report.videos}

        async def predict(item: GroundingItem, path: Path) -> QueryResult:
            if mode == "raw":
                return await _predict_raw(item, path, settings, client)
            library_id = ids.get(str(path.resolve()))
            if library_id is None:
                raise VideoUnreadable(f"{path} could not be indexed")
            return await _predict_agent(item, path, verify, library_id)

        async def one(item: GroundingItem) -> None:
            nonlocal finished
            async with gate:
                started = time.monotonic()
                path = paths[item.video_id]
                if path is None:
                    row = _result(item, None, None, error=f"video {item.video_id} not found in {videos}")
                else:
                    try:
                        row = await predict(item, path)
                    except MarlinAgentError as exc:
                        if exc.stops_run:
                            raise
                        row = _result(item, path, None, error=f"{exc.code}: {exc.message}")
                row = row.model_copy(update={"seconds": round(time.monotonic() - started, 3)})
                log.add(row)
                done[item.match] = row
                finished += 1
                if on_progress:
                    on_progress(finished, len(items))

        await asyncio.gather(*(one(item) for item in todo))
    rows = [done[item.match] for item in items]
    return write_grounding(rows, out, suite, mode, rounding)


def write_grounding(rows: list[QueryResult], out: Path, suite: str, mode: str,
                    rounding: Rounding = "none") -> GroundingReport:
    predictions = out / "predictions.json"
    document = predictions_document(rows, rounding)
    write_json(predictions, document)
    report = score_predictions(ResultsFile(entries=document), None, suite, rounding)
    return report.model_copy(update={
        "mode": mode, "missing_videos": sum(1 for r in rows if r.error and "not found in" in r.error),
        "errors": sum(1 for r in rows if r.error), "marlin_calls": sum(r.marlin_calls for r in rows),
        "predictions_path": str(predictions), "per_query_path": str(out / "per_query.jsonl")})


def score_predictions(results: ResultsFile, items: list[GroundingItem] | None, suite: str,
                      rounding: Rounding = "none") -> GroundingReport:
    """Score a results file as the benchmark does: every entry counts once, against the
    ground truth its key names; a pair with no time scores IoU 0. With annotations, also say
    how many of them the file has no entry for, and how many entries they do not hold."""
    ious: list[float] = []
    matches: set[tuple] = set()
    for key, entry in results.entries.items():
        video_id, query, gt = split_key(key)
        matches.add((video_id, query, gt))
        span = first_span(key, entry)
        ious.append(temporal_iou(gt, _rounded(span, rounding) if span else NO_PREDICTION))
    report = GroundingReport(suite=suite, mode="predictions", scores=grounding_scores(ious), rounding=rounding,
                             entries=len(results.entries), duplicate_entries=results.duplicates)
    if items is not None:
        annotated = {item.match for item in items}
        report.annotations_without_entry = len(annotated - matches)
        report.entries_without_annotation = len(matches - annotated)
    return report
