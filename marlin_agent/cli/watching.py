"""`marlin-agent watch`: standing questions over folders and live streams, with alerts."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape

from marlin_agent.cli.options import DbOpt, JsonOpt, NoTranscribeOpt, ServerFlags, served, takes_server_flags
from marlin_agent.cli.output import emit_json, run, say, secrets_of
from marlin_agent.clock import clock


def _show(console: Console, alert) -> None:
    where = f"{alert.video.title or alert.video.path} {clock(alert.start)}–{clock(alert.end)}"
    when = f" (at {alert.wall_start})" if alert.wall_start else ""
    console.print(f"[bold green]ALERT[/] {escape(alert.question)}: {escape(where)}{escape(when)}, "
                  f"confidence {alert.confidence:.2f}", highlight=False)
    for item in alert.evidence[:3]:
        console.print(f"  [dim]{escape(item.kind)} {item.score:.2f}:[/] {escape(item.text[:120])}", highlight=False)
    for label, path in (("clip", alert.clip), ("thumbnail", alert.thumbnail)):
        if path:
            console.print(f"  [dim]{label}:[/] {escape(path)}", highlight=False)


def _stop_on_signals(stop: asyncio.Event) -> None:
    """The first SIGINT or SIGTERM finishes the footage in hand and stops; a second stops at once."""
    loop = asyncio.get_running_loop()

    def handle(number: int) -> None:
        if stop.is_set():
            os._exit(128 + number)
        say("stopping: finishing the footage in hand (again to stop at once; the rest is judged next start)")
        stop.set()

    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, handle, number)


@takes_server_flags
def watch_command(
    sources: Annotated[list[str], typer.Argument(
        metavar="SOURCE", help="Folders (new files, recursive) and live streams: rtsp://, rtmp://, http(s):// incl. "
        "HLS .m3u8; rtsp://HOST:PORT/PATH?listen waits for a camera to push.", show_default=False)],
    questions: Annotated[list[str], typer.Option(
        "--ask", metavar="QUESTION", help='A standing question, e.g. "when is a parcel delivered" (repeatable).')],
    notify: Annotated[Optional[list[str]], typer.Option(
        "--notify", metavar="TARGET", help="Where alerts go besides the alert log: https://… (JSON POST; #inline adds "
        "the pictures), mqtt://HOST[:PORT]/TOPIC (?discovery=homeassistant: an entity per question), cmd:PROGRAM "
        "(alert JSON on stdin), or a notification service's Apprise URL (slack://…, discord://…, tgram://…, ntfy://…, "
        "mailto://…): a message for people; or a kind an installed package adds (docs/watch.md). Secrets as ${NAME}, "
        "from credentials.toml [watch.secrets] or the environment. Repeatable.")] = None,
    backlog: Annotated[bool, typer.Option(
        "--backlog", help="On a first start, also judge the files a folder already holds (default: only what "
        "arrives).")] = False,
    cooldown: Annotated[Optional[float], typer.Option(
        "--cooldown", min=0, help="Seconds the same question stays quiet on the same footage after an alert (config: "
        "watch.cooldown_seconds).")] = None,
    retention: Annotated[Optional[float], typer.Option(
        "--retention", min=0, help="Hours recorded stream segments are kept once judged; 0 keeps all (config: "
        "watch.retention_hours).")] = None,
    threshold: Annotated[Optional[float], typer.Option(
        "--threshold", min=0, max=1, help="Confidence a moment needs to raise an alert.")] = None,
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False, *, server: ServerFlags,
) -> None:
    """Keep asking questions of footage as it arrives, and alert once per occurrence (verified, with a clip)."""
    from marlin_agent.watch.runner import Watcher

    console = Console()

    async def body() -> int:
        settings = server.settings(**{"library.db": db, "library.transcribe": False if no_transcribe else None,
                                      "watch.cooldown_seconds": cooldown, "watch.retention_hours": retention,
                                      "agent.threshold": threshold})
        watcher = Watcher(sources, questions, settings, notify or [], backlog=backlog, say=say)
        settings = watcher.settings = await served(settings, say)
        stop = asyncio.Event()
        _stop_on_signals(stop)
        secrets = secrets_of(settings)
        alerts = 0
        async for event in watcher.run(stop):
            if event.type != "alert":
                continue
            alerts += 1
            if as_json:
                emit_json(event.model_dump(mode="json"), secrets)
            else:
                _show(console, event)
        say(f"stopped: {alerts} alert(s) this run; log {watcher.log.path}")
        return alerts

    run(as_json, body)
