"""Who may talk to `serve`, checked before any route runs (the REST API, the pages and ``/mcp`` alike).

- **Loopback** (the default): only requests addressed to this machine by a loopback name (the
  ``Host`` header) are answered, so a web page elsewhere cannot reach the server through a DNS
  name that it points at 127.0.0.1.
- **Another interface** (``--host``): every request carries the token, as ``Authorization:
  Bearer``, or as the cookie the pages set after the token was given once in ``?token=``
  (the address is then reloaded without it, out of the browser's history).
- **Requests that change anything** (any method but GET, HEAD, OPTIONS) from a page of another
  origin are refused: a browser says where a request comes from (``Origin``,
  ``Sec-Fetch-Site``), and a site the user visits must not run questions or write files here.
"""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from marlin_agent.config import Settings
from marlin_agent.errors import ConfigError
from marlin_agent.redaction import remember
from marlin_agent.serve.statuses import error_response

COOKIE = "marlin_token"
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
# The largest request body: parameters and an inline JSON Schema, never footage.
MAX_BODY_BYTES = 8 * 2**20
# Pages and the assets they load; none of them holds anything of the user's.
_OPEN_PATHS = ("/static/",)


def is_loopback(host: str) -> bool:
    if host.strip("[]") in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def stored_token(settings: Settings) -> tuple[str, bool]:
    """The token callers from other machines give, and whether it was made just now (to be shown once):
    ``[serve] token`` when set, else a new one written into credentials.toml (user-only)."""
    if settings.serve.token is not None and settings.serve.token.get_secret_value():
        return settings.serve.token.get_secret_value(), False
    from marlin_agent.setup.user_config import update

    token = secrets.token_urlsafe(32)
    try:
        update(settings.credentials_path, {"serve": {"token": token}}, private=True)
    except OSError as exc:  # a token nobody could find again would lock everyone out: refuse to start
        raise ConfigError(f"cannot keep the token in {settings.credentials_path}: {exc.strerror}",
                          hint="Listening beyond this machine needs a token kept there; make $MARLIN_HOME "
                               "writable, or set [serve] token yourself.") from None
    remember(token, "serve token")
    return token, True


def _host_name(host_header: str) -> str:
    """The name in a ``Host`` header, without its port (IPv6 literals keep their brackets off)."""
    return urlsplit(f"//{host_header}").hostname or ""


@dataclass(frozen=True)
class Access:
    """The rules of one server: ``token`` None means loopback only, no token."""

    token: str | None

    @staticmethod
    def carried(headers: Headers, query: str) -> list[str]:
        """Every token a request carries: its header, its cookie, its address."""
        found = []
        authorization = headers.get("authorization", "")
        if authorization.lower().startswith("bearer "):
            found.append(authorization[7:].strip())
        cookies = SimpleCookie(headers.get("cookie", ""))
        if COOKIE in cookies:
            found.append(cookies[COOKIE].value)
        if "token" in (given := dict(parse_qsl(query))):
            found.append(given["token"])
        return found

    def matches(self, given: str | None) -> bool:
        return self.token is not None and given is not None and secrets.compare_digest(given.encode(),
                                                                                         self.token.encode())

    def authorised(self, headers: Headers, query: str) -> bool:
        return self.token is None or any(self.matches(token) for token in self.carried(headers, query))

    def host_allowed(self, headers: Headers) -> bool:
        """On loopback, only loopback names address the server (a rebound DNS name does not)."""
        return self.token is not None or is_loopback(_host_name(headers.get("host", "")))

    @staticmethod
    def same_origin(headers: Headers, scheme: str) -> bool:
        """Whether a changing request comes from this server's own pages (or from no page at all)."""
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return False
        origin = headers.get("origin")
        return origin is None or origin == f"{scheme}://{headers.get('host', '')}"


def _too_large():
    return error_response("too_large", f"a request body may hold at most {MAX_BODY_BYTES // 2**20} MB",
                          "Name a schema file inside the roots instead of sending it inline.", status=413)


async def _read_body(receive: Receive) -> list[Message] | None:
    """The request's body messages, read whole; None as soon as they hold more than the limit."""
    messages, size = [], 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":  # the client went away: the app hears it as it would have
            return messages
        size += len(message.get("body", b""))
        if size > MAX_BODY_BYTES:
            return None
        if not message.get("more_body", False):
            return messages


def _replayed(messages: list[Message], receive: Receive) -> Receive:
    """``receive`` that first gives back the body already read."""
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


class AccessMiddleware:
    """Applies ``Access`` to every HTTP request before the app sees it."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app, self.access = app, access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        query = scope.get("query_string", b"").decode("latin-1")
        refusal = self._refusal(scope, headers, query)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if scope["method"] == "GET" and self.access.matches(dict(parse_qsl(query)).get("token")):
            await self._set_cookie(scope, query)(scope, receive, send)
            return
        if "content-length" in headers:  # its length was checked above
            await self.app(scope, receive, send)
            return
        # A body sent in chunks says no length: it is read here, up to the limit, before the app sees any of it.
        body = await _read_body(receive)
        if body is None:
            await _too_large()(scope, receive, send)
            return
        await self.app(scope, _replayed(body, receive), send)

    def _refusal(self, scope: Scope, headers: Headers, query: str):
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            return _too_large()
        if not self.access.host_allowed(headers):
            return error_response("host_refused", "this server answers only to localhost and 127.0.0.1",
                                  "Open http://127.0.0.1:<port>/, or start serve with --host to listen elsewhere.",
                                  status=421)
        if scope["method"] not in _SAFE_METHODS and not self.access.same_origin(headers, scope.get("scheme", "http")):
            return error_response("origin_refused", "a page of another site may not change anything here",
                                  "Use this server's own pages, or call the API from a program.", status=403)
        if not scope["path"].startswith(_OPEN_PATHS) and not self.access.authorised(headers, query):
            return error_response("unauthorised", "this server needs its token",
                                  "Send 'Authorization: Bearer <token>', or open the address `serve` printed "
                                  "(with ?token=) once in the browser. The token is [serve] token in "
                                  "credentials.toml.", status=401, headers={"WWW-Authenticate": "Bearer"})
        return None

    @staticmethod
    def _set_cookie(scope: Scope, query: str):
        """The same address without the token, with the token kept in a cookie only this site sends."""
        from starlette.responses import RedirectResponse

        rest = urlencode([(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "token"])
        target = scope["path"] + (f"?{rest}" if rest else "")
        response = RedirectResponse(target, status_code=303)
        token = dict(parse_qsl(query))["token"]
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=scope.get("scheme") == "https")
        return response
