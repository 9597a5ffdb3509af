"""A small planner LLM behind an OpenAI-compatible server, for tests: the scripted planner
(``scripted_planner.py``) answering over HTTP, with the accents real local servers have.

A test instrument. The local engines serve a chat LLM beside Marlin as the planner and the
verification judge; the stand-in engine serves this in its place, so the real client path runs
end to end (pydantic-ai's chat-completions model, the transport that learns a server's forms,
structured replies, the judge's verdict). Each request becomes pydantic-ai messages, the
scripted planner decides, and its reply goes back as one chat completion.

Like vLLM, it refuses tool calls unless it was started with tool calling on (``--enable-auto-
tool-choice`` and a parser). ``quirks`` switch on what other servers and models do, each seen
on a real one (``../evals/real_models``):

- ``tool_choice_auto_only``: "required" or a named tool is an HTTP 500 (llama-cpp-python's server);
- ``no_null_content``: an assistant message with null content is an HTTP 422 (the same);
- ``json_object_schema_only``: a ``json_schema`` response format is an HTTP 422; the schema is
  taken as ``{"type": "json_object", "schema": …}`` (the same);
- ``prose``: the model ignores the schema and the tools and writes its reply as prose with the
  JSON in a fence and its braces doubled (Qwen2.5-Coder-1.5B under llama.cpp's server);
- ``tool_call_tags``: tool calls written in the text between ``<tool_call>`` tags (Qwen's template
  on a server without a tool-call parser);
- ``writes_on``: a request without a token cap gets a reply that runs to the context's end.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.output import OutputObjectDefinition
from pydantic_ai.tools import ToolDefinition

from evals.synthetic.scripted_planner import ScriptedPlanner

_NO_TOOL_CALLING = ('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
QUIRKS = frozenset({"tool_choice_auto_only", "no_null_content", "json_object_schema_only", "prose",
                    "tool_call_tags", "writes_on"})
# What a reply that never stops costs: the whole context of a small local server.
_CONTEXT_TOKENS = 8192


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


def to_messages(chat: list[dict]) -> list[ModelMessage]:
    """OpenAI chat messages as pydantic-ai messages (system text is the agent's instructions)."""
    names: dict[str, str] = {}
    messages: list[ModelMessage] = []
    for message in chat:
        role = message.get("role")
        if role == "user":
            messages.append(ModelRequest(parts=[UserPromptPart(content=_text(message.get("content")))]))
        elif role == "assistant":
            parts: list = [TextPart(_text(message["content"]))] if message.get("content") else []
            for call in message.get("tool_calls") or []:
                names[call["id"]] = call["function"]["name"]
                parts.append(ToolCallPart(call["function"]["name"], json.loads(call["function"]["arguments"] or "{}"),
                                          tool_call_id=call["id"]))
            messages.append(ModelResponse(parts=parts))
        elif role == "tool":
            name = names.get(message.get("tool_call_id", ""), "")
            part = ToolReturnPart(name, _text(message.get("content")), tool_call_id=message.get("tool_call_id", ""))
            last = messages[-1] if messages else None
            if isinstance(last, ModelRequest) and all(p.part_kind == "tool-return" for p in last.parts):
                messages[-1] = ModelRequest(parts=[*last.parts, part])
            else:
                messages.append(ModelRequest(parts=[part]))
    return messages


def _reply_schema(body: dict) -> dict | None:
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema")
    if response_format.get("type") == "json_object":
        return response_format.get("schema")
    return body.get("json_schema") or body.get("guided_json")


def _output_name(schema: dict | None, system: str) -> str:
    """Whether the request asks for a judge's verdict or a planner's move."""
    if schema is not None:
        return "verdict" if "verdict" in (schema.get("properties") or {}) else "step"
    return "verdict" if '"verdict"' in system else "step"


def agent_info(body: dict, system: str) -> AgentInfo:
    definitions = [ToolDefinition(name=t["function"]["name"], parameters_json_schema=t["function"].get("parameters")
                                  or {"type": "object", "properties": {}}, description=t["function"].get("description"))
                   for t in body.get("tools") or []]
    schema = _reply_schema(body)
    output = [d for d in definitions if d.name in ("step", "verdict")]
    function = [d for d in definitions if d not in output]
    params = ModelRequestParameters(
        function_tools=function, output_tools=output,
        output_mode="tool" if output else "native" if schema else "text",
        output_object=None if output else OutputObjectDefinition(json_schema=schema or {}, name=_output_name(
            schema, system)))
    return AgentInfo(function_tools=function, allow_text_output=not output, output_tools=output, model_settings=None,
                     model_request_parameters=params, instructions=system)


def _check(body: dict, served: str, tool_calling: bool, quirks: frozenset[str]) -> None:
    if body.get("model") != served:
        raise _Refused(404, f"The model `{body.get('model')}` does not exist.")
    choice = body.get("tool_choice", "auto")
    if body.get("tools") and not tool_calling and choice in ("auto", "required", None):
        raise _Refused(400, _NO_TOOL_CALLING)
    if "tool_choice_auto_only" in quirks and (choice == "required" or isinstance(choice, dict)):
        raise _Refused(500, "tool_choice must be 'auto'")
    if "no_null_content" in quirks and any(m.get("role") == "assistant" and m.get("content") is None
                                           for m in body.get("messages") or []):
        raise _Refused(422, "messages: content: Input should be a valid string")
    if "json_object_schema_only" in quirks and (body.get("response_format") or {}).get("type") == "json_schema":
        raise _Refused(422, "response_format.type: Input should be 'text' or 'json_object'")


def _as_text(value: dict, quirks: frozenset[str], tools_sent: bool) -> str:
    """A structured reply the way a model that does not follow the protocol writes it."""
    action = value.get("action") if isinstance(value.get("action"), dict) else None
    if "tool_call_tags" in quirks and tools_sent and action is not None:
        call = {"name": action["tool"], "arguments": {k: v for k, v in action.items() if k != "tool"}}
        return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
    if "prose" in quirks:
        if action is not None:
            call = {"name": action["tool"], "arguments": {k: v for k, v in action.items() if k != "tool"}}
            return f"I will use the {action['tool']} tool now.\n```json\n{{{json.dumps(call)}}}\n```\nLet me know."
        return f"Here is my verdict:\n```json\n{json.dumps(value)}\n```"
    return json.dumps(value)


def complete(body: dict, served: str, tool_calling: bool, quirks: frozenset[str] = frozenset(),
             planners: dict | None = None) -> dict:
    _check(body, served, tool_calling, quirks)
    chat = body.get("messages") or []
    system = "\n".join(_text(m.get("content")) for m in chat if m.get("role") == "system")
    messages = to_messages(chat)
    opening = next((str(p.content) for m in messages if isinstance(m, ModelRequest) for p in m.parts
                    if p.part_kind == "user-prompt"), "")
    # One scripted planner per conversation: it remembers its moves as a model's context would.
    key = opening[:400]
    question = opening.split("\n", 1)[0].removeprefix("Question:").strip()
    planner = (planners.setdefault(key, ScriptedPlanner(events=[question])) if planners is not None
               else ScriptedPlanner(events=[question]))
    info = agent_info(body, system)
    response = planner(messages, info)
    calls = [{"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
              "function": {"name": p.tool_name, "arguments": json.dumps(p.args_as_dict())}}
             for p in response.parts if isinstance(p, ToolCallPart)]
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    if calls and ({"prose", "tool_call_tags"} & quirks):  # tool calls come back as text, not in the field
        text = _as_text(json.loads(calls[0]["function"]["arguments"]), quirks, True)
        calls = []
    elif text and "prose" in quirks:
        text = _as_text(json.loads(text), quirks, bool(body.get("tools")))
    finish = "tool_calls" if calls else "stop"
    if "writes_on" in quirks and body.get("max_tokens") is None and body.get("max_completion_tokens") is None:
        text, finish = text + "\n" * _CONTEXT_TOKENS, "length"
    message: dict = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    prompt_tokens = len(json.dumps(chat)) // 4
    completion_tokens = max(1, len(json.dumps(message)) // 4)
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": served, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


class _Handler(BaseHTTPRequestHandler):
    server: PlannerServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/health":
            self._send(200, {})
        elif self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": self.server.served, "object": "model",
                                                         "owned_by": "planner-standin"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError"}})
            return
        try:
            body = json.loads(raw)
            with self.server.lock:
                self.server.bodies.append(body)
            reply = complete(body, self.server.served, self.server.tool_calling, self.server.quirks,
                             self.server.planners)
        except _Refused as refused:
            self._send(refused.status, {"error": {"message": str(refused), "type": "BadRequestError",
                                                  "code": refused.status}})
            return
        with self.server.lock:
            self.server.requests += 1
        self._send(200, reply)


class PlannerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, port: int, served: str, tool_calling: bool = True,
                 quirks: frozenset[str] = frozenset()) -> None:
        super().__init__((host, port), _Handler)
        unknown = set(quirks) - QUIRKS
        if unknown:
            raise ValueError(f"unknown quirks: {sorted(unknown)}")
        self.served, self.tool_calling, self.quirks = served, tool_calling, frozenset(quirks)
        self.lock = threading.Lock()
        self.requests = 0
        self.bodies: list[dict] = []  # every request as it arrived, for tests to read
        self.planners: dict[str, ScriptedPlanner] = {}
