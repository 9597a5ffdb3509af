"""The caller's side: find the resident for this environment, hand it a command, relay signals.

Only the standard library is imported here: this runs before every command.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import stat
import struct
import sys
from pathlib import Path

# The commands people and agents call again and again over a library, and the MCP server hosts start
# for every session (it serves on the caller's own stdin and stdout); setup and the engines run in
# their own process as before (they prompt, or start servers that outlive the command).
FORWARDED = frozenset({"ask", "search", "index", "finalize", "find", "find-verified", "caption", "describe", "extract",
                       "list-videos", "mcp"})
# Shell variables that differ between two prompts of one session and mean nothing to a command.
_VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "PS1", "PS2", "PROMPT_COMMAND"})
_HEADER = struct.Struct("!I")
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
IDLE_SECONDS_DEFAULT = 300.0
# At most this many residents per user (one per environment); the least recently used leaves first.
MOST_RESIDENTS = 3
# A resident and its waiting child hold about 650 MB; past this (MARLIN_RESIDENT_MAX_MB) the resident leaves.
MOST_MEGABYTES_DEFAULT = 1024
# A resident takes a request in milliseconds; one that has not within this long (stopped, swamped) is
# passed by: the command runs in its own process, never waiting longer than it would take there.
_TAKEN_WITHIN = 3.0


def supported() -> bool:
    return os.name == "posix" and hasattr(socket, "send_fds") and hasattr(os, "fork")


def enabled(env: dict[str, str] | os._Environ = os.environ) -> bool:
    return supported() and env.get("MARLIN_RESIDENT", "auto").strip().lower() not in ("off", "0", "false", "no")


def wants(argv: list[str]) -> bool:
    """Whether this command line is one the resident runs: a library command, not a request for help."""
    if not argv or argv[0] not in FORWARDED:
        return False
    return not any(a in ("--help", "-h") for a in argv[1:])


def idle_seconds(env=os.environ) -> float:
    try:
        return max(5.0, float(env.get("MARLIN_RESIDENT_IDLE", IDLE_SECONDS_DEFAULT)))
    except ValueError:
        return IDLE_SECONDS_DEFAULT


def most_megabytes(env=os.environ) -> float:
    try:
        return max(64.0, float(env.get("MARLIN_RESIDENT_MAX_MB", MOST_MEGABYTES_DEFAULT)))
    except ValueError:
        return float(MOST_MEGABYTES_DEFAULT)


def _code_stamp() -> str:
    """The package's code as installed: every module's name, size and modification time."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    pending = [root]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                    pending.append(Path(entry.path))
                elif entry.name.endswith((".py", ".toml", ".txt", ".md")):
                    info = entry.stat()
                    digest.update(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def fingerprint(env=os.environ) -> str:
    """What a resident must share with its caller: user, interpreter, code, installed packages and
    environment. A change in any of them is another resident (the old one idles out)."""
    digest = hashlib.sha256()
    digest.update(f"{os.getuid()}\0{sys.executable}\0{sys.version}\0{_code_stamp()}\n".encode())
    for entry in sys.path:
        try:
            digest.update(f"{entry}\0{os.stat(entry or '.').st_mtime_ns}\n".encode())
        except OSError:
            digest.update(f"{entry}\0-\n".encode())
    for name in sorted(env):
        if name not in _VOLATILE:
            digest.update(f"{name}={env[name]}\n".encode(errors="surrogateescape"))
    return digest.hexdigest()[:20]


# A Unix socket's path must fit in sun_path (108 bytes on Linux, 104 on macOS), key and all.
_SOCKET_PATH_LIMIT = 100


def _private(folder: Path) -> Path | None:
    try:
        folder.mkdir(mode=0o700, parents=False, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    # Someone else's folder, or one others can write into, could hold a socket that is not ours.
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def runtime_dir(env=os.environ) -> Path | None:
    """A folder only this user can enter, for the sockets, short enough for a socket's path; None when
    no safe one can be had."""
    base = env.get("XDG_RUNTIME_DIR")
    preferred = Path(base) / "marlin-agent" if base and os.path.isdir(base) else \
        Path(env.get("TMPDIR") or "/tmp") / f"marlin-agent-{os.getuid()}"
    if len(str(preferred)) + 26 > _SOCKET_PATH_LIMIT:  # "/<20 hex>.sock" must fit too
        preferred = Path("/tmp") / f"marlin-agent-{os.getuid()}"
    return _private(preferred)


def socket_path(folder: Path, key: str) -> Path:
    return folder / f"{key}.sock"


def listening(path: Path) -> bool:
    """Whether a resident accepts connections at ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def _send_request(conn: socket.socket, argv: list[str]) -> None:
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": _current_umask(),
                          "nice": os.nice(0)}, ensure_ascii=False).encode("utf-8", "surrogateescape")
    message = _HEADER.pack(len(request)) + request
    sent = socket.send_fds(conn, [message], [0, 1, 2])
    if sent < len(message):
        conn.sendall(message[sent:])


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _handed(path: Path, argv: list[str]) -> socket.socket | None:
    """The connection to the resident at ``path`` once it has taken ``argv``; None when it did not within
    ``_TAKEN_WITHIN`` (gone, stopped, swamped): the command then runs in this process."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(_TAKEN_WITHIN)
    try:
        conn.connect(str(path))
        # The resident says it is awake before the streams go: in a stopped one's socket they would keep
        # the caller's pipes open, and whoever reads them waiting, after this process had run the command.
        if conn.recv(1) == b"?":
            _send_request(conn, argv)
            if conn.recv(1) == b"+":
                conn.settimeout(None)
                return conn
    except OSError:  # a timeout included
        pass
    conn.close()
    return None


def forward(argv: list[str], env=os.environ) -> int | None:
    """Run ``argv`` in the resident and return its exit status; None when there is no resident to
    run it (the caller runs the command itself)."""
    folder = runtime_dir(env)
    if folder is None:
        return None
    path = socket_path(folder, fingerprint(env))
    conn = _handed(path, [sys.argv[0], *argv])
    if conn is None:
        return None
    previous = {}

    def relay(signum, _frame) -> None:
        try:
            conn.sendall(bytes([signum]))
        except OSError:
            pass

    for signum in _SIGNALS:
        previous[signum] = signal.signal(signum, relay)
    try:
        answer = b""
        while not answer.endswith(b"\n"):
            try:
                chunk = conn.recv(64)
            except InterruptedError:
                continue
            if not chunk:
                break
            answer += chunk
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        conn.close()
    try:
        return int(answer.strip())
    except ValueError:
        # The resident went away mid-command (killed, or the machine is out of memory).
        print("marlin-agent: the resident process ended before the command did; run it again "
              "(MARLIN_RESIDENT=off runs every command in its own process)", file=sys.stderr)
        return 1


def start_in_background(began: float, env=os.environ) -> None:
    """Start a resident for this environment, detached, unless one is already listening.

    Only on the second library command within the idle time: a one-off command (a script, a test)
    leaves nothing running behind it. Within the idle time means from the end of the last command
    to the start of this one (``began``): a long command is no pause."""
    import subprocess

    folder = runtime_dir(env)
    if folder is None:
        return
    key = fingerprint(env)
    seen = folder / f"{key}.seen"
    try:
        recent = began - seen.stat().st_mtime < idle_seconds(env)
    except OSError:
        recent = False
    try:
        seen.touch()
    except OSError:
        return
    if not recent:
        return
    if listening(socket_path(folder, key)):
        return  # one is there already
    try:
        root = str(Path(__file__).resolve().parents[1])
        subprocess.Popen([sys.executable, "-m", "marlin_agent.resident.server", key, root], env=dict(env), cwd="/",
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True)
    except OSError:
        pass  # commands still run, each in its own process
