"""Answers to the forms beyond "when", built from verified moments: every, count, first, last,
before and after, between, duration.

Shared by both planners: each hands in its own way of finding the verified candidates for an
event (``Find``), and everything after that is here, so a question gets the same answer
whichever planner ran. Only verified moments count: an occurrence is a moment that passed the
threshold, a count is the number of distinct ones, and a relation needs its anchor verified
first; an anchor that is not found makes the answer "not found", saying why.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from marlin_agent.clock import clock
from marlin_agent.domain import Answer, Evidence, Moment, Relation, Usage, VideoRef
from marlin_agent.errors import BudgetExhausted
from marlin_agent.library.records import Segment
from marlin_agent.marlin.wording import idle
from marlin_agent.planners.conclude import decide, left_out, look_alikes, summary
from marlin_agent.planners.question_forms import QuestionPlan, ordinal_word
from marlin_agent.tools import GroundedSpan, Toolbox
from marlin_agent.tools.run_context import RunContext
from marlin_agent.verification.spans import iou

# find(event, exhaustive) -> every candidate moment checked for ``event`` (verified or not).
Find = Callable[[str, bool], Awaitable[list[Moment]]]

# What follows (or precedes) an anchor: at most this many indexed events, nearest first, are verified.
NEIGHBOURS = 3
# An event that starts this close before the anchor ends still counts as after it (caption times
# are good to about half a second).
_EDGE = 1.0


def _captioned(moment: Moment) -> bool:
    """Is the moment where a caption event that says it lies (timed by Marlin's caption, to about half a second,
    rather than by a find that may have landed beside it)?"""
    return any(item.kind == "caption_event" and (item.start, item.end) == (moment.start, moment.end)
               for item in moment.evidence)


def _one_occurrence(first: Moment, second: Moment) -> Moment:
    """Two overlapping moments of one video as one: the one a caption event times, as it is, when only one
    is (the union would start where only the find's guess did); else their union."""
    if _captioned(first) != _captioned(second):
        return first if _captioned(first) else second
    return first.model_copy(update={"end": max(first.end, second.end),
                                    "confidence": max(first.confidence, second.confidence),
                                    "evidence": first.evidence if first.confidence >= second.confidence
                                    else second.evidence})


def joined(moments: list[Moment]) -> list[Moment]:
    """Distinct occurrences in time order: overlapping moments of one video become one."""
    out: list[Moment] = []
    for moment in sorted(moments, key=lambda m: (m.video.id, m.start, m.end)):
        last = out[-1] if out else None
        if last is not None and last.video.id == moment.video.id and moment.start < last.end:
            out[-1] = _one_occurrence(last, moment)
        else:
            out.append(moment)
    return out


def in_order(moments: list[Moment]) -> list[Moment]:
    """Time order within a video; videos by path (a folder has no one clock, so the order must at
    least be the same every time)."""
    return sorted(moments, key=lambda m: (m.video.path, m.video.id, m.start))


def _inside(piece: tuple[float, float], whole: tuple[float, float]) -> bool:
    """Does ``whole`` hold most of ``piece``?"""
    overlap = min(piece[1], whole[1]) - max(piece[0], whole[0])
    return overlap >= 0.5 * (piece[1] - piece[0])


def _times(moments: list[Moment], videos: int = 1) -> str:
    """The moments' times, each with its video's title when more than one video was searched."""
    named = videos > 1 or len({x.video.id for x in moments}) > 1
    shown = ", ".join(f"{clock(m.start)}" + (f" ({m.video.title})" if named else "") for m in moments[:12])
    return shown + (f" and {len(moments) - 12} more" if len(moments) > 12 else "")


def _times_word(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def _strongest(moment: Moment) -> tuple:
    """The most confident first; between equals the earlier one, whatever order they were verified in."""
    return (-moment.confidence, moment.video.title, moment.video.id, moment.start, moment.end)


class FormAnswerer:
    """Answers one question of a form other than "when" over ``video_ids``."""

    def __init__(self, run: RunContext, tools: Toolbox, find: Find, video_ids: list[str]) -> None:
        self.run, self.tools, self.find, self.video_ids = run, tools, find, video_ids
        self.threshold = tools.verifier.threshold

    async def occurrences(self, event: str) -> tuple[list[Moment], list[Moment]]:
        """(distinct verified occurrences in time order, rejected candidates) of ``event``; look-alikes that
        passed the threshold lead the rejected ones."""
        accepted, rejected = decide(await self.find(event, True), self.threshold)
        found, alike = look_alikes(in_order(joined(accepted)))
        return found, alike + rejected

    def _listed(self, target: str, found: list[Moment], rejected: list[Moment]) -> str:
        times = f"{len(found)} time{'s' if len(found) != 1 else ''}"
        return f'"{target}": {times}: {_times(found, len(self.video_ids))}.' + self._not_counted(rejected)

    def _not_counted(self, rejected: list[Moment]) -> str:
        return left_out([m for m in rejected if m.confidence >= self.threshold], "Not counted")

    async def answer(self, question: str, plan: QuestionPlan) -> Answer:
        started = time.monotonic()
        self.run.note("understand", f"a question of the form '{plan.form}'" + "".join(
            f'; {name} "{value}"' for name, value in (("event", plan.target), ("anchor", plan.anchor),
                                                       ("second anchor", plan.anchor_end)) if value))
        if plan.form == "unsupported":
            return self._done(question, plan, False, f"I cannot answer this: {plan.reason}.", [], [], started)
        if plan.form in ("before", "after", "between"):
            return await self._relation(question, plan, started)
        assert plan.target is not None
        found, rejected = await self.occurrences(plan.target)
        if plan.form == "count":
            words = (self._listed(plan.target, found, rejected) if found
                     else "0 times. " + summary(plan.target, [], rejected, len(self.video_ids)))
            return self._done(question, plan, bool(found), words, found, rejected, started, count=len(found))
        if not found:
            return self._done(question, plan, False, summary(plan.target, [], rejected, len(self.video_ids)), [],
                              rejected, started, count=0 if plan.form == "every" else None)
        if plan.form == "every":
            words = self._listed(plan.target, found, rejected)
            return self._done(question, plan, True, words, found, rejected, started, count=len(found))
        if plan.form in ("first", "last"):
            which = ordinal_word(plan.ordinal) if plan.ordinal else plan.form
            if plan.ordinal and plan.ordinal > len(found):
                words = (f'Not found: "{plan.target}" was verified {_times_word(len(found))} '
                         f"({_times(found, len(self.video_ids))}), so there is no {which} time.")
                return self._done(question, plan, False, words, [], rejected, started, ordinal=plan.ordinal)
            chosen = found[(plan.ordinal or 1) - 1] if plan.form == "first" else found[-1]
            others = f" ({len(found)} times in all)" if len(found) > 1 else ""
            words = (f'The {which} time "{plan.target}": {chosen.video.title} at {clock(chosen.start)}–'
                     f"{clock(chosen.end)} (confidence {chosen.confidence:.2f}){others}.")
            return self._done(question, plan, True, words, [chosen], rejected, started, ordinal=plan.ordinal)
        best = min(found, key=_strongest)  # duration
        seconds = round(best.end - best.start, 2)
        words = (f'"{plan.target}" lasts {seconds:.1f} s: {best.video.title} {clock(best.start)}–{clock(best.end)} '
                 f"(confidence {best.confidence:.2f}).")
        return self._done(question, plan, True, words, [best], rejected, started, duration=seconds)

    async def _anchor(self, event: str, after: Moment | None = None) -> tuple[Moment | None, list[Moment], int]:
        """(the anchor's verified occurrence, the rejected candidates, how many occurrences were verified).

        The clearest occurrence (the most confident): a second one of an event that happens once is the
        verifier's weaker mistake, and the earliest would put the answer wherever that mistake fell. With
        ``after`` (the end of a "between"), the first occurrence after it in its video."""
        found, rejected = await self.occurrences(event)
        if after is not None:
            found = [m for m in found if m.video.id == after.video.id and m.start >= after.end - _EDGE]
            return (found[0] if found else None), rejected, len(found)
        return min(found, key=_strongest, default=None), rejected, len(found)

    async def _relation(self, question: str, plan: QuestionPlan, started: float) -> Answer:
        assert plan.anchor is not None
        anchor, rejected, times = await self._anchor(plan.anchor)
        if anchor is None:
            words = (f'Not found: the event it is relative to, "{plan.anchor}", was not confirmed, so nothing can be '
                     f"placed {plan.form} it. " + summary(plan.anchor, [], rejected, len(self.video_ids)))
            return self._done(question, plan, False, words, [], rejected, started)
        anchor_end = None
        if plan.form == "between":
            assert plan.anchor_end is not None
            anchor_end, more, _ = await self._anchor(plan.anchor_end, after=anchor)
            if anchor_end is None:
                words = (f'Not found: "{plan.anchor}" is at {clock(anchor.start)}–{clock(anchor.end)}, but '
                         f'"{plan.anchor_end}" was not confirmed after it.')
                return self._done(question, plan, False, words, [], rejected + more, started,
                                  relation=Relation(kind="between", anchor=anchor))
        relation = Relation(kind=plan.form, anchor=anchor, anchor_end=anchor_end)  # type: ignore[arg-type]
        if plan.target is not None:  # "did X happen before Y": X's occurrences on the right side of Y
            targets, rejected = await self.occurrences(plan.target)
            chosen = [m for m in targets if self._on_side(m, plan.form, anchor, anchor_end)]
            chosen.sort(key=lambda m: abs(self._gap(m, plan.form, anchor)))
            what = f'"{plan.target}"'
        else:  # "what happens after Y": the indexed events on that side, each verified, nearest first
            chosen = await self._neighbours(plan.form, anchor, anchor_end)
            what = "what happens"
        where = f'"{plan.anchor}" ({clock(anchor.start)}–{clock(anchor.end)}' + (
            f", the clearest of the {times} times it was found)" if times > 1 else ")")
        if plan.form == "between":
            where += f' and "{plan.anchor_end}" ({clock(anchor_end.start)}–{clock(anchor_end.end)})'
        if not chosen:
            words = f"Not found: nothing verified {plan.form} {where}" + (f" matches {what}." if plan.target else ".")
            return self._done(question, plan, False, words, [], rejected, started, relation=relation)
        listed = "; ".join(f"{self._text(m)} at {clock(m.start)}–{clock(m.end)}" for m in chosen)
        words = f"{plan.form.capitalize()} {where}: {listed}."
        return self._done(question, plan, True, words, chosen, rejected, started, relation=relation)

    @staticmethod
    def _on_side(moment: Moment, form: str, anchor: Moment, anchor_end: Moment | None) -> bool:
        if moment.video.id != anchor.video.id or iou((moment.start, moment.end), (anchor.start, anchor.end)) > 0.3:
            return False
        # A piece of the anchor itself (a neighbouring chunk's caption of its cut-off end) is not what follows it.
        if form == "before":
            return moment.end <= anchor.start + _EDGE and moment.start < anchor.start - _EDGE
        if form == "after":
            return moment.start >= anchor.end - _EDGE and moment.end > anchor.end + _EDGE
        return anchor_end is not None and moment.start >= anchor.end - _EDGE and moment.end <= anchor_end.start + _EDGE

    @staticmethod
    def _gap(moment: Moment, form: str, anchor: Moment) -> float:
        return anchor.start - moment.end if form == "before" else moment.start - anchor.end

    @staticmethod
    def _text(moment: Moment) -> str:
        said = next((e.text for e in moment.evidence if e.kind in ("caption_event", "fresh_caption") and e.text), "")
        return f'"{said}"' if said else "a moment"

    async def _neighbours(self, form: str, anchor: Moment, anchor_end: Moment | None) -> list[Moment]:
        """The video's indexed events on ``form``'s side of the anchor, nearest first, each whole and verified.

        An event the index caption cut at its chunk's edge (two rows, one per chunk) is grounded again
        in a window that holds it whole, and its other piece is not a neighbour of its own."""
        video = anchor.video
        rows = await asyncio.to_thread(self.tools.library.segments, video.id, "event")
        side = "before" if form == "before" else "after"
        # (row, the whole event, its span, a grounding around the row already made)
        taken: list[tuple[Segment, GroundedSpan | None, tuple[float, float], Evidence | None]] = []
        happenings = [r for r in rows if not idle(r.text)]  # "the backdrop stays empty" is not what happens next
        for row in sorted(happenings, key=lambda r: abs(self._gap(self._probe(video, r.start, r.end), side, anchor))):
            if not self._on_side(self._probe(video, row.start, row.end), form, anchor, anchor_end) or \
                    any(_inside((row.start, row.end), span) for _, _, span, _ in taken):
                continue  # a piece of a neighbour already taken: the same event as the next chunk told it
            try:
                whole, regrounded = await self.tools.whole_caption_event(self.run, video.id, row.text, row)
            except BudgetExhausted as exc:
                self.run.note("budget", exc.message)
                break
            span = (whole.start, whole.end) if whole else (row.start, row.end)
            if self._on_side(self._probe(video, *span), form, anchor, anchor_end) and \
                    not any(iou(span, other) > 0.5 for _, _, other, _ in taken):
                taken.append((row, whole, span, regrounded))
            if len(taken) == NEIGHBOURS:
                break
        verified = []
        for row, whole, _, regrounded in taken:
            try:
                # Checked as the caption events any question retrieves are (the weights were fitted on them).
                # A caption event is something seen, whatever the anchor was (a line said, say).
                checked = await self.tools.verify_caption_event(self.run, video.id, row.text, row, whole,
                                                                regrounded, speech=False)
            except BudgetExhausted as exc:
                self.run.note("budget", exc.message)
                break
            if checked.moment.confidence >= self.threshold:
                verified.append(checked.moment)
        return verified

    @staticmethod
    def _probe(video: VideoRef, start: float, end: float) -> Moment:
        return Moment(video=video, start=start, end=end, confidence=0, evidence=[])

    def _done(self, question: str, plan: QuestionPlan, found: bool, words: str, moments: list[Moment],
              rejected: list[Moment], started: float, **form_fields) -> Answer:
        budget, spent = self.run.marlin_budget, self.run.spent
        incomplete = (f"the budget of {budget} Marlin calls was spent; the answer rests on the moments verified "
                      "until then" if spent else None)
        if spent:
            words += f" (Stopped early: {incomplete}.)"
        return Answer(question=question, found=found, answer=words, moments=moments, rejected=rejected[:10],
                      trace=self.run.trace, form=plan.form, incomplete=incomplete,
                      usage=Usage(marlin_calls=self.run.marlin_calls, seconds=round(time.monotonic() - started, 3)),
                      **form_fields)
