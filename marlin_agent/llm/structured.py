"""One JSON object from any chat model, in the most reliable way its server offers.

The planner's steps, the judge's verdict and an extraction row are all "a JSON object that
follows this schema". Three ways of asking for one, tried in this order and remembered per
server and model (``profiles``):

- ``native``: the schema goes with the request and the server constrains the reply to it
  (OpenAI's ``response_format``, llama.cpp's grammar, vLLM's guided decoding; ``transport`` puts
  it in the form the server takes). A 1.5B model then cannot write anything else.
- ``tool``: a tool whose parameters are the schema, for providers that have no native
  structured output (pydantic-ai says so when asked).
- ``prompted``: the schema in the instructions, and the reply read leniently (``replies``):
  for servers that ignore the schema they were sent.

Every request is capped (``max_tokens``) so that a model writing on and on stops, and errors
are told apart by kind: a server that cannot be reached is ``planner_unavailable``; one that
answered with an error, timed out or refused the request is ``planner_error``, with what it said.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from pydantic_ai import RunUsage
from pydantic_ai.direct import model_request
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelTimeoutError,
    UnexpectedModelBehavior,
    UserError,
)
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.output import OutputObjectDefinition
from pydantic_ai.tools import ToolDefinition

from marlin_agent.errors import PlannerError, PlannerUnavailable
from marlin_agent.llm.models import LLM
from marlin_agent.llm.profiles import SchemaForm, Structured
from marlin_agent.llm.replies import json_object

_PROMPTED = ("\n\nReply with exactly one JSON object and nothing else (no prose, no Markdown). It must follow "
             "this JSON schema:\n{schema}")


@dataclass
class Reply:
    """What the model answered: the JSON object read from it (None when it wrote none), and how to go on."""

    value: dict | None
    text: str
    response: ModelResponse
    mode: Structured
    name: str

    def then(self, text: str, instructions: str) -> ModelRequest:
        """The next request after this reply, carrying ``text`` (a tool's result, a correction): a tool call
        must be answered as one before anything else is said."""
        calls = [p for p in self.response.parts if isinstance(p, ToolCallPart)]
        if calls:
            return ModelRequest(parts=[ToolReturnPart(tool_name=c.tool_name, content=text, tool_call_id=c.tool_call_id)
                                       for c in calls], instructions=instructions)
        return ModelRequest.user_text_prompt(text, instructions=instructions)


def _read(response: ModelResponse, name: str) -> tuple[dict | None, str]:
    """The object a reply holds: the output tool's arguments, another tool's call as ``{"name", "arguments"}``
    (callers that take calls read it so), or the first JSON object in its text."""
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    for part in response.parts:
        if isinstance(part, ToolCallPart):
            args = part.args_as_dict()
            value = args if part.tool_name == name else {"name": part.tool_name, "arguments": args}
            return value, text or json.dumps(value)
    value = json_object(text)
    if value is not None and value.get("name") == name and isinstance(value.get("arguments"), dict):
        value = value["arguments"]  # the output tool's call written out as text
    return value, text


def model_failure(exc: ModelAPIError | UnexpectedModelBehavior, llm: LLM, timeout: float | None) -> PlannerError:
    """The error to raise for a failed request, by what failed (never by the wording of the message)."""
    where = llm.base_url or "its provider"
    if isinstance(exc, ModelTimeoutError):
        return PlannerError(f"the LLM {llm.name} at {where} did not answer within {timeout or '?'} s",
                            hint="The server is reachable but slow: raise [planner] request_timeout, or serve a "
                                 "smaller model.")
    if isinstance(exc, ModelConnectionError):
        return PlannerUnavailable(f"nothing answers at {where} for the LLM {llm.name}: {exc}",
                                  hint="Start the planner's server, or set MARLIN_PLANNER_BASE_URL to where it "
                                       "listens.")
    said = ""
    if isinstance(exc, ModelHTTPError):
        said = f"HTTP {exc.status_code}: {str(exc.body)[:300]}"
    return PlannerError(f"the LLM {llm.name} at {where} answered with an error: {said or exc}",
                        hint="The server is reachable; its log says why it refused. A model or server that "
                             "cannot follow the protocol can be swapped with --planner.")


class StructuredAsker:
    """Asks ``llm`` for JSON objects, counting what every request spends in ``usage``."""

    def __init__(self, llm: LLM, usage: RunUsage | None = None, timeout: float | None = None) -> None:
        self.llm = llm
        self.usage = usage if usage is not None else RunUsage()
        self.timeout = timeout

    @property
    def mode(self) -> Structured:
        profile = self.llm.book.get(self.llm.key)
        if profile.structured is not None:
            return profile.structured
        # A server known to take no schema at all gets it in the instructions from the start.
        return Structured.prompted if profile.schema_form is SchemaForm.none else Structured.native

    def _learn(self, mode: Structured) -> None:
        if self.llm.book.get(self.llm.key).structured is not mode:
            self.llm.book.update(self.llm.key, structured=mode)

    async def ask(self, messages: list[ModelMessage], schema: dict, instructions: str, *, name: str,
                  description: str = "", max_tokens: int = 512) -> Reply:
        """One reply to ``messages`` (the last one a request), read as an object of ``schema``.

        A reply with no object in it is asked once more the next way (native → prompted) and the way that
        worked is remembered; validating the object against the schema is the caller's, who knows how to
        word the correction."""
        mode = self.mode
        reply = await self._request(messages, schema, instructions, name, description, max_tokens, mode)
        if reply.value is None and mode is not Structured.prompted:
            # The server took the schema but the model wrote around it (or the server ignored it).
            again = await self._request(messages, schema, instructions, name, description, max_tokens,
                                        Structured.prompted)
            if again.value is not None:
                self._learn(Structured.prompted)
                return again
        elif reply.value is not None:
            self._learn(mode)
        return reply

    async def _request(self, messages: list[ModelMessage], schema: dict, instructions: str, name: str,
                       description: str, max_tokens: int, mode: Structured) -> Reply:
        if mode is Structured.native:
            params = ModelRequestParameters(output_mode="native", allow_text_output=True, output_object=
                                            OutputObjectDefinition(json_schema=schema, name=name,
                                                                   description=description or None))
        elif mode is Structured.tool:
            params = ModelRequestParameters(output_mode="tool", allow_text_output=False, output_tools=[
                ToolDefinition(name=name, parameters_json_schema=schema, description=description or None)])
        else:
            params = ModelRequestParameters(output_mode="text", allow_text_output=True)
            instructions += _PROMPTED.format(schema=json.dumps(schema, separators=(",", ":")))
        sent = _with_instructions(messages, instructions)
        try:
            response = await model_request(self.llm.model, sent, model_request_parameters=params,
                                           model_settings={"max_tokens": max_tokens, "temperature": 0.0})
        except UserError:
            if mode is Structured.native:  # this provider has no native structured output: a tool, then
                self._learn(Structured.tool)
                return await self._request(messages, schema, instructions, name, description, max_tokens,
                                           Structured.tool)
            raise
        except (ModelAPIError, UnexpectedModelBehavior) as exc:
            raise model_failure(exc, self.llm, self.timeout) from exc
        self.usage.incr(response.usage)
        self.usage.requests += 1
        value, text = _read(response, name)
        return Reply(value=value, text=text, response=response, mode=mode, name=name)


def _with_instructions(messages: list[ModelMessage], instructions: str) -> list[ModelMessage]:
    """``messages`` with the last request carrying ``instructions`` (the ones a request is sent with)."""
    last = len(messages) - 1
    while last >= 0 and not isinstance(messages[last], ModelRequest):
        last -= 1
    if last < 0:
        return list(messages)
    return [*messages[:last], dataclasses.replace(messages[last], instructions=instructions), *messages[last + 1:]]
