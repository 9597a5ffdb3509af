"""New footage in a watched folder: files that appear (recursively) and have finished arriving.

A camera, a sync client or a copy writes a file over seconds or minutes, and a half-written MP4
cannot be read. A file therefore counts once its size and modification time have stood still for
``settle`` seconds; until then it is looked at again on every pass. A file replaced by another of
the same name (new size or time) is new footage.

A recording can pause for longer than that and go on (a camera writing a transport stream, which is
readable at any length): its settled part is judged, and the whole file again once it settles anew. Both
are one recording, one timeline, so an event already alerted in the part is not alerted again: a file
is known as the same recording while its first bytes are the same (``recording_timeline``).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from marlin_agent.media.sources import SkippedSource, walk_videos

# The bytes that name a recording: a container's header and its first frames.
_HEAD_BYTES = 16384


def file_key(path: Path, size: int, mtime_ns: int) -> str:
    return f"{path}|{size}|{mtime_ns}"


def recording_timeline(path: Path) -> str:
    """The timeline of the recording in ``path``: the same for the file as it grows (its first bytes stay),
    another for a different recording written under the same name."""
    with path.open("rb") as handle:
        head = handle.read(_HEAD_BYTES)
    return f"{path}|{hashlib.blake2b(head, digest_size=8).hexdigest()}"


@dataclass
class _Seen:
    key: str
    since: float  # when this size and time were first seen


class FolderSource:
    """Lists ``folder`` on each ``scan`` and returns the files that have just settled, once each."""

    def __init__(self, folder: Path, settle: float, known: set[str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = folder
        self.settle = settle
        self.known = set(known or ())  # keys already announced (in this run or an earlier one)
        self.clock = clock
        self._seen: dict[Path, _Seen] = {}
        self.skipped: list[SkippedSource] = []

    def current_keys(self) -> list[str]:
        """The keys of every video file there now, settled or not: a first run's baseline."""
        return [key for _, key in self._listing()]

    def _listing(self) -> list[tuple[Path, str]]:
        self.skipped = []
        listing = []
        for path in walk_videos(self.folder, self.skipped):
            try:
                stat = os.stat(path)
            except OSError:  # gone between the listing and now
                continue
            listing.append((path, file_key(path, stat.st_size, stat.st_mtime_ns)))
        return listing

    def scan(self) -> list[tuple[Path, str]]:
        """The files (with their keys) whose size and time have been still for ``settle`` seconds."""
        now, ready, present = self.clock(), [], set()
        for path, key in self._listing():
            present.add(path)
            if key in self.known:
                continue
            seen = self._seen.get(path)
            if seen is None or seen.key != key:
                self._seen[path] = _Seen(key, now)
            elif now - seen.since >= self.settle:
                ready.append((path, key))
                self.known.add(key)
                del self._seen[path]
        for gone in set(self._seen) - present:
            del self._seen[gone]
        return ready
