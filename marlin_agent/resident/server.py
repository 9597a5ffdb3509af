"""The resident itself: import once, then fork one child per command (see the package's docstring).

``python -m marlin_agent.resident.server KEY PACKAGE_ROOT`` is how ``client.start_in_background``
starts it; it is not a command for people.
"""

from __future__ import annotations

import fcntl
import functools
import importlib
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
import warnings
from pathlib import Path

from marlin_agent.resident import exit_now
from marlin_agent.resident.client import _HEADER, MOST_RESIDENTS, idle_seconds, runtime_dir, socket_path

# What library commands import sooner or later; each is imported once here and shared by every child.
PRELOAD = (
    "numpy", "pyarrow", "lancedb", "lancedb.remote.table", "tokenizers", "av", "httpx", "httpcore", "anyio", "h11",
    "ctypes.util", "venv", "typer._click.decorators", "typer._adapters", "marlin_agent.cli.render",
    "marlin_agent.engines.manager", "marlin_agent.verification.signals.meaning",
    "marlin_agent.verification.signals.similarity", "mcp.server.mcpserver", "marlin_agent.mcp_server",
    "marlin_agent.cli.main", "marlin_agent.app.ask", "marlin_agent.app.search", "marlin_agent.app.describe",
    "marlin_agent.indexing.run", "marlin_agent.library.transcripts", "marlin_agent.planners.pipeline",
    "marlin_agent.verification.verifier", "marlin_agent.verification.signals.lexical", "marlin_agent.extraction.job",
)
# Imported before a fork, these leave a forked child unable to exit (ONNX Runtime's and CTranslate2's
# runtimes join threads the child does not have): children import them themselves, which is quick.
NOT_BEFORE_FORK = ("onnxruntime", "ctranslate2", "faster_whisper", "torch")
_REQUEST_LIMIT = 16 * 1024 * 1024
_ACCEPT_POLL = 5.0


def _preload() -> bool:
    """Import what the children share; False when something that must not precede a fork came with it."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # an extra that is not installed: the command says so itself, as it would alone
    # LanceDB resets its runtime in a forked child and warns once that fork support is new; a child
    # here forks before LanceDB has done anything, which is the case that reset covers.
    warnings.filterwarnings("ignore", message="lancedb fork support is experimental")
    return not any(name.split(".")[0] in NOT_BEFORE_FORK for name in sys.modules)


_log_file = None


def _log(line: str) -> None:
    """One line in the resident's log (``<socket>.log`` beside its socket), for whoever wonders what it does."""
    if _log_file is not None:
        try:
            _log_file.write(f"{time.strftime('%H:%M:%S')} {line}\n")
            _log_file.flush()
        except OSError:
            pass


