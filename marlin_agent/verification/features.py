"""What a feature of the confidence is, declared by the signal that gives it: its role and the rules that read it.

A moment's evidence becomes one feature per kind (``confidence.features``). The verifier's rules do not
know kinds by name; they ask for roles and rules: what is *seen* (the footage, as captioned), what is
*said* (speech, which may corroborate a seen event but never confirm it alone), what comes from
*outside* the footage's texts (a judge model's verdict, which may only lower a confidence unless the
settings let it lift); which kinds may *veto* a moment at or above a level; and which kinds each
rule reads (``Rule``). A signal added by another package declares the same and is read by the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Role(StrEnum):
    SEEN = "seen"  # what the captions (indexed or fresh) and Marlin's grounding say of the footage
    SAID = "said"  # what is said in it (the transcript)
    OUTSIDE = "outside"  # a reader outside the footage's texts (the judge model)


class Rule(StrEnum):
    """The verifier's rules that read a feature by what it means, beside the weighted sum every feature enters."""

    DESCRIBED = "described"  # an entailment model reads the event in a description over the span
    LIKENESS = "likeness"  # how much a description over the span reads like the event, in meaning
    ACT = "act"  # how far the act the event names is said over the span (0: not at all)
    THINGS = "things"  # how far the things the event names are said over the span (0: not at all)
    UNWORDED = "unworded"  # no word of the event is said over the span (a veto a reading in meaning may answer)


@dataclass(frozen=True)
class Feature:
    """One kind of evidence as a feature: ``veto``, the score at or above which it contradicts the event
    outright (None: it only weighs); ``weight``, what it weighs where a calibration names none (a package's
    signal: no shipped calibration knows it)."""

    name: str
    role: Role = Role.SEEN
    veto: float | None = None
    rules: frozenset[Rule] = frozenset()
    weight: float | None = None


def of_signal(cls: type) -> tuple[Feature, ...]:
    """The features a signal class declares (``features``); a class that only names ``kinds`` (with ``vetoes``
    and ``weights`` by kind) declares each as a seen feature with those."""
    declared = getattr(cls, "features", None)
    if declared is not None:
        return tuple(declared)
    vetoes, weights = getattr(cls, "vetoes", {}), getattr(cls, "weights", {})
    return tuple(Feature(kind, veto=vetoes.get(kind), weight=weights.get(kind)) for kind in cls.kinds)
