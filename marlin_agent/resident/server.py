"""The resident itself: import once, then fork one child per command (see the package's docstring).

``python -m marlin_agent.resident.server KEY PACKAGE_ROOT`` is how ``client.start_in_background``
starts it; it is not a command for people.
"""

from __future__ import annotations

import fcntl
import functools
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

import marlin_agent
from marlin_agent.resident import exit_now
from marlin_agent.resident.client import (
    _HEADER,
    MOST_RESIDENTS,
    idle_seconds,
    most_megabytes,
    runtime_dir,
    socket_path,
)

# The front doors' own modules (the command line, the MCP server, the engines); with the work's
# (``app.warm.WORK_MODULES``) they are imported once here and shared by every child.
FRONT_DOOR_MODULES = (
    "ctypes.util", "venv", "typer._click.decorators", "typer._adapters", "marlin_agent.cli.render",
    "marlin_agent.engines.manager", "mcp.server.mcpserver", "marlin_agent.mcp_server", "marlin_agent.cli.main",
)
# Imported before a fork, these leave a forked child unable to exit (ONNX Runtime's and CTranslate2's
# runtimes join threads the child does not have): children import them themselves, which is quick.
NOT_BEFORE_FORK = ("onnxruntime", "ctranslate2", "faster_whisper", "torch")
_REQUEST_LIMIT = 16 * 1024 * 1024
_NOTHING = "the caller sent nothing"
_ACCEPT_POLL = 5.0


def _preload() -> bool:
    """Import what the children share; False when something that must not precede a fork came with it."""
    from marlin_agent.app.warm import WORK_MODULES, import_module

    for name in WORK_MODULES + FRONT_DOOR_MODULES:
        try:
            import_module(name)
        except ImportError:
            pass  # an extra that is not installed: the command says so itself, as it would alone
    # LanceDB resets its runtime in a forked child and warns once that fork support is new; a child
    # here forks before LanceDB has done anything, which is the case that reset covers.
    warnings.filterwarnings("ignore", message="lancedb fork support is experimental")
    return not any(name.split(".")[0] in NOT_BEFORE_FORK for name in sys.modules)


_log_file = None
_told = threading.Event()  # in a command's child: its exit status is on its way to the caller


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
    standard streams, and, from the resident to a waiting child, the caller's connection too. Anything
    else (too large, cut short, not a command) is refused with its descriptors closed: held here, the
    caller's pipe would never end for the program reading it."""
    data, fds, _, _ = socket.recv_fds(conn, 65536, streams)
    try:
        if not data and not fds:
            raise ValueError(_NOTHING)
        if len(fds) != streams or len(data) < _HEADER.size:
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
        request = json.loads(body.decode("utf-8", "surrogateescape"))
        _check_request(request)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return request, fds


def _check_request(request) -> None:
    """A command's request, or ValueError: what a child takes on must be there and of its kind."""
    if not isinstance(request, dict):
        raise ValueError("a request is a JSON object")
    argv, env = request.get("argv"), request.get("env")
    if not (isinstance(argv, list) and len(argv) >= 2 and all(isinstance(a, str) for a in argv)):
        raise ValueError("a request's argv is a list of strings, the program and a command")
    if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
        raise ValueError("a request's env maps names to strings")
    if not isinstance(request.get("cwd"), str) or not isinstance(request.get("umask"), int) or \
            not isinstance(request.get("nice", 0), int):
        raise ValueError("a request has a cwd (a string), a umask and a nice value (integers)")


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


def _resident_bytes(pid: int) -> int:
    """The memory ``pid`` holds (its resident set; 0 where /proc cannot say)."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _same_user(conn: socket.socket) -> bool:
    """On Linux the peer's uid is checked as well as the socket folder's mode."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return uid == os.getuid()


def _take_on(request: dict, fds: list[int]) -> None:
    """The caller's standard streams, folder, umask, niceness, environment and arguments, as this process's."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.umask(int(request["umask"]))
    lower = int(request.get("nice", 0)) - os.nice(0)
    if lower > 0:  # the caller's `nice` (raising priority back is not ours to do)
        os.nice(lower)
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        old = getattr(sys, name)
        line_buffered = fd != 0 and os.isatty(fd)
        setattr(sys, name, open(fd, mode, buffering=1 if line_buffered else -1, encoding=old.encoding,
                                errors=old.errors, closefd=False))


def _become_the_command(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the child: take on the caller's streams, folder, environment and arguments, then run."""
    _take_on(request, fds)
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
                if not _told.is_set():  # gone before the command ended (once told, the caller may leave)
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
        _done(conn, done.code)
    except KeyboardInterrupt:
        _done(conn, 130)
    except BaseException:  # noqa: BLE001 - reported as Python would, and the command fails
        import traceback

        traceback.print_exc()
        _done(conn, 1)
    _done(conn, 0)


