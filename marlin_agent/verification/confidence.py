"""Evidence → one confidence: a logistic model whose weights come from the presence evals.

Each kind of evidence is a feature (its score, 0..1); the judge's verdict enters as
2·score − 1 so a "no" lowers confidence as much as a "yes" raises it. Missing evidence adds
nothing. ``fit`` learns the weights from labelled moments (``eval presence --fit`` on a
calibration suite); the shipped ones are in configs/default.toml under ``[verify]``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from marlin_agent.domain import Evidence
from marlin_agent.verification.features import Feature, Role, Rule
from marlin_agent.verification.signals import signal_features

# Evidence the verifier adds itself (it needs Marlin or the planner LLM), besides the registered signals':
# where Marlin grounds the event again around the span, and the judge model's verdict on a fresh caption.
JUDGE_KIND = "judge"
VERIFIER_FEATURES = (Feature("regrounding"), Feature(JUDGE_KIND, Role.OUTSIDE))
VERIFIER_KINDS = tuple(found.name for found in VERIFIER_FEATURES)


def all_features() -> tuple[Feature, ...]:
    """Every feature that enters the confidence: the signals' and the verifier's own."""
    return (*signal_features(), *VERIFIER_FEATURES)


def feature_kinds() -> tuple[str, ...]:
    """Every kind of evidence that enters the confidence: the signals' and the verifier's own."""
    return tuple(found.name for found in all_features())


@dataclass(frozen=True)
class Roles:
    """The features by what the verifier's rules ask of them (see ``features``)."""

    said: frozenset[str]
    outside: frozenset[str]
    vetoes: dict[str, float]
    read_by: dict[Rule, tuple[str, ...]]


@functools.cache
def roles() -> Roles:
    """The roles of every feature, read once per process (a package's signals included)."""
    declared = all_features()
    return Roles(said=frozenset(f.name for f in declared if f.role is Role.SAID),
                 outside=frozenset(f.name for f in declared if f.role is Role.OUTSIDE),
                 vetoes={f.name: f.veto for f in declared if f.veto is not None},
                 read_by={rule: tuple(f.name for f in declared if rule in f.rules) for rule in Rule})


def features(evidence: list[Evidence]) -> dict[str, float]:
    """Each kind's best score; ``grounding`` (where the span came from) is a note, not a feature. A verdict from
    outside the footage enters as 2·score − 1."""
    outside = roles().outside
    found: dict[str, float] = {}
    for item in evidence:
        if item.kind != "grounding":
            value = 2 * item.score - 1 if item.kind in outside else item.score
            found[item.kind] = max(found.get(item.kind, value), value)
    return found


def as_shown(confidence: float) -> float:
    """A confidence as answers show it, to the hundredth. Moments are ranked by it: a difference no answer shows (a
    1.3 s piece of a crossing 0.001 above the whole crossing) is a tie, and a tie goes to the earlier moment."""
    return round(confidence, 2)


def confidence(evidence: list[Evidence], weights: dict[str, float], bias: float) -> float:
    return confidence_of(features(evidence), weights, bias)


def confidence_of(found: dict[str, float], weights: dict[str, float], bias: float) -> float:
    """The confidence of a moment whose evidence has these feature values."""
    logit = bias + sum(weights.get(kind, 0.0) * value for kind, value in found.items())
    return round(1.0 / (1.0 + math.exp(-logit)), 3)


def fit(rows: list[dict[str, float]], labels: list[bool], kinds: tuple[str, ...], l2: float = 0.01, steps: int = 4000,
        offsets: list[float] | None = None, with_bias: bool = True) -> tuple[dict[str, float], float]:
    """Logistic regression (gradient descent, light L2) on feature rows; (weights, bias).

    ``offsets`` (one logit per row, held fixed) fit a few more weights on top of ones already
    fitted: the judge's, on the rows it read, after the rest were fitted without it."""
    x = np.array([[row.get(kind, 0.0) for kind in kinds] for row in rows], dtype=np.float64)
    y = np.array(labels, dtype=np.float64)
    fixed = np.array(offsets if offsets is not None else [0.0] * len(rows), dtype=np.float64)
    w, b = np.zeros(len(kinds)), 0.0
    # Each class weighs the same, so a calibration set with more positives does not buy recall with precision.
    balance = np.where(y == 1, 0.5 / max(1, y.sum()), 0.5 / max(1, len(y) - y.sum()))
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b + fixed)))
        error = (p - y) * balance
        w -= 2.0 * (x.T @ error + l2 * w)
        if with_bias:
            b -= 2.0 * error.sum()
    return {kind: round(float(value), 3) for kind, value in zip(kinds, w, strict=True)}, round(float(b), 3)
