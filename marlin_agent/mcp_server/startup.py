"""Load the heavy modules once, before any tool touches them.

The tools import their libraries on first use so the server starts and answers the handshake at
once. But a cold server that gets many first calls together would run those imports in several
worker threads at the same moment, and Python hands a thread a module another thread is still
initialising (``partially initialized module 'lancedb' has no attribute 'connect'``). So the first
call starts one import of them all, in one thread, and every call waits for that same import.
"""

from __future__ import annotations

import asyncio
import importlib
import threading

# Everything a tool call imports lazily that is slow to import or imports native code.
HEAVY_MODULES = (
    "pyarrow", "lancedb", "av", "httpx",
    "marlin_agent.library.indexer", "marlin_agent.library.store", "marlin_agent.app.search", "marlin_agent.app.ask",
    "marlin_agent.marlin.scan", "marlin_agent.extraction.job", "marlin_agent.extraction.schema", "marlin_agent.tools",
)

_importing = threading.Lock()


def import_heavy_modules() -> None:
    with _importing:
        for name in HEAVY_MODULES:
            importlib.import_module(name)


class Startup:
    """One import of the heavy modules per server, awaited by every call."""

    def __init__(self) -> None:
        self._done: asyncio.Future | None = None

    async def ready(self) -> None:
        if self._done is None:
            self._done = asyncio.ensure_future(asyncio.to_thread(import_heavy_modules))
        await asyncio.shield(self._done)
