"""Turn what the storage layer raises into errors a user can act on.

LanceDB reports a full disk and a damaged file alike, as an exception whose text is a Rust
error chain. Both front doors must say which it is, where, and what to do: ``disk_full`` with
the free and the needed space, or ``index_damaged`` naming the table and pointing at repair.
"""

from __future__ import annotations

import errno
import functools
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from marlin_agent.errors import DiskFull, IndexDamaged, MarlinAgentError

T = TypeVar("T")
_MB = 1024**2
# Less room than this left under the index counts as a full disk, whatever the error says:
# a write that failed there failed for want of room.
_NEARLY_FULL = 256 * 1024
_FULL_TEXTS = ("no space left", "os error 28", "disk full", "quota exceeded", "os error 122")
_STORAGE_ERRORS: tuple[type[BaseException], ...] = (OSError, RuntimeError, ValueError)


def _existing(folder: Path) -> Path:
    return folder if folder.exists() else next((p for p in folder.parents if p.exists()), Path("/"))


def _size(folder: Path) -> int:
    try:
        return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    except OSError:
        return 0


def disk_full(place: Path, action: str) -> DiskFull:
    """The error for a full disk under ``place``: how much is free, and roughly how much the work needs."""
    free = shutil.disk_usage(_existing(place)).free
    # Compaction rewrites a table beside its old files: the index can briefly need its size again.
    needed = max(64 * _MB, _size(place) + 16 * _MB) if place.exists() else 64 * _MB
    return DiskFull(f"the disk is full while {action}: {free / _MB:.1f} MB free at {place}, and this needs about "
                    f"{needed / _MB:.0f} MB more",
                    hint=f"Free at least {needed / _MB:.0f} MB on that disk (or move the index with --db, the cache "
                         "with MARLIN_HOME), then run the same command again: what was written is kept, and it "
                         "carries on from there.")


def is_disk_full(exc: BaseException, place: Path) -> bool:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if any(text in str(exc).lower() for text in _FULL_TEXTS):
        return True
    try:
        return shutil.disk_usage(_existing(place)).free < _NEARLY_FULL
    except OSError:
        return False


def translated(exc: BaseException, uri: str, action: str) -> MarlinAgentError | None:
    """The user's error for a storage failure of the local index at ``uri``; None when it is not one."""
    if isinstance(exc, MarlinAgentError) or not isinstance(exc, _STORAGE_ERRORS) or "://" in uri:
        return None
    place = Path(uri)
    if is_disk_full(exc, place):
        return disk_full(place, action)
    # The text ends with the Rust source line that raised it: of no use to anyone reading.
    detail = re.sub(r",? /\S+\.rs:\d+:\d+", "", str(exc).splitlines()[0])[:300] if str(exc) else type(exc).__name__
    return IndexDamaged(f"the index at {uri} could not be read while {action}: {detail}")


def storage_errors(action: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorate a ``Library`` method so that storage failures come out as ``disk_full`` or ``index_damaged``."""

    def wrap(method: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(method)
        def guarded(self, *args, **kwargs) -> T:
            try:
                return method(self, *args, **kwargs)
            except _STORAGE_ERRORS as exc:
                error = translated(exc, self.uri, action)
                if error is None:
                    raise
                raise error from exc

        return guarded

    return wrap
