"""The pipeline planner (no LLM, the default): question → event → candidates → ground → verify.

Retrieval narrows the library to a few windows of at most ~60 s (Marlin's timeline);
Marlin grounds the event in each; every span is then verified, because find answers even
for things that never happen. When nothing passes, the answer says so and shows what was
checked and why each candidate was rejected.
"""

from __future__ import annotations

import asyncio
import time

from marlin_agent.clock import clock
from marlin_agent.config import Settings
from marlin_agent.domain import Answer, Evidence, Moment, Usage, VideoRef
from marlin_agent.errors import MarlinAgentError, ServerNotConfigured
from marlin_agent.library.store import SearchHit
from marlin_agent.planners.conclude import decide, summary
from marlin_agent.planners.phrasing import event_description
from marlin_agent.tools import Toolbox, centred_window
from marlin_agent.verification.signals import iou
from marlin_agent.verification.verifier import about_speech

__all__ = ["PipelinePlanner", "candidate_windows", "event_description"]

_SEARCH_DEPTH = 20
# Retrieved caption events verified besides the grounded spans (each costs a find and a fresh caption).
_DESCRIBED_CANDIDATES = 2

def candidate_windows(hits: list[SearchHit], durations: dict[str, float], limit: int) -> list[tuple[SearchHit, float, float]]:
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


class PipelinePlanner:
    def __init__(self, settings: Settings, tools: Toolbox) -> None:
        self.settings = settings
        self.tools = tools

    async def _check(self, event: str, ref: VideoRef, start: float, end: float) -> list[Moment]:
        """Ground the event in one window and verify what Marlin found there."""
        grounding = await self.tools.find(ref.id, event, start, end)
        for failure in grounding.failures:
            self.tools.note("find", f"{ref.title}: {failure}")
        moments = []
        for found in grounding.spans:
            found = await self.tools.whole_span(ref.id, event, found)
            moments.append((await self.tools.verify_span(ref.id, event, found.start, found.end,
                                                         (found.window_start, found.window_end))).moment)
        return moments

    async def check_windows(self, event: str, windows: list[tuple[VideoRef, float, float]]) -> list[Moment]:
        checked = await asyncio.gather(*(self._check(event, ref, s, e) for ref, s, e in windows),
                                       return_exceptions=True)
        moments: list[Moment] = []
        for (ref, s, e), outcome in zip(windows, checked):
            if isinstance(outcome, MarlinAgentError) and not getattr(outcome, "stops_run", False):
                self.tools.note("find", f"{ref.title} {s:.1f}–{e:.1f} s failed: {outcome.message}")
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                moments.extend(outcome)
        return moments

    async def answer(self, question: str, video_ids: list[str]) -> Answer:
        started = time.monotonic()
        event = event_description(question)
        self.tools.speech_question = about_speech(question)
        self.tools.note("understand", f'grounding the event "{event}"'
                        + (" (a question about what is said: answered from the transcript)"
                           if self.tools.speech_question else ""))
        search = await self.tools.search(event, _SEARCH_DEPTH, video_ids)
        records = {v: await asyncio.to_thread(self.tools.library.get_video, v) for v in video_ids}
        durations = {v: r.duration for v, r in records.items() if r}
        windows = candidate_windows(search.hits, durations, self.settings.agent.max_windows)
        self.tools.note("plan", f"{len(windows)} candidate windows from {len(search.hits)} hits")
        moments = await self._spoken(event, search.hits)
        if not self.tools.speech_question:  # Marlin sees, it does not hear: what is said is in the transcript
            if windows and self.tools.client is None:
                raise ServerNotConfigured("answering needs Marlin to ground the event, and no server is configured")
            moments += await self.check_windows(event, [(hit.video, s, e) for hit, s, e in windows])
            moments += await self._described(event, search.hits, moments)
        return self.conclude(question, event, moments, len(video_ids), started)

    async def _described(self, event: str, hits: list[SearchHit], grounded: list[Moment]) -> list[Moment]:
        """The best caption events that no grounded span covers, verified as candidates of their own.

        Marlin's find lands on the most similar thing in a window, and on a clip with two look-alike
        events that can be the wrong one; the dense caption already timed every event (to about
        half a second), so the retrieved events are candidates too. Each is grounded once around
        its span: a candidate Marlin did not propose for this question must at least be where
        Marlin grounds it (the find, with the fresh caption, keeps it at two calls).
        """
        moments = []
        events = [hit for hit in hits if hit.source == "event"][: _DESCRIBED_CANDIDATES]
        for hit in events:
            covered = any(m.video.id == hit.video.id and iou((m.start, m.end), (hit.start, hit.end)) > 0.3
                          for m in grounded + moments)
            if not covered:
                checked = await self.tools.verify_span(hit.video.id, event, hit.start, hit.end, proposed_by="caption",
                                                  reground=True)
                moments.append(checked.moment)
        return moments

    async def verify_in_video(self, event: str, video_id: str, start: float | None, end: float | None) -> Answer:
        """``find --verify``: ground ``event`` in every chunk of one video and keep what the evidence backs."""
        started = time.monotonic()
        grounding = await self.tools.find(video_id, event, start, end)
        self.tools.speech_question = about_speech(event)
        moments = []
        for found in grounding.spans:
            found = await self.tools.whole_span(video_id, event, found)
            moments.append((await self.tools.verify_span(video_id, event, found.start, found.end,
                                                         (found.window_start, found.window_end))).moment)
        return self.conclude(event, event, moments, 1, started)

    async def _spoken(self, event: str, hits: list[SearchHit]) -> list[Moment]:
        """Moments that are said rather than shown: transcript lines among the best hits.

        Marlin grounds what it sees, so an event that exists only in speech would otherwise
        never be confirmed; the line's own span is the candidate, and the verifier reads it like
        any other (for a question about what is seen, speech alone cannot confirm it).
        """
        reach = len(hits) if self.tools.speech_question else self.settings.agent.max_windows * 2
        lines = [hit for hit in hits[:reach] if hit.source == "transcript"]
        moments = []
        verifier = self.tools.verifier
        for hit in lines:
            texts = await self.tools.span_texts(hit.video.id, event, (hit.start, hit.end))
            evidence = [Evidence(kind="grounding", text=f'said at {clock(hit.start)}–{clock(hit.end)}: "{hit.text}"',
                                 start=hit.start, end=hit.end, score=1.0)]
            evidence += await asyncio.to_thread(verifier.read, texts)
            moments.append(Moment(video=hit.video, start=hit.start, end=hit.end, evidence=evidence,
                                  confidence=verifier.confidence(evidence, self.tools.speech_question)))
        return moments

    def conclude(self, question: str, event: str, moments: list[Moment], videos: int, started: float) -> Answer:
        accepted, rejected = decide(moments, self.tools.verifier.threshold)
        return Answer(question=question, found=bool(accepted), answer=summary(event, accepted, rejected, videos),
                      moments=accepted, rejected=rejected, trace=self.tools.trace,
                      usage=Usage(marlin_calls=self.tools.marlin_calls, seconds=round(time.monotonic() - started, 3)))
