"""The MCP server, driven by the SDK's own client over stdio like Hermes or Claude Code would."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from marlin_agent.errors import PathNotAllowed
from marlin_agent.mcp_server.roots import PathGuard
from tests.mcp_client import server_params as _params
from tests.mcp_client import session as _session

REPO = Path(__file__).resolve().parents[1]


def _is_the_cli_document(structured: dict, argv: list[str], env: dict, model) -> None:
    """An MCP result and the same command's `--json` document validate against one schema (the
    model's), carry the same keys and open with the schema version."""
    import jsonschema

    from tests.cli_runner import document, invoke

    result = invoke([*argv, "--json"], env)
    assert result.exit_code == 0, result.stdout + result.stderr
    from_cli = document(result)
    schema = model.model_json_schema(mode="serialization")
    for doc in (structured, from_cli):
        jsonschema.validate(doc, schema)
        assert doc["schema_version"] == "1"
    assert set(structured) == set(from_cli), argv[0]


def test_tools_are_listed_with_input_and_output_schemas(library_env, root):
    listed = _session(library_env, root, lambda client: client.list_tools())
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) >= {"ask", "search", "find", "caption", "index", "extract", "list_videos", "job_status"}
    assert tools["ask"].input_schema["required"] == ["question"]  # without paths: every root
    assert {"found", "moments"} <= set(tools["ask"].output_schema["properties"])
    assert "results" in tools["search"].output_schema["properties"]
    assert all(tool.description for tool in tools.values())
    read_only = {name for name, tool in tools.items() if tool.annotations and tool.annotations.read_only_hint}
    assert read_only == {"search", "find", "caption", "describe", "job_status", "list_videos", "watch_status"}
    assert tools["index"].annotations.destructive_hint is False
    # overwrite=true replaces a file (an extract's output, an ask's sheet); without it such a file is refused.
    assert all(tools[name].annotations.destructive_hint is True for name in ("ask", "extract"))
    assert "overwrite" in tools["ask"].input_schema["properties"]
    # Only JSON Schema's own formats: strict clients reject others ("path" is pydantic's).
    standard = {"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri",
                "uri-reference", "uuid", "regex", "json-pointer"}
    used = {m for tool in tools.values()
            for m in re.findall(r'"format": "([^"]+)"', json.dumps([tool.input_schema, tool.output_schema]))}
    assert used <= standard, used


def test_ask_answers_with_progress_then_search_finds_the_indexed_moment(library_env, root):
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done, total, message):
        progress.append((done, total, message))

    async def work(client):
        asked = await client.call_tool("ask", {"question": "when does the red circle appear"},  # the roots
                                       progress_callback=on_progress)
        absent = await client.call_tool("ask", {"question": "when does a purple star appear",
                                                "paths": [str(root / "short_field.mp4")]})
        searched = await client.call_tool("search", {"query": "blue square", "k": 3})
        videos = await client.call_tool("list_videos", {})
        return asked, absent, searched, videos

    asked, absent, searched, videos = _session(library_env, root, work)
    assert not asked.is_error, asked.content
    answer = asked.structured_content
    assert answer["found"] is True
    moment = answer["moments"][0]
    assert moment["video"]["path"] == str(root / "short_field.mp4")
    assert moment["start"] == pytest.approx(4.0, abs=1.0) and moment["end"] == pytest.approx(9.0, abs=1.0)
    assert progress and progress[-1][0] == progress[-1][1], progress  # chunks indexed, reported as they land
    assert absent.structured_content["found"] is False
    hits = searched.structured_content["results"]
    assert hits and "blue square" in hits[0]["text"]
    listed = videos.structured_content
    assert [v["video"]["path"] for v in listed["videos"]] == [str(root / "short_field.mp4")]
    assert listed["videos"][0]["chunks_indexed"] == 1 and listed["roots"] == [str(root)]
    # The same documents the CLI prints.
    from marlin_agent.app.search import SearchResult
    from marlin_agent.domain import Answer

    _is_the_cli_document(answer, ["ask", "when does the red circle appear", "--in", str(root)], library_env, Answer)
    _is_the_cli_document(searched.structured_content, ["search", "blue square", "-k", "3"], library_env, SearchResult)


