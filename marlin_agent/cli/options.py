"""Flags shared by several commands, declared once, and the settings they build."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Optional

import typer

from marlin_agent.config import Settings, load_settings

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout; logs go to stderr.")]
BaseUrlOpt = Annotated[Optional[str], typer.Option("--base-url", help="Marlin server API root (env MARLIN_BASE_URL).")]
ApiKeyOpt = Annotated[Optional[str], typer.Option("--api-key", help="API key for the server (env MARLIN_API_KEY).")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", help="Model name the server serves (env MARLIN_MODEL).")]
MediaOpt = Annotated[Optional[str], typer.Option("--media", help="How clips reach the server: auto, file or base64 (env MARLIN_MEDIA).")]
ConcurrencyOpt = Annotated[Optional[int], typer.Option("--concurrency", help="Requests in flight at once.")]
ChunkOpt = Annotated[Optional[float], typer.Option("--chunk-seconds", help="Chunk length; Marlin reads ~60 s at a time.")]
StartOpt = Annotated[Optional[float], typer.Option("--start", help="Only look from this second on.")]
EndOpt = Annotated[Optional[float], typer.Option("--end", help="Only look up to this second.")]
VideoArg = Annotated[Path, typer.Argument(help="A video file.", show_default=False)]
DbOpt = Annotated[Optional[str], typer.Option("--db", help="The index database (default $MARLIN_HOME/index).")]
NoTranscribeOpt = Annotated[bool, typer.Option("--no-transcribe", help="Skip speech transcription this run.")]


def settings_from(base_url, api_key, model, media, concurrency, chunk_seconds, **more) -> Settings:
    """The settings with the server flags (and any dotted ``more``) laid over env, user file and defaults."""
    return load_settings({
        "server.base_url": base_url, "server.api_key": api_key, "server.model": model,
        "server.media": media, "server.concurrency": concurrency, "media.chunk_seconds": chunk_seconds,
        **more,
    })


async def served(settings: Settings, say) -> Settings:
    """``settings`` with a server: as configured, else the local engine, started if need be."""
    from marlin_agent.engines import ensure_server

    return await asyncio.to_thread(ensure_server, settings, say)
