"""Meaning by the entailment model: do the captions and speech over the span say the asked event?

One batch of (premise, event) pairs per span: every caption event of the video (for
``best_match``, which compares this span with the rest of the video), the fresh caption's
events, and the spoken lines around the span.
"""

from __future__ import annotations

from typing import ClassVar

from marlin_agent.config import Settings
from marlin_agent.domain import Evidence
from marlin_agent.verification.entailment import entailment_model
from marlin_agent.verification.features import Feature, Role, Rule
from marlin_agent.verification.signals import (
    Embed,
    SpanTexts,
    best_match_evidence,
    contradiction_evidence,
    entailment_evidence,
    signal,
    spoken,
)


@signal
class Entailed:
    features: ClassVar[tuple[Feature, ...]] = (
        Feature("caption_event", rules=frozenset({Rule.DESCRIBED})),
        Feature("fresh_caption", rules=frozenset({Rule.DESCRIBED})),
        Feature("transcript", Role.SAID), Feature("contradiction"), Feature("best_match"))

    def __init__(self, settings: Settings, embed: Embed) -> None:
        self.settings = settings

    def read(self, texts: SpanTexts) -> list[Evidence]:
        model = entailment_model(self.settings)
        events, fresh, lines, span = texts.events, texts.fresh, texts.lines, texts.span
        said = spoken if texts.about_speech else str  # for a question about speech, the "events" are lines said
        premises = [said(r.text) for r in events] + [r.text for r in fresh] + [spoken(r.text) for r in lines]
        scores = model.score([(premise, texts.event) for premise in premises])
        indexed, fresh_scores = scores[:len(events)], scores[len(events):len(events) + len(fresh)]
        line_scores = scores[len(events) + len(fresh):]
        found = [entailment_evidence("caption_event", span, events, indexed),
                 entailment_evidence("fresh_caption", span, fresh, fresh_scores),
                 entailment_evidence("transcript", span, lines, line_scores),
                 contradiction_evidence(span, events + fresh, indexed + fresh_scores),
                 best_match_evidence(span, events, indexed)]
        return [item for item in found if item is not None]
