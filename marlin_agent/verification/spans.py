"""Span arithmetic: how two stretches of a video's timeline relate (seconds, start before end)."""

from __future__ import annotations

from typing import Protocol


class Spanned(Protocol):
    start: float
    end: float


# A row counts for a span when at least this share of the shorter of the two overlaps;
# full credit from _FULL_OVERLAP on.
_MIN_OVERLAP = 0.3
_FULL_OVERLAP = 0.6


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


def overlap_credit(span: tuple[float, float], row: Spanned) -> float:
    """0 for a row that hardly overlaps ``span``, rising to 1 when most of it does."""
    share = overlap_share(span, (row.start, row.end))
    return 0.0 if share < _MIN_OVERLAP else min(1.0, share / _FULL_OVERLAP)


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
