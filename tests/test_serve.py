"""`marlin-agent serve`: the REST API made from the capability table, MCP over streamable HTTP, the web app,
and who may use them."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import stat
from pathlib import Path
from typing import Annotated

from fastapi.testclient import TestClient
from pydantic import BaseModel, Field

from marlin_agent.app.capabilities import CAPABILITIES
from marlin_agent.app.capability import Capability, Role, Run
from marlin_agent.config import load_settings
from marlin_agent.serve.app import build_app
from tests.cli_runner import document, invoke
from tests.serve_process import serve_process

REPO = Path(__file__).resolve().parents[1]
LOCAL = "http://127.0.0.1:8765"


def _client(env: dict[str, str], root: Path, token: str | None = None, capabilities=CAPABILITIES) -> TestClient:
    app = build_app(load_settings(env=env), [root], token=token, capabilities=capabilities)
    return TestClient(app, base_url=LOCAL, raise_server_exceptions=False)


def _indexed(client: TestClient) -> dict:
    """Index the roots over REST, following the job to its end."""
    started = client.post("/api/v1/index", json={})
    assert started.status_code == 202, started.text
    assert started.headers["location"] == f"/api/v1/jobs/{started.json()['id']}"
    done = client.get(started.headers["location"], params={"wait": 240}).json()
    assert done["state"] == "done", done
    return done


class Echoed(BaseModel):
    schema_version: str = "1"
    said: str


async def echo(words: Annotated[str, Field(min_length=2, description="What to say back.")],
               video: Annotated[Path | None, Role.VIDEO, Field(description="A video file.")] = None,
               *, run: Run) -> Echoed:
    """Say the words back."""
    return Echoed(said=f"{words} ({video.name if video else 'no video'})")


def test_every_capability_is_a_route_described_in_a_valid_openapi_document(library_env, root):
    from openapi_spec_validator import validate

    extra = Capability(echo, "tests.test_serve:Echoed", "echoing", library=False, needs_server=False)
    with _client(library_env, root, capabilities=(*CAPABILITIES, extra)) as client:
        spec = client.get("/api/v1/openapi.json").json()
        validate(spec)
        routes = {path.removeprefix("/api/v1/") for path, methods in spec["paths"].items() if "post" in methods}
        assert routes == {c.name for c in CAPABILITIES} | {"echo"}
        schemas = spec["components"]["schemas"]
        ask = schemas["AskRequest"]
        assert ask["required"] == ["question"]  # footage left out: every root
        assert ask["additionalProperties"] is False
        assert schemas["SearchRequest"]["properties"]["k"]["maximum"] == 200
        answered = spec["paths"]["/api/v1/ask"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert {"found", "moments"} <= set(schemas[answered["$ref"].rsplit("/", 1)[1]]["properties"])
        # A capability added to the table is a route, with no route code: its bounds and roles hold.
        assert client.post("/api/v1/echo", json={"words": "hello"}).json() == {"schema_version": "1",
                                                                               "said": "hello (no video)"}
        refused = client.post("/api/v1/echo", json={"words": "hi", "video": "/etc/hosts"})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "path_not_allowed"
        short = client.post("/api/v1/echo", json={"words": "h"})
        assert short.status_code == 422 and short.json()["error"]["message"].startswith("words:")


def test_search_and_ask_answer_the_documents_the_cli_prints(library_env, root):
    with _client(library_env, root) as client:
        report = _indexed(client)["result"]
        assert [v["path"] for v in report["videos"]] == [str(root / "short_field.mp4")]
        searched = client.post("/api/v1/search", json={"query": "a red circle", "k": 3})
        assert searched.status_code == 200
        from_cli = document(invoke(["search", "a red circle", "-k", "3", "--json"], library_env))
        assert searched.json()["results"] == from_cli["results"]
        answer = client.post("/api/v1/ask", json={"question": "when does the red circle appear"}).json()
        assert answer["found"] is True and answer["moments"][0]["video"]["path"] == str(root / "short_field.mp4")
        asked = document(invoke(["ask", "when does the red circle appear", "--in", str(root), "--json"], library_env))
        same = ("question", "found", "answer", "moments", "form", "count", "rejected")
        assert {k: answer[k] for k in same} == {k: asked[k] for k in same}
        listed = client.post("/api/v1/list_videos", json={}).json()
        from_cli = document(invoke(["list-videos", "--json"], library_env))
        assert listed["videos"] == from_cli["videos"]
        described = client.post("/api/v1/describe", json={"video": "short_field.mp4", "max_chars": 200}).json()
        assert set(described) == {"result"} and len(described["result"]) <= 200


def test_long_work_is_a_job_whose_progress_streams_as_server_sent_events(library_env, root):
    with _client(library_env, root) as client:
        started = client.post("/api/v1/index", json={"sources": ["short_field.mp4"]})
        assert started.status_code == 202 and started.json()["state"] == "running"
        with client.stream("GET", f"/api/v1/jobs/{started.json()['id']}/events") as events:
            assert events.headers["content-type"].startswith("text/event-stream")
            names = [line.removeprefix("event: ") for line in events.iter_lines() if line.startswith("event: ")]
        assert names[-1] == "done" and set(names[:-1]) <= {"progress"}
        listed = client.get("/api/v1/jobs").json()
        assert [job["state"] for job in listed] == ["done"]
        assert listed[0]["result"]["chunks_captioned"] >= 1
        # Asked to wait less than the work takes, a call answers with the job to follow instead.
        pending = client.post("/api/v1/ask", params={"wait": 0}, json={"question": "when does a dog bark"})
        assert pending.status_code == 202
        finished = client.get(pending.headers["location"], params={"wait": 240}).json()
        assert finished["state"] == "done" and finished["result"]["found"] is False


def test_errors_are_the_json_error_documents_with_statuses_that_fit(library_env, root, tmp_path):
    outside = tmp_path / "elsewhere.mp4"
    shutil.copy(root / "short_field.mp4", outside)
    with _client(library_env, root) as client:
        cases = [
            (client.post("/api/v1/find", json={"event": "a dog", "video": str(outside)}), 403, "path_not_allowed"),
            (client.post("/api/v1/find", json={"event": "a dog", "video": "missing.mp4"}), 404, "video_not_found"),
            (client.get("/api/v1/jobs/index-00000000"), 404, "unknown_job"),
            (client.post("/api/v1/search", json={"query": ""}), 422, "bad_input"),
            (client.post("/api/v1/search", json={"query": "a", "limit": 3}), 422, "bad_input"),
            (client.post("/api/v1/search", json={"query": "a", "k": 0}), 422, "bad_input"),
            (client.post("/api/v1/extract", json={"schema": {"type": "nonsense"}}), 400, "invalid_schema"),
        ]
        for response, status, code in cases:
            assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text
            assert set(response.json()["error"]) == {"code", "message", "hint"}
        assert client.post("/api/v1/search", json={"query": "a", "k": 0}).json()["error"]["message"].startswith("k:")
        for response, status, code in ((client.get("/api/v1/nothing-here"), 404, "not_found"),
                                       (client.get("/api/v1/search"), 405, "method_not_allowed"),
                                       (client.post("/api/v1/search", content=b"{" + b" " * 9_000_000 + b"}",
                                                    headers={"content-type": "application/json"}), 413, "too_large"),
                                       # Sent in chunks, a body says no length: it is counted as it comes.
                                       (client.post("/api/v1/search", content=iter([b"{"] + [b" " * 1_000_000] * 9
                                                                                   + [b"}"]),
                                                    headers={"content-type": "application/json"}), 413, "too_large")):
            assert (response.status_code, response.json()["error"]["code"]) == (status, code)
        small = client.post("/api/v1/search", content=iter([b'{"query": ', b'"a red circle"}']),
                            headers={"content-type": "application/json"})
        assert small.status_code == 200, small.text  # a body in chunks within the limit reaches the app whole
        page = client.get("/no-such-page")
        assert page.status_code == 404 and "not_found" in page.text and page.headers["content-type"].startswith(
            "text/html")


def test_on_loopback_other_host_names_and_other_sites_pages_are_refused(library_env, root):
    with _client(library_env, root) as client:
        assert client.get("/api/v1/about").status_code == 200
        rebound = client.get("/api/v1/about", headers={"host": "attacker.example:8765"})
        assert rebound.status_code == 421 and rebound.json()["error"]["code"] == "host_refused"
        for foreign in ({"origin": "http://attacker.example"}, {"sec-fetch-site": "cross-site"}):
            refused = client.post("/api/v1/search", json={"query": "a"}, headers=foreign)
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "origin_refused"
            assert client.post("/ask", data={"question": "when does it rain"}, headers=foreign,
                               follow_redirects=False).status_code == 403
        own = client.post("/api/v1/search", json={"query": "a"}, headers={"origin": LOCAL,
                                                                          "sec-fetch-site": "same-origin"})
        assert own.status_code == 200


def test_with_a_token_every_request_needs_it_and_a_browser_gives_it_once(library_env, root):
    token = "s3cret-token-for-the-test"
    with _client(library_env, root, token=token) as client:
        bare = client.get("/api/v1/about")
        assert bare.status_code == 401 and bare.headers["www-authenticate"] == "Bearer"
        assert token not in bare.text
        assert client.get("/api/v1/about", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/api/v1/about", headers={"authorization": f"Bearer {token}"}).status_code == 200
        assert client.get("/static/app.css").status_code == 200  # assets hold nothing of the user's
        opened = client.get("/", params={"token": token, "q": "x"}, follow_redirects=False)
        assert opened.status_code == 303 and opened.headers["location"] == "/?q=x"  # out of the address bar
        assert "httponly" in opened.headers["set-cookie"].lower() and "samesite=strict" in opened.headers[
            "set-cookie"].lower()
        page = client.get("/")  # the cookie now carries it
        assert page.status_code == 200 and token not in page.text
        client.cookies.clear()
        client.cookies.set("marlin_token", "wrong")
        assert client.get("/").status_code == 401


def test_the_pages_show_the_library_search_and_an_answer_with_its_timeline(library_env, root, make_footage):
    shutil.copy(make_footage("hostile", duration=8, events=[{"colour": "blue", "shape": "square", "start": 2,
                                                             "end": 5}]), root / "<img src=x onerror=alert(1)>.mp4")
    with _client(library_env, root) as client:
        _indexed(client)
        library = client.get("/").text
        assert "short_field" in library and "<img src=x onerror" not in library
        assert "&lt;img src=x onerror=alert(1)&gt;" in library  # a title is text, never markup
        video_id = re.search(r'/videos/([0-9a-f]+)"', library).group(1)
        thumbnail = client.get(f"/media/thumb/{video_id}", params={"t": 3})
        assert thumbnail.status_code == 200 and thumbnail.content[:2] == b"\xff\xd8"
        part = client.get(f"/media/video/{video_id}", headers={"range": "bytes=0-99"})
        assert part.status_code == 206 and len(part.content) == 100  # players seek by range
        results = client.get("/search", params={"q": "a red circle"}).text
        assert "/media/thumb/" in results and "red circle" in results
        asked = client.post("/ask", data={"question": "when does the red circle appear"}, follow_redirects=False)
        assert asked.status_code == 303 and asked.headers["location"].startswith("/jobs/ask-")
        client.get(f"/api/v1/jobs/{asked.headers['location'].rsplit('/', 1)[1]}", params={"wait": 240})
        answer = client.get(asked.headers["location"]).text
        assert "Found:" in answer and "Where it happens" in answer and "/media/video/" in answer
        assert client.get("/watch").status_code == 200 and client.get("/jobs").status_code == 200


def test_media_and_pages_show_only_what_lies_inside_the_roots(library_env, root, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(root / "short_field.mp4", other / "private.mp4")
    assert invoke(["index", str(other), "--json"], library_env).exit_code == 0  # the same library, by the CLI
    with _client(library_env, root) as client:
        listed = client.post("/api/v1/list_videos", json={}).json()
        assert listed["videos"] == []  # the roots' own video is not indexed yet
        hidden = re.search(r'"id":"([0-9a-f]+)"', json.dumps(document(invoke(["list-videos", "--json"],
                                                                                 library_env)),
                                                           separators=(",", ":"))).group(1)
        for path in (f"/media/video/{hidden}", f"/media/thumb/{hidden}", f"/videos/{hidden}"):
            assert client.get(path).status_code == 404, path
        assert "private" not in client.get("/").text


def test_mcp_over_http_is_the_stdio_server_and_listening_elsewhere_makes_a_token_once(library_env, root):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from tests.mcp_client import session

    stdio_tools = session(library_env, root, lambda client: client.list_tools())
    process, address, _ = serve_process(library_env, root)
    try:
        async def listed():
            async with Client(f"{address}mcp", read_timeout_seconds=120) as client:
                tools = await client.list_tools()
                result = await client.call_tool("list_videos", {})
                return tools, result

        tools, result = asyncio.run(listed())
        assert [t.name for t in tools.tools] == [t.name for t in stdio_tools.tools]
        assert [t.input_schema for t in tools.tools] == [t.input_schema for t in stdio_tools.tools]
        assert result.structured_content["roots"] == [str(root.resolve())]
        # A watch's alerts link their moments here while it runs (watch/services.py).
        running = json.loads((Path(library_env["MARLIN_HOME"]) / "serve.json").read_text())
        assert running["address"] == address and running["pid"] == process.pid
    finally:
        process.terminate()
        process.wait(30)
    assert not (Path(library_env["MARLIN_HOME"]) / "serve.json").exists()

    credentials = Path(library_env["MARLIN_HOME"]) / "credentials.toml"
    process, address, lines = serve_process(library_env, root, "--host", "0.0.0.0")
    try:
        token = re.search(r"\?token=(\S+)", lines[-1]).group(1)
        assert stat.S_IMODE(credentials.stat().st_mode) == 0o600 and token in credentials.read_text()
        local = address.replace("0.0.0.0", "127.0.0.1")
        assert httpx2.get(f"{local}api/v1/about").status_code == 401

        async def with_token():
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                    Client(streamable_http_client(f"{local}mcp", http_client=http)) as client:
                return await client.list_tools()

        assert len(asyncio.run(with_token()).tools) == len(stdio_tools.tools)
    finally:
        process.terminate()
        process.wait(30)
    process, _, lines = serve_process(library_env, root, "--host", "0.0.0.0")  # the next start shows where it is, not it
    process.terminate()
    process.wait(30)
    assert token not in "".join(lines) and "credentials.toml" in lines[-1]


def test_fifty_searches_and_four_asks_at_once_all_answer(library_env, root):
    import httpx

    process, address, _ = serve_process(library_env, root)
    try:
        async def load():
            async with httpx.AsyncClient(base_url=f"{address}api/v1", timeout=300) as client:
                indexed = await client.post("/index", params={"wait": 240}, json={})
                assert indexed.status_code == 200, indexed.text
                searches = [client.post("/search", json={"query": f"a red circle {n}", "k": 5}) for n in range(50)]
                asks = [client.post("/ask", json={"question": question}) for question in (
                    "when does the red circle appear", "when does a blue square appear", "when does a dog bark",
                    "how many times does a red circle appear")]
                return await asyncio.gather(*searches, *asks)

        answers = asyncio.run(load())
        assert [a.status_code for a in answers] == [200] * 54, [a.text for a in answers if a.status_code != 200][:2]
        assert all(a.json()["results"] for a in answers[:50])
        assert [a.json()["found"] for a in answers[50:]] == [True, True, False, True]
    finally:
        process.terminate()
        process.wait(30)
