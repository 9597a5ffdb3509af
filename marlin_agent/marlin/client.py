"""Requests to a Marlin server over the OpenAI-compatible chat-completions API.

The same code talks to vLLM, SGLang, the MLX engine, a hosted endpoint or the test
simulator; only the base URL and key differ.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import logging
import math
import random
import time
from pathlib import Path
from urllib.parse import urlparse

from marlin_agent.config import ServerSettings
from marlin_agent.domain import Caption, Span, StagedClip, Usage
from marlin_agent.errors import (
    AuthenticationFailed,
    CaptionUnusable,
    MarlinAgentError,
    ModelAccessDenied,
    ModelNotServed,
    NonVideoEngine,
    ServerError,
    ServerNotConfigured,
    ServerProtocolError,
    ServerRejected,
    ServerStopped,
    ServerTimeout,
    ServerUnavailable,
)
from marlin_agent.marlin.modes import CAPTION, FIND, Mode
from marlin_agent.marlin.server_kind import detect_non_video_engine
from marlin_agent.marlin.transport import (
    ChatApi,
    Completion,
    ConnectionFailed,
    HttpStatus,
    ResponseInvalid,
    TimedOut,
    TransportError,
)


def is_loopback(base_url: str) -> bool:
    host = urlparse(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def video_budget(duration: float, server: ServerSettings) -> dict:
    """The training-time frame budget for a clip, as vLLM's processor takes it.

    vLLM ignores qwen-vl-utils' environment variables and would otherwise spend about six
    times the tokens per clip; the budget is therefore sent with every request.
    """
    frames = min(server.max_frames, max(server.min_frames, math.ceil(duration * server.sample_fps)))
    frames += frames % 2
    return {
        "fps": server.sample_fps,
        "min_frames": server.min_frames,
        "max_frames": server.max_frames,
        "size": {"shortest_edge": 4096, "longest_edge": frames * server.max_pixels},
    }


log = logging.getLogger(__name__)

# Without --timeout, a request may take this long plus this much per second of clip. A 60 s
# clip at the training budget prefills in about a second on a GPU and its caption takes tens of
# seconds at most; two minutes leaves room for a queue and a cold engine, and a hung server is
# reported in minutes rather than the SDK's default ten per attempt.
TIMEOUT_BASE_SECONDS = 30.0
TIMEOUT_PER_CLIP_SECOND = 1.5
# A request out this long gets a line saying so (at most one such line per interval).
SLOW_AFTER_SECONDS = 20.0
# A request that timed out is sent once more; a second timeout is final for that request, and
# two requests in a row ending so, with no answer in between, mean the server stopped answering.
_TIMEOUT_ATTEMPTS = 2
_STALLED_REQUESTS = 2
_RETRY_AFTER_CAP = 60.0
_LISTING_TIMEOUT = 30.0


def request_timeout(server: ServerSettings, clip_seconds: float) -> float:
    """How long one request about a clip of ``clip_seconds`` may take: as set, else scaled to the clip."""
    if server.request_timeout is not None:
        return server.request_timeout
    return round(TIMEOUT_BASE_SECONDS + TIMEOUT_PER_CLIP_SECOND * clip_seconds, 1)


def _retryable(exc: TransportError) -> bool:
    """Worth sending again: the connection broke, or the server said it was busy or failing."""
    if isinstance(exc, ConnectionFailed):
        return True
    if isinstance(exc, HttpStatus):
        return exc.status in (408, 409, 429) or exc.status >= 500
    return False


def _backoff(attempt: int, exc: TransportError) -> float:
    """Seconds before the next attempt: what the server asked for (within reason), else
    exponential with jitter so a crowd of retries does not arrive together."""
    if isinstance(exc, HttpStatus):
        headers = exc.headers
        for name, unit in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
            try:
                asked = float(headers.get(name, "")) / unit
            except ValueError:
                continue
            if 0 <= asked <= _RETRY_AFTER_CAP:
                return asked
    return min(8.0, 0.5 * 2 ** attempt) * random.uniform(0.75, 1.0)


class MarlinClient:
    """Caption and ground staged clips; bounded concurrency, retries, typed errors.

    A request the server is slow to answer is a warning on this module's logger (the CLI shows
    it), so a long wait is never silent.
    """

    def __init__(self, server: ServerSettings) -> None:
        if not server.base_url:
            raise ServerNotConfigured("no Marlin server is configured")
        self.server = server
        self.base_url = server.base_url
        api_key = server.api_key.get_secret_value() if server.api_key else "EMPTY"
        # Retries are this client's (see ``_create``); every completion sent is counted, so usage
        # shows what the server was asked, retries included.
        self._api = ChatApi(server.base_url, api_key, on_completion_sent=self._count_request)
        self._slots = asyncio.Semaphore(server.concurrency)
        self._file_urls_refused = False
        # The first failure every further request would meet (an HTML page, a refused key): from
        # then on nothing more is sent, so requests queued behind it never reach the server.
        self._halted: ServerError | None = None
        self._calls = 0
        self._answers = 0
        self._final_timeouts = 0  # requests in a row that ran out of time, with no answer since
        self._slow_said_at = -math.inf
        self._prompt_tokens = 0
        self._completion_tokens = 0

    def _count_request(self) -> None:
        self._calls += 1

    @property
    def usage(self) -> Usage:
        """What this client has spent so far: completion requests sent (retries included) and the
        tokens the server reported."""
        return Usage(marlin_calls=self._calls, marlin_prompt_tokens=self._prompt_tokens,
                     marlin_completion_tokens=self._completion_tokens)

    async def close(self) -> None:
        await self._api.close()

    async def __aenter__(self) -> MarlinClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- the two skills ------------------------------------------------------------------

    async def served_models(self) -> list[str]:
        """The model names the server lists under /v1/models."""
        return list(await self.served())

    async def served(self) -> dict[str, str]:
        """The models listed under /v1/models, each with the ``owned_by`` the server gives it
        (vLLM says "vllm", SGLang "sglang"; empty when the server says nothing)."""
        try:
            return await self._api.models(_LISTING_TIMEOUT)
        except TransportError as exc:
            raise await self._translate(exc) from None

    async def ask(self, clip: StagedClip, mode: Mode, **arguments: str):
        """Marlin's answer about the clip in ``mode`` (``modes``), read into the mode's result; an answer that
        is none at all (``mode.usable``) is an error, never stored."""
        text = await self._ask(clip, mode.prompt(**arguments), mode.max_tokens(self.server))
        answer = mode.parse(text, clip.chunk.duration)
        if not mode.usable(answer):
            shown = text.strip()[:300] or "(empty)"
            raise CaptionUnusable(f"the server's answer is not a {mode.name} answer: {shown}")
        return answer

    async def caption(self, clip: StagedClip) -> Caption:
        """Marlin's caption of the clip (scene and timed events)."""
        return await self.ask(clip, CAPTION)

    async def ground(self, clip: StagedClip, event: str) -> Span | None:
        """Marlin's span for ``event`` in the clip; ``None`` if its answer held no times."""
        return await self.ask(clip, FIND, event=event)

    # --- transport -----------------------------------------------------------------------

    def _use_file_url(self) -> bool:
        if self.server.media == "file":
            return True
        if self.server.media == "base64":
            return False
        # A remote server cannot read this disk; a local one that refused once is not asked again.
        return is_loopback(self.base_url) and not self._file_urls_refused

    @staticmethod
    def _video_url(path: Path, as_file: bool) -> str:
        if as_file:
            return path.resolve().as_uri()
        return "data:video/mp4;base64," + base64.b64encode(path.read_bytes()).decode("ascii")

    async def _ask(self, clip: StagedClip, prompt: str, max_tokens: int) -> str:
        as_file = self._use_file_url()
        try:
            return await self._complete(clip, prompt, max_tokens, as_file)
        except HttpStatus as exc:  # only a rejection gets here (see ``_create``)
            if not (as_file and self.server.media == "auto"):
                raise self._halt_on(await self._translate_rejection(exc)) from exc
            # vLLM without --allowed-local-media-path, or a loopback tunnel to a remote
            # host, refuses file:// URLs: send the clip inline from now on.
            self._file_urls_refused = True
            try:
                return await self._complete(clip, prompt, max_tokens, as_file=False)
            except HttpStatus as exc:
                raise self._halt_on(await self._translate_rejection(exc)) from exc

    def _halt_on(self, error: MarlinAgentError) -> MarlinAgentError:
        if isinstance(error, ServerError) and error.stops_run and self._halted is None:
            self._halted = error
        return error

    async def _complete(self, clip: StagedClip, prompt: str, max_tokens: int, as_file: bool) -> str:
        content = [
            {"type": "video_url", "video_url": {"url": self._video_url(clip.path, as_file)}},
            {"type": "text", "text": prompt},
        ]
        request = {"model": self.server.model, "messages": [{"role": "user", "content": content}],
                   "temperature": 0, "max_tokens": max_tokens}
        if self.server.send_video_budget:
            request["mm_processor_kwargs"] = video_budget(clip.chunk.duration, self.server)
        async with self._slots:
            # Checked and recorded while the slot is held: a request waiting for it wakes only
            # after this one's failure is known.
            if self._halted is not None:
                raise type(self._halted)(self._halted.message, hint=self._halted.hint)
            try:
                return self._content_of(await self._create(clip, request))
            except MarlinAgentError as exc:
                self._halt_on(exc)
                raise

    async def _create(self, clip: StagedClip, request: dict) -> Completion:
        """One completion, sent again after a broken connection, a busy or failing server (up to
        ``max_retries`` times) or a timeout (once). A rejection (400, 422) is raised as it is."""
        timeout = request_timeout(self.server, clip.chunk.duration)
        attempt = timeouts = 0
        while True:
            watch = asyncio.create_task(self._say_when_slow(clip, timeout))
            try:
                completion = await self._api.complete(request, timeout)
            except TransportError as exc:
                if isinstance(exc, HttpStatus) and exc.is_rejection:
                    raise
                if isinstance(exc, TimedOut):
                    timeouts += 1
                    if timeouts < _TIMEOUT_ATTEMPTS:
                        continue
                    self._final_timeouts += 1
                elif _retryable(exc) and attempt < self.server.max_retries:
                    await asyncio.sleep(_backoff(attempt, exc))
                    attempt += 1
                    continue
                raise await self._translate_final(exc, timeout) from exc
            finally:
                watch.cancel()
            self._answers += 1
            self._final_timeouts = 0
            return completion

    async def _say_when_slow(self, clip: StagedClip, timeout: float) -> None:
        wait = min(SLOW_AFTER_SECONDS, timeout / 4)
        await asyncio.sleep(wait)
        now = time.monotonic()
        if now - self._slow_said_at < SLOW_AFTER_SECONDS:
            return
        self._slow_said_at = now
        chunk = clip.chunk
        log.warning("the Marlin server at %s has not answered about %.0f–%.0f s for %.0f s; waiting up to %.0f s "
                    "(--timeout sets this)", self.base_url, chunk.start, chunk.end, wait, timeout)

    async def _translate_final(self, exc: TransportError, timeout: float) -> MarlinAgentError:
        """The error a request ends with, once retrying is over; a server that answered earlier and
        now cannot be reached, or that lets request after request run out of time, has stopped."""
        if isinstance(exc, TimedOut):
            if self._final_timeouts >= _STALLED_REQUESTS:
                return ServerStopped(
                    f"the Marlin server at {self.base_url} stopped answering: {self._final_timeouts} requests in a row "
                    f"got no answer within {timeout:.0f} s, each sent twice",
                    hint=("If it is only slow (a CPU engine, a long queue), raise --timeout or MARLIN_TIMEOUT; "
                          "otherwise its log says why. What was done is kept: the same command asks only the rest."))
            return ServerTimeout(f"the Marlin server at {self.base_url} did not answer within {timeout:.0f} s "
                                 f"(sent twice)")
        if isinstance(exc, ConnectionFailed) and self._answers:
            return ServerStopped(f"the Marlin server at {self.base_url} stopped answering after {self._answers} "
                                 f"answer(s) this run: the connection is refused or broken")
        return await self._translate(exc)

    def _content_of(self, completion: Completion) -> str:
        self._prompt_tokens += completion.prompt_tokens
        self._completion_tokens += completion.completion_tokens
        return completion.content

    # --- errors --------------------------------------------------------------------------

    async def _translate(self, exc: TransportError) -> MarlinAgentError:
        where = self.base_url
        if isinstance(exc, ConnectionFailed):
            return ServerUnavailable(f"cannot reach a Marlin server at {where}")
        if isinstance(exc, TimedOut):
            return ServerTimeout(f"the Marlin server at {where} did not answer within {_LISTING_TIMEOUT:.0f} s")
        if isinstance(exc, ResponseInvalid):
            return ServerProtocolError(f"the server at {where} did not return a chat completion: {exc}")
        if isinstance(exc, HttpStatus):
            if exc.status == 401:
                return AuthenticationFailed(f"the Marlin server at {where} refused the API key (401)")
            if exc.status == 403:
                return ModelAccessDenied(f"the server at {where} denied access to {self.server.model} (403)")
            if exc.status == 404:
                return await self._explain_not_found()
            return ServerError(f"the Marlin server at {where} failed with HTTP {exc.status}: {exc.message}",
                               hint="The server kept failing after retries; its log says why.")
        return ServerProtocolError(f"unexpected answer from {where}: {exc}")

    async def _explain_not_found(self) -> MarlinAgentError:
        try:
            listed = list(await self._api.models(_LISTING_TIMEOUT))
        except TransportError:
            return ServerProtocolError(
                f"{self.base_url} has no OpenAI-compatible API (404)",
                hint="The base URL usually ends in /v1, e.g. http://127.0.0.1:8000/v1.",
            )
        return ModelNotServed(f"the server serves {', '.join(listed) or 'no models'}, not {self.server.model}")

    async def _translate_rejection(self, exc: HttpStatus | None = None) -> MarlinAgentError:
        engine = await asyncio.to_thread(detect_non_video_engine, self.base_url)
        if engine:
            return NonVideoEngine(f"the server at {self.base_url} is {engine}, which cannot read video")
        message = exc.message if exc is not None else "the request was refused"
        return ServerRejected(f"the Marlin server at {self.base_url} refused the request: {message}")


async def with_client(server: ServerSettings, work):
    """Await ``work(client)`` with a client that is closed afterwards, whatever happens."""
    async with MarlinClient(server) as client:
        return await work(client)
