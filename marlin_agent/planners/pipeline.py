"""The pipeline planner (no LLM, the default): question → form and event → candidates → verify → answer.

The question's form decides the answer: "when" keeps the verified moments of the event (see
``candidates``), the other forms go to the operators (every, count, before and after ...).
When nothing passes, the answer says so and shows what was checked and why each candidate was
rejected.
"""

from __future__ import annotations

import time

from marlin_agent.config import Settings
from marlin_agent.domain import Answer, Moment, Usage, VideoRef
from marlin_agent.planners.candidates import Candidates, candidate_windows
from marlin_agent.planners.conclude import decide, left_out, look_alikes, summary
from marlin_agent.planners.operators import FormAnswerer
from marlin_agent.planners.phrasing import event_description
from marlin_agent.planners.question_forms import read_question
from marlin_agent.tools import Toolbox
from marlin_agent.tools.run_context import RunContext
from marlin_agent.verification.claims import Claim

__all__ = ["PipelinePlanner", "candidate_windows", "event_description"]


class PipelinePlanner:
    def __init__(self, settings: Settings, tools: Toolbox) -> None:
        self.settings = settings
        self.tools = tools
        self.candidates = Candidates(settings, tools)

    def run_for(self, video_ids: list[str]) -> RunContext:
        """A question's run over ``video_ids``: the pipeline's plan bounds what it spends, so no budget."""
        return RunContext(scope=video_ids)

    async def check_windows(self, run: RunContext, event: str,
                            windows: list[tuple[VideoRef, float, float]]) -> list[Moment]:
        return await self.candidates.check_windows(run, event, windows)

    async def answer(self, run: RunContext, question: str, video_ids: list[str]) -> Answer:
        plan = read_question(question)
        if plan.form != "when":  # every, count, first, last, before, after, between, duration
            return await FormAnswerer(run, self.tools,
                                      lambda event, every: self.candidates.moments(run, event, video_ids, every),
                                      video_ids).answer(question, plan)
        started = time.monotonic()
        event = plan.target or event_description(question)
        moments = await self.candidates.moments(run, event, video_ids)
        return self.conclude(run, question, event, moments, len(video_ids), started)

    async def verify_in_video(self, run: RunContext, event: str, video_id: str, start: float | None,
                              end: float | None) -> Answer:
        """``find --verify``: ground ``event`` in every chunk of one video and keep what the evidence backs."""
        started = time.monotonic()
        grounding = await self.tools.find(run, video_id, event, start, end)
        moments = []
        for found in grounding.spans:
            found = await self.tools.whole_span(run, video_id, event, found)
            claim = Claim(video_id, event, found.start, found.end, window=(found.window_start, found.window_end))
            moments.append((await self.tools.check(run, claim)).moment)
        return self.conclude(run, event, event, moments, 1, started)

    def conclude(self, run: RunContext, question: str, event: str, moments: list[Moment], videos: int,
                 started: float) -> Answer:
        accepted, rejected = decide(moments, self.tools.verifier.threshold)
        # Every moment here was verified for the one event asked, so their descriptions can be compared: one
        # that says much less of it than another passed on the other signals alone (see ``look_alikes``).
        accepted, alike = look_alikes(accepted)
        rejected = alike + rejected
        text = summary(event, accepted, rejected, videos) + left_out(alike)
        return Answer(question=question, found=bool(accepted), answer=text,
                      moments=accepted, rejected=rejected, trace=run.trace,
                      usage=Usage(marlin_calls=run.marlin_calls, seconds=round(time.monotonic() - started, 3)))
