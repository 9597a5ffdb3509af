"""Fitting verification's weights, bias and threshold from labelled candidates.

Both ``eval presence --fit`` (a user's own labelled footage) and the fit of an entailment model that has
no table of its own (``calibration_set``: the project's recorded calibration candidates read again by
that model) come here, so a fit is the same wherever it is made. The weights are a class-balanced
logistic fit over every candidate (right span of a present event = 1); the judge's weight is fitted last,
on top, and may never be negative; over three or more videos the fit is a cross-fit (one fit per video left
out, averaged; the threshold judged on the out-of-fold scores); the threshold is chosen over resamples of the
questions (``steady_threshold``) and scored with the verifier's own rules (``combined``).
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from marlin_agent.verification.calibration import Calibration
from marlin_agent.verification.confidence import feature_kinds, fit, roles
from marlin_agent.verification.signals import declared_weights
from marlin_agent.verification.verifier import combined

# A fit's threshold is the one with the best F1 averaged over resamples of the calibration questions
# (see steady_threshold), among those whose found answers are right at least this often there. A guard
# against the low thresholds where precision falls away, set below the 0.85-0.87 the calibration part's
# precision runs at near its best F1: a floor at that level decides the choice instead of F1, and a small
# change of a signal (close kin denying at 0.45 rather than 0.6) then moved the fitted threshold from 0.42 to
# 0.72 (held-out recall 0.86 -> 0.67).
FIT_MIN_PRECISION = 0.8
# The weights are fitted with each class weighing the same, so a confidence of 0.5 is where a right moment and a
# wrong one are even: the threshold stays there while its answers are precise enough (steady_threshold).
FIT_PRIOR_THRESHOLD = 0.5
# Fewer videos than this and every fit would leave out too much of the evidence: one fit over all of them.
CROSS_FIT_MIN_VIDEOS = 3


class Decision(BaseModel):
    """One question decided at one threshold: whether a moment was reported, and whether rightly."""

    found: bool
    right: bool
    present: bool


def steady_threshold(decisions: dict[float, list[Decision]], min_precision: float = 0.0, resamples: int = 400,
                     seed: int = 20261204, prior: float | None = None) -> float:
    """The threshold with the best F1 on average over resamples of the questions (drawn with replacement).

    A calibration suite has a hundred or two questions, so one of them more or less moves F1 by half a
    point, and its curve is nearly flat over a wide range: the exact best point, or the widest plateau
    near it, then follows a handful of questions, and a fit run twice on slightly different evidence
    chose thresholds 0.16 apart. Averaged over resamples, F1 becomes a smooth estimate of how a threshold
    does on questions like these, and its best point stays put. Only thresholds whose precision, averaged
    the same way, reaches ``min_precision`` are candidates (all of them when none does). The resamples are
    drawn from a fixed seed: the same decisions always give the same threshold.

    With a ``prior`` (the threshold the scores were made for: 0.5 for a class-balanced logistic fit), the prior
    is kept whenever its averaged precision reaches ``min_precision`` (or no threshold's does); the search
    above runs only when another threshold is precise enough and the prior is not. A calibration suite is too
    small, and too unlike new footage, for its best point to move the threshold: on two renderings of the
    synthetic world the calibration part's best point was 0.74-0.75 (over the prior in 72% and 96% of the
    resamples, and in 96% when whole videos were resampled), while the held-out scenes, in words of their own,
    kept recall 0.79-0.82 at 0.5 and fell to 0.63 there.
    """
    thresholds = sorted(decisions)
    table = np.array([[(d.found, d.right, d.present) for d in decisions[t]] for t in thresholds], dtype=bool)
    picks = np.random.default_rng(seed).integers(0, table.shape[1], size=(resamples, table.shape[1]))
    drawn = table[:, picks, :]  # thresholds × resamples × questions × (found, right, present)
    right = drawn[..., 1].sum(axis=2)
    wrong = (drawn[..., 0] & ~drawn[..., 1]).sum(axis=2)
    positives = drawn[..., 2].sum(axis=2)
    precision = np.where(right + wrong > 0, right / np.maximum(right + wrong, 1), 1.0)
    recall = right / np.maximum(positives, 1)
    f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    mean_f1, mean_precision = f1.mean(axis=1), precision.mean(axis=1)
    allowed = mean_precision >= min_precision
    if not allowed.any():
        allowed[:] = True
    if prior is not None and prior in thresholds and allowed[thresholds.index(prior)]:
        return prior
    best = np.flatnonzero(allowed & (mean_f1 >= mean_f1[allowed].max() - 1e-9))
    return thresholds[int(best[len(best) // 2])]


class FitCandidate(BaseModel):
    """A candidate moment: the features read there, and whether it lies on the asked event's true span."""

    features: dict[str, float]
    speech: bool = False
    on_span: bool = False


class FitQuestion(BaseModel):
    present: bool
    candidates: list[FitCandidate]
    group: str = ""  # the video asked about: a cross-fit leaves one video's questions out at a time


class Point(BaseModel):
    threshold: float
    precision: float
    recall: float
    f1: float


class Fit(BaseModel):
    weights: dict[str, float]
    bias: float
    threshold: float
    at_threshold: Point
    candidates: int
    separation: dict[str, float] = {}  # per signal: AUC of right-span candidates against all others
    folds: int = 0  # videos left out one at a time in a cross-fit (0: one fit over everything)


def decided(questions: list[FitQuestion], threshold: float, score) -> list[Decision]:
    """Each question at ``threshold``: found = its best candidate reaches it; right = found on the true span."""
    out = []
    for question in questions:
        best = max(question.candidates, key=score, default=None)
        found = best is not None and score(best) >= threshold
        out.append(Decision(found=found, right=found and question.present and best.on_span, present=question.present))
    return out


