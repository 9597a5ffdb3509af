"""Signals: each reads what is said about a span and gives evidence for or against the asked event.

A signal is a class in a module of this package, registered with ``@signal``: its ``features``
(the kinds of evidence it gives, each a feature with its own weight under ``[verify.weights]``, its
role and the rules that read it: ``verification.features``) and a ``read(texts)`` that turns a span's
texts into evidence. The verifier finds every signal here
by itself, so adding one is its module and its weights, nothing else. Signals that need a
model get it from the settings they are built with, and load it once per process.

Below the registry: the helpers signals share (overlap, entailment evidence).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np

from marlin_agent.config import Settings
from marlin_agent.domain import Evidence
from marlin_agent.verification.entailment import Entailment
from marlin_agent.verification.features import Feature, of_signal
from marlin_agent.verification.spans import iou, overlap_credit


class Encoder(Protocol):
    """Sentence vectors (L2-normalised, so a dot product is the cosine): of whole texts, and of a text's runs
    of words read in their context (see ``library.embeddings``)."""

    def embed(self, texts: list[str]) -> np.ndarray: ...

    def runs(self, texts: list[str], sizes: tuple[int, ...]) -> list[np.ndarray]: ...


# The encoder, reached when a signal first needs it (a question answered from entailment alone loads none).
Embed = Callable[[], Encoder]

# Verbs that only ever mean speaking. Not "ask" or "call": a coach asks for a timeout with his hands.
SPEECH_VERB = re.compile(
    r"\b(say|says|said|saying|mention|mentions|mentioned|mentioning|talk|talks|talked|talking|speak|speaks|spoke|"
    r"speaking|announce|announces|announced|explain|explains|explained|tell|tells|told|shout|shouts|shouted|"
    r"remind|reminds|reminded|reminding)\b",
    re.IGNORECASE)
# What may sit between a verb of saying and what is said: "says that ...", "talks about ...".
_SAID_LEAD = re.compile(r"^(?:(?:about|that|of|on|to)\s+)+", re.IGNORECASE)
# Verbs of saying told to someone, and who is told before what: "reminds the class of ...", "tells us that ...".
_TOLD = re.compile(r"^(?:tell|tells|told|remind|reminds|reminded|reminding)$", re.IGNORECASE)
_ADDRESSEE = re.compile(r"^(?:[\w'-]+\s+){1,3}?(?=(?:about|that|of|to)\s)", re.IGNORECASE)


def said_content(event: str) -> str:
    """What an event about speech says is said: "the baker explains the dough should rise" → "the dough
    should rise", "the teacher reminds the class of the deadline" → "the deadline". A spoken line names neither
    its speaker, nor whom it is told to, nor the act of saying, so words compared with it are the content's
    alone; an event with nothing after its verb of saying is kept whole."""
    verb = SPEECH_VERB.search(event)
    if not verb:
        return event
    after = event[verb.end():].strip()
    if _TOLD.match(verb.group()):
        after = _ADDRESSEE.sub("", after, count=1)  # whoever is told is not in the line either
    return _SAID_LEAD.sub("", after) or event


class Timed(Protocol):
    """A text at a time in the video: a caption event, a stored segment, a transcript line."""

    start: float
    end: float
    text: str


@dataclass(frozen=True)
class SpanTexts:
    """Everything said about one candidate span, in the video's own seconds."""

    event: str  # the event asked about, as a plain sentence
    span: tuple[float, float]
    events: list[Timed]  # every caption event of the video, from the index
    fresh: list[Timed] = field(default_factory=list)  # the events of a fresh caption of the span alone
    lines: list[Timed] = field(default_factory=list)  # transcript lines around the span
    about_speech: bool = False  # the question asks what is said, not what is seen

    @property
    def asked(self) -> str:
        """The words to find in what is described: for a question about speech, only what is said."""
        return said_content(self.event) if self.about_speech else self.event

    @property
    def described(self) -> list[Timed]:
        """Caption events (indexed and fresh) that overlap the span."""
        return [row for row in self.events + self.fresh if overlap_credit(self.span, row) > 0]


class Signal(Protocol):
    """A reading of a span's texts into evidence. Built in, a module of this package decorated with ``signal``;
    from another package, a class named by an entry point in ``ENTRY_POINT_GROUP``, whose features carry a
    ``weight`` (no shipped calibration knows them). It is made with the settings and the embedder.

    A package's signal may instead name plain ``kinds``, with ``vetoes`` and ``weights`` by kind: each is then a
    seen feature (``features.of_signal``)."""

    features: ClassVar[tuple[Feature, ...]]

    def read(self, texts: SpanTexts) -> list[Evidence]: ...


_REGISTRY: dict[str, type] = {}
ENTRY_POINT_GROUP = "marlin_agent.signals"


