"""Requests to a Marlin server over the OpenAI-compatible chat-completions API.

The same code talks to vLLM, SGLang, the MLX engine, a hosted endpoint or the test
simulator; only the base URL and key differ.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import math
from pathlib import Path
from urllib.parse import urlparse

import openai
from openai.types.chat import ChatCompletion

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
    ServerTimeout,
    ServerUnavailable,
)
from marlin_agent.marlin.parse import is_caption, parse_caption, parse_span
from marlin_agent.marlin.prompts import CAPTION_PROMPT, find_prompt
from marlin_agent.marlin.server_kind import detect_non_video_engine


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


class MarlinClient:
    """Caption and ground staged clips; bounded concurrency, retries, typed errors."""

    def __init__(self, server: ServerSettings) -> None:
        if not server.base_url:
            raise ServerNotConfigured("no Marlin server is configured")
        self.server = server
        self.base_url = server.base_url
        api_key = server.api_key.get_secret_value() if server.api_key else "EMPTY"
        # The SDK retries connection errors, timeouts, 429 and 5xx with backoff; the hook counts
        # every request it sends, so usage shows what the server was asked, retries included.
        self._openai = openai.AsyncOpenAI(
            base_url=server.base_url,
            api_key=api_key,
            timeout=server.request_timeout,
            max_retries=server.max_retries,
            http_client=openai.DefaultAsyncHttpxClient(event_hooks={"request": [self._count_request]}),
        )
        self._slots = asyncio.Semaphore(server.concurrency)
        self._file_urls_refused = False
        self._calls = 0
        self._prompt_tokens = 0
        self._completion_tokens = 0

    async def _count_request(self, request) -> None:
        if request.method == "POST" and request.url.path.endswith("/chat/completions"):
            self._calls += 1

    @property
    def usage(self) -> Usage:
        """What this client has spent so far: completion requests sent (retries included) and the
        tokens the server reported."""
        return Usage(marlin_calls=self._calls, marlin_prompt_tokens=self._prompt_tokens,
                     marlin_completion_tokens=self._completion_tokens)

    async def close(self) -> None:
        await self._openai.close()

    async def __aenter__(self) -> MarlinClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- the two skills ------------------------------------------------------------------

    async def served_models(self) -> list[str]:
        """The model names the server lists under /v1/models."""
        try:
            return [model.id async for model in self._openai.models.list()]
        except openai.APIError as exc:
            raise await self._translate(exc) from None

    async def caption(self, clip: StagedClip) -> Caption:
        """Marlin's caption of the clip; an answer that is no caption at all is an error, never stored."""
        text = await self._ask(clip, CAPTION_PROMPT, self.server.caption_max_tokens)
        caption = parse_caption(text, clip.chunk.duration)
        if not is_caption(caption):
            shown = text.strip()[:300] or "(empty)"
            raise CaptionUnusable(f"the server's answer is not a caption: {shown}")
        return caption

    async def ground(self, clip: StagedClip, event: str) -> Span | None:
        """Marlin's span for ``event`` in the clip; ``None`` if its answer held no times."""
        text = await self._ask(clip, find_prompt(event), self.server.find_max_tokens)
        return parse_span(text, clip.chunk.duration)

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
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if not (as_file and self.server.media == "auto"):
                raise await self._translate_rejection(exc) from exc
            # vLLM without --allowed-local-media-path, or a loopback tunnel to a remote
            # host, refuses file:// URLs: send the clip inline from now on.
            self._file_urls_refused = True
            try:
                return await self._complete(clip, prompt, max_tokens, as_file=False)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                raise await self._translate_rejection(exc) from exc

    async def _complete(self, clip: StagedClip, prompt: str, max_tokens: int, as_file: bool) -> str:
        content = [
            {"type": "video_url", "video_url": {"url": self._video_url(clip.path, as_file)}},
            {"type": "text", "text": prompt},
        ]
        extra_body = {"mm_processor_kwargs": video_budget(clip.chunk.duration, self.server)} \
            if self.server.send_video_budget else None
        async with self._slots:
            try:
                completion = await self._openai.chat.completions.create(
                    model=self.server.model,
                    messages=[{"role": "user", "content": content}],
                    temperature=0,
                    max_tokens=max_tokens,
                    extra_body=extra_body,
                )
            except (openai.BadRequestError, openai.UnprocessableEntityError):
                raise
            except openai.APIError as exc:
                raise await self._translate(exc) from exc
        return self._content_of(completion)

    def _content_of(self, completion: object) -> str:
        if not isinstance(completion, ChatCompletion) or not completion.choices:
            raise ServerProtocolError(f"the server at {self.base_url} did not return a chat completion")
        if completion.usage:
            self._prompt_tokens += completion.usage.prompt_tokens
            self._completion_tokens += completion.usage.completion_tokens
        return completion.choices[0].message.content or ""

    # --- errors --------------------------------------------------------------------------

    async def _translate(self, exc: openai.APIError) -> MarlinAgentError:
        where = self.base_url
        if isinstance(exc, openai.APITimeoutError):
            return ServerTimeout(f"the Marlin server at {where} did not answer within {self.server.request_timeout:.0f} s")
        if isinstance(exc, openai.APIConnectionError):
            return ServerUnavailable(f"cannot reach a Marlin server at {where}")
        if isinstance(exc, openai.AuthenticationError):
            return AuthenticationFailed(f"the Marlin server at {where} refused the API key (401)")
        if isinstance(exc, openai.PermissionDeniedError):
            return ModelAccessDenied(f"the server at {where} denied access to {self.server.model} (403)")
        if isinstance(exc, openai.NotFoundError):
            return await self._explain_not_found()
        if isinstance(exc, openai.APIResponseValidationError):
            return ServerProtocolError(f"the server at {where} answered with something that is not a chat completion")
        if isinstance(exc, openai.APIStatusError):
            return ServerError(f"the Marlin server at {where} failed with HTTP {exc.status_code}: {exc.message}",
                               hint="The server kept failing after retries; its log says why.")
        return ServerProtocolError(f"unexpected answer from {where}: {exc}")

    async def _explain_not_found(self) -> MarlinAgentError:
        try:
            listed = [model.id async for model in self._openai.models.list()]
        except openai.APIError:
            return ServerProtocolError(
                f"{self.base_url} has no OpenAI-compatible API (404)",
                hint="The base URL usually ends in /v1, e.g. http://127.0.0.1:8000/v1.",
            )
        return ModelNotServed(f"the server serves {', '.join(listed) or 'no models'}, not {self.server.model}")

    async def _translate_rejection(self, exc: openai.APIStatusError | None = None) -> MarlinAgentError:
        engine = await asyncio.to_thread(detect_non_video_engine, self.base_url)
        if engine:
            return NonVideoEngine(f"the server at {self.base_url} is {engine}, which cannot read video")
        message = exc.message if exc is not None else "the request was refused"
        return ServerRejected(f"the Marlin server at {self.base_url} refused the request: {message}")


async def with_client(server: ServerSettings, work):
    """Await ``work(client)`` with a client that is closed afterwards, whatever happens."""
    async with MarlinClient(server) as client:
        return await work(client)
