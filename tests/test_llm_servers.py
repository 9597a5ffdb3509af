"""Talking to real LLM servers: reading what small models write, and the forms each server takes.

The replies below are the shapes a real Qwen2.5-Coder-1.5B wrote under llama.cpp's server and
llama-cpp-python's (evals/real_models); the refusals are the ones those servers give.
"""

import asyncio
import json

import httpx
import pytest

from marlin_agent.llm.profiles import ProfileBook, SchemaForm, ServerProfile, Structured
from marlin_agent.llm.replies import called_tool, json_object
from marlin_agent.llm.transport import AccentTransport, shaped, with_schema_form

# --- reading replies ----------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ('{"tool": "search", "query": "a dog"}', {"tool": "search", "query": "a dog"}),
    ('I will search now.\n```json\n{"tool": "search", "query": "a dog"}\n```\nLet me know.',
     {"tool": "search", "query": "a dog"}),
    ('{{"name": "find", "arguments": {"video_id": "v1", "start": 0, "end": 48}}}}',
     {"name": "find", "arguments": {"video_id": "v1", "start": 0, "end": 48}}),
    ('<tool_call>\n{"name": "verify", "arguments": {"start": 3.5}}\n</tool_call>',
     {"name": "verify", "arguments": {"start": 3.5}}),
    ('{"score": 0.9, "reason": "it says {so}",}', {"score": 0.9, "reason": "it says {so}"}),
    ('{"passed": True, "moments": None}', {"passed": True, "moments": None}),
    ('{"score": 0.2, "reason": "no"}\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n', {"score": 0.2, "reason": "no"}),
    ('[{"tool": "search", "query": "x"}, {"tool": "find"}]', {"tool": "search", "query": "x"}),
])
def test_the_json_a_small_model_wrote_is_read_whatever_it_wrote_around_it(text, expected):
    assert json_object(text) == expected


@pytest.mark.parametrize("text", ["I cannot help with that.", '{"score": 0.9, "reason": "cut off by the cap',
                                  "```python\nprint('hi')\n```"])
def test_a_reply_with_no_json_object_reads_as_none(text):
    assert json_object(text) is None


@pytest.mark.parametrize("value, expected", [
    ({"name": "find", "arguments": {"video_id": "v1"}}, ("find", {"video_id": "v1"})),
    ({"function": {"name": "find", "arguments": '{"video_id": "v1"}'}}, ("find", {"video_id": "v1"})),
    ({"tool": "search", "args": {"query": "q"}}, ("search", {"query": "q"})),
    ({"score": 1}, None),
])
def test_a_function_call_is_read_in_every_shape_models_write_it(value, expected):
    assert called_tool(value) == expected


# --- the forms a server takes -------------------------------------------------------------

_SCHEMA = {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}
_NATIVE = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 50,
           "response_format": {"type": "json_schema", "json_schema": {"name": "verdict", "schema": _SCHEMA,
                                                                      "strict": True}}}


@pytest.mark.parametrize("form, expected", [
    (SchemaForm.json_object, {"response_format": {"type": "json_object", "schema": _SCHEMA}}),
    (SchemaForm.llama_cpp, {"json_schema": _SCHEMA}),
    (SchemaForm.guided_json, {"guided_json": _SCHEMA}),
    (SchemaForm.none, {}),
])
def test_a_reply_schema_is_put_the_way_each_server_kind_takes_it(form, expected):
    body = with_schema_form(_NATIVE, form)
    assert {k: v for k, v in body.items() if k in ("response_format", "json_schema", "guided_json")} == expected
    if form is SchemaForm.none:  # nothing constrains the reply: the model is told the schema instead
        assert body["messages"][0]["role"] == "system" and json.dumps(_SCHEMA) in body["messages"][0]["content"]
        assert body["messages"][1:] == _NATIVE["messages"]
    else:
        assert body["messages"] == _NATIVE["messages"]


def test_openai_s_own_form_is_sent_as_the_client_wrote_it():
    assert with_schema_form(_NATIVE, SchemaForm.response_format) == _NATIVE