def signal(cls: type) -> type:
    """Register a signal class (the kinds of its features must be new)."""
    for kind in (found.name for found in of_signal(cls)):
        if kind in _REGISTRY and _REGISTRY[kind] is not cls:
            raise ValueError(f"evidence kind {kind!r} is given by {_REGISTRY[kind].__name__} already")
        _REGISTRY[kind] = cls
    return cls


def registered() -> list[type]:
    """Every signal class, each once, in a stable order: this package's, then those installed packages add
    (``ENTRY_POINT_GROUP``; one whose kinds another signal gives already is left out with a warning)."""
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        importlib.import_module(f"{__name__}.{module}")
    built_in = sorted(set(_REGISTRY.values()), key=lambda cls: cls.__name__)
    return built_in + list(_added())


@functools.cache
def _added() -> tuple[type, ...]:
    import warnings

    from marlin_agent.plugins import added

    classes = []
    for name, cls in added(ENTRY_POINT_GROUP, "signal").items():
        try:
            signal(cls)
        except (ValueError, AttributeError, TypeError) as exc:
            warnings.warn(f"the signal {name!r} is left out: {exc}", stacklevel=2)
            continue
        classes.append(cls)
    return tuple(classes)


def signal_features() -> tuple[Feature, ...]:
    """The features the registered signals give, in their order."""
    return tuple(found for cls in registered() for found in of_signal(cls))


def declared_weights() -> dict[str, float]:
    """The weights signals that come with their own give their features (a package's signal), used where a
    calibration names none for them."""
    return {found.name: found.weight for found in signal_features() if found.weight is not None}


def signal_kinds() -> tuple[str, ...]:
    """The evidence kinds the registered signals give."""
    return tuple(found.name for found in signal_features())


def build_signals(settings: Settings, embed: Embed) -> list[Signal]:
    return [cls(settings, embed) for cls in registered()]


def spoken(text: str) -> str:
    """A transcript line as a premise: NLI models read "X says: ..." as someone saying it."""
    return f'Someone says: "{text.strip()}"'


def entailment_evidence(kind: str, span: tuple[float, float], rows: list[Timed],
                        scores: list[Entailment]) -> Evidence | None:
    """The row overlapping ``span`` that best entails the event, scored entailment × overlap."""
    best = None
    for row, found in zip(rows, scores, strict=True):
        credit = overlap_credit(span, row)
        if credit > 0 and (best is None or found.entailment * credit > best.score):
            best = Evidence(kind=kind, text=row.text, start=row.start, end=row.end,
                            score=round(found.entailment * credit, 3))
    return best


def contradiction_evidence(span: tuple[float, float], rows: list[Timed], scores: list[Entailment]) -> Evidence | None:
    """The overlapping row that most contradicts the event (only three-way models tell this apart)."""
    worst = None
    for row, found in zip(rows, scores, strict=True):
        score = found.contradiction * overlap_credit(span, row)
        if score > 0 and (worst is None or score > worst.score):
            worst = Evidence(kind="contradiction", text=row.text, start=row.start, end=row.end,
                             score=round(score, 3))
    return worst


def best_match_evidence(span: tuple[float, float], rows: list[Timed], scores: list[Entailment]) -> Evidence | None:
    """Is the event at this span the video's best match for the question?

    0.5 + half the margin between the best entailment overlapping the span and the best
    anywhere else in the video: 1 when only this span says it, 0 when another part of the
    video says it and this one does not.
    """
    here = [(row, found) for row, found in zip(rows, scores, strict=True) if overlap_credit(span, row) > 0]
    elsewhere = [(row, found) for row, found in zip(rows, scores, strict=True) if overlap_credit(span, row) == 0]
    if not here:
        return None
    mine = max(here, key=lambda pair: pair[1].entailment)
    rival = max(elsewhere, key=lambda pair: pair[1].entailment, default=None)
    margin = mine[1].entailment - (rival[1].entailment if rival else 0.0)
    text = (f'best elsewhere: "{rival[0].text}" at {rival[0].start:.1f}–{rival[0].end:.1f} s'
            if rival else "no other event in the video")
    return Evidence(kind="best_match", text=text, start=span[0], end=span[1], score=round(0.5 + margin / 2, 3))


def regrounding_evidence(span: tuple[float, float], again: tuple[float, float] | None,
                         window: tuple[float, float]) -> Evidence:
    if again is None:
        return Evidence(kind="regrounding", text="no span on the tighter window", start=window[0], end=window[1],
                        score=0.0)
    agreement = iou(span, again)
    return Evidence(kind="regrounding", text=f"grounded again on {window[0]:.1f}–{window[1]:.1f} s: "
                    f"{again[0]:.1f}–{again[1]:.1f} s (IoU {agreement:.2f})", start=again[0], end=again[1],
                    score=round(agreement, 3))
