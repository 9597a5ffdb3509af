"""Similarity: MiniLM cosine of the asked event and what is described or said over the span.

A weak, cheap signal (it cannot tell "opens" from "closes"), kept because it rises with
paraphrases that a small entailment model misses.
"""

from __future__ import annotations

from typing import ClassVar

from marlin_agent.config import Settings
from marlin_agent.domain import Evidence
from marlin_agent.verification.signals import Embed, SpanTexts, signal, text_evidence, text_similarities

_MOST_EVENTS = 1024


@signal
class Similar:
    kinds: ClassVar[tuple[str, ...]] = ("similarity",)

    def __init__(self, settings: Settings, embed: Embed) -> None:
        self.embed = embed
        self._vectors: dict[str, object] = {}

    def read(self, texts: SpanTexts) -> list[Evidence]:
        start, end = texts.span
        # What is described there (for a question about speech, its "events" are the lines said): spoken
        # lines beside a visual question are the transcript signal's, which may corroborate but not confirm.
        nearby = [r for r in texts.events + texts.fresh if r.end > start - 1.0 and r.start < end + 1.0]
        if not nearby:
            return []
        asked = texts.asked
        if asked not in self._vectors:
            if len(self._vectors) > _MOST_EVENTS:  # a long-lived process asks without end
                self._vectors.clear()
            self._vectors[asked] = self.embed([asked])[0]
        similarities = text_similarities(self.embed, asked, self._vectors[asked], [r.text for r in nearby])
        found = text_evidence("similarity", texts.span, nearby, similarities)
        return [found] if found else []
