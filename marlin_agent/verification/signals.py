"""Verification: Marlin's find always answers, so a span is a candidate until evidence backs it.

Signals, each kept as evidence whether it helped or not:
- caption events overlapping the span whose text means what the query means;
- transcript lines inside the span that say it;
- re-grounding stability: ground again on a tighter window around the span; a real event
  lands on the same absolute span, an invented one drifts with the window;
- with a planner LLM configured, its judgement of a fresh Marlin caption of the span.
They are combined as independent pieces of support (noisy-OR), so any strong signal can
carry a moment but none alone is trusted fully. The weights and the threshold are
settings, to be calibrated on the presence evals.
"""

from __future__ import annotations

import numpy as np

from marlin_agent.domain import Evidence

# How much each signal alone can prove (the noisy-OR weights). A transcript line that says
# the event is the one signal independent of Marlin's eyes, and for things only said it is
# the only one, so alone it can clear the calibrated threshold.
WEIGHTS = {"caption_event": 0.7, "transcript": 0.95, "regrounding": 0.6, "judge": 0.7}
# Cosine similarity (MiniLM) below which text is unrelated, and where it means a match.
# Measured with `eval presence`: the same sentence about another object ("a red triangle
# moves ..." against "a red circle moves ...") scores about 0.75, so a full match must
# sit well above that or hard negatives pass (see evals/results).
_SIMILARITY_FLOOR = 0.45
_SIMILARITY_FULL = 0.95


def iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Temporal intersection over union, as TimeLens-Bench defines it."""
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else float(a == b)


def overlap_share(span: tuple[float, float], other: tuple[float, float]) -> float:
    """How much of the shorter of the two intervals lies inside the other."""
    inter = max(0.0, min(span[1], other[1]) - max(span[0], other[0]))
    shortest = min(span[1] - span[0], other[1] - other[0])
    return inter / shortest if shortest > 0 else 0.0


def phrases(text: str, query_words: int) -> list[str]:
    """The text itself and its runs of words about as long as the query.

    A short query ("the blue square") against a long caption event ("a blue square moves
    from left to right") scores low as whole sentences (0.71 with MiniLM) although the
    event says it; against the run "blue square" it scores 0.96.
    """
    words = text.split()
    found = [text]
    for size in range(max(1, query_words - 1), query_words + 3):
        found += [" ".join(words[i:i + size]) for i in range(0, len(words) - size + 1)]
    return list(dict.fromkeys(found))


def text_similarities(embed, query: str, query_vector: np.ndarray, texts: list[str]) -> list[float]:
    """For each text, the best cosine similarity of the query to the text or one of its phrases."""
    if not texts:
        return []
    groups = [phrases(text, len(query.split())) for text in texts]
    vectors = embed([phrase for group in groups for phrase in group])
    scores = vectors @ query_vector
    best, at = [], 0
    for group in groups:
        best.append(float(scores[at:at + len(group)].max()))
        at += len(group)
    return best


def similarity_score(similarity: float) -> float:
    return float(np.clip((similarity - _SIMILARITY_FLOOR) / (_SIMILARITY_FULL - _SIMILARITY_FLOOR), 0.0, 1.0))


def text_evidence(kind: str, span: tuple[float, float], rows: list[dict], similarities: list[float]) -> Evidence | None:
    """The best row of ``kind`` overlapping ``span``, scored by meaning × overlap."""
    best = None
    for row, similarity in zip(rows, similarities):
        share = overlap_share(span, (row["start"], row["end"]))
        if share < 0.3:
            continue
        score = similarity_score(similarity) * min(1.0, share / 0.6)
        if best is None or score > best.score:
            best = Evidence(kind=kind, text=row["text"], start=row["start"], end=row["end"], score=round(score, 3))
    return best


def regrounding_evidence(span: tuple[float, float], again: tuple[float, float] | None,
                         window: tuple[float, float]) -> Evidence:
    if again is None:
        return Evidence(kind="regrounding", text="no span on the tighter window", start=window[0], end=window[1],
                        score=0.0)
    agreement = iou(span, again)
    return Evidence(kind="regrounding", text=f"grounded again on {window[0]:.1f}–{window[1]:.1f} s: "
                    f"{again[0]:.1f}–{again[1]:.1f} s (IoU {agreement:.2f})", start=again[0], end=again[1],
                    score=round(agreement, 3))


def combine(evidence: list[Evidence]) -> float:
    """Noisy-OR over the signals: 1 − Π(1 − weight × score)."""
    doubt = 1.0
    for item in evidence:
        weight = WEIGHTS.get(item.kind)
        if weight is not None:
            doubt *= 1.0 - weight * item.score
    return round(1.0 - doubt, 3)


def tighter_window(span: tuple[float, float], window: tuple[float, float], duration: float) -> tuple[float, float]:
    """A window around the span, clearly different from the first, for re-grounding.

    Half the original window, centred on the span (never shorter than the span plus 2 s
    each side), clamped to the video. An invented span is placed relative to the clip, so
    it moves when the window does.
    """
    length = max((window[1] - window[0]) / 2, span[1] - span[0] + 4.0)
    centre = (span[0] + span[1]) / 2
    start = max(0.0, min(centre - length / 2, duration - length))
    return round(start, 3), round(min(duration, start + length), 3)
