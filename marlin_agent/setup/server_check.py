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
