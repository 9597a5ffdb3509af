"""The two calls of the OpenAI-compatible API that Marlin needs, on the standard library's HTTP client.

Marlin is asked for chat completions and the models a server lists; nothing more. The OpenAI SDK
would bring its whole type tree (about 1.3 s of imports on every `ask`), and an async HTTP stack its
own (httpx, httpcore, h11, anyio: 0.1-0.25 s), for two requests; so this module sends them with
``http.client`` on threads of their own, keeps finished connections for the next request, and says
what went wrong in a few typed errors. Proxies come from the environment (``HTTP_PROXY``,
``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) except for a server on this machine. Retries and the
wording users see belong to ``client``.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import http.client
import json
import socket
import ssl
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from marlin_agent.version import __version__

_ERROR_TEXT = 300  # characters of a non-JSON error body kept in the message
_MOST_BYTES = 64 * 1024 * 1024  # an answer larger than this is no chat completion
_IDLE_CONNECTIONS = 16
_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]"}


class TransportError(Exception):
    """A request that did not come back as a usable answer."""


class ConnectionFailed(TransportError):
    """The server could not be reached, or the connection broke before an answer."""


class TimedOut(TransportError):
    """No answer within the request's timeout."""


class ResponseInvalid(TransportError):
    """An answer that is not the JSON the API promises."""


class HttpStatus(TransportError):
    """The server answered with an error status."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers  # names in lower case

    @property
    def is_rejection(self) -> bool:
        """The request itself was refused (400 or 422): sending it again as it is changes nothing."""
        return self.status in (400, 422)


@dataclass(frozen=True)
class Completion:
    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class _Answer:
    status: int
    reason: str
    headers: dict[str, str]
    body: bytes


def _error_message(answer: _Answer) -> str:
    """What the server said about its error: ``error.message`` (OpenAI, vLLM), ``message`` or ``detail``,
    else the start of the body."""
    try:
        body = json.loads(answer.body)
    except ValueError:
        text = answer.body.decode("utf-8", errors="replace").strip()
        return text[:_ERROR_TEXT] or answer.reason or f"HTTP {answer.status}"
    if isinstance(body, dict):
        error = body.get("error")
        nested = error.get("message") if isinstance(error, dict) else error
        for said in (nested, body.get("message"), body.get("detail")):
            if isinstance(said, str) and said.strip():
                return said.strip()
    return json.dumps(body)[:_ERROR_TEXT]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The system's certificate store, loaded once per process (loading it costs a noticeable part of a
    short command; the resident process loads it ahead of commands)."""
    import certifi  # httpx's own choice of certificates

    return ssl.create_default_context(cafile=certifi.where())


@dataclass(frozen=True)
class _Route:
    """Where a request's connection goes: the server itself, or a proxy (a tunnel through it for HTTPS)."""

    secure: bool
    host: str
    port: int
    proxy: urllib.parse.SplitResult | None


def _route(base_url: str) -> tuple[_Route, str]:
    """The route to ``base_url`` and the path every request's path is put under."""
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        # Not the address itself: one written with credentials in it would carry them into the message.
        raise ConnectionFailed(f"the server's address is not an http:// or https:// one (it is "
                               f"{parts.scheme + '://' if parts.scheme else 'without a scheme'})")
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    proxy = None
    if parts.hostname not in _LOOPBACK and not urllib.request.proxy_bypass(parts.hostname):
        proxies = urllib.request.getproxies()
        address = proxies.get(parts.scheme) or proxies.get("all")
        if address:
            proxy = urllib.parse.urlsplit(address if "://" in address else f"http://{address}")
            if proxy.scheme not in ("http", "https") or not proxy.hostname:
                raise ConnectionFailed(f"the proxy {proxy.scheme}://{proxy.hostname} is not an HTTP proxy (only "
                                       "HTTP proxies are supported for the Marlin server)")
    return _Route(secure, parts.hostname, port, proxy), parts.path.rstrip("/")


