"""Load the heavy modules and the small models once, before any tool touches them.

The server answers the handshake and lists its tools before anything heavy is imported. A moment
later (``begin``) one thread imports the libraries the tools use and loads the models into the
process's caches (``app.warm``), so the first call seldom waits; a call that comes sooner waits
for that same thread. One thread, because a cold server that gets many first calls together
would otherwise import in several threads at once, and Python hands a thread a module another
thread is still initialising (``partially initialized module 'lancedb' has no attribute 'connect'``).
"""

from __future__ import annotations

import asyncio
import threading
import time

from marlin_agent.config import Settings

# How long after start the loading begins: the host's handshake and tool listing come first.
BEGIN_AFTER_SECONDS = 1.0


class Startup:
    """One load of the heavy modules and models per server, awaited by every call."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._done = threading.Event()
        self._began = threading.Lock()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def begin(self, delay: float = 0.0) -> None:
        """Start loading (once) in a thread of its own, after ``delay`` seconds."""
        with self._began:
            if self._thread is None:
                self._thread = threading.Thread(target=self._load, args=(delay,), name="marlin-startup", daemon=True)
                self._thread.start()

    def _load(self, delay: float) -> None:
        time.sleep(delay)
        try:
            from marlin_agent.app.warm import WORK_MODULES, import_module, warm

            for name in WORK_MODULES:
                import_module(name)
            warm(self.settings)  # never fails: a model that is missing is reported by the call that needs it
        except BaseException as exc:  # noqa: BLE001 - re-raised in every call that waits
            self._error = exc
        finally:
            self._done.set()

    async def ready(self) -> None:
        self.begin()
        if not self._done.is_set():
            await asyncio.to_thread(self._done.wait)
        if self._error is not None:
            raise self._error