def test_a_path_outside_the_roots_is_refused_before_any_work(library_env, root, footage, simulator):
    async def work(client):
        return [await client.call_tool("ask", {"question": "red circle", "paths": [str(footage["long_street"])]}),
                await client.call_tool("caption", {"video": "../../etc/passwd"}),
                await client.call_tool("index", {"paths": [str(root / "link")]})]

    (root / "link").symlink_to(footage["long_street"].parent)  # a link inside a root must not lead out
    results = _session(library_env, root, work)
    assert all(r.is_error for r in results)
    assert all("path_not_allowed" in r.content[0].text for r in results), [r.content for r in results]
    assert simulator.state.calls == []


def test_index_runs_as_a_job_the_client_polls(library_env, root):
    async def work(client):
        started = await client.call_tool("index", {"paths": ["."], "wait_seconds": 0})
        job = started.structured_content
        for _ in range(120):
            if job["state"] != "running":
                break
            job = (await client.call_tool("job_status", {"job_id": job["id"], "wait_seconds": 5})).structured_content
        unknown = await client.call_tool("job_status", {"job_id": "index-nope"})
        return started.structured_content, job, unknown

    started, job, unknown = _session(library_env, root, work)
    assert started["kind"] == "index" and started["id"].startswith("index-")
    assert job["state"] == "done", job
    assert job["result"]["videos_new"] == 1 and job["done"] == job["total"]
    assert unknown.is_error and "unknown_job" in unknown.content[0].text


def test_a_server_error_becomes_a_readable_tool_error(library_env, root):
    env = {**library_env, "MARLIN_BASE_URL": "http://127.0.0.1:9/v1"}
    result = _session(env, root, lambda c: c.call_tool("caption", {"video": "short_field.mp4"}))
    assert result.is_error
    assert "server_unavailable" in result.content[0].text
    # What helps over MCP: the host's env block or the stored setup, not "export MARLIN_BASE_URL".
    assert "env block" in result.content[0].text and "marlin-agent setup" in result.content[0].text


def test_with_no_server_configured_the_hint_says_what_works_over_mcp(library_env, root):
    async def work(client):
        return await client.call_tool("ask", {"question": "when does the red circle appear", "paths": ["."]})

    env = {**library_env, "MARLIN_BASE_URL": "", "MARLIN_ENGINE": ""}
    result = _session(env, root, work)
    assert result.is_error and "server_not_configured" in result.content[0].text
    assert "env block" in result.content[0].text


def test_nothing_but_protocol_reaches_stdout(library_env, root):
    # Speak the protocol by hand: every line the server writes to stdout must be JSON-RPC.
    import subprocess

    params = _params(library_env, root)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "caption", "arguments": {"video": "short_field.mp4"}}},
    ]
    proc = subprocess.run([params.command, *params.args], input="".join(json.dumps(m) + "\n" for m in messages),
                          capture_output=True, text=True, env=params.env, cwd=params.cwd, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, proc.stderr
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)


def test_the_guard_resolves_relative_paths_from_the_first_root_and_allows_urls(tmp_path):
    guard = PathGuard([tmp_path], allow_urls=True)
    assert guard.source("clip.mp4") == str(tmp_path.resolve() / "clip.mp4")
    assert guard.source("https://example.org/v.mp4") == "https://example.org/v.mp4"
    with pytest.raises(PathNotAllowed):
        PathGuard([tmp_path], allow_urls=False).source("https://example.org/v.mp4")
    with pytest.raises(PathNotAllowed):
        guard.source(str(tmp_path.parent))


