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


# A description that plainly shows the event: any working judge scores it high.
_JUDGE_CHECK = ("Event: a dog barks at the gate\n\nDescription of the clip (0.0–6.0 s):\n"
                "Scene: a small front garden with a wooden gate.\n<0.5 - 4.0> a brown dog barks at the gate")


async def probe_planner(settings: Settings) -> PlannerProbe:
    """One judge request to the planner LLM: it must answer through a tool call with a verdict,
    as verification will ask it to (a server without tool calling fails here)."""
    from marlin_agent.chat_model import planner_model
    from marlin_agent.errors import PlannerUnavailable
    from marlin_agent.planners.llm import judge_agent

    started = time.monotonic()
    try:
        result = await judge_agent(planner_model(settings.planner)).run(_JUDGE_CHECK)
    except Exception as exc:  # the model library's own errors: the server's answer is the news
        raise PlannerUnavailable(f"the planner {settings.planner.model} did not answer a judge request: "
                                 f"{type(exc).__name__}: {str(exc)[:300]}",
                                 hint="Check the planner server's log (marlin-agent engine logs ENGINE --role "
                                 "planner); it must serve tool calls.") from exc
    return PlannerProbe(model=settings.planner.model, base_url=settings.planner.base_url,
                        verdict=result.output.score, seconds=round(time.monotonic() - started, 2))
