"""`marlin-agent serve`: one local server with a web app people look at, a REST API apps call, and MCP over
streamable HTTP for hosts that connect to a URL.

All three are made from the capability table like the CLI and the stdio MCP server, and share one
state (roots, jobs, the engine). Safe by default: loopback only; listening elsewhere needs a token;
footage confined to the roots; pages of other sites cannot change anything (``serve.access``).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

from marlin_agent.config import Settings
from marlin_agent.serve.access import is_loopback, stored_token


def _listening_socket(host: str, port: int) -> socket.socket:
    """Bound before the server starts, so that port 0 (any free port) can be told to the user."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve_http(settings: Settings, host: str | None = None, port: int | None = None,
               roots: list[str | Path] | None = None, verbose: bool = False) -> None:
    """Serve until interrupted; says where on stderr (and the token, the one time it is made)."""
    import uvicorn

    from marlin_agent.serve.app import build_app

    host = host or settings.serve.host
    port = settings.serve.port if port is None else port
    token, new = (None, False) if is_loopback(host) else stored_token(settings)
    app = build_app(settings, roots, token, verbose=verbose)
    sock = _listening_socket(host, port)
    shown_host = f"[{host.strip('[]')}]" if ":" in host else host
    address = f"http://{shown_host}:{sock.getsockname()[1]}/"
    print(f"marlin-agent serve: {address}  (REST {address}api/v1, OpenAPI {address}api/v1/openapi.json, "
          f"MCP {address}mcp)", file=sys.stderr)
    print(f"footage inside: {', '.join(str(root) for root in app.state.tools.guard.roots)}", file=sys.stderr)
    if token is not None:
        print(f"open once: {address}?token={token}" if new else
              f"every request needs the token: [serve] token in {settings.credentials_path}", file=sys.stderr)
    # Access lines would carry a token given in an address; the app logs failures itself.
    config = uvicorn.Config(app, log_level="debug" if verbose else "warning", access_log=verbose and token is None,
                            lifespan="on", timeout_graceful_shutdown=5, ws="none", http="h11", loop="asyncio")
    running = _announce(settings, address)
    # uvicorn shuts down gracefully on SIGTERM, then raises it again under the handler it found: this one
    # ends the process through the cleanup below rather than at once.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
    except KeyboardInterrupt:
        pass
    finally:
        running.unlink(missing_ok=True)


def _announce(settings: Settings, address: str) -> Path:
    """Where this server answers, for the watch's alerts to link their moments to (removed when it stops)."""
    from marlin_agent.watch.services import SERVE_FILE

    reachable = address.replace("0.0.0.0", socket.gethostname()).replace("[::]", socket.gethostname())
    target = settings.home / SERVE_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"address": reachable, "pid": os.getpid()}))
    return target
