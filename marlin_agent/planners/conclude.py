"""Turning verified moments into an answer: threshold, de-duplication, and the words of it.

Shared by both planners, so "found" means the same thing whichever one ran: at least one
moment whose combined evidence reached the threshold.
"""

from __future__ import annotations

from marlin_agent.clock import clock
from marlin_agent.domain import Moment
from marlin_agent.verification.confidence import as_shown
from marlin_agent.verification.spans import iou, overlap_share

# An occurrence whose description says less than this share of the event (its words said, less what it
# denies), and this much less than the best-said occurrence's, is a look-alike the other signals carried
# over the threshold. Both: a repeat told in other words ("another car drives by" for "a car passes", 0.5)
# is still counted.
LOOK_ALIKE_SAYS = 0.45
LOOK_ALIKE_GAP = 0.3
# A moment this much inside a better one in the same video is the same occurrence.
CONTAINED = 0.8
# A thing named where an asked one was ("tin" where "oven" was asked) counts as half a denial.
_SWAP_COST = 0.5


def _words_said(moment: Moment) -> float | None:
    """How much of the event the moment's description says in words, less what it denies or swaps."""
    scores = {e.kind: e.score for e in moment.evidence if e.kind in ("lexical", "lexical_conflict", "lexical_swap")}
    if "lexical" not in scores:
        return None
    return scores["lexical"] - scores.get("lexical_conflict", 0.0) - _SWAP_COST * scores.get("lexical_swap", 0.0)


def look_alikes(moments: list[Moment]) -> tuple[list[Moment], list[Moment]]:
    """(the occurrences, the look-alikes among them). One captioner words an event alike each time it
    happens ("a circle appears", three times over); a moment whose description says much less of the asked
    event than another occurrence's ("cannons" of confetti, where "fog cannons" were said; the loaf put "into
    the loaf tin", where it was asked into the oven) passed on the other signals' strength, and counting it
    would count a different event."""
    said = [w for w in map(_words_said, moments) if w is not None]
    if not said:
        return moments, []
    floor = min(LOOK_ALIKE_SAYS, max(said) - LOOK_ALIKE_GAP)
    alike = [m for m in moments if (w := _words_said(m)) is not None and w < floor]
    return [m for m in moments if m not in alike], alike


def left_out(alike: list[Moment], lead: str = "Left out") -> str:
    """How an answer names the look-alikes it leaves out ("" for none)."""
    if not alike:
        return ""
    return (f" {lead}: {', '.join(clock(m.start) for m in alike)}, which passed but whose description says much "
            "less of it than another's: a look-alike.")


def decide(moments: list[Moment], threshold: float) -> tuple[list[Moment], list[Moment]]:
    """(accepted, rejected), best first; a moment overlapping a better one in the same video, or inside it, is
    dropped."""
    accepted: list[Moment] = []
    rejected: list[Moment] = []
    # Ties (confidences equal as shown) go to the earlier moment, whatever order the verifications finished in.
    for moment in sorted(moments, key=lambda m: (-as_shown(m.confidence), m.video.title, m.video.id, m.start, m.end)):
        duplicate = any(m.video.id == moment.video.id and _same_stretch((m.start, m.end), (moment.start, moment.end))
                        for m in accepted + rejected)
        if not duplicate:
            (accepted if moment.confidence >= threshold else rejected).append(moment)
    return accepted, rejected


def _same_stretch(one: tuple[float, float], other: tuple[float, float]) -> bool:
    """Two spans of one occurrence: mostly the same stretch, or one nearly all inside the other (a 1.3 s piece of
    the fox's 8 s crossing is not a second fox)."""
    return iou(one, other) > 0.5 or overlap_share(one, other) >= CONTAINED


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
