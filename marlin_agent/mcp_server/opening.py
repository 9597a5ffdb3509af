"""Answer an MCP host's opening requests at once, from the replies this server gave them before.

A host starts `marlin-agent mcp` and first asks what the server is and which tools it has
(``initialize`` or ``server/discover``, then ``tools/list`` and the like). Those replies depend only on
this package, the MCP SDK and the settings, but producing them takes the SDK, whose import is most of a
cold start. So every start records the replies the SDK gives to those requests (``OpeningRecord``, in
the cache folder, keyed by the code and settings that shape them), and a later start answers the same
requests from that record while the SDK loads on a thread. Then the SDK takes the wire over:

- the requests answered from the record go to it first, under ids of ours whose replies are kept off the
  wire: the host's own ``initialize`` so the SDK serves the session the host opened, and every other one
  so that a reply that differs from the record replaces it; a tool list that differed is announced to a
  host that made the handshake (``notifications/tools/list_changed``), so it lists again;
- then the lines the host sent meanwhile, in the order they came.

A request the record does not hold ends the recorded part at once; the SDK answers it and all that
follows. The SDK is given streams instead of the process's own, so the descriptor diversion it would
make (fd 0 reads the null device, fd 1 writes to stderr: a stray print or child cannot corrupt the
protocol) is made here (``Wire``), before anything is read.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from marlin_agent.config import Settings
from marlin_agent.version import __version__

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

# Requests whose replies depend on nothing but the code and the settings (and, in a handshake session, on
# the handshake), and that hosts make as they start.
OPENING_METHODS = frozenset({"initialize", "server/discover", "tools/list", "prompts/list", "resources/list",
                             "resources/templates/list", "ping"})
RECORD_FOLDER = "mcp-opening"
_FORMAT = 1
_MOST_RECORDS = 8
_MOST_REPLIES = 16
_CHECK_ID = "marlin-opening-check-"
# What shapes the replies besides the settings: this package, the SDK and the models it builds them with.
_SHAPING_PACKAGES = ("marlin_agent", "mcp", "mcp_types", "pydantic", "pydantic_core")
_READY = object()  # put on the feed when the SDK's server is built (or failed to be)


def fingerprint(settings: Settings, roots: list[str] | None, verbose: bool) -> str:
    """A digest of everything an opening reply depends on: the Python, the files of the packages that write
    the replies (paths, sizes, times: a changed or reinstalled file changes it) and the server's settings."""
    digest = hashlib.sha256(f"{sys.version}\0{__version__}\0{verbose}\0{sorted(roots or [])}\0".encode())
    digest.update(settings.model_dump_json().encode())
    for package in _SHAPING_PACKAGES:
        spec = importlib.util.find_spec(package)
        for top in (spec.submodule_search_locations or []) if spec else []:
            for folder, subfolders, files in os.walk(top):
                subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
                for name in sorted(files):
                    try:
                        found = os.stat(os.path.join(folder, name))
                    except OSError:
                        continue
                    digest.update(f"{folder}/{name}\0{found.st_size}\0{found.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def request_key(method: str, params: Any, handshake: str | None) -> str:
    """What identifies a request's reply: its method, its parameters and the session's handshake."""
    return _canonical([method, params, handshake])


class OpeningRecord:
    """The opening replies recorded for one fingerprint: a JSON file of its own in ``folder``, which holds the
    records of the last few fingerprints (settings, roots, installs) a user's hosts started the server with."""

    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder
        self.path = folder / f"{key[:40]}.json"
        self._lock = threading.Lock()
        self.replies: dict[str, Any] = self._load()

    def _load(self) -> dict[str, Any]:
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # none yet, or damaged: the SDK answers and the record is written again
        replies = document.get("replies") if isinstance(document, dict) and document.get("format") == _FORMAT else None
        return replies if isinstance(replies, dict) else {}

    def reply(self, key: str) -> Any | None:
        return self.replies.get(key)

    def keep(self, key: str, result: Any | None) -> None:
        """Record ``result`` as the reply to ``key`` (None: forget it) and write the file at once; only the
        latest few requests are kept (a host's every release brings a new handshake)."""
        with self._lock:
            self.replies.pop(key, None)
            if result is not None:
                self.replies[key] = result
            for oldest in list(self.replies)[:-_MOST_REPLIES]:
                del self.replies[oldest]
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
                temporary.write_text(json.dumps({"format": _FORMAT, "replies": self.replies}), encoding="utf-8")
                os.replace(temporary, self.path)
                records = sorted(self.folder.glob("*.json"), key=lambda path: path.stat().st_mtime, reverse=True)
                for stale in records[_MOST_RECORDS:]:
                    stale.unlink(missing_ok=True)
            except OSError:
                pass  # a read-only or full home, a record pruned by another start: the SDK answers next time


class Wire:
    """The protocol's own duplicates of fd 0 and fd 1, with fd 0 then reading the null device and fd 1 writing
    to stderr until ``release``."""

    def __init__(self) -> None:
        self._saved: list[tuple[int, int]] = []
        sys.stdout.flush()
        self.input = self._claim(0, os.O_RDONLY, "rb")
        self.output = self._claim(1, os.O_WRONLY, "wb")

    def _claim(self, fd: int, mode: int, how: str) -> BinaryIO:
        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        self._saved.append((fd, private))
        diversion = os.dup(2) if fd == 1 else os.open(os.devnull, mode)
        try:
            os.dup2(diversion, fd)
        finally:
            os.close(diversion)
        # closefd=False: the reading thread may still wait on it when the server stops.
        return os.fdopen(private, how, closefd=False)

    def release(self) -> None:
        for fd, private in self._saved:
            try:
                os.dup2(private, fd)
            except OSError:
                pass
        self._saved.clear()


class _Session:
    """What the server knows of the opening exchange: the handshake made, the host's opening requests whose
    replies are awaited (to record them), and the requests of ours whose replies check the record."""

    def __init__(self, record: OpeningRecord, tools_changed: Callable[[], None]) -> None:
        self.record = record
        self.handshake: str | None = None
        self.tools_may_change = False  # what the handshake's reply told the host: only then is a change announced
        self.awaited: dict[Any, tuple[str, str]] = {}
        self.checks: dict[str, tuple[str, str, Any]] = {}
        self.opening = True  # until the host's first request that is not an opening one
        self._tools_changed = tools_changed

    def key(self, message: dict) -> str:
        return request_key(message["method"], message.get("params"), self.handshake)

    def heard(self, message: dict) -> None:
        """A line from the host on its way to the SDK: await the reply of an opening request, to record it."""
        method = message.get("method")
        if not self.opening or not isinstance(method, str) or "id" not in message:
            return
        if method not in OPENING_METHODS:
            self.opening = False
            return
        self.awaited[_hashable(message["id"])] = (method, self.key(message))
        if method == "initialize":
            self.handshake = _canonical(message.get("params"))

    def shook_hands(self, params: Any, result: Any) -> None:
        self.handshake = _canonical(params)
        capabilities = result.get("capabilities") if isinstance(result, dict) else None
        tools = capabilities.get("tools") if isinstance(capabilities, dict) else None
        self.tools_may_change = isinstance(tools, dict) and tools.get("listChanged") is True

    def check(self, message: dict, key: str, sent: Any) -> str:
        """The line that asks the SDK ``message`` (recorded as ``key``) again under an id of ours, to compare its
        reply with ``sent``."""
        check_id = f"{_CHECK_ID}{len(self.checks)}"
        self.checks[check_id] = (message["method"], key, sent)
        return json.dumps({**message, "id": check_id})

    @property
    def listening(self) -> bool:
        return bool(self.awaited or self.checks)

    def said(self, message: Any) -> bool:
        """A reply from the SDK: record it if it answers an opening request; False when it is a reply to one of
        our checks, which stays off the wire."""
        if not isinstance(message, dict) or "id" not in message or "method" in message:
            return True
        answered = _hashable(message["id"])
        if isinstance(answered, str) and answered in self.checks:
            method, key, sent = self.checks.pop(answered)
            result = message.get("result")
            if result != sent:
                self.record.keep(key, result)
                if method == "tools/list" and self.tools_may_change:
                    self._tools_changed()
            return False
        method, key = self.awaited.pop(answered, (None, ""))
        if method is not None and "result" in message:
            self.record.keep(key, message["result"])
            if method == "initialize":
                self.shook_hands(json.loads(key)[1], message["result"])
        return True


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, type(None))) else _canonical(value)