def _read_request(conn: socket.socket, streams: int = 3) -> tuple[dict, list[int]]:
    """A request (length-prefixed JSON) and the descriptors that came with it: the caller's three
    standard streams, and, from the resident to a waiting child, the caller's connection too."""
    data, fds, _, _ = socket.recv_fds(conn, 65536, streams)
    if len(fds) != streams or len(data) < _HEADER.size:
        for fd in fds:
            os.close(fd)
        raise ValueError(f"a request needs {streams} descriptors and a header")
    (size,) = _HEADER.unpack(data[:_HEADER.size])
    if size > _REQUEST_LIMIT:
        raise ValueError("request too large")
    body = data[_HEADER.size:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("request cut short")
        body += chunk
    return json.loads(body.decode("utf-8", "surrogateescape")), fds


def _others_more_recent(folder: Path, key: str) -> int:
    """How many other live residents were used more recently than this one (by their logs' times)."""
    mine = folder / f"{key}.log"
    try:
        my_time = mine.stat().st_mtime_ns
    except OSError:
        return 0
    newer = 0
    for lock_path in folder.glob("*.lock"):
        other = lock_path.stem
        if other == key:
            continue
        try:
            with open(lock_path, "a") as probe:
                try:
                    fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except OSError:
                    alive = True
                else:
                    alive = False  # nobody holds it: that resident is gone
            if alive and (folder / f"{other}.log").stat().st_mtime_ns > my_time:
                newer += 1
        except OSError:
            continue
    return newer


def _same_user(conn: socket.socket) -> bool:
    """On Linux the peer's uid is checked as well as the socket folder's mode."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return uid == os.getuid()


def _become_the_command(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the child: take on the caller's streams, folder, environment and arguments, then run."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.umask(int(request["umask"]))
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        old = getattr(sys, name)
        line_buffered = fd != 0 and os.isatty(fd)
        setattr(sys, name, open(fd, mode, buffering=1 if line_buffered else -1, encoding=old.encoding,
                                errors=old.errors, closefd=False))
    # The dispositions a fresh Python starts with: Ctrl-C raises KeyboardInterrupt, a closed pipe raises
    # BrokenPipeError (SIGPIPE ignored), the rest end the process.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)

    def relay() -> None:
        """Signals the caller received arrive as bytes; the caller going away ends the command."""
        while True:
            try:
                data = conn.recv(16)
            except OSError:
                data = b""
            if not data:
                os.kill(os.getpid(), signal.SIGTERM)
                return
            for signum in data:
                os.kill(os.getpid(), signum)

    threading.Thread(target=relay, name="marlin-resident-relay", daemon=True).start()
    from marlin_agent.cli.main import app
    from marlin_agent.cli.output import reopen_console

    reopen_console()
    called = os.path.basename(sys.argv[0])
    try:
        app(prog_name="python -m marlin_agent" if called == "__main__.py" else called or "marlin-agent")
    except SystemExit as done:
        exit_now(done.code)
    except KeyboardInterrupt:
        exit_now(130)
    except BaseException:  # noqa: BLE001 - reported as Python would, and the command fails
        import traceback

        traceback.print_exc()
        exit_now(1)
    exit_now(0)


def _report_when_done(conn: socket.socket, pid: int, running: dict[int, socket.socket], lock: threading.Lock,
                      what: str) -> None:
    started = time.monotonic()
    try:
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
    except ChildProcessError:
        code = 1
    try:
        code = code if code >= 0 else 128 - code
        _log(f"{what} (child {pid}) exited {code} after {time.monotonic() - started:.2f} s")
        conn.sendall(f"{code}\n".encode())
    except OSError:
        pass  # the caller is gone
    finally:
        with lock:
            running.pop(pid, None)
        conn.close()


class _Waiting:
    """A child forked ahead of the next command: it loads the models (warm) and waits to be handed one."""

    def __init__(self, pid: int, channel: socket.socket) -> None:
        self.pid = pid
        self.channel = channel

    def hand_over(self, request: dict, fds: list[int], conn: socket.socket) -> bool:
        message = json.dumps(request).encode("utf-8", "surrogateescape")
        try:
            socket.send_fds(self.channel, [_HEADER.pack(len(message)) + message], [*fds, conn.fileno()])
            return True
        except OSError:
            try:
                os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                pass
            return False  # it died while waiting: the command gets a fresh child instead
        finally:
            self.channel.close()


def _wait_for_a_command(channel: socket.socket) -> None:
    """In a waiting child: load what commands need, then become the next one (or leave with the resident)."""
    from marlin_agent.app.warm import warm
    from marlin_agent.config import load_settings

    started = time.monotonic()
    try:
        loaded = warm(load_settings())
    except Exception as exc:  # noqa: BLE001 - a setting that does not load is the command's to report
        loaded = [f"nothing ({type(exc).__name__})"]
    _log(f"child {os.getpid()} loaded {', '.join(loaded) or 'nothing'} in {time.monotonic() - started:.2f} s")
    try:
        request, fds = _read_request(channel, streams=4)
    except (OSError, ValueError):
        os._exit(0)  # the resident left
    channel.close()
    _become_the_command(socket.socket(fileno=fds[3]), request, fds[:3])


def _fork(held: list, then) -> int:
    """Fork a child that closes the resident's own handles (``held``: its listener, lock and the
    connections of commands still running) and runs ``then()``; the child's pid here."""
    pid = os.fork()
    if pid == 0:
        for handle in held:
            handle.close()
        then()
    return pid


