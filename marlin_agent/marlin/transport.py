"""The two calls of the OpenAI-compatible API that Marlin needs, on httpx.

Marlin is asked for chat completions and the models a server lists; nothing more. The OpenAI
SDK would bring its whole type tree (about 1.3 s of imports on every `ask`) for two requests,
so this module sends them itself and says what went wrong in a few typed errors. Retries and
the wording users see belong to ``client``.
"""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from marlin_agent.version import __version__

_ERROR_TEXT = 300  # characters of a non-JSON error body kept in the message


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

    def __init__(self, status: int, message: str, headers: httpx.Headers) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers

    @property
    def is_rejection(self) -> bool:
        """The request itself was refused (400 or 422): sending it again as it is changes nothing."""
        return self.status in (400, 422)


@dataclass(frozen=True)
class Completion:
    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _error_message(response: httpx.Response) -> str:
    """What the server said about its error: ``error.message`` (OpenAI, vLLM), ``message`` or ``detail``,
    else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        text = response.text.strip()
        return text[:_ERROR_TEXT] or response.reason_phrase or f"HTTP {response.status_code}"
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


class ChatApi:
    """An OpenAI-compatible API root (``…/v1``) and its key."""

    def __init__(self, base_url: str, api_key: str, on_completion_sent: Callable[[], None] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._sent = on_completion_sent or (lambda: None)
        # Plain HTTP (a local engine) needs no certificate store: its context trusts nothing, so any TLS
        # met on the way (an HTTPS proxy) fails closed rather than unchecked. HTTPS checks as always.
        secure = self.base_url.lower().startswith("https:")
        self._http = httpx.AsyncClient(headers={"Authorization": f"Bearer {api_key}",
                                                "User-Agent": f"marlin-agent/{__version__}"},
                                       verify=tls_context() if secure else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))

    async def close(self) -> None:
        await self._http.aclose()

    async def _send(self, method: str, path: str, timeout: float, body: dict | None = None) -> object:
        try:
            response = await self._http.request(method, f"{self.base_url}{path}", json=body,
                                                timeout=httpx.Timeout(timeout))
        except httpx.TimeoutException as exc:
            raise TimedOut(str(exc) or "timed out") from exc
        except (httpx.TransportError, OSError) as exc:
            raise ConnectionFailed(str(exc) or type(exc).__name__) from exc
        if response.status_code >= 400:
            raise HttpStatus(response.status_code, _error_message(response), response.headers)
        try:
            return response.json()
        except ValueError:
            raise ResponseInvalid(f"HTTP {response.status_code} with a body that is not JSON "
                                  f"({response.headers.get('content-type', 'no content type')})") from None

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


def _count(usage: dict, key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and value >= 0 else 0
