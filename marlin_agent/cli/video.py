"""Commands over one video with Marlin's raw skills: `caption`, `describe`, `find`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from marlin_agent.cli.options import (
    DbOpt,
    EndOpt,
    JsonOpt,
    NoTranscribeOpt,
    ServerFlags,
    StartOpt,
    VideoArg,
    served,
    takes_server_flags,
)
from marlin_agent.cli.output import chunk_progress, emit_json, run, say
from marlin_agent.cli.running import library_command


def _scan_command(as_json: bool, label: str, server: ServerFlags, scan, show) -> None:
    """Shared body of the chunk-by-chunk commands: settings, client, progress, output."""
    from marlin_agent.marlin import MarlinClient

    async def work():
        settings = await served(server.settings(), say)
        async with MarlinClient(settings.server) as client:
            with chunk_progress(label, not as_json) as progress:
                return await scan(settings, client, progress)

    result = run(as_json, work)
    if as_json:
        emit_json(result.model_dump(mode="json"))
    else:
        show(Console(), result)


@takes_server_flags
def caption_command(
    video: VideoArg, start: StartOpt = None, end: EndOpt = None, as_json: JsonOpt = False, *, server: ServerFlags,
) -> None:
    """Describe a video: a scene paragraph per ~60 s chunk and time-ranged events."""
    from marlin_agent.cli.render import show_caption
    from marlin_agent.marlin.scan import caption_video

    _scan_command(
        as_json, "captioning", server,
        lambda settings, client, progress: caption_video(video, settings, client, start, end, progress),
        show_caption,
    )


@takes_server_flags
def describe_command(
    video: VideoArg,
    max_chars: Annotated[int, typer.Option(
        "--max-chars", min=40, help="Longest summary to print, in characters (500 is what OpenClaw keeps by default).")]
    = 500,
    no_speech: Annotated[bool, typer.Option("--no-speech", help="Leave out what is said (no transcription).")] = False,
    time_limit: Annotated[float, typer.Option(
        "--time-limit", min=0, help="Seconds to spend at most (0: no limit); an unindexed video is described as far "
        "as it got. Under OpenClaw's 120 s by default.")] = 100.0,
    db: DbOpt = None, *, server: ServerFlags,
) -> None:
    """Print a plain-text summary of a video (scenes, timed events, speech) for hosts that want prose."""
    from marlin_agent.app.describe import describe_video

    async def work():
        return await describe_video(video, server.settings(**{"library.db": db}), max_chars=max_chars,
                                    speech=not no_speech, time_limit=time_limit or None,
                                    serve=lambda settings: served(settings, say), warn=say)

    print(run(False, work))


@takes_server_flags
def find_command(
    event: Annotated[str, typer.Argument(
        metavar="EVENT", help='The event to ground, e.g. "a red ball rolls in".', show_default=False)],
    video: VideoArg, start: StartOpt = None, end: EndOpt = None, as_json: JsonOpt = False,
    verify: Annotated[bool, typer.Option(
        "--verify", help="Index the video and return verified moments with evidence (the `ask` document) instead of "
        "raw candidates.")] = False,
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, *, server: ServerFlags,
) -> None:
    """Ground an event: one candidate span per chunk searched, best first (unverified unless --verify)."""
    from marlin_agent.cli.render import show_answer, show_find
    from marlin_agent.marlin.scan import find_in_video

    if verify:
        from marlin_agent.app.ask import verify_find

        library_command(as_json, server, db, no_transcribe,
                        lambda settings, progress: verify_find(event, video, settings, start, end, progress),
                        show_answer)
        return
    _scan_command(
        as_json, "grounding", server,
        lambda settings, client, progress: find_in_video(event, video, settings, client, start, end, progress),
        show_find,
    )
