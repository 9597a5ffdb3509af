"""One writer per database: the lock an index run takes only once it has something to write."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import time
from pathlib import Path

from marlin_agent.errors import DbReadOnly, IndexBusy

log = logging.getLogger(__name__)


class WriteLock:
    """The database's indexing lock, taken only when a run has something to write.

    Reading the index (and runs that find everything indexed) never takes it; a run that must
    write waits up to ``wait`` seconds for another process to finish, saying so once (a warning
    on this module's logger, which the CLI shows), and only then gives up with ``IndexBusy``.
    The lock dies with its process.
    """

    def __init__(self, db_path: str, wait: float) -> None:
        self.db_path, self.wait = db_path, wait
        self._handle = None
        self._guard = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._guard:
            if self._handle is None and "://" not in self.db_path:
                self._handle = await asyncio.to_thread(self._take)

    def _take(self):
        folder = Path(self.db_path)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle = open(folder / ".index.lock", "w")
        except OSError as exc:  # a read-only folder or file system, or one that is not ours
            raise DbReadOnly(f"the index at {self.db_path} is read-only here ({exc.strerror or exc}); "
                             "this run has footage to add to it") from None
        deadline, said = time.monotonic() + self.wait, False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.close()
                    raise IndexBusy(f"{self.db_path} is being indexed by another process "
                                    f"(waited {self.wait:.0f} s)") from None
                if not said:
                    log.warning("waiting for another process indexing into %s (up to %.0f s)", self.db_path, self.wait)
                    said = True
                time.sleep(0.25)

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


