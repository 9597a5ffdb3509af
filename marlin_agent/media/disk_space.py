"""A full disk, told apart from other failures and reported with the room it needs.

Used wherever the agent writes a lot: the index (``library.storage_errors``) and the staged
clips (``media.stage``). LanceDB and FFmpeg report a full disk in words of their own, so the
error's text is read too, and a disk with next to nothing left counts as full whatever it says.
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from marlin_agent.errors import DiskFull

_MB = 1024**2
# Less room than this left counts as a full disk, whatever the error says: a write that failed
# there failed for want of room.
_NEARLY_FULL = 256 * 1024
_FULL_TEXTS = ("no space left", "os error 28", "disk full", "quota exceeded", "os error 122")


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
