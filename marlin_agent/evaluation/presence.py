"""``eval presence``: does the agent find events that happen, and only those?

Positives are the annotated queries on their own videos; negatives come from the file's
``"negatives"`` list per video (events known not to happen there), else from pairing each
query with another video that does not hold it. Each case is asked the way a user asks:
``ask`` with the pipeline planner, scoped to that one video. A present event counts as
found only when the best moment reaches the threshold **and** lies on the true span
(IoU ≥ 0.5); a moment found elsewhere is a false positive, and the event a miss.

Every candidate span is kept with its evidence, so ``--fit`` can learn verification weights
from a run without asking Marlin again, and the whole precision/recall curve can be drawn.
Optional ``"query_kinds"`` and ``"negative_kinds"`` per video (parallel to ``queries`` and
``negatives``) break the figures down: recall per kind of question, and per kind of hard
negative the share rejected and the precision the agent would have if every negative were of
that kind (class-balanced, so a few negatives among many positives cannot hide).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.errors import MarlinAgentError, VideoNotFound
from marlin_agent.evaluation.log import QueryLog, write_json
from marlin_agent.evaluation.metrics import PresencePoint as Point
from marlin_agent.evaluation.metrics import best_threshold, temporal_iou
from marlin_agent.evaluation.timelens import GroundingItem, find_video
from marlin_agent.verification.calibration import calibration_for
from marlin_agent.verification.confidence import as_shown, features
from marlin_agent.verification.entailment import model_folder
from marlin_agent.verification.fitting import FitCandidate, FitQuestion, fit_calibration
from marlin_agent.verification.verifier import combined

MATCH_IOU = 0.5


class PresenceCase(BaseModel):
    video_id: str
    query: str
    present: bool
    kind: str | None = None
    span: tuple[float, float] | None = None

    @property
    def key(self) -> str:
        return f"{self.video_id}>>>{self.query}>>>{'present' if self.present else 'absent'}"


class Candidate(BaseModel):
    start: float
    end: float
    confidence: float
    iou: float = 0.0
    features: dict[str, float]
    speech: bool = False  # asked about what is said: speech may confirm it



class PresenceResult(PresenceCase):
    confidence: float
    found: bool
    iou: float = 0.0
    candidates: list[Candidate] = []
    verified: int = 0  # spans verified (every one is among the candidates, overlapping ones too)
    marlin_calls: int = 0
    seconds: float = 0.0
    error: str | None = None


class KindFigures(BaseModel):
    kind: str
    cases: int
    rate: float  # recall for a question kind, the share rejected for a negative kind
    precision: float | None = None  # class-balanced, for a negative kind


class Fitted(BaseModel):
    weights: dict[str, float]
    bias: float
    threshold: float
    at_threshold: Point
    separation: dict[str, float] = {}  # per signal: AUC of right-span candidates against all others


class PresenceReport(BaseModel):
    suite: str
    cases: int
    positives: int
    negatives: int
    threshold: float
    at_threshold: Point
    best: Point
    curve: list[Point]
    found_at_true_span: float  # of the present events found, the share on the true span
    question_kinds: list[KindFigures]
    negative_kinds: list[KindFigures]
    errors: int
    marlin_calls: int
    marlin_calls_per_candidate: float  # per span verified (find or re-find, and the fresh caption)
    fitted: Fitted | None = None


def presence_cases(items: list[GroundingItem], annotations: Path) -> list[PresenceCase]:
    """Every annotated query as a positive, and the negatives (explicit, else built by pairing)."""
    raw = json.loads(annotations.read_text(encoding="utf-8"))
    videos = list(dict.fromkeys(item.video_id for item in items))
    kinds = {v: iter(raw[v].get("query_kinds") or []) for v in videos}
    cases = [PresenceCase(video_id=i.video_id, query=i.query, present=True, span=i.span,
                          kind=next(kinds[i.video_id], None)) for i in items]
    explicit = []
    for v in videos:
        negative_kinds = raw[v].get("negative_kinds") or [None] * len(raw[v].get("negatives", []))
        explicit += [PresenceCase(video_id=v, query=q, present=False, kind=k)
                     for q, k in zip(raw[v].get("negatives", []), negative_kinds, strict=False)]
    if explicit:
        return cases + explicit
    queries = {v: {i.query.lower() for i in items if i.video_id == v} for v in videos}
    for n, item in enumerate(items):
        for step in range(1, len(videos)):
            other = videos[(videos.index(item.video_id) + step + n) % len(videos)]
            if other != item.video_id and item.query.lower() not in queries[other]:
                cases.append(PresenceCase(video_id=other, query=item.query, present=False, kind="other_video"))
                break
    return cases


async def run_presence(cases: list[PresenceCase], videos: Path, settings: Settings, out: Path, suite: str,
                       on_progress: Callable[[int, int], None] | None = None, refit: bool = False) -> PresenceReport:
    from marlin_agent.app.ask import answerer

    log = QueryLog(out / "presence.jsonl", PresenceResult)
    done = log.done()
    paths = {v: find_video(videos, v) for v in dict.fromkeys(c.video_id for c in cases)}
    todo = [c for c in cases if c.key not in done]
    needed = sorted({str(paths[c.video_id]) for c in todo if paths[c.video_id] is not None})
    async with AsyncExitStack() as stack:
        ids, ask = {}, None
        if needed:
            report, ask = await stack.enter_async_context(answerer(needed, settings))
            ids = {str(Path(v.path).resolve()): v.id for v in report.videos}
        for n, case in enumerate(cases):
            if case.key not in done:
                row = await _check(case, paths[case.video_id], ids, ask, videos, settings)
                log.add(row)
                done[case.key] = row
            if on_progress:
                on_progress(n + 1, len(cases))
    rows = [done[case.key] for case in cases]
    calibration = calibration_for(settings, model_folder(settings.verify, settings.cache_dir))
    report = presence_report(rows, calibration.threshold, suite, refit,
                             score=lambda c: combined(c.features, calibration, c.speech))
    write_json(out / "presence_curve.json", [p.model_dump() for p in report.curve])
    return report


async def _check(case: PresenceCase, path: Path | None, ids: dict[str, str], ask, videos: Path,
                 settings: Settings) -> PresenceResult:
    started = time.monotonic()
    library_id = ids.get(str(path.resolve())) if path is not None else None
    try:
        if library_id is None:
            raise VideoNotFound(f"video {case.video_id} is not in {videos} or could not be indexed")
        answer, checked = await ask(case.query, library_id)
        candidates = [Candidate(start=m.start, end=m.end, confidence=m.confidence, features=features(m.evidence),
                                speech=m.spoken,
                                iou=round(temporal_iou((m.start, m.end), case.span), 4) if case.span else 0.0)
                      for m in checked]
        best = max(candidates, key=lambda c: c.confidence, default=None)
        verified = sum(1 for step in answer.trace if step.step == "verify" and "confidence" in step.detail)
        row = PresenceResult(**case.model_dump(), confidence=best.confidence if best else 0.0, found=answer.found,
                             iou=best.iou if best else 0.0, candidates=candidates, verified=verified,
                             marlin_calls=answer.usage.marlin_calls)
    except MarlinAgentError as exc:
        if exc.stops_run:
            raise
        row = PresenceResult(**case.model_dump(), confidence=0.0, found=False, error=f"{exc.code}: {exc.message}")
    return row.model_copy(update={"seconds": round(time.monotonic() - started, 3)})


def decisions_at(rows: list[PresenceResult], threshold: float, score=None) -> list[tuple[PresenceResult, bool, bool]]:
    """(row, found, right) at ``threshold``: found = the best candidate reaches it; right = found where it should be."""
    decided = []
    for row in rows:
        scored = [(score(c) if score else c.confidence, c) for c in row.candidates]
        # As the answer decides (``conclude.decide``): ties, as shown, go to the earlier moment.
        best = min(scored, key=lambda pair: (-as_shown(pair[0]), pair[1].start, pair[1].end), default=None)
        found = best is not None and best[0] >= threshold
        right = found and row.present and best[1].iou >= MATCH_IOU
        decided.append((row, found, right))
    return decided


def _point(rows: list[PresenceResult], threshold: float, score=None) -> Point:
    decided = decisions_at(rows, threshold, score)
    tp = sum(1 for _, _, right in decided if right)
    fp = sum(1 for row, found, right in decided if found and not right)
    positives = sum(1 for row in rows if row.present)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / positives if positives else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Point(threshold=round(threshold, 3), precision=round(precision, 4), recall=round(recall, 4),
                 f1=round(f1, 4))


def _curve(rows: list[PresenceResult], score=None) -> list[Point]:
    return [_point(rows, i / 100, score) for i in range(101)]


def _kinds(rows: list[PresenceResult], threshold: float, score=None) -> tuple[list[KindFigures], list[KindFigures]]:
    decided = decisions_at(rows, threshold, score)
    positives = [d for d in decided if d[0].present]
    recall = sum(1 for d in positives if d[2]) / len(positives) if positives else 0.0
    groups: dict[tuple[bool, str], list] = defaultdict(list)
    for d in decided:
        groups[(d[0].present, d[0].kind or "unlabelled")].append(d)
    questions = [KindFigures(kind=kind, cases=len(ds), rate=round(sum(1 for d in ds if d[2]) / len(ds), 4))
                 for (present, kind), ds in sorted(groups.items()) if present]
    negatives = []
    for (present, kind), ds in sorted(groups.items()):
        if present:
            continue
        false_rate = sum(1 for d in ds if d[1]) / len(ds)
        balanced = recall / (recall + false_rate) if recall + false_rate else 1.0
        negatives.append(KindFigures(kind=kind, cases=len(ds), rate=round(1 - false_rate, 4),
                                     precision=round(balanced, 4)))
    return questions, negatives


def fit_questions(rows: list[PresenceResult]) -> list[FitQuestion]:
    """A run's rows as the questions a fit learns from (a candidate is right on the true span, IoU >= 0.5)."""
    return [FitQuestion(present=row.present, candidates=[
        FitCandidate(features=c.features, speech=c.speech, on_span=c.iou >= MATCH_IOU) for c in row.candidates],
        group=row.video_id) for row in rows]


