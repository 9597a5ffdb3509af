"""`marlin-agent serve`: the web app, the REST API and MCP over HTTP, on one local port."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from marlin_agent.cli.options import DbOpt, ServerFlags, takes_server_flags
from marlin_agent.cli.output import stderr
from marlin_agent.errors import MarlinAgentError


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
    try:
        from marlin_agent.serve import serve_http
    except ImportError as exc:
        stderr.print(f"[bold red]error:[/] serve needs the serve extra ({exc.name} is missing)")
        stderr.print("[dim]hint:[/] " + escape("pip install 'marlin-agent[serve]'"))
        raise typer.Exit(2) from None
    try:
        settings = server.settings(**{"library.db": db})
        serve_http(settings, host, port, [str(r) for r in roots] if roots else None, verbose=verbose)
    except MarlinAgentError as exc:
        stderr.print(f"[bold red]error:[/] {escape(exc.message)}")
        raise typer.Exit(exc.exit_code) from None
    except OSError as exc:  # the port taken, an address not on this machine
        stderr.print(f"[bold red]error:[/] cannot listen there: {escape(str(exc))}")
        stderr.print("[dim]hint:[/] " + escape("Pick another --port (0: any free one), or a --host this machine has."))
        raise typer.Exit(2) from None
