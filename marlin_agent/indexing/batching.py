"""Group commit for the library: what lands while a write is under way goes out in the next one.

An indexing run over many short videos finishes a chunk every few milliseconds; writing
each on its own costs several table versions and an embedding call apiece and becomes the
bottleneck. Here the first write goes out at once and anything handed in meanwhile waits
for it and then goes out together, so a quiet run writes every chunk the moment it lands
and a busy one writes in batches, never later than one write behind.
"""

from __future__ import annotations

import asyncio

from marlin_agent.library.records import Writes
from marlin_agent.library.store import Library


class GroupWriter:
    """Hands ``Library.write`` batches from one asyncio loop; ``write`` returns once stored."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self._pending: list[tuple[Writes, asyncio.Future[None]]] = []
        self._flushing: asyncio.Task[None] | None = None

    async def write(self, writes: Writes) -> None:
        if not writes:
            return
        stored = asyncio.get_running_loop().create_future()
        self._pending.append((writes, stored))
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush())
        await stored

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            combined = Writes()
            for writes, _ in batch:
                combined += writes
            try:
                await asyncio.to_thread(self.library.write, combined)
            except BaseException as exc:  # every writer waiting on this batch hears why it failed
                for _, stored in batch:
                    if not stored.done():
                        stored.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
            else:
                for _, stored in batch:
                    if not stored.done():
                        stored.set_result(None)
