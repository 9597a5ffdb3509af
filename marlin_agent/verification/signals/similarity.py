"""Similarity: MiniLM cosine of the asked event and what is described or said over the span.

A weak, cheap signal (it cannot tell "opens" from "closes"), kept because it rises with
paraphrases that a small entailment model misses. A short question ("the blue square") read
against a whole caption event ("a blue square moves from left to right") scores low; against
the caption's run of words about its length ("blue square") it scores high. The runs are
pooled from one pass of the embedding model over each description (``Encoder.runs``), so
their words are read in context and a span costs a pass per new description, not one per run.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from marlin_agent.config import Settings
from marlin_agent.domain import Evidence
from marlin_agent.verification.features import Feature, Rule
from marlin_agent.verification.signals import Embed, Encoder, SpanTexts, Timed, signal
from marlin_agent.verification.spans import overlap_credit

# MiniLM cosine (of the question and a description's best run of words, pooled in context) below which
# the texts are unrelated, and from which they say the same thing.
_SIMILARITY_FLOOR = 0.37
_SIMILARITY_FULL = 0.85


def run_sizes(query_words: int) -> tuple[int, ...]:
    """The lengths of the runs of words a question of ``query_words`` words is compared with."""
    return tuple(range(max(1, query_words - 1), query_words + 3))


def text_similarities(encoder: Encoder, query: str, texts: list[str]) -> list[float]:
    """For each text, the best cosine similarity of the query to the text or one of its runs of words."""
    if not texts:
        return []
    query_vector = encoder.embed([query])[0]
    return [float((vectors @ query_vector).max()) for vectors in encoder.runs(texts, run_sizes(len(query.split())))]


def similarity_score(similarity: float) -> float:
    return float(np.clip((similarity - _SIMILARITY_FLOOR) / (_SIMILARITY_FULL - _SIMILARITY_FLOOR), 0.0, 1.0))


def text_evidence(kind: str, span: tuple[float, float], rows: list[Timed],
                  similarities: list[float]) -> Evidence | None:
    """The best row of ``kind`` overlapping ``span``, scored by embedding similarity × overlap."""
    best = None
    for row, similarity in zip(rows, similarities, strict=True):
        score = similarity_score(similarity) * overlap_credit(span, row)
        if overlap_credit(span, row) > 0 and (best is None or score > best.score):
            best = Evidence(kind=kind, text=row.text, start=row.start, end=row.end, score=round(score, 3))
    return best


@signal
class Similar:
    features: ClassVar[tuple[Feature, ...]] = (Feature("similarity", rules=frozenset({Rule.LIKENESS})),)

    def __init__(self, settings: Settings, embed: Embed) -> None:
        self.encoder = embed

    def read(self, texts: SpanTexts) -> list[Evidence]:
        start, end = texts.span
        # What is described there (for a question about speech, its "events" are the lines said): spoken
        # lines beside a visual question are the transcript signal's, which may corroborate but not confirm.
        nearby = [r for r in texts.events + texts.fresh if r.end > start - 1.0 and r.start < end + 1.0]
        if not nearby:
            return []
        similarities = text_similarities(self.encoder(), texts.asked, [r.text for r in nearby])
        found = text_evidence("similarity", texts.span, nearby, similarities)
        return [found] if found else []
