"""The commands that serve: `mcp` (the tools over stdio) and `serve` (the web app, the REST API and MCP over
HTTP, on one local port)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer
from rich.markup import escape

from marlin_agent.cli.options import DbOpt, ServerFlags, takes_server_flags
from marlin_agent.cli.output import stderr
from marlin_agent.errors import MarlinAgentError


@takes_server_flags
def mcp_command(
    roots: Annotated[Optional[list[Path]], typer.Option(
        "--root", metavar="FOLDER", help="A folder the tools may read and write (repeatable; env MARLIN_MCP_ROOTS; "
        "default: the current folder).")] = None,
    db: DbOpt = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Log libraries' requests and debug lines on stderr (warnings only "
        "otherwise).")] = False,
    *, server: ServerFlags,
) -> None:
    """Serve the agent's tools over MCP on stdio.

    The tools: one per capability (ask, search, find, caption, describe, index, extract, list_videos), then
    job_status and watch_status."""
    serve_stdio = _loaded("marlin_agent.mcp_server", "serve_stdio", "mcp", "the MCP server needs the mcp extra")
    try:
        settings = server.settings(**{"library.db": db})
    except MarlinAgentError as exc:
        _refused(exc)
    serve_stdio(settings, [str(r) for r in roots] if roots else None, verbose=verbose)


@takes_server_flags
def serve_command(
    host: Annotated[Optional[str], typer.Option(
        "--host", help="The address to listen on (default [serve] host, 127.0.0.1). Any other than loopback needs "
                       "the token: made once, printed once, kept in credentials.toml.")] = None,
    port: Annotated[Optional[int], typer.Option(
        "--port", min=0, max=65535, help="The port (default [serve] port, 8765; 0: any free one).")] = None,
    roots: Annotated[Optional[list[Path]], typer.Option(
        "--root", metavar="FOLDER", help="A folder whose footage may be read and written (repeatable; env "
        "MARLIN_MCP_ROOTS; default: the current folder).")] = None,
    db: DbOpt = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Log requests and libraries' debug lines on stderr.")] = False,
    *, server: ServerFlags,
) -> None:
    """Serve a web app, a REST API (/api/v1, with its OpenAPI document) and MCP over streamable HTTP (/mcp).

    Every capability of the CLI is a route and an MCP tool; long work runs as jobs whose progress streams as
    server-sent events. Footage only inside the roots; Ctrl-C stops."""
    serve_http = _loaded("marlin_agent.serve", "serve_http", "serve", "serve needs the serve extra")
    try:
        settings = server.settings(**{"library.db": db})
        serve_http(settings, host, port, [str(r) for r in roots] if roots else None, verbose=verbose)
    except MarlinAgentError as exc:
        _refused(exc)
    except OSError as exc:  # the port taken, an address not on this machine
        stderr.print(f"[bold red]error:[/] cannot listen there: {escape(str(exc))}")
        stderr.print("[dim]hint:[/] " + escape("Pick another --port (0: any free one), or a --host this machine has."))
        raise typer.Exit(2) from None


def _loaded(module: str, name: str, extra: str, what: str) -> Callable:
    """``name`` from ``module``, imported now (not at the CLI's start), or a clear error naming the extra that
    brings what is missing (exit 2)."""
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        stderr.print(f"[bold red]error:[/] {what} ({exc.name} is missing)")
        stderr.print("[dim]hint:[/] " + escape(f"pip install 'marlin-agent[{extra}]'"))
        raise typer.Exit(2) from None


def _refused(exc: MarlinAgentError) -> NoReturn:
    stderr.print(f"[bold red]error:[/] {escape(exc.message)}")
    raise typer.Exit(exc.exit_code) from None