def test_a_profile_rewrites_null_content_forced_tools_and_the_token_cap():
    body = {"model": "m", "max_completion_tokens": 10, "tool_choice": "required", "tools": [{}],
            "messages": [{"role": "assistant", "content": None, "tool_calls": [{}]}]}
    profile = ServerProfile(null_content=False, tool_choice_required=False, max_completion_tokens=False)
    sent = shaped(body, profile)
    assert sent["messages"][0]["content"] == "" and sent["tool_choice"] == "auto"
    assert sent["max_tokens"] == 10 and "max_completion_tokens" not in sent
    assert shaped(body, ServerProfile()) == body


class _Strict(httpx.AsyncBaseTransport):
    """A server that refuses what llama-cpp-python's server refuses, and records what it was sent."""

    def __init__(self, refuse: set[str]) -> None:
        self.refuse, self.sent = refuse, []

    async def handle_async_request(self, request):
        body = json.loads(request.content)
        self.sent.append(body)
        refused = (("tool_choice" in self.refuse and body.get("tool_choice") == "required")
                   or ("null" in self.refuse and any(m.get("content") is None for m in body["messages"]))
                   or ("json_schema" in self.refuse and (body.get("response_format") or {}).get("type") == "json_schema"))
        if refused:
            return httpx.Response(422 if "tool_choice" not in self.refuse else 500, json={"error": "no"})
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": "{}"}}]})


def _post(transport, body):
    async def go():
        async with httpx.AsyncClient(transport=transport) as client:
            return await client.post("http://127.0.0.1:9/v1/chat/completions", json=body)
    return asyncio.run(go())


def test_a_refused_request_is_sent_again_in_the_next_form_and_the_form_that_worked_is_remembered(tmp_path):
    server = _Strict({"tool_choice", "null", "json_schema"})
    book = ProfileBook(tmp_path / "llm_servers.json")
    key = ProfileBook.key("http://127.0.0.1:9/v1", "m")
    body = {**_NATIVE, "tool_choice": "required", "tools": [{}],
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}]}
    assert _post(AccentTransport(book, key, "http://127.0.0.1:9/v1", server), body).status_code == 200
    last = server.sent[-1]
    assert last["tool_choice"] == "auto" and last["messages"][1]["content"] == ""
    assert last["response_format"] == {"type": "json_object", "schema": _SCHEMA}
    assert last["max_tokens"] == 50, "a local server gets max_tokens from the start"
    learned = ProfileBook(tmp_path / "llm_servers.json").get(key)
    assert learned == ServerProfile(schema_form=SchemaForm.json_object, tool_choice_required=False, null_content=False,
                                    max_completion_tokens=False)
    server.sent.clear()
    again = AccentTransport(ProfileBook(tmp_path / "llm_servers.json"), key, "http://127.0.0.1:9/v1", server)
    assert _post(again, body).status_code == 200 and len(server.sent) == 1, "the next run starts in the form that works"


def test_authentication_and_missing_models_are_never_retried_in_other_forms(tmp_path):
    class Denying(httpx.AsyncBaseTransport):
        sent = 0

        async def handle_async_request(self, request):
            Denying.sent += 1
            return httpx.Response(401, json={"error": "bad key"})

    book = ProfileBook(None)
    response = _post(AccentTransport(book, "k", "http://127.0.0.1:9/v1", Denying()), {**_NATIVE, "tool_choice": "required"})
    assert response.status_code == 401 and Denying.sent == 1
    assert book.get("k").tool_choice_required


def test_openai_s_api_keeps_max_completion_tokens():
    sent = []

    class Recording(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request):
            sent.append(json.loads(request.content))
            return httpx.Response(200, json={})

    book = ProfileBook(None)
    _post(AccentTransport(book, "k", "https://api.openai.com/v1", Recording()), _NATIVE)
    assert sent[0]["max_completion_tokens"] == 50 and "max_tokens" not in sent[0]


def test_a_damaged_profile_file_is_found_out_again_not_trusted(tmp_path):
    path = tmp_path / "llm_servers.json"
    path.write_text("{not json")
    assert ProfileBook(path).get("k") == ServerProfile()
    ProfileBook(path).update("k", structured=Structured.prompted)
    assert ProfileBook(path).get("k").structured is Structured.prompted
    assert oct(path.stat().st_mode & 0o777) == "0o600"