def _parsed(line: str) -> dict | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _read_lines(source: BinaryIO, lines: queue.Queue) -> None:
    """The host's lines, as they come, then None at the end of input."""
    try:
        for raw in iter(source.readline, b""):
            lines.put(raw.decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        pass
    finally:
        lines.put(None)


class _Prepared:
    """The SDK's server, built on a thread while the record answers; ``_READY`` is put on the feed when done."""

    def __init__(self, build: Callable[[], MCPServer], feed: queue.Queue) -> None:
        self._server: MCPServer | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._build, args=(build, feed), name="marlin-mcp-sdk", daemon=True)
        self._thread.start()

    def _build(self, build: Callable[[], MCPServer], feed: queue.Queue) -> None:
        try:
            self._server = build()
        except BaseException as exc:  # noqa: BLE001 - raised where the server is needed
            self._error = exc
        finally:
            feed.put(_READY)

    def server(self) -> MCPServer:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._server is not None
        return self._server


class _Output:
    """The SDK's stdout: each line passes the session (which records replies and keeps check replies off the
    wire), then goes out whole."""

    def __init__(self, wire: BinaryIO, session: _Session) -> None:
        self._wire, self.session = wire, session
        self._lock = threading.Lock()

    def send(self, line: str) -> None:
        with self._lock:
            self._wire.write(line.encode("utf-8"))
            self._wire.flush()

    def announce(self, method: str) -> None:
        """A notification of ours; a host that has gone away misses it, and the SDK learns that on its own."""
        try:
            self.send(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        except OSError:
            pass

    async def write(self, text: str) -> None:
        import anyio.to_thread

        if self.session.listening and not self.session.said(_parsed(text)):
            return
        await anyio.to_thread.run_sync(self.send, text)

    async def flush(self) -> None:
        pass  # every line is flushed as it is written


class _Lines:
    """The SDK's stdin: the lines prepared at the handover, then the host's as the reader thread gets them."""

    def __init__(self, first: list[str], feed: queue.Queue, session: _Session) -> None:
        self._first, self._feed, self._session = first, feed, session

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        import anyio.to_thread

        if self._first:
            return self._first.pop(0)
        while True:
            line = await anyio.to_thread.run_sync(self._feed.get, abandon_on_cancel=True)
            if line is None:
                self._feed.put(None)  # the end stays the end for any later read
                raise StopAsyncIteration
            if line is not _READY:
                break
        if self._session.opening and (message := _parsed(line)) is not None:
            self._session.heard(message)
        return line


def _answer_from_record(feed: queue.Queue, session: _Session, output: _Output) -> list[str]:
    """Answer the host's opening requests from the record until the SDK is ready, a request needs it or the
    host goes away; the lines the SDK is to read first."""
    checks: list[str] = []
    held: list[str] = []
    while True:
        line = feed.get()
        if line is _READY:
            break
        if line is None:
            feed.put(None)  # the SDK still makes the checks, then reads the end
            break
        message = _parsed(line)
        method = message.get("method") if message else None
        if message is None or not isinstance(method, str):
            held.append(line)  # not a request: the SDK says what it makes of it
            break
        if "id" not in message:
            held.append(line)  # a notification: the SDK hears it in its turn
            continue
        key = session.key(message)
        result = session.record.reply(key) if method in OPENING_METHODS else None
        if result is None:
            held.append(line)
            break
        output.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}, ensure_ascii=False,
                               separators=(",", ":")) + "\n")
        checks.append(session.check(message, key, result) + "\n")
        if method == "initialize":
            session.shook_hands(message.get("params"), result)
    for line in held:
        if (message := _parsed(line)) is not None:
            session.heard(message)
    return checks + held


