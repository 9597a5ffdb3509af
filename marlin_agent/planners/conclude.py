"""Turning verified moments into an answer: threshold, de-duplication, and the words of it.

Shared by both planners, so "found" means the same thing whichever one ran: at least one
moment whose combined evidence reached the threshold.
"""

from __future__ import annotations

from marlin_agent.clock import clock
from marlin_agent.domain import Moment
from marlin_agent.verification.signals import iou


def decide(moments: list[Moment], threshold: float) -> tuple[list[Moment], list[Moment]]:
    """(accepted, rejected), best first; a moment overlapping a better one in the same video is dropped."""
    accepted: list[Moment] = []
    rejected: list[Moment] = []
    for moment in sorted(moments, key=lambda m: m.confidence, reverse=True):
        duplicate = any(m.video.id == moment.video.id and iou((m.start, m.end), (moment.start, moment.end)) > 0.5
                        for m in accepted + rejected)
        if not duplicate:
            (accepted if moment.confidence >= threshold else rejected).append(moment)
    return accepted, rejected


def in_time_order(moments: list[Moment]) -> list[Moment]:
    return sorted(moments, key=lambda m: (m.video.title, m.video.id, m.start))


def weakest(moment: Moment) -> str:
    """Why a moment fell short, in the words of its evidence."""
    by_kind = {e.kind: e for e in moment.evidence if e.kind != "grounding"}
    said = max((by_kind[k].score for k in ("caption_event", "fresh_caption") if k in by_kind), default=0.0)
    parts = [f"what Marlin describes there entails it {said:.0%}" if said >= 0.3 else
             "nothing Marlin describes there says it"]
    if "contradiction" in by_kind and by_kind["contradiction"].score >= 0.5:
        parts.append(f'"{by_kind["contradiction"].text}" contradicts it')
    if "lexical_conflict" in by_kind:
        parts.append(f"the words disagree: {by_kind['lexical_conflict'].text}")
    if "best_match" in by_kind and by_kind["best_match"].score < 0.4:
        parts.append(by_kind["best_match"].text)
    if "transcript" in by_kind:
        parts.append(f"speech says it {by_kind['transcript'].score:.0%}")
    if "regrounding" in by_kind:
        parts.append(f"re-grounding agreed {by_kind['regrounding'].score:.0%}")
    if "judge" in by_kind:
        parts.append(f"the judge gave {by_kind['judge'].score:.0%}")
    return ", ".join(parts)


def summary(event: str, accepted: list[Moment], rejected: list[Moment], videos: int) -> str:
    where = f"{videos} video{'s' if videos != 1 else ''}"
    if accepted:
        best = accepted[0]
        more = f" and {len(accepted) - 1} more moment(s)" if len(accepted) > 1 else ""
        return (f'"{event}": {best.video.title} at {clock(best.start)}–{clock(best.end)} '
                f"(confidence {best.confidence:.2f}){more}.")
    if not rejected:
        return f'Not found: nothing in the {where} searched resembles "{event}".'
    reasons = "; ".join(f"{m.video.title} {clock(m.start)}–{clock(m.end)} (confidence {m.confidence:.2f}: "
                        f"{weakest(m)})" for m in rejected[:3])
    if len(rejected) > 3:
        reasons += f"; and {len(rejected) - 3} more"
    return (f'Not found: "{event}" was not confirmed in the {where} searched. Marlin proposed {len(rejected)} '
            f"span(s), none backed by the evidence: {reasons}.")
