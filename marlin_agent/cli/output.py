"""What the commands write: one JSON document on stdout, everything else on stderr.

Errors become a JSON error document (``--json``) or a message and hint, and an exit code;
keys the user gave are never echoed back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from marlin_agent.domain import SCHEMA_VERSION
from marlin_agent.errors import MarlinAgentError
from marlin_agent.file_names import escaped_strings, has_undecodable
from marlin_agent.redaction import redact

stderr = Console(stderr=True)


def reopen_console() -> None:
    """Read the terminal and the environment again for ``stderr``: a command forked from the resident
    process inherits a console that was set up where no terminal was (see ``marlin_agent.resident``)."""
    stderr.__init__(stderr=True)


def say(message: str) -> None:
    """A line of progress for long work: always on stderr, so ``--json`` keeps stdout to one document."""
    # Never wrapped: a line in a log (a service's journal, a file) is one line whatever the width.
    stderr.print(f"[dim]{escape(redact(message))}[/]", highlight=False, soft_wrap=True)


class _SayNotices(logging.Handler):
    """The library's warnings (a slow server, a wait for a lock) as progress lines."""

    def emit(self, record: logging.LogRecord) -> None:
        say(self.format(record))


def show_notices() -> None:
    """Route marlin_agent's warnings to stderr as progress lines (once per process)."""
    logger = logging.getLogger("marlin_agent")
    if not any(isinstance(h, _SayNotices) for h in logger.handlers):
        logger.addHandler(_SayNotices(logging.WARNING))
        logger.propagate = False


def secrets_of(settings=None, *more: str | None) -> list[str]:
    """The keys in ``settings`` and ``more``: what output must never show."""
    found = [s for s in more if s]
    if settings is not None:
        for key in (settings.server.api_key, settings.planner.api_key):
            if key is not None:
                found.append(key.get_secret_value())
    return found


def emit_json(document: dict[str, Any], secrets: list[str] | None = None) -> None:
    """One JSON document on stdout; no secret in it (``redaction``), nor any of ``secrets``."""
    text = json.dumps({"schema_version": SCHEMA_VERSION, **document}, ensure_ascii=False)
    if has_undecodable(text):  # a name that is not UTF-8 slipped through: spell it out, never write raw bytes
        text = json.dumps(escaped_strings({"schema_version": SCHEMA_VERSION, **document}), ensure_ascii=False)
    sys.stdout.write(redact(text, secrets) + "\n")
    sys.stdout.flush()


def flag(parameter: str) -> str:
    """A parameter as the command line spells it."""
    return "--" + parameter.replace("_", "-")


def fail(exc: MarlinAgentError, as_json: bool, secrets: list[str] | None = None):
    """Report ``exc`` (a JSON error document, or a message and hint on stderr) and exit with its code."""
    if as_json:
        emit_json({"error": exc.to_dict(flag)}, secrets)
    else:
        stderr.print(f"[bold red]error:[/] {escape(redact(exc.message, secrets))}")
        if hint := exc.hint_for(flag):
            # Hints name extras like 'marlin-agent[mcp]': escaped, or rich would read [mcp] as markup.
            stderr.print(f"[dim]hint:[/] {escape(redact(hint, secrets))}")
    raise typer.Exit(exc.exit_code) from None


def run(as_json: bool, work: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``work``; turn our errors into a JSON error or a one-line message and an exit code."""
    show_notices()
    try:
        return asyncio.run(work())
    except MarlinAgentError as exc:
        fail(exc, as_json)
    except KeyboardInterrupt:
        stderr.print("interrupted")
        raise typer.Exit(130) from None


def run_blocking(as_json: bool, work: Callable[[], Any]) -> Any:
    """``run`` for blocking work (installs, starts): it runs on a thread, errors reported the same way."""

    async def threaded():
        return await asyncio.to_thread(work)

    return run(as_json, threaded)


@contextmanager
def chunk_progress(label: str, enabled: bool):
    """A progress bar over chunks on stderr; ``None`` when stderr is not a terminal."""
    if not enabled or not stderr.is_terminal:
        yield None
        return
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=stderr, transient=True) as progress:
        task = progress.add_task(label, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


class _Count(ProgressColumn):
    """done/total, or nothing while the total is unknown (no "0/?")."""

    def render(self, task: Task) -> Text:
        return Text("" if task.total is None else f"{task.completed:.0f}/{task.total:.0f}", style="progress.download")


@contextmanager
def index_progress(enabled: bool):
    """An overall bar for indexing runs and one per video being captioned, on stderr when it is a terminal."""
    if not enabled or not stderr.is_terminal:
        yield None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), _Count(), TimeElapsedColumn())
    with Progress(*columns, console=stderr, transient=True) as progress:
        overall = progress.add_task("looking at the footage", total=None)
        per_video: dict[str, TaskID] = {}

        def update(event) -> None:
            known = event.overall_total or not event.looking
            description = "all chunks" + (f" (looking at {event.looking} more videos)" if event.looking else "")
            progress.update(overall, description=description, completed=event.overall_done,
                            total=event.overall_total if known else None)
            if not event.video:
                return
            finished = event.phase == "done" or (event.phase == "captioning" and event.video_done >= event.video_total)
            if finished:  # (or nothing to do: no bar of its own)
                if event.video in per_video:
                    progress.remove_task(per_video.pop(event.video))
                return
            if event.video not in per_video:
                per_video[event.video] = progress.add_task(f"  {event.video}", total=event.video_total)
            # After its chunks, a video's bar says what it waits for: its transcript, or the index writes.
            phase = "" if event.phase == "captioning" else f" ({event.phase})"
            progress.update(per_video[event.video], completed=event.video_done, description=f"  {event.video}{phase}")

        yield update
