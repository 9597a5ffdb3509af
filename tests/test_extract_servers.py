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
UNIT = Unit(video=VideoRef(id="v", path="/v.mp4", title="v"), start=0.0, end=30.0,
            scenes=[Event(start=0.0, end=30.0, text="a field")],
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


def _fill(server: Server, book: ProfileBook | None = None, schema: dict = SCHEMA, unit: Unit = UNIT):
    book = book or ProfileBook(None)
    return asyncio.run(RowFiller(load_schema(schema), _llm(server, book)).fill(unit, 100_000)), book


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


# --- rows that contradict their captions ----------------------------------------------------------------

MOVING = {"title": "moving", "type": "object", "required": ["objects"], "properties": {"objects": {
    "type": "array", "items": {"type": "object", "required": ["colour", "motion", "start", "end"], "properties": {
        "colour": {"enum": ["red", "blue", "yellow"]}, "motion": {"enum": ["still", "left_to_right", "right_to_left"]},
        "start": {"type": "number"}, "end": {"type": "number"}}}}}}
TWO_EVENTS = Unit(video=VideoRef(id="v", path="/v.mp4", title="v"), start=0.0, end=30.0,
                  scenes=[Event(start=0.0, end=30.0, text="A night sky; a yellow square and a blue circle pass.")],
                  events=[Event(start=4.0, end=9.0, text="a yellow square moves from right to left"),
                          Event(start=12.0, end=16.0, text="a blue circle moves from left to right")], transcript=[])
RIGHT = {"objects": [{"colour": "yellow", "motion": "right_to_left", "start": 4.0, "end": 9.0},
                     {"colour": "blue", "motion": "left_to_right", "start": 12.0, "end": 16.0}]}
# What a small model wrote: the colours swapped, and the first direction the enum lists for both.
SWAPPED = {"objects": [{"colour": "blue", "motion": "left_to_right", "start": 4.0, "end": 9.0},
                       {"colour": "yellow", "motion": "left_to_right", "start": 12.0, "end": 16.0}]}


def test_a_valid_row_that_contradicts_its_captions_is_sent_back_once_and_the_corrected_answer_kept():
    server = Server({"response_format"}, [json.dumps(SWAPPED), json.dumps(RIGHT)])
    filled, _ = _fill(server, schema=MOVING, unit=TWO_EVENTS)
    assert filled.valid and filled.data == RIGHT and filled.attempts == 2 and filled.first_valid
    assert filled.contradictions == []
    said = server.sent[-1]["messages"][-1]["content"]
    assert "objects[0].colour: 'blue'" in said and "'yellow'" in said and "'right to left'" in said
    assert "objects[1].colour" in said and "objects[1].motion" not in said  # that one the captions do say


def test_a_model_that_insists_keeps_its_valid_row_with_the_contradictions_listed():
    server = Server({"response_format"}, [json.dumps(SWAPPED)])
    filled, _ = _fill(server, schema=MOVING, unit=TWO_EVENTS)
    assert filled.valid and filled.data == SWAPPED and filled.attempts == 2
    assert len(filled.contradictions) == 3 and len(server.sent) == 2  # sent back once, not again and again


def test_a_value_the_captions_do_not_name_or_name_beside_another_is_left_alone():
    from marlin_agent.extraction.material import contradictions

    assert contradictions(MOVING, RIGHT, TWO_EVENTS) == []
    still = {"objects": [{"colour": "yellow", "motion": "still", "start": 4.0, "end": 9.0}]}
    assert contradictions(MOVING, still, TWO_EVENTS) != []  # the event says "right to left" there
    vague = TWO_EVENTS.model_copy(update={"events": [Event(start=4.0, end=9.0, text="a yellow square appears")]})
    assert contradictions(MOVING, still, vague) == []  # nothing says how it moves: "still" stands
    both = {"objects": [{"colour": "red", "motion": "still", "start": 0.0, "end": 30.0}]}
    assert [c.split(":")[0] for c in contradictions(MOVING, both, TWO_EVENTS)] == []  # yellow and blue: no one answer


def test_what_a_model_reads_leaves_out_lines_that_only_say_nothing_happens_when_something_does():
    quiet = Event(start=0.0, end=45.0, text="The field. Nothing moves and no objects enter the frame.")
    busy = Event(start=45.0, end=90.0, text="The field. Over its course a purple circle can be seen against it.")
    unit = Unit(video=VideoRef(id="v", path="/v.mp4", title="v"), start=0.0, end=90.0, scenes=[quiet, busy],
                events=[Event(start=0.0, end=45.0, text="the empty scene stays unchanged"),
                        Event(start=50.0, end=58.0, text="a purple circle moves from right to left")], transcript=[])
    text = unit.text()
    assert "stays unchanged" not in text and "Nothing moves" not in text and "<0.0 - 45.0> The field." in text
    assert text.index("purple circle moves") < text.index("Scenes")  # the events come first
    still = unit.model_copy(update={"events": unit.events[:1], "scenes": [quiet]})
    assert "Nothing moves" in still.text()  # where nothing happens at all, that is what there is to say


def test_a_list_left_empty_while_the_events_name_its_items_is_sent_back_and_said_in_the_row():
    """A small model under a server's grammar left `objects` empty for every chunk whose events each name a colour
    and a way of moving: sent back once, and when it insists the row says so."""
    from marlin_agent.extraction.material import contradictions

    empty = {"objects": []}
    said = contradictions(MOVING, empty, TWO_EVENTS)
    assert len(said) == 1 and said[0].startswith("objects: empty") and "a yellow square moves" in said[0]
    server = Server({"response_format"}, [json.dumps(empty), json.dumps(RIGHT)])
    filled, _ = _fill(server, schema=MOVING, unit=TWO_EVENTS)
    assert filled.data == RIGHT and filled.attempts == 2
    insisting = Server({"response_format"}, [json.dumps(empty)])
    filled, _ = _fill(insisting, schema=MOVING, unit=TWO_EVENTS)
    assert filled.valid and filled.data == empty and filled.contradictions == said
    quiet = TWO_EVENTS.model_copy(update={"events": [Event(start=0.0, end=30.0, text="the empty sky stays dark")]})
    assert contradictions(MOVING, empty, quiet) == []  # nothing named: an empty list is the right answer
