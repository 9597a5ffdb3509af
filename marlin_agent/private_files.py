"""What marlin-agent keeps for itself is the user's alone; what the user asks it to write is theirs as usual.

The home folder holds what footage showed and said (captions, transcript lines, clips, thumbnails, the
verification journal), alerts and the keys of credentials.toml: none of it is for the other users of
a machine. So a command runs with a umask that makes every folder it creates 0700 and every file
0600 — including the files LanceDB and FFmpeg write on their own — and the home folder itself is
made 0700 when it is looser. A file the user names (``extract -o``, ``ask --html``, a sheet) gets
the permissions their own umask would have given it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_PRIVATE = 0o077
_user_umask: int | None = None  # the umask the process started with, once ``keep_private`` ran


def keep_private(home: Path) -> None:
    """From now on, create everything private; make ``home`` private if it exists and is not."""
    global _user_umask
    previous = os.umask(_PRIVATE)
    if _user_umask is None:
        _user_umask = previous
    try:
        found = home.stat()
        if stat.S_ISDIR(found.st_mode) and found.st_mode & 0o077 and found.st_uid == os.getuid():
            home.chmod(0o700)
    except OSError:  # not there yet (it will be made private), or not ours to change
        pass


def as_users(path: Path) -> Path:
    """``path`` (a file or folder the user asked for) with the permissions the user's umask gives."""
    if _user_umask is None:
        return path
    try:
        base = 0o777 if path.is_dir() else 0o666
        if stat.S_IMODE(path.stat().st_mode) != base & ~_user_umask:
            path.chmod(base & ~_user_umask)
    except OSError:
        pass
    return path