def _proxy_authorization(proxy: urllib.parse.SplitResult) -> dict[str, str]:
    if proxy.username is None:
        return {}
    pair = f"{urllib.parse.unquote(proxy.username)}:{urllib.parse.unquote(proxy.password or '')}"
    return {"Proxy-Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}


class ChatApi:
    """An OpenAI-compatible API root (``…/v1``) and its key."""

    def __init__(self, base_url: str, api_key: str, on_completion_sent: Callable[[], None] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._sent = on_completion_sent or (lambda: None)
        self._headers = {"Authorization": f"Bearer {api_key}", "User-Agent": f"marlin-agent/{__version__}",
                         "Accept": "application/json"}
        self._idle: list[http.client.HTTPConnection] = []
        self._idle_lock = threading.Lock()
        try:
            self._route, self._root = _route(self.base_url)
        except ConnectionFailed as exc:
            self._route, self._broken = None, exc
        # Plain HTTP (a local engine) needs no certificate store: its context trusts nothing, so any TLS
        # met on the way fails closed rather than unchecked. HTTPS checks as always.
        secure = self._route is not None and self._route.secure
        self._tls = tls_context() if secure else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)

    async def close(self) -> None:
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        route = self._route
        assert route is not None
        proxy = route.proxy
        if proxy is None:
            if route.secure:
                return http.client.HTTPSConnection(route.host, route.port, timeout=timeout, context=self._tls)
            return http.client.HTTPConnection(route.host, route.port, timeout=timeout)
        proxy_port = proxy.port or (443 if proxy.scheme == "https" else 80)
        if not route.secure:  # a plain request is forwarded by the proxy: see ``_target``
            if proxy.scheme == "https":
                return http.client.HTTPSConnection(proxy.hostname, proxy_port, timeout=timeout,
                                                   context=tls_context())
            return http.client.HTTPConnection(proxy.hostname, proxy_port, timeout=timeout)
        if proxy.scheme == "https":
            raise ConnectionFailed("a tunnel through an https:// proxy is not supported; give the proxy as http://")
        connection = http.client.HTTPSConnection(proxy.hostname, proxy_port, timeout=timeout, context=self._tls)
        connection.set_tunnel(route.host, route.port, headers=_proxy_authorization(proxy))
        return connection

    def _target(self, path: str) -> tuple[str, dict[str, str]]:
        """The request line's target and the headers that go with it (a forwarding proxy takes the whole URL)."""
        route = self._route
        assert route is not None
        if route.proxy is not None and not route.secure:
            return f"{self.base_url}{path}", _proxy_authorization(route.proxy)
        return f"{self._root}{path}", {}

    def _take(self, timeout: float) -> tuple[http.client.HTTPConnection, bool]:
        """An idle connection (True) or a new one (False)."""
        with self._idle_lock:
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            return self._connection(timeout), False
        connection.timeout = timeout
        if connection.sock is not None:
            connection.sock.settimeout(timeout)
        return connection, True

    def _give_back(self, connection: http.client.HTTPConnection) -> None:
        with self._idle_lock:
            if len(self._idle) < _IDLE_CONNECTIONS:
                self._idle.append(connection)
                return
        connection.close()

    def _exchange(self, method: str, path: str, timeout: float, body: bytes | None) -> _Answer:
        """One request and its whole answer, on this thread; a kept connection the server has closed since is
        replaced once."""
        target, extra = self._target(path)
        headers = {**self._headers, **extra}
        if body is not None:
            headers["Content-Type"] = "application/json"
        while True:
            connection, reused = self._take(timeout)
            try:
                connection.request(method, target, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read(_MOST_BYTES + 1)
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                connection.close()
                if reused:
                    continue
                raise
            except BaseException:
                connection.close()
                raise
            if len(data) > _MOST_BYTES:
                connection.close()
                raise ResponseInvalid(f"an answer larger than {_MOST_BYTES // (1024 * 1024)} MB")
            if response.will_close or not response.isclosed():
                connection.close()
            else:
                self._give_back(connection)
            return _Answer(response.status, response.reason or "",
                           {name.lower(): value for name, value in response.getheaders()}, data)

    async def _send(self, method: str, path: str, timeout: float, body: dict | None = None) -> object:
        if self._route is None:
            raise self._broken
        payload = None if body is None else json.dumps(body).encode("utf-8")
        try:
            answer = await _on_a_thread(functools.partial(self._exchange, method, path, timeout, payload))
        except (TimeoutError, socket.timeout) as exc:
            raise TimedOut(str(exc) or "timed out") from exc
        except (http.client.HTTPException, OSError) as exc:
            raise ConnectionFailed(str(exc) or type(exc).__name__) from exc
        if answer.status >= 400:
            raise HttpStatus(answer.status, _error_message(answer), answer.headers)
        try:
            return json.loads(answer.body)
        except ValueError:
            raise ResponseInvalid(f"HTTP {answer.status} with a body that is not JSON "
                                  f"({answer.headers.get('content-type', 'no content type')})") from None

    async def models(self, timeout: float) -> dict[str, str]:
        """The served models, each with its ``owned_by`` (empty when the server says nothing)."""
        listed = await self._send("GET", "/models", timeout)
        entries = listed.get("data") if isinstance(listed, dict) else None
        if not isinstance(entries, list):
            raise ResponseInvalid("the model list has no data array")
        return {str(m["id"]): str(m.get("owned_by") or "") for m in entries if isinstance(m, dict) and "id" in m}

    async def complete(self, body: dict, timeout: float) -> Completion:
        """One chat completion's first choice; an answer shaped otherwise is ``ResponseInvalid``."""
        self._sent()
        answer = await self._send("POST", "/chat/completions", timeout, body)
        choices = answer.get("choices") if isinstance(answer, dict) else None
        first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        message = first.get("message") if first else None
        if not isinstance(message, dict):
            raise ResponseInvalid("the answer is not a chat completion")
        content = message.get("content")
        usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        return Completion(content=content if isinstance(content, str) else "",
                          prompt_tokens=_count(usage, "prompt_tokens"),
                          completion_tokens=_count(usage, "completion_tokens"))


async def _on_a_thread(work: Callable[[], _Answer]) -> _Answer:
    """``work`` on a daemon thread of its own: a request that is waited for no more (cancelled, or the process
    ending) never holds anything up; it ends by its own timeout."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[_Answer] = loop.create_future()

    def settle(outcome: _Answer | None, error: BaseException | None) -> None:
        if not done.done():
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(outcome)

    def run() -> None:
        try:
            outcome, error = work(), None
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting coroutine
            outcome, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, outcome, error)
        except RuntimeError:
            pass  # the loop has closed: nobody waits for this answer

    threading.Thread(target=run, name="marlin-http", daemon=True).start()
    return await done


def _count(usage: dict, key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and value >= 0 else 0