def _done(conn: socket.socket, code: object) -> None:
    """End the command, its exit status told to the caller by the command itself: a resident that was
    stopped (SIGSTOP, a debugger) cannot keep the caller waiting for it."""
    import atexit

    status = 0 if code is None else code if isinstance(code, int) else 1
    atexit.register(lambda: _tell(conn, status & 0xFF))  # after the output is flushed
    exit_now(code)


def _tell(conn: socket.socket, code: int) -> None:
    for stream in (sys.stdout, sys.stderr):  # all of the output first: the caller ends when it has the status
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    _told.set()
    try:
        conn.sendall(f"{code}\n".encode())
    except OSError:
        pass


def _report_when_done(conn: socket.socket, pid: int, running: dict[int, socket.socket], lock: threading.Lock,
                      what: str) -> None:
    started = time.monotonic()
    try:
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
    except ChildProcessError:
        code = 1
    try:
        killed = code < 0  # a command that ended itself has told the caller already
        code = code if code >= 0 else 128 - code
        _log(f"{what} (child {pid}) exited {code} after {time.monotonic() - started:.2f} s")
        if killed:
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
    """Fork a child that closes the resident's own handles (``held``: its listener, lock, the connections
    of other callers and the descriptors they sent, as objects or numbers) and runs ``then()``; the
    child's pid here."""
    pid = os.fork()
    if pid == 0:
        for handle in held:
            try:
                os.close(handle) if isinstance(handle, int) else handle.close()
            except OSError:
                pass
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
        self.callers: set = set()  # connections being read, and the descriptors they sent, not yet handed on
        self.handing = threading.Lock()  # one hand-over at a time: each takes the waiting child and makes the next
        self.most_bytes = most_megabytes() * 1024 * 1024

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
                threading.Thread(target=self._take, args=(conn,), name="marlin-resident-caller", daemon=True).start()
        finally:
            if os.getpid() == self.me:
                self.waiting.channel.close()
                self.listener.close()
                try:
                    if self.path.stat().st_ino == self.bound:
                        self.path.unlink()
                except OSError:
                    pass

    def _held(self, mine: tuple = ()) -> list:
        """What a new child must close: everything of the resident's and of other callers (``mine``: the
        connection and descriptors of the caller it is for, which it keeps)."""
        with self.lock:
            return [self.listener, self.lock_file, *(c for c in self.running.values() if c not in mine),
                    *(h for h in self.callers if h not in mine)]

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
        held = _resident_bytes(os.getpid()) + _resident_bytes(self.waiting.pid)
        if held > self.most_bytes:
            _log(f"leaving: it and its waiting child hold {held / 2**20:.0f} MB, more than "
                 f"MARLIN_RESIDENT_MAX_MB ({self.most_bytes / 2**20:.0f})")
            return True
        if _others_more_recent(self.folder, self.key) >= MOST_RESIDENTS:
            _log(f"leaving: {MOST_RESIDENTS} other residents were used more recently")
            return True
        try:
            return self.path.stat().st_ino != self.bound  # replaced or removed: we can no longer be reached
        except OSError:
            return True

    def _take(self, conn: socket.socket) -> None:
        """One caller, on a thread of its own (one that connects and sends nothing delays no one): its
        request read and acknowledged, its command run in a child, its end reported by the child."""
        self.last = time.monotonic()
        with self.lock:
            self.callers.add(conn)
        try:
            self._serve(conn)
        finally:
            with self.lock:
                self.callers.discard(conn)

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        try:
            if not _same_user(conn):
                conn.close()
                return
            # Here and awake: only now does the caller send its standard streams. Sent to a resident that
            # is stopped, they would wait in its socket, and whoever reads the caller's output would wait too.
            conn.sendall(b"?")
            request, fds = _read_request(conn)
        except (OSError, ValueError) as exc:
            if str(exc) != _NOTHING and not isinstance(exc, BrokenPipeError | ConnectionResetError):
                # (a probe, asking whether anyone listens, sends nothing and goes: no news)
                _log(f"refused a request: {exc}")
            conn.close()
            return
        with self.lock:
            self.callers.update(fds)
        try:
            # Taken: until this byte arrives, a caller that waited too long runs the command itself.
            conn.sendall(b"+")
        except OSError:
            with self.lock:
                self.callers.difference_update(fds)
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        conn.settimeout(None)
        with self.handing:
            if self.waiting.hand_over(request, fds, conn):
                pid = self.waiting.pid
            else:
                pid = _fork(self._held((conn, *fds)), functools.partial(_become_the_command, conn, request, fds))
            with self.lock:
                self.callers.difference_update(fds)
                self.running[pid] = conn
            for fd in fds:
                os.close(fd)
            self.waiting = self._waiting_child()
        what = " ".join(str(a) for a in request["argv"][1:2])  # the command's name only: arguments may be private
        _report_when_done(conn, pid, self.running, self.lock, what)


def main() -> None:
    key, root = sys.argv[1], sys.argv[2]

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
