"""Driving `marlin-agent mcp` with the SDK's own client over stdio, as an MCP host does."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[1]


def server_params(env: dict[str, str], root: Path, *extra: str) -> StdioServerParameters:
    # The checkout first on the path: the server must be this tree's code, whatever is installed.
    full = {**os.environ, **env, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    full.pop("MARLIN_API_KEY", None)
    return StdioServerParameters(command=sys.executable, args=["-m", "marlin_agent", "mcp", "--root", str(root), *extra],
                                 env=full, cwd=str(root))


def session(env, root, work, *extra):
    """Start a server over ``root``, run ``work(client)`` against it, and return what it returns."""
    async def run():
        async with Client(server_params(env, root, *extra), read_timeout_seconds=240) as client:
            return await work(client)

    return asyncio.run(run())
