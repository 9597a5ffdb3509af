"""A small planner LLM behind an OpenAI-compatible server, for tests: the scripted planner
(``scripted_planner.py``) answering over HTTP, tool calls and all.

A test instrument. The local engines serve a chat LLM beside Marlin as the planner and the
verification judge; the stand-in engine serves this in its place, so the real client path runs
end to end (pydantic-ai's chat-completions model, tool calls, the judge's structured verdict).
Each request becomes pydantic-ai messages, the scripted planner decides, and its parts go back
as one chat completion. Like vLLM, it refuses tool calls unless it was started with tool calling
on (``--enable-auto-tool-choice`` and a parser).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel
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
from pydantic_ai.tools import ToolDefinition

from evals.synthetic.scripted_planner import ScriptedPlanner
from marlin_agent.tools.results import (
    ClipFile,
    Grounding,
    SearchHits,
    SpanCaption,
    TranscriptLines,
    Verification,
    VideoList,
)

# What each planner tool returns, so the scripted planner reads tool results as the objects it
# would get in process (the wire carries their JSON).
_RESULTS: dict[str, type[BaseModel]] = {
    "list_videos": VideoList, "search": SearchHits, "caption": SpanCaption, "find": Grounding,
    "transcript": TranscriptLines, "verify": Verification, "clip": ClipFile,
}
# pydantic-ai's name for the tool that carries an agent's final output.
_OUTPUT_TOOL = "final_result"
_NO_TOOL_CALLING = ('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


def _tool_result(name: str, content: str) -> Any:
    model = _RESULTS.get(name)
    if model is not None:
        try:
            return model.model_validate_json(content)
        except ValueError:
            pass
    return content  # a retry message, or something the planner only needs as text


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
            part = ToolReturnPart(name, _tool_result(name, _text(message.get("content"))),
                                  tool_call_id=message.get("tool_call_id", ""))
            last = messages[-1] if messages else None
            if isinstance(last, ModelRequest) and all(p.part_kind == "tool-return" for p in last.parts):
                messages[-1] = ModelRequest(parts=[*last.parts, part])
            else:
                messages.append(ModelRequest(parts=[part]))
    return messages


def agent_info(tools: list[dict]) -> AgentInfo:
    definitions = [ToolDefinition(name=t["function"]["name"], parameters_json_schema=t["function"].get("parameters")
                                  or {"type": "object", "properties": {}}, description=t["function"].get("description"))
                   for t in tools]
    output = [d for d in definitions if d.name.startswith(_OUTPUT_TOOL)]
    function = [d for d in definitions if not d.name.startswith(_OUTPUT_TOOL)]
    return AgentInfo(function_tools=function, allow_text_output=not output, output_tools=output, model_settings=None,
                     model_request_parameters=ModelRequestParameters(function_tools=function, output_tools=output),
                     instructions=None)


def complete(body: dict, served: str, tool_calling: bool) -> dict:
    if body.get("model") != served:
        raise _Refused(404, f"The model `{body.get('model')}` does not exist.")
    tools = body.get("tools") or []
    if tools and not tool_calling and body.get("tool_choice", "auto") in ("auto", "required", None):
        raise _Refused(400, _NO_TOOL_CALLING)
    messages = to_messages(body.get("messages") or [])
    question = next((str(p.content) for m in messages if isinstance(m, ModelRequest) for p in m.parts
                     if p.part_kind == "user-prompt"), "")
    response = ScriptedPlanner(events=[question])(messages, agent_info(tools))
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    calls = [{"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
              "function": {"name": p.tool_name, "arguments": json.dumps(p.args_as_dict())}}
             for p in response.parts if isinstance(p, ToolCallPart)]
    message: dict = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    prompt_tokens = len(json.dumps(body.get("messages"))) // 4
    completion_tokens = max(1, len(json.dumps(message)) // 4)
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": served, "choices": [{"index": 0, "message": message,
                                          "finish_reason": "tool_calls" if calls else "stop"}],
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
            reply = complete(json.loads(raw), self.server.served, self.server.tool_calling)
        except _Refused as refused:
            self._send(refused.status, {"error": {"message": str(refused), "type": "BadRequestError",
                                                  "code": refused.status}})
            return
        with self.server.lock:
            self.server.requests += 1
        self._send(200, reply)


class PlannerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, port: int, served: str, tool_calling: bool = True) -> None:
        super().__init__((host, port), _Handler)
        self.served, self.tool_calling = served, tool_calling
        self.lock = threading.Lock()
        self.requests = 0
