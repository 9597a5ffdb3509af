"""Content ids: a hash of a file's bytes, so a moved or renamed video is still known.

Hashing a large file costs about a second per gigabyte, so the result is remembered
per (path, size, mtime, inode) under the cache directory.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable
from pathlib import Path

_READ_BYTES = 4 * 1024 * 1024
ID_LENGTH = 32


def hash_file(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=ID_LENGTH // 2)
    with path.open("rb") as handle:
        while block := handle.read(_READ_BYTES):
            digest.update(block)
    return digest.hexdigest()


def remembered(path: Path, cache_dir: Path, kind: str, compute: Callable[[], str],
               valid: Callable[[str], bool] = bool) -> str:
    """``compute()`` for ``path``, remembered under ``cache_dir/kind`` while the file is unchanged
    (same place, size, modification time and inode)."""
    stat = path.stat()
    key_source = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ino}"
    # A file name need not be UTF-8: hash its bytes as the system stores them.
    key = hashlib.blake2b(os.fsencode(key_source), digest_size=16).hexdigest()
    memo = cache_dir / kind / key
    try:
        value = memo.read_text()
        if valid(value):
            return value
    except OSError:
        pass
    value = compute()
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        temporary = memo.with_suffix(f".{uuid.uuid4().hex[:12]}.tmp")
        temporary.write_text(value)
        os.replace(temporary, memo)
    except OSError:
        pass  # a read-only cache only costs the work again next time
    return value


def content_id(path: Path, cache_dir: Path | None = None) -> str:
    """The content id of ``path``; reuses a remembered hash when the file is unchanged."""
    if cache_dir is None:
        return hash_file(path)
    return remembered(path, cache_dir, "content-ids", lambda: hash_file(path),
                      valid=lambda text: len(text.strip()) == ID_LENGTH).strip()