def test_caption_find_and_a_marlin_extract_job(library_env, root):
    async def work(client):
        caption = await client.call_tool("caption", {"video": "short_field.mp4"})
        find = await client.call_tool("find", {"event": "a red circle appears", "video": "short_field.mp4"})
        job = (await client.call_tool("extract", {"schema": "marlin", "paths": ["."], "wait_seconds": 120})
               ).structured_content
        while job["state"] == "running":
            job = (await client.call_tool("job_status", {"job_id": job["id"], "wait_seconds": 10})).structured_content
        outside = await client.call_tool("extract", {"schema": "marlin", "paths": ["."], "output": "/tmp/x.jsonl"})
        return caption, find, job, outside

    caption, find, job, outside = _session(library_env, root, work)
    assert caption.structured_content["events"][0]["text"] == "a red circle appears"
    assert find.structured_content["candidates"][0]["start"] == pytest.approx(4.0, abs=1.0)
    # The same documents the CLI prints, each counting the Marlin calls it made.
    from marlin_agent.domain import FindResult, VideoCaption

    video = str(root / "short_field.mp4")
    _is_the_cli_document(caption.structured_content, ["caption", video], library_env, VideoCaption)
    _is_the_cli_document(find.structured_content, ["find", "a red circle appears", video], library_env, FindResult)
    assert caption.structured_content["usage"]["marlin_calls"] == find.structured_content["usage"]["marlin_calls"] == 1
    assert job["state"] == "done" and job["result"]["rows_ok"] == 1, job
    assert Path(job["result"]["output"]).is_file()
    assert outside.is_error and "path_not_allowed" in outside.content[0].text


def test_an_ask_that_outlasts_its_bound_goes_on_as_a_job_whose_result_is_the_answer(library_env, root, simulator):
    (root.parent / "home").mkdir(exist_ok=True)
    (root.parent / "home" / "config.toml").write_text("[mcp]\ncall_seconds = 3.0\n")
    env = {**library_env, "MARLIN_HOME": str(root.parent / "home")}

    async def work(client):
        simulator.state.latency = 4.0  # captioning the new video alone outlasts the 3 s bound
        first = await client.call_tool("ask", {"question": "when does the red circle appear", "paths": ["."]})
        job_id = re.search(r"job (ask-\w+)", first.content[0].text).group(1)
        simulator.state.latency = 0.0
        job = (await client.call_tool("job_status", {"job_id": job_id, "wait_seconds": 3})).structured_content
        while job["state"] == "running":
            job = (await client.call_tool("job_status", {"job_id": job_id, "wait_seconds": 3})).structured_content
        return first, job

    first, job = _session(env, root, work)
    assert first.is_error and "still_running" in first.content[0].text and "job_status" in first.content[0].text
    assert job["state"] == "done" and job["kind"] == "ask"
    answer = job["result"]
    assert answer["found"] is True and answer["moments"][0]["start"] == pytest.approx(4.0, abs=1.0)
    assert simulator.state.calls[0].kind == "caption"  # the cut-off call was not thrown away and redone
    indexing = simulator.state.calls[0].clip_duration
    # Captioned once for the index; verification's fresh captions are of the short span alone.
    assert len([c for c in simulator.state.calls if c.kind == "caption" and c.clip_duration == indexing]) == 1


