"""An HTTP transport for LLM servers that speak OpenAI's chat completions with local accents.

It sits under the OpenAI client that pydantic-ai drives, so neither knows about it. Each chat
request is first written in the forms this server is known to accept (``profiles``). When the
server refuses a request (HTTP 400, 422 or 500: it answered, but not with a completion), the
request is sent again with one feature in a form more servers take, in a fixed order, and what
worked is remembered. Refusals are not told apart by their wording: a feature is kept only when
the request without it succeeds. Authentication, missing models and rate limits (401, 403,
404, 429) are never retried here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx

from marlin_agent.llm.profiles import ProfileBook, SchemaForm, ServerProfile

_REFUSED = {400, 422, 500}
_SCHEMA_ORDER = [SchemaForm.response_format, SchemaForm.json_object, SchemaForm.llama_cpp, SchemaForm.guided_json,
                 SchemaForm.none]


def _json_schema(body: dict) -> dict | None:
    """The JSON schema a request asks the reply to follow, in whichever form it was put."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema")
    if response_format.get("type") == "json_object" and "schema" in response_format:
        return response_format["schema"]
    return body.get("json_schema") or body.get("guided_json")


def with_schema_form(body: dict, form: SchemaForm) -> dict:
    """``body`` with its reply schema put the way ``form`` says (unchanged when it asks for none)."""
    schema = _json_schema(body)
    if schema is None or (form is SchemaForm.response_format
                          and (body.get("response_format") or {}).get("type") == "json_schema"):
        return body  # as the client wrote it (its name and strictness kept)
    body = {k: v for k, v in body.items() if k not in ("response_format", "json_schema", "guided_json")}
    if form is SchemaForm.response_format:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    elif form is SchemaForm.json_object:
        body["response_format"] = {"type": "json_object", "schema": schema}
    elif form is SchemaForm.llama_cpp:
        body["json_schema"] = schema
    elif form is SchemaForm.guided_json:
        body["guided_json"] = schema
    else:  # nothing constrains the reply: the model is told the schema instead
        said = ("Reply with exactly one JSON object, and nothing else, that follows this JSON schema:\n"
                + json.dumps(schema))
        body["messages"] = [{"role": "system", "content": said}, *body.get("messages", [])]
    return body


def _without_null_content(body: dict) -> dict:
    messages = [dict(m, content="") if m.get("role") == "assistant" and m.get("content") is None else m
                for m in body.get("messages", [])]
    return {**body, "messages": messages}


def _has_null_content(body: dict) -> bool:
    return any(m.get("role") == "assistant" and m.get("content") is None for m in body.get("messages", []))


def _forces_a_tool(body: dict) -> bool:
    choice = body.get("tool_choice")
    return choice == "required" or isinstance(choice, dict)


def _with_max_tokens(body: dict) -> dict:
    body = dict(body)
    body["max_tokens"] = body.pop("max_completion_tokens")
    return body


def shaped(body: dict, profile: ServerProfile) -> dict:
    """``body`` written the way ``profile`` says the server takes it."""
    if _json_schema(body) is not None:
        body = with_schema_form(body, profile.schema_form)
    if not profile.null_content and _has_null_content(body):
        body = _without_null_content(body)
    if not profile.max_completion_tokens and "max_completion_tokens" in body:
        body = _with_max_tokens(body)
    if not profile.tool_choice_required and _forces_a_tool(body):
        body = {**body, "tool_choice": "auto"}
    return body


def _fallbacks(body: dict, profile: ServerProfile) -> Iterator[dict]:
    """The profile changes to try on a refused ``body``, each on top of the ones before it: the harmless
    first (an empty string for null content, ``max_tokens``), then a tool no longer forced, then the
    reply's schema in each form after the one in use."""
    if profile.null_content and _has_null_content(body):
        yield {"null_content": False}
    if profile.max_completion_tokens and "max_completion_tokens" in body:
        yield {"max_completion_tokens": False}
    if profile.tool_choice_required and _forces_a_tool(body):
        yield {"tool_choice_required": False}
    if _json_schema(body) is not None:
        for form in _SCHEMA_ORDER[_SCHEMA_ORDER.index(profile.schema_form) + 1:]:
            yield {"schema_form": form}


def default_profile(base_url: str) -> dict:
    """What is assumed of a server before it has refused anything: OpenAI's own API takes OpenAI's forms;
    every local server takes ``max_tokens``, and some ignore ``max_completion_tokens`` (a reply without a cap)."""
    host = httpx.URL(base_url).host
    return {} if host.endswith("openai.com") else {"max_completion_tokens": False}


class AccentTransport(httpx.AsyncBaseTransport):
    """Sends chat requests in the forms this server takes, learning them from its refusals."""

    def __init__(self, book: ProfileBook, key: str, base_url: str, inner: httpx.AsyncBaseTransport | None = None,
                 on_learned: Callable[[str], None] | None = None) -> None:
        self.book = book
        self.key = key
        self.inner = inner or httpx.AsyncHTTPTransport()
        self.on_learned = on_learned
        if book.get(key) == ServerProfile():
            defaults = default_profile(base_url)
            if defaults:
                book.update(key, **defaults)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
            return await self.inner.handle_async_request(request)
        try:
            body = json.loads(request.content)
        except ValueError:
            return await self.inner.handle_async_request(request)
        profile = self.book.get(self.key)
        response = await self._send(request, shaped(body, profile))
        if response.status_code not in _REFUSED:
            return response
        learned: dict = {}
        for change in _fallbacks(shaped(body, profile), profile):
            learned.update(change)
            await response.aclose()
            response = await self._send(request, shaped(body, profile.model_copy(update=learned)))
            if response.status_code not in _REFUSED:
                self._remember(learned)
                return response
        return response

    def _remember(self, learned: dict) -> None:
        profile = self.book.update(self.key, **learned)
        if self.on_learned is not None:
            self.on_learned(profile.describe())

    async def _send(self, request: httpx.Request, body: dict) -> httpx.Response:
        headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
        again = httpx.Request(request.method, request.url, headers=headers, content=json.dumps(body).encode(),
                              extensions=request.extensions)
        response = await self.inner.handle_async_request(again)
        if response.status_code in _REFUSED:
            await response.aread()
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()
