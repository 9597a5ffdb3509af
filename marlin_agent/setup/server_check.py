"""One real request to a server: does it list Marlin, and does it caption a video?

``setup`` runs this before it stores a choice and ``doctor`` runs it to check one; a
server that lists models but cannot read video (an engine without video input, the
wrong model) fails here rather than in the middle of someone's indexing run.
"""

from __future__ import annotations

import time

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.errors import ModelNotServed, ServerError


class ProbeResult(BaseModel):
    base_url: str
    models: list[str]
    model: str
    scene: str
    format_ok: bool
    seconds: float


async def probe_server(settings: Settings) -> ProbeResult:
    from marlin_agent.marlin import MarlinClient
    from marlin_agent.marlin.scan import caption_video
    from marlin_agent.setup.check_clip import write_check_clip

    started = time.monotonic()
    async with MarlinClient(settings.server) as client:
        models = await client.served_models()
        if settings.server.model not in models:
            raise ModelNotServed(f"the server serves {', '.join(models) or 'no models'}, not {settings.server.model}")
        clip = write_check_clip(settings.cache_dir / "probe" / "probe.mp4")
        result = await caption_video(clip, settings, client)
    if result.failures:
        failure = result.failures[0]
        raise ServerError(f"the test caption failed ({failure.code}): {failure.message}")
    chunk = result.chunks[0]
    return ProbeResult(base_url=client.base_url, models=models, model=settings.server.model, scene=chunk.scene[:200],
                       format_ok=chunk.format_ok, seconds=round(time.monotonic() - started, 2))


class PlannerProbe(BaseModel):
    model: str
    base_url: str | None
    verdict: float  # the judge's score for an event its test description plainly shows
    seconds: float


async def probe_planner(settings: Settings) -> PlannerProbe:
    """One judge request to the planner LLM, asked as verification asks it (a JSON verdict, in the form its
    server takes one, which is found out and remembered here). A server that cannot be reached or answers
    with an error fails with what happened."""
    from pydantic_ai import RunUsage

    from marlin_agent.domain import Event, VideoRef
    from marlin_agent.llm.models import planner_llm
    from marlin_agent.planners.llm import PlannerJudge
    from marlin_agent.tools import SpanCaption

    started = time.monotonic()
    judge = PlannerJudge(planner_llm(settings.planner, settings.home), RunUsage(), settings.planner.max_tokens,
                         settings.planner.request_timeout)
    # A description that plainly shows the event: any working judge scores it high.
    caption = SpanCaption(video=VideoRef(id="check", path="", title="check"), start=0.0, end=6.0,
                          scenes=["a small front garden with a wooden gate."],
                          events=[Event(start=0.5, end=4.0, text="a brown dog barks at the gate")], fresh=True)
    score, _ = await judge("a dog barks at the gate", caption)
    return PlannerProbe(model=settings.planner.model, base_url=settings.planner.base_url,
                        verdict=score, seconds=round(time.monotonic() - started, 2))
