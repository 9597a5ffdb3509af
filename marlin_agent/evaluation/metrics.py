"""Scores with TimeLens-Bench's own definitions, so figures compare with published ones.

IoU of two spans is max(min(e1, e2) − max(s1, s2), 0) / (max(e1, e2) − min(s1, s2)); two
zero-length spans score 1 when they coincide and 0 otherwise. Only the first predicted
pair of a query counts; a query with no prediction scores IoU 0. R1@t is the percentage
of queries whose IoU reaches t; mIoU is the mean IoU × 100.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

# A fit chooses its threshold in verification (a model is fitted where it is first used, below evaluation).
from marlin_agent.verification.fitting import Decision, steady_threshold  # noqa: F401

THRESHOLDS = (0.3, 0.5, 0.7)
# What the reference scorer substitutes for a query whose answer held no time range.
NO_PREDICTION = (-100.0, -100.0)


def temporal_iou(a: Sequence[float], b: Sequence[float]) -> float:
    if a[0] == a[1] and b[0] == b[1]:
        return 1.0 if a[0] == b[0] else 0.0
    union = max(a[1], b[1]) - min(a[0], b[0])
    if union <= 0:
        return 0.0
    return max(min(a[1], b[1]) - max(a[0], b[0]), 0.0) / union


class GroundingScores(BaseModel):
    queries: int
    r1_at_0_3: float
    r1_at_0_5: float
    r1_at_0_7: float
    miou: float

    def row(self) -> dict[str, float]:
        return {"R1@0.3": self.r1_at_0_3, "R1@0.5": self.r1_at_0_5, "R1@0.7": self.r1_at_0_7, "mIoU": self.miou}


def grounding_scores(ious: Sequence[float]) -> GroundingScores:
    n = len(ious)
    if n == 0:
        return GroundingScores(queries=0, r1_at_0_3=0.0, r1_at_0_5=0.0, r1_at_0_7=0.0, miou=0.0)
    recall = [100.0 * sum(1 for v in ious if v >= t) / n for t in THRESHOLDS]
    return GroundingScores(queries=n, r1_at_0_3=round(recall[0], 2), r1_at_0_5=round(recall[1], 2),
                           r1_at_0_7=round(recall[2], 2), miou=round(100.0 * sum(ious) / n, 2))


class PresencePoint(BaseModel):
    threshold: float
    precision: float
    recall: float
    f1: float


def best_threshold(curve: list[PresencePoint]) -> PresencePoint:
    """The threshold with the highest F1; among equals, the middle of the widest plateau.

    A plateau of equal F1 means no example sits between its ends; its middle leaves the
    most margin on both sides for footage the suite did not cover. This is the best point of
    one run's curve, as the report shows it; a fit chooses with ``steady_threshold``.
    """
    best = max(p.f1 for p in curve)
    runs: list[list[PresencePoint]] = []
    for index, point in enumerate(curve):
        if point.f1 == best:
            if runs and runs[-1][-1] is curve[index - 1]:
                runs[-1].append(point)
            else:
                runs.append([point])
    widest = max(runs, key=len)
    return widest[len(widest) // 2]
