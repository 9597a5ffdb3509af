"""Finding the candidates for an event: the moments that might be it, each verified.

Both planners use it: the pipeline for every question, the LLM planner for the forms beyond
"when" (every, count, before and after ...). Retrieval narrows the library to a few windows of
at most ~60 s (Marlin's timeline); Marlin grounds the event in each; the best caption events no
grounded span covers and the transcript lines among the hits are candidates too. Every
candidate is verified, because find answers even for things that never happen; which of them
count is for ``conclude`` and the operators to say.
"""

from __future__ import annotations

import asyncio

from marlin_agent.config import Settings
from marlin_agent.domain import Moment, VideoRef
from marlin_agent.errors import BudgetExhausted, MarlinAgentError, ServerNotConfigured
from marlin_agent.library.records import SearchHit
from marlin_agent.tools import Toolbox, centred_window
from marlin_agent.tools.run_context import RunContext
from marlin_agent.tools.trace_order import branches
from marlin_agent.verification.claims import Claim, Source
from marlin_agent.verification.spans import iou
from marlin_agent.verification.verifier import about_speech

SEARCH_DEPTH = 20
# Retrieved caption events verified besides the grounded spans (each costs a find and a fresh caption).
DESCRIBED_CANDIDATES = 2


def candidate_windows(hits: list[SearchHit], durations: dict[str, float],
                      limit: int) -> list[tuple[SearchHit, float, float]]:
    """Windows of at most ~60 s centred on the best hits; a hit inside a chosen window adds nothing."""
    windows: list[tuple[SearchHit, float, float]] = []
    for hit in hits:
        duration = durations.get(hit.video.id)
        if duration is None:
            continue
        if any(w[0].video.id == hit.video.id and w[1] <= hit.start and hit.end <= w[2] for w in windows):
            continue
        windows.append((hit, *centred_window(hit.start, hit.end, duration)))
        if len(windows) == limit:
            break
    return windows


class Candidates:
    """The verified candidates for an event over some videos."""

    def __init__(self, settings: Settings, tools: Toolbox) -> None:
        self.settings = settings
        self.tools = tools

    async def _check(self, run: RunContext, event: str, ref: VideoRef, start: float, end: float) -> list[Moment]:
        """Ground the event in one window and verify what Marlin found there."""
        grounding = await self.tools.find(run, ref.id, event, start, end)
        for failure in grounding.failures:
            run.note("find", f"{ref.title}: {failure}")
        moments = []
        for found in grounding.spans:
            found = await self.tools.whole_span(run, ref.id, event, found)
            claim = Claim(ref.id, event, found.start, found.end, window=(found.window_start, found.window_end))
            moments.append((await self.tools.check(run, claim)).moment)
        return moments

    async def check_windows(self, run: RunContext, event: str,
                            windows: list[tuple[VideoRef, float, float]]) -> list[Moment]:
        checked = await asyncio.gather(*branches(self._check(run, event, ref, s, e) for ref, s, e in windows),
                                       return_exceptions=True)
        moments: list[Moment] = []
        for (ref, s, e), outcome in zip(windows, checked, strict=True):
            if isinstance(outcome, MarlinAgentError) and not outcome.stops_run:
                run.note("find", f"{ref.title} {s:.1f}–{e:.1f} s failed: {outcome.message}")
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                moments.extend(outcome)
        return moments

    async def moments(self, run: RunContext, event: str, video_ids: list[str],
                      exhaustive: bool = False) -> list[Moment]:
        """Every candidate checked for ``event``, verified or not. ``exhaustive`` (every, count ...)
        looks at more windows and more caption events: each occurrence must be found, not just the best."""
        speech = about_speech(event)
        run.note("understand", f'grounding the event "{event}"'
                        + (" (a question about what is said: answered from the transcript)" if speech else ""))
        search = await self.tools.search(run, event, SEARCH_DEPTH * (2 if exhaustive else 1), video_ids)
        records = {v: await asyncio.to_thread(self.tools.library.get_video, v) for v in video_ids}
        durations = {v: r.duration for v, r in records.items() if r}
        limit = self.settings.agent.max_windows * (3 if exhaustive else 1)
        windows = candidate_windows(search.hits, durations, limit)
        run.note("plan", f"{len(windows)} candidate windows from {len(search.hits)} hits")
        moments = await self._spoken(run, event, search.hits, speech)
        if not speech:  # Marlin sees, it does not hear: what is said is in the transcript
            if windows and self.tools.client is None:
                raise ServerNotConfigured("answering needs Marlin to ground the event, and no server is configured")
            moments += await self.check_windows(run, event, [(hit.video, s, e) for hit, s, e in windows])
            moments += await self._described(run, event, search.hits, moments,
                                             DESCRIBED_CANDIDATES * (4 if exhaustive else 1))
        return moments

    async def _described(self, run: RunContext, event: str, hits: list[SearchHit], grounded: list[Moment],
                         limit: int = DESCRIBED_CANDIDATES) -> list[Moment]:
        """The best caption events that no grounded span covers, verified as candidates of their own.

        Marlin's find lands on the most similar thing in a window, and on a clip with two look-alike
        events that can be the wrong one; the dense caption already timed every event (to about
        half a second), so the retrieved events are candidates too. Each is grounded once around
        its span: a candidate Marlin did not propose for this question must at least be where
        Marlin grounds it (the find, with the fresh caption, keeps it at two calls). A piece of an
        event the index cut at a chunk's edge is grounded in a window that holds it whole instead, and
        Marlin's span there is the candidate.
        """
        moments = []
        events = [hit for hit in hits if hit.source == "event"][:limit]
        for hit in events:
            covered = any(m.video.id == hit.video.id and iou((m.start, m.end), (hit.start, hit.end)) > 0.3
                          for m in grounded + moments)
            if not covered:
                try:
                    row = await self.tools.caption_event_at(run, hit.video.id, hit.start, hit.end, hit.text)
                    checked = await (self.tools.verify_caption_event(
                        run, hit.video.id, event, row,
                        *await self.tools.whole_caption_event(run, hit.video.id, event, row))
                        if row else self.tools.check(run, Claim(hit.video.id, event, hit.start, hit.end,
                                                                Source.CAPTION), reground=True))
                except BudgetExhausted as exc:  # the answer rests on what was verified until then
                    run.note("budget", exc.message)
                    break
                moments.append(checked.moment)
        return moments

    async def _spoken(self, run: RunContext, event: str, hits: list[SearchHit], speech: bool) -> list[Moment]:
        """Moments that are said rather than shown: transcript lines among the best hits.

        Marlin grounds what it sees, so an event that exists only in speech would otherwise
        never be confirmed; the line's own span is the candidate, and the verifier reads it like
        any other (for a question about what is seen, speech alone cannot confirm it).
        """
        reach = len(hits) if speech else self.settings.agent.max_windows * 2
        lines = [hit for hit in hits[:reach] if hit.source == "transcript"]
        return [(await self.tools.check(run, Claim(hit.video.id, event, hit.start, hit.end, Source.SPEECH,
                                                   said=hit.text))).moment for hit in lines]