def fit_weights(rows: list[PresenceResult]) -> Fitted:
    """Verification weights learned from every candidate of a run (right span of a present event = 1)."""
    fitted = fit_calibration(fit_questions(rows))
    return Fitted(weights=fitted.weights, bias=fitted.bias, threshold=fitted.threshold,
                  at_threshold=Point(**fitted.at_threshold.model_dump()), separation=fitted.separation)


def presence_report(rows: list[PresenceResult], threshold: float, suite: str, refit: bool = False,
                    score=None) -> PresenceReport:
    """The figures of a run; ``score`` re-scores each candidate from its features (the configured
    weights), so a logged run is judged by the verification settings in force now."""
    curve = _curve(rows, score)
    questions, negatives = _kinds(rows, threshold, score)
    decided = decisions_at(rows, threshold, score)
    found_present = [d for d in decided if d[0].present and d[1]]
    verified = sum(r.verified for r in rows)
    return PresenceReport(
        suite=suite, cases=len(rows), positives=sum(r.present for r in rows),
        negatives=sum(not r.present for r in rows), threshold=threshold, at_threshold=_point(rows, threshold, score),
        best=best_threshold(curve), curve=curve,
        found_at_true_span=(round(sum(1 for d in found_present if d[2]) / len(found_present), 4)
                            if found_present else 1.0),
        question_kinds=questions, negative_kinds=negatives, errors=sum(1 for r in rows if r.error),
        marlin_calls=sum(r.marlin_calls for r in rows),
        marlin_calls_per_candidate=round(sum(r.marlin_calls for r in rows) / verified, 3) if verified else 0.0,
        fitted=fit_weights(rows) if refit else None)
