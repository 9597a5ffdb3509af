"""Where a verified moment is reported: Marlin's grounded span, or the caption event that says it.

Marlin times an event twice: its dense caption gives every event a span (to about half a
second), and its grounding places the asked event in a window. When the two disagree a little,
the verifier has just read the caption event and found it says the event; reporting the
grounded span would put the answer a few seconds off the very description it rests on. So a
grounded span that overlaps the caption event that best says the event, without matching it,
takes the caption event's span. Not when the caption event is much shorter than the span: that
is a piece the index cut at a chunk's edge, and the grounded span is then the whole event.
"""

from __future__ import annotations

from marlin_agent.clock import clock
from marlin_agent.domain import Evidence
from marlin_agent.verification.signals import Timed, iou

# A caption event overlapping the grounded span at least this much (IoU) is the same event timed apart ...
SAME_EVENT = 0.3
# ... and from this much on, the two agree: the grounded span stands.
AGREE = 0.9
# A caption event shorter than this share of the span is a piece of the event, not its timing.
LEAST_SHARE = 0.5


def caption_timing(span: tuple[float, float], evidence: list[Evidence],
                   events: list[Timed]) -> tuple[tuple[float, float], Evidence] | None:
    """The span of the index caption event that best says the event (the lexical signal's row), and a note
    saying so, when it times the grounded ``span`` differently; None to keep ``span``."""
    said = next((item for item in evidence if item.kind == "lexical"), None)
    if said is None or not any((row.start, row.end) == (said.start, said.end) for row in events):
        return None  # no description, or one from the fresh caption (timed from the span itself)
    row = (said.start, said.end)
    agreement = iou(span, row)
    if not SAME_EVENT <= agreement < AGREE or row[1] - row[0] < LEAST_SHARE * (span[1] - span[0]):
        return None
    note = Evidence(kind="grounding", start=row[0], end=row[1], score=1.0,
                    text=f"timed by Marlin's caption event at {clock(row[0])}–{clock(row[1])}, which says it "
                         f"(its find placed it at {clock(span[0])}–{clock(span[1])})")
    return row, note