def serve_stdio_from_record(settings: Settings, roots: list[str] | None, verbose: bool,
                            build: Callable[[], MCPServer]) -> None:
    """Serve MCP on stdio with the server ``build`` makes, answering the opening from the record meanwhile."""
    record = OpeningRecord(settings.cache_dir / RECORD_FOLDER, fingerprint(settings, roots, verbose))
    wire = Wire()
    try:
        feed: queue.Queue = queue.Queue()
        threading.Thread(target=_read_lines, args=(wire.input, feed), name="marlin-mcp-stdin", daemon=True).start()
        prepared = _Prepared(build, feed)
        output = _Output(wire.output, _Session(record, lambda: output.announce("notifications/tools/list_changed")))
        first = _answer_from_record(feed, output.session, output) if record.replies else []
        server = prepared.server()
        import anyio

        anyio.run(_serve, server, _Lines(first, feed, output.session), output)
    finally:
        feed.put(None)  # a read the SDK abandoned ends, so that no thread outlives the server
        wire.release()


async def _serve(server: MCPServer, lines: _Lines, output: _Output) -> None:
    from mcp.server.stdio import stdio_server

    # The SDK's own client drives an in-process server through this same attribute.
    lowlevel = server._lowlevel_server
    async with stdio_server(stdin=lines, stdout=output) as (read_stream, write_stream):  # type: ignore[arg-type]
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
