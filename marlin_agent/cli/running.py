"""How a command over the library runs: its settings and server, its progress, its output and exit code."""

from __future__ import annotations

import typer
from rich.console import Console

from marlin_agent.cli.options import ServerFlags, served
from marlin_agent.cli.output import emit_json, index_progress, run, say


def library_command(as_json: bool, server: ServerFlags, db, no_transcribe: bool, work, show,
                    more: dict | None = None, needs_server: bool = True, first=None, exit_code=None) -> None:
    """Shared body of the commands that work on the library: settings, progress, output.

    ``first`` checks the command's own input before anything else happens (no server is started);
    ``exit_code`` maps the finished result to the process's exit code (default 0)."""

    async def body():
        if first is not None:
            first()
        settings = server.settings(**{"library.db": db, "library.transcribe": False if no_transcribe else None},
                                   **(more or {}))
        if needs_server:
            settings = await served(settings, say)
        with index_progress(not as_json) as progress:
            return await work(settings, progress)

    result = run(as_json, body)
    if as_json:
        emit_json(result.model_dump(mode="json"))
    else:
        show(Console(), result)
    code = exit_code(result) if exit_code else 0
    if code:
        raise typer.Exit(code)
