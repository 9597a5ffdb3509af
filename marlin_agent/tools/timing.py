"""Where a verified moment is reported: Marlin's grounded span, or the caption event that says it.

Marlin times an event twice: its dense caption gives every event a span (to about half a
second), and its grounding places the asked event in a window. When the two disagree a little,
the verifier has just read the caption event and found it says the event; reporting the
grounded span would put the answer a few seconds off the very description it rests on. So a
grounded span that overlaps the caption event that best says the event, without matching it,
takes the caption event's span, unless that event is much shorter than the span. A caption
event the index cut at a chunk's edge may be only a piece of the event: the moment is then
both together, never the piece alone.
"""

from __future__ import annotations

from collections.abc import Callable

from marlin_agent.clock import clock
from marlin_agent.domain import Evidence
from marlin_agent.library.records import Segment, chunk_window
from marlin_agent.verification.signals import Timed
from marlin_agent.verification.spans import iou

# A caption event overlapping the grounded span at least this much (IoU) is the same event timed apart ...
SAME_EVENT = 0.3
# ... and from this much on, the two agree: the grounded span stands.
AGREE = 0.9
# A caption event shorter than this share of the span does not time it.
LEAST_SHARE = 0.5


def caption_timing(span: tuple[float, float], evidence: list[Evidence], events: list[Timed],
                   piece: Callable[[Timed], bool] = lambda row: False,
                   ) -> tuple[tuple[float, float], Evidence] | None:
    """Where to report a moment grounded at ``span``: the span of the index caption event that best says the
    event (the lexical signal's row), or for a ``piece`` of one the two together; with a note saying so.
    None keeps ``span``."""
    said = next((item for item in evidence if item.kind == "lexical"), None)
    if said is None:
        return None
    row = next((r for r in events if (r.start, r.end) == (said.start, said.end)), None)
    if row is None:
        return None  # no description, or one from the fresh caption (timed from the span itself)
    if not SAME_EVENT <= iou(span, (row.start, row.end)) < AGREE:
        return None
    found = f"its find placed it at {clock(span[0])}–{clock(span[1])}"
    if piece(row):
        moved = (min(span[0], row.start), max(span[1], row.end))
        text = (f"joined with Marlin's caption event at {clock(row.start)}–{clock(row.end)}, which says it and "
                f"which the index cut at a chunk's edge ({found})")
    elif row.end - row.start >= LEAST_SHARE * (span[1] - span[0]):
        moved = (row.start, row.end)
        text = f"timed by Marlin's caption event at {clock(row.start)}–{clock(row.end)}, which says it ({found})"
    else:
        return None
    if moved == span:
        return None
    return moved, Evidence(kind="grounding", text=text, start=moved[0], end=moved[1], score=1.0)


def cut_by_window(span: tuple[float, float], window: tuple[float, float], duration: float, edge: float) -> bool:
    """Does ``span`` touch an edge of the window it was seen in, where the video goes on (so the window may
    have held only a piece of the event)?"""
    return window[0] > 0 and span[0] - window[0] <= edge or window[1] < duration and window[1] - span[1] <= edge


def cut_at_chunk_edge(row: Segment, duration: float, edge: float) -> bool:
    """Does the caption event touch an edge of the chunk it was told in (``cut_by_window``)?"""
    return cut_by_window((row.start, row.end), chunk_window(row.chunk_id), duration, edge)
