"""Extraction asks each kind of server for a row in the form that server enforces, and falls back when refused.

Each server below is a stand-in for one kind (its refusals are what the real one answers): the request
the extractor sends is read off the wire, and the form that worked is what a later request starts with.
"""

import asyncio
import json

import httpx
import pytest
from openai import AsyncOpenAI
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from marlin_agent.domain import Event, VideoRef
from marlin_agent.extraction.fill import RowFiller, server_schema
from marlin_agent.extraction.schema import load_schema
from marlin_agent.extraction.units import Unit
from marlin_agent.llm.models import LLM
from marlin_agent.llm.profiles import ProfileBook, SchemaForm
from marlin_agent.llm.transport import AccentTransport

SCHEMA = {"title": "sightings", "type": "object", "required": ["objects"], "additionalProperties": False,
          "properties": {"objects": {"type": "array", "uniqueItems": True, "items": {
              "type": "object", "required": ["colour", "start"], "properties": {
                  "colour": {"enum": ["red", "blue"]}, "start": {"type": "number", "minimum": 0}}}},
              "note": {"type": "string", "not": {"const": "secret"}}}}
ROW = {"objects": [{"colour": "red", "start": 4.0}]}
UNIT = Unit(video=VideoRef(id="v", path="/v.mp4", title="v"), start=0.0, end=30.0, scenes=["a field"],
            events=[Event(start=4.0, end=9.0, text="a red circle appears")], transcript=[])


def _form(body: dict) -> str:
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return "response_format"
    if response_format.get("type") == "json_object" and "schema" in response_format:
        return "json_object"
    if "json_schema" in body:
        return "llama_cpp"
    if "guided_json" in body:
        return "guided_json"
    return "none"


class Server:
    """Takes only the forms in ``takes``; answers ``replies`` in turn (the last one again after that)."""

    def __init__(self, takes: set[str], replies: list[str]) -> None:
        self.takes, self.replies, self.sent = takes, replies, []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.sent.append(body)
        if _form(body) not in self.takes:
            return httpx.Response(400, json={"error": {"message": "unsupported response format"}})
        reply = self.replies[min(len([b for b in self.sent if _form(b) in self.takes]) - 1, len(self.replies) - 1)]
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                         "choices": [{"index": 0, "finish_reason": "stop",
                                                      "message": {"role": "assistant", "content": reply}}],
                                         "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


def _llm(server: Server, book: ProfileBook) -> LLM:
    base = "http://127.0.0.1:9/v1"
    key = ProfileBook.key(base, "m")
    transport = AccentTransport(book, key, base, inner=httpx.MockTransport(server))
    client = AsyncOpenAI(base_url=base, api_key="x", max_retries=0, http_client=httpx.AsyncClient(transport=transport))
    return LLM(model=OpenAIChatModel("m", provider=OpenAIProvider(openai_client=client)), book=book, key=key,
               base_url=base)


@pytest.fixture(autouse=True)
def _requests_to_stand_ins(monkeypatch):
    # Every request goes to the stand-in server in this process (a mock transport): no model is reached.
    monkeypatch.setattr("pydantic_ai.models.ALLOW_MODEL_REQUESTS", True)


def _fill(server: Server, book: ProfileBook | None = None):
    schema = load_schema(SCHEMA)
    book = book or ProfileBook(None)
    return asyncio.run(RowFiller(schema, _llm(server, book)).fill(UNIT, 100_000)), book


@pytest.mark.parametrize("kind, takes, expected", [
    ("OpenAI (and vLLM, SGLang, llama.cpp's server)", {"response_format"}, SchemaForm.response_format),
    ("llama-cpp-python", {"json_object"}, SchemaForm.json_object),
    ("llama.cpp's own json_schema field", {"llama_cpp"}, SchemaForm.llama_cpp),
    ("an older vLLM", {"guided_json"}, SchemaForm.guided_json),
    ("a server that enforces nothing", {"none"}, SchemaForm.none),
])
def test_each_server_kind_is_sent_the_schema_in_the_form_it_takes(kind, takes, expected):
    server = Server(takes, [json.dumps(ROW)])
    filled, book = _fill(server)
    assert filled.valid and filled.data == ROW and filled.attempts == 1, kind
    accepted = [b for b in server.sent if _form(b) in takes][0]
    assert book.get(ProfileBook.key("http://127.0.0.1:9/v1", "m")).schema_form is expected
    if expected is SchemaForm.none:
        assert "JSON schema" in accepted["messages"][0]["content"], "with no constraint, the model is told the schema"
    else:
        sent = (accepted.get("response_format") or {}).get("json_schema", {}).get("schema") \
            or (accepted.get("response_format") or {}).get("schema") or accepted.get("json_schema") \
            or accepted.get("guided_json")
        text = json.dumps(sent)
        assert "uniqueItems" not in text and '"not"' not in text, "only what servers can enforce is sent"
        assert sent["properties"]["objects"]["items"]["properties"] == \
            server_schema(SCHEMA)["properties"]["objects"]["items"]["properties"]
    assert accepted["max_tokens"] <= 4096, "every request is capped"
    server.sent.clear()
    _fill(server, book)
    assert len(server.sent) == 1, "a later request starts in the form that worked"


def test_a_row_is_read_out_of_prose_and_fixed_when_it_breaks_the_schema():
    server = Server({"response_format"}, ['Sure! ```json\n{"objects": [{"colour": "green", "start": 4}]}\n```',
                                          json.dumps(ROW)])
    filled, _ = _fill(server)
    assert filled.valid and filled.data == ROW and filled.attempts == 2
    correction = server.sent[-1]["messages"][-1]["content"]
    assert "does not match the schema" in correction and "green" in correction


def test_a_row_that_never_validates_is_kept_as_invalid_with_the_reason():
    server = Server({"response_format"}, ['{"objects": [{"colour": "red", "start": 4}], "note": "secret"}'])
    filled, _ = _fill(server)
    assert not filled.valid and filled.data is None and filled.attempts == 3
    assert "note" in filled.error, "a keyword the server could not enforce is still checked"