def serve(key: str) -> None:
    folder = runtime_dir()
    if folder is None:
        return
    lock_file = open(folder / f"{key}.lock", "w")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another resident for this key is starting or running
    global _log_file
    (folder / f"{key}.log").write_text("")
    # Appending: the resident and its children write to it, each line whole.
    _log_file = open(folder / f"{key}.log", "a", encoding="utf-8")  # noqa: SIM115 - the process's log
    started = time.monotonic()
    if not _preload():
        _log("not serving: a module that cannot precede fork() was imported")
        return  # commands keep running in their own processes
    _log(f"resident {os.getpid()} ready in {time.monotonic() - started:.2f} s; idle limit {idle_seconds():.0f} s")
    _Resident(folder, key, lock_file).run()


class _Resident:
    """The accept loop: a child that waits for the next command is always ready; each command
    goes to it (or, if it is not ready, to a fresh fork), and the loop leaves when idle."""

    def __init__(self, folder: Path, key: str, lock_file) -> None:
        self.folder, self.key, self.lock_file = folder, key, lock_file
        self.path = socket_path(folder, key)
        self.path.unlink(missing_ok=True)  # left by one that was killed
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.path))
        self.listener.listen(16)
        self.listener.settimeout(_ACCEPT_POLL)
        self.bound = self.path.stat().st_ino
        self.me = os.getpid()
        self.running: dict[int, socket.socket] = {}  # command pid -> its caller's connection
        self.lock = threading.Lock()
        self.idle_after, self.last = idle_seconds(), time.monotonic()
        self.waiting: _Waiting | None = None

    def run(self) -> None:
        self.waiting = self._waiting_child()
        try:
            while True:
                try:
                    conn, _ = self.listener.accept()
                except TimeoutError:
                    if self._should_leave():
                        return
                    continue
                self._take(conn)
        finally:
            if os.getpid() == self.me:
                self.waiting.channel.close()
                self.listener.close()
                try:
                    if self.path.stat().st_ino == self.bound:
                        self.path.unlink()
                except OSError:
                    pass

    def _held(self) -> list:
        with self.lock:
            return [self.listener, self.lock_file, *self.running.values()]

    def _waiting_child(self) -> _Waiting:
        ours, theirs = socket.socketpair()

        def then() -> None:
            ours.close()
            _wait_for_a_command(theirs)

        pid = _fork(self._held(), then)
        theirs.close()
        return _Waiting(pid, ours)

    def _should_leave(self) -> bool:
        with self.lock:
            busy = bool(self.running)
        if busy:
            self.last = time.monotonic()
            return False
        if time.monotonic() - self.last > self.idle_after:
            _log("leaving: idle")
            return True
        if _others_more_recent(self.folder, self.key) >= MOST_RESIDENTS:
            _log(f"leaving: {MOST_RESIDENTS} other residents were used more recently")
            return True
        try:
            return self.path.stat().st_ino != self.bound  # replaced or removed: we can no longer be reached
        except OSError:
            return True

    def _take(self, conn: socket.socket) -> None:
        """One caller: its request read, its command run in a child, its end reported by a thread."""
        self.last = time.monotonic()
        conn.settimeout(10)
        try:
            if not _same_user(conn):
                conn.close()
                return
            request, fds = _read_request(conn)
        except (OSError, ValueError):
            conn.close()
            return
        conn.settimeout(None)
        if self.waiting.hand_over(request, fds, conn):
            pid = self.waiting.pid
        else:
            pid = _fork(self._held(), functools.partial(_become_the_command, conn, request, fds))
        for fd in fds:
            os.close(fd)
        with self.lock:
            self.running[pid] = conn
        what = " ".join(str(a) for a in request["argv"][1:2])  # the command's name only: arguments may be private
        threading.Thread(target=_report_when_done, args=(conn, pid, self.running, self.lock, what),
                         daemon=True).start()
        self.waiting = self._waiting_child()


def main() -> None:
    key, root = sys.argv[1], sys.argv[2]
    import marlin_agent

    # The same code as the caller's, or nothing: a different checkout on the path would serve other code.
    if Path(marlin_agent.__file__).resolve().parent != Path(root).resolve():
        return
    me = os.getpid()
    try:
        serve(key)
    except Exception as exc:  # noqa: BLE001 - said in the log; commands run in their own processes meanwhile
        if os.getpid() != me:
            raise  # a command's own failure, reported by the command
        _log(f"stopped: {exc}")


if __name__ == "__main__":
    main()