def point(decisions: list[Decision], threshold: float) -> Point:
    tp = sum(d.right for d in decisions)
    fp = sum(d.found and not d.right for d in decisions)
    positives = sum(d.present for d in decisions)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / positives if positives else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Point(threshold=round(threshold, 3), precision=round(precision, 4), recall=round(recall, 4),
                 f1=round(f1, 4))


def auc(right: list[float], wrong: list[float]) -> float:
    """The chance that a right candidate scores above a wrong one (ties count half)."""
    if not right or not wrong:
        return 0.5
    wins = sum((r > w) + 0.5 * (r == w) for r in right for w in wrong)
    return round(wins / (len(right) * len(wrong)), 3)


def scorer(calibration: Calibration):
    """A candidate's confidence under ``calibration``, as a pipeline run scores it (no judge: nothing from outside
    the footage's texts)."""
    outside = roles().outside
    return lambda c: combined({k: v for k, v in c.features.items() if k not in outside}, calibration, c.speech)


def _samples(questions: list[FitQuestion]) -> list[tuple[dict[str, float], bool]]:
    """Every candidate's features, labelled right when it lies on the true span of a present event."""
    return [(c.features, question.present and c.on_span) for question in questions for c in question.candidates]


def _footage_kinds(samples: list[tuple[dict[str, float], bool]]) -> tuple[str, ...]:
    """The kinds read from the footage's own texts that occur in ``samples`` (not the judge's)."""
    outside = roles().outside
    return tuple(k for k in feature_kinds() if k not in outside and any(k in f for f, _ in samples))


def _weights(questions: list[FitQuestion]) -> tuple[dict[str, float], float]:
    """A class-balanced logistic fit over every candidate of ``questions``; the judge's weight on top."""
    samples = _samples(questions)
    # A verdict from outside the footage's texts (the judge) is fitted last, on top of the rest: a pipeline run
    # has none, and the threshold must hold without it.
    outside = roles().outside
    kinds = _footage_kinds(samples)
    weights, bias = fit([f for f, _ in samples], [label for _, label in samples], kinds)
    for kind in sorted(outside):
        judged = [(f, label) for f, label in samples if kind in f]
        if judged:
            offsets = [bias + sum(weights.get(k, 0.0) * v for k, v in f.items() if k not in outside) for f, _ in judged]
            judge, _ = fit([f for f, _ in judged], [label for _, label in judged], (kind,), offsets=offsets,
                           with_bias=False)
            weights[kind] = max(0.0, judge[kind])  # a judge that says "no" to right spans gets no say
    return weights, bias


def _complete(weights: dict[str, float]) -> dict[str, float]:
    # A kind that never occurred in these candidates is written as 0: it moved no confidence the fit measured, and a
    # table names every kind (a kind left out is refused when the table is read).
    # (A package's signal that never spoke keeps the weight it brings.)
    declared = declared_weights()
    return {kind: 0.0 for kind in feature_kinds() if kind not in declared} | weights


def _scorer_at(weights: dict[str, float], bias: float):
    # The verifier's rules (speech corroborates, vetoes) depend on the threshold, so each one is scored at its own;
    # without the judge, as a pipeline run scores.
    return lambda threshold: scorer(Calibration(model="fitted", weights=weights, bias=bias, threshold=threshold))


def fit_calibration(questions: list[FitQuestion]) -> Fit:
    """Weights, bias and threshold learned from every candidate of ``questions``.

    Where the questions name their videos (three or more), the fit is a cross-fit: one fit for each video
    made without that video's questions, the weights and bias their mean, and the threshold chosen on every
    question scored by the fit that did not see its video (``at_threshold`` reports those out-of-fold figures).
    A calibration part is a dozen or two videos in a few styles of wording; one fit over all of them follows
    whichever video is most unlike the rest, and its in-sample figures flatter the threshold it picks.
    """
    groups = sorted({q.group for q in questions if q.group})
    folds: dict[str, tuple[dict[str, float], float]] = {}
    if len(groups) >= CROSS_FIT_MIN_VIDEOS:
        folds = {group: _weights([q for q in questions if q.group != group]) for group in groups}
        kinds = sorted({k for w, _ in folds.values() for k in w})
        weights = {k: round(sum(w.get(k, 0.0) for w, _ in folds.values()) / len(folds), 3) for k in kinds}
        bias = round(sum(b for _, b in folds.values()) / len(folds), 3)
    else:
        weights, bias = _weights(questions)
    weights = _complete(weights)
    overall = _scorer_at(weights, bias)
    own = {group: _scorer_at(_complete(w), b) for group, (w, b) in folds.items()}
    # Questions in a fixed order by video, so that the resamples behind the threshold do not depend on how the
    # questions arrived.
    by_group: dict[str, list[FitQuestion]] = {}
    for question in questions:
        by_group.setdefault(question.group if question.group in own else "", []).append(question)

    def decided_at(threshold: float) -> list[Decision]:
        return [d for group in sorted(by_group)
                for d in decided(by_group[group], threshold, (own.get(group) or overall)(threshold))]

    thresholds = [i / 100 for i in range(101)]
    decisions = {t: decided_at(t) for t in thresholds}
    chosen = steady_threshold(decisions, min_precision=FIT_MIN_PRECISION, prior=FIT_PRIOR_THRESHOLD)
    best = point(decisions[chosen], chosen)
    samples = _samples(questions)
    separation = {kind: auc([f.get(kind, 0.0) for f, label in samples if label],
                             [f.get(kind, 0.0) for f, label in samples if not label])
                  for kind in _footage_kinds(samples)}
    return Fit(weights=weights, bias=bias, threshold=best.threshold, at_threshold=best, candidates=len(samples),
               separation=separation, folds=len(folds))