def test_a_link_inside_a_root_that_leads_outside_is_refused_and_reported_and_nothing_from_it_is_used(
        library_env, root, footage, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(footage["long_street"], outside / "street.mp4")
    (root / "elsewhere").symlink_to(outside)  # a folder inside the root that is really outside it
    (root / "street-link.mp4").symlink_to(outside / "street.mp4")  # and a single file the same way

    async def work(client):
        job = (await client.call_tool("index", {"paths": ["."], "wait_seconds": 120})).structured_content
        asked = await client.call_tool("ask", {"question": "when does the white circle appear", "paths": ["."]})
        return job, asked

    job, asked = _session(library_env, root, work)
    assert job["state"] == "done", job
    report = job["result"]
    assert [Path(v["path"]).name for v in report["videos"]] == ["short_field.mp4"]
    refused = {Path(f["source"]).name: f for f in report["failed"]}
    assert refused["elsewhere"]["code"] == refused["street-link.mp4"]["code"] == "path_not_allowed"
    assert str(outside) in refused["elsewhere"]["reason"]
    assert str(outside) not in json.dumps(asked.structured_content)  # nothing from outside is answered


def test_search_over_a_shared_index_returns_k_hits_from_the_videos_inside_the_roots(
        library_env, root, footage, tmp_path):
    from tests.cli_runner import document, invoke

    second = tmp_path / "second"
    second.mkdir()
    shutil.copy(footage["vertical_night"], second / "night.mp4")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(footage["long_street"], elsewhere / "street.mp4")
    # Another user of the same index put a long video with many matching moments in it.
    assert document(invoke(["index", str(elsewhere), str(root), str(second), "--no-transcribe", "--json"],
                           library_env))["videos_new"] == 3

    async def work(client):
        return await client.call_tool("search", {"query": "a circle appears", "k": 4})

    searched = _session(library_env, root, work, "--root", str(second))
    hits = searched.structured_content["results"]
    assert len(hits) == 4
    assert {Path(hit["video"]["path"]).parent for hit in hits} <= {root, second}


def test_extract_with_a_custom_schema_and_no_planner_is_an_error_naming_the_parameter(library_env, root, simulator):
    schema = {"title": "goal", "type": "object", "properties": {"scorer": {"type": "string"}}}

    async def work(client):
        return await client.call_tool("extract", {"schema": schema, "paths": ["."]})

    result = _session({**library_env, "MARLIN_PLANNER": ""}, root, work)
    assert result.is_error
    text = result.content[0].text
    assert "planner_not_configured" in text and "Pass planner" in text and "--planner" not in text
    assert simulator.state.received == 0  # refused before any footage was looked at


def _as_a_host_starts_it(root: Path, env_block: dict[str, str]) -> StdioServerParameters:
    """The way Hermes, Codex or the SDK start a server: the SDK's safe baseline (HOME, PATH, ...)
    plus the recipe's env block, nothing else of the shell (PYTHONPATH only to run this tree)."""
    return StdioServerParameters(command=sys.executable, args=["-m", "marlin_agent", "mcp", "--root", str(root)],
                                 env={"PYTHONPATH": str(REPO), **env_block}, cwd=str(root))


def _caption_in(params: StdioServerParameters):
    async def run():
        async with Client(params, read_timeout_seconds=240) as client:
            return await client.call_tool("caption", {"video": "short_field.mp4"})

    return asyncio.run(run())


def test_a_host_that_forwards_no_environment_gets_a_working_server_from_the_recipes_env_block(
        library_env, root, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "bare-home"))  # no stored setup to fall back on
    monkeypatch.setenv("MARLIN_BASE_URL", "http://127.0.0.1:9/v1")  # the shell's export never reaches it
    result = _caption_in(_as_a_host_starts_it(root, {"MARLIN_BASE_URL": library_env["MARLIN_BASE_URL"],
                                                     "MARLIN_HOME": library_env["MARLIN_HOME"]}))
    assert not result.is_error, result.content[0].text
    assert result.structured_content["events"][0]["text"] == "a red circle appears"


def test_a_host_that_forwards_no_environment_gets_a_working_server_from_the_stored_setup(
        library_env, root, tmp_path, monkeypatch):
    # `marlin-agent setup` stores the choice under ~/.marlin; the host passes HOME, so the server finds it.
    home = tmp_path / "user"
    (home / ".marlin").mkdir(parents=True)
    (home / ".marlin" / "config.toml").write_text(f'[server]\nbase_url = "{library_env["MARLIN_BASE_URL"]}"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MARLIN_BASE_URL", "http://127.0.0.1:9/v1")
    result = _caption_in(_as_a_host_starts_it(root, {}))
    assert not result.is_error, result.content[0].text
    assert result.structured_content["events"][0]["text"] == "a red circle appears"
