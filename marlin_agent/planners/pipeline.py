"""The pipeline planner (no LLM, the default): question → event → candidates → ground → verify.

Retrieval narrows the library to a few windows of at most ~60 s (Marlin's timeline);
Marlin grounds the event in each; every span is then verified, because find answers even
for things that never happen. When nothing passes, the answer says so and shows what was
checked and why each candidate was rejected.
"""

from __future__ import annotations

import asyncio
import time

from marlin_agent.config import Settings
from marlin_agent.domain import Answer, Moment, Usage, VideoRef
from marlin_agent.errors import MarlinAgentError, ServerNotConfigured
from marlin_agent.library.store import SearchHit
from marlin_agent.planners.conclude import decide, summary
from marlin_agent.planners.phrasing import event_description
from marlin_agent.tools import Toolbox, centred_window
from marlin_agent.verification.confidence import confidence
from marlin_agent.verification.entailment import entailment_model
from marlin_agent.verification.signals import entailment_evidence, iou, spoken, text_evidence, text_similarities

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
        return [(await self.tools.verify_span(ref.id, event, s.start, s.end, (s.window_start, s.window_end))).moment
                for s in grounding.spans]

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
        self.tools.note("understand", f'grounding the event "{event}"')
        search = await self.tools.search(event, _SEARCH_DEPTH, video_ids)
        records = {v: await asyncio.to_thread(self.tools.library.get_video, v) for v in video_ids}
        durations = {v: r.duration for v, r in records.items() if r}
        windows = candidate_windows(search.hits, durations, self.settings.agent.max_windows)
        self.tools.note("plan", f"{len(windows)} candidate windows from {len(search.hits)} hits")
        if windows and self.tools.client is None:
            raise ServerNotConfigured("answering needs Marlin to ground the event, and no server is configured")
        moments = await self._spoken(event, search.hits)
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
        moments = [(await self.tools.verify_span(video_id, event, s.start, s.end, (s.window_start, s.window_end))).moment
                   for s in grounding.spans]
        return self.conclude(event, event, moments, 1, started)

    async def _spoken(self, event: str, hits: list[SearchHit]) -> list[Moment]:
        """Moments that are said rather than shown: transcript lines among the best hits.

        Marlin grounds what it sees, so an event that exists only in speech would otherwise
        never be confirmed; the line's own span is the candidate and whether it says the
        event (entailment) the evidence.
        """
        lines = [hit for hit in hits[: self.settings.agent.max_windows * 2] if hit.source == "transcript"]
        if not lines:
            return []
        model = await asyncio.to_thread(entailment_model, self.settings.verify, self.settings.cache_dir)
        scores = await asyncio.to_thread(model.score, [(spoken(hit.text), event) for hit in lines])
        query = await self.tools.embed_query(event)
        similarities = await asyncio.to_thread(text_similarities, self.tools.library.embedder.embed, event, query,
                                               [hit.text for hit in lines])
        moments = []
        verify = self.settings.verify
        for hit, score, similarity in zip(lines, scores, similarities):
            row = hit.model_dump()
            evidence = [e for e in (entailment_evidence("transcript", (hit.start, hit.end), [row], [score]),
                                    text_evidence("similarity", (hit.start, hit.end), [row], [similarity])) if e]
            if evidence:
                moments.append(Moment(video=hit.video, start=hit.start, end=hit.end, evidence=evidence,
                                      confidence=confidence(evidence, verify.weights, verify.bias)))
        return moments

    def conclude(self, question: str, event: str, moments: list[Moment], videos: int, started: float) -> Answer:
        accepted, rejected = decide(moments, self.settings.agent.threshold)
        return Answer(question=question, found=bool(accepted), answer=summary(event, accepted, rejected, videos),
                      moments=accepted, rejected=rejected, trace=self.tools.trace,
                      usage=Usage(marlin_calls=self.tools.marlin_calls, seconds=round(time.monotonic() - started, 3)))
