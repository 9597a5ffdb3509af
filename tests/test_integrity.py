"""Security and integrity: what a caller, a schema or the footage names cannot write outside the
allowed places, destroy a user's file, or make the agent send a request nobody asked for."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

import pytest

from marlin_agent.extraction.schema import InvalidSchema, load_schema
from tests.cli_runner import document, invoke
from tests.mcp_client import session as _session

FOREIGN = '{"note": "my own notes"}\n{"note": "not an extract row"}\n'


class Listener:
    """A loopback HTTP server that records every request it receives."""

    def __init__(self, host: str = "127.0.0.1", redirect: str | None = None, body: bytes = b'{"type": "string"}'):
        self.requests: list[str] = []
        self.server = http.server.ThreadingHTTPServer((host, 0), _recording(self.requests, redirect, body))
        self.url = f"http://{host}:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


# --- writes stay inside the allowed places ------------------------------------------------------


def test_a_schema_title_that_is_a_path_names_a_file_in_the_servers_own_folder(library_env, root, tmp_path):
    escape = tmp_path / "escape"
    titles = [str(escape / "ESCAPED"), "../../../../" + str(escape / "CLIMBED").lstrip("/")]
    env = {**library_env, "MARLIN_PLANNER": "filler", "MARLIN_PLANNER_BASE_URL": "http://127.0.0.1:9/v1"}

    async def work(client):
        results = []
        for title in titles:
            schema = {"title": title, "type": "object", "properties": {"scorer": {"type": "string"}}}
            job = (await client.call_tool("extract", {"schema": schema, "paths": ["."], "wait_seconds": 60})
                   ).structured_content
            while job["state"] == "running":
                job = (await client.call_tool("job_status", {"job_id": job["id"]})).structured_content
            results.append(job)
        return results

    _session(env, root, work)
    assert not escape.exists(), list(escape.rglob("*"))
    extracts = Path(library_env["MARLIN_HOME"]) / "extracts"
    names = sorted(p.name for p in extracts.iterdir())
    assert len(names) == 2 and all(name.startswith(("tmp_", "escape")) or "ESCAPED" in name or "CLIMBED" in name
                                   for name in names), names
    assert all("/" not in name and not name.startswith(".") for name in names)


def test_the_cli_names_its_default_output_after_the_title_in_the_current_folder(library_env, tmp_path,
                                                                                monkeypatch, footage):
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"title": "../../up/there", "type": "object", "properties": {}}))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = invoke(["extract", "--schema", str(schema), "--in", str(footage["short_field"]), "--json"],
                    {**library_env, "MARLIN_PLANNER": ""})
    assert result.exit_code == 2 and document(result)["error"]["code"] == "planner_not_configured"
    assert not (tmp_path.parent / "up").exists()


# --- nothing of the user's is destroyed -------------------------------------------------------------


def test_extract_onto_a_foreign_jsonl_refuses_and_keeps_every_line(library_env, tmp_path, footage, simulator):
    notes = tmp_path / "notes.jsonl"
    notes.write_text(FOREIGN)
    argv = ["extract", "--schema", "marlin", "--in", str(footage["short_field"]), "-o", str(notes), "--json"]
    refused = invoke(argv, library_env)
    assert refused.exit_code == 2, refused.stdout
    error = document(refused)["error"]
    assert error["code"] == "output_exists" and "--force" in error["hint"]
    assert notes.read_text() == FOREIGN
    assert simulator.state.received == 0  # refused before any footage was looked at

    replaced = invoke([*argv, "--force"], library_env)
    assert replaced.exit_code == 0, replaced.stdout
    rows = [json.loads(line) for line in notes.read_text().splitlines()]
    assert [row["schema_name"] for row in rows] == ["marlin"]


@pytest.mark.parametrize("kept", [
    json.dumps({"note": "one object, as json.dump writes it: no newline at the end"}),
    '{"note": "first"}\n{"note": "the last line unterminated"}',
    '{"key": 3}',  # begins as a row would, but is no row of this tool's
], ids=["json-dump", "last-line-unterminated", "row-like"])
def test_extract_onto_a_users_file_whose_last_line_is_unterminated_refuses_and_keeps_it(library_env, tmp_path,
                                                                                         footage, kept):
    notes = tmp_path / "notes.jsonl"
    notes.write_text(kept)
    refused = invoke(["extract", "--schema", "marlin", "--in", str(footage["short_field"]), "-o", str(notes),
                      "--json"], library_env)
    assert refused.exit_code == 2 and document(refused)["error"]["code"] == "output_exists", refused.stdout
    assert notes.read_text() == kept


def test_a_second_extract_into_an_output_being_written_is_refused_and_the_rows_stay_unique(
        library_env, tmp_path, footage):
    from marlin_agent.extraction.job import Journal
    from marlin_agent.extraction.schema import load_schema

    out = tmp_path / "rows.jsonl"
    argv = ["extract", "--schema", "marlin", "--in", str(footage["short_field"]), "-o", str(out), "--json"]
    writing = Journal(out, load_schema("marlin"), Path(library_env["MARLIN_HOME"]) / "locks")  # a job under way
    try:
        busy = invoke(argv, library_env)
        assert busy.exit_code == 5 and document(busy)["error"]["code"] == "output_busy", busy.stdout
        assert out.read_text() == ""
    finally:
        writing.release()
    assert invoke(argv, library_env).exit_code == 0 and invoke(argv, library_env).exit_code == 0
    keys = [json.loads(line)["key"] for line in out.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 1


def test_extract_resumes_its_own_output_but_refuses_another_schemas(library_env, tmp_path, footage):
    out = tmp_path / "rows.jsonl"
    argv = ["extract", "--in", str(footage["short_field"]), "-o", str(out), "--json"]
    assert invoke([*argv, "--schema", "marlin"], library_env).exit_code == 0
    again = document(invoke([*argv, "--schema", "marlin"], library_env))
    assert again["rows_skipped"] == 1 and again["rows_ok"] == 0
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"title": "other", "type": "object", "properties": {}}))
    refused = invoke([*argv, "--schema", str(other)], {**library_env, "MARLIN_PLANNER": ""})
    assert document(refused)["error"]["code"] == "output_exists"
    assert len(out.read_text().splitlines()) == 1


def test_mcp_extract_onto_a_users_jsonl_is_refused_and_the_tool_says_it_may_overwrite(library_env, root):
    notes = root / "notes.jsonl"
    notes.write_text(FOREIGN)

    async def work(client):
        listed = await client.list_tools()
        refused = await client.call_tool("extract", {"schema": "marlin", "paths": ["."], "output": "notes.jsonl"})
        return listed, refused

    listed, refused = _session(library_env, root, work)
    assert refused.is_error and "output_exists" in refused.content[0].text and "overwrite" in refused.content[0].text
    assert notes.read_text() == FOREIGN
    extract = next(tool for tool in listed.tools if tool.name == "extract")
    assert extract.annotations.destructive_hint is True
    assert "overwrite" in extract.input_schema["properties"]


def test_ask_refuses_to_draw_its_sheet_over_a_users_file_before_any_work(library_env, tmp_path, footage, simulator):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    argv = ["ask", "when does the red circle appear", "--in", str(footage["short_field"]), "--sheet", str(notes),
            "--json"]
    refused = invoke(argv, library_env)
    assert refused.exit_code == 2 and document(refused)["error"]["code"] == "output_exists", refused.stdout
    assert notes.read_text() == "my notes" and simulator.state.received == 0
    sheet = tmp_path / "sheet.png"
    for _ in range(2):  # its own sheet it replaces, as a re-run would
        assert invoke([*argv[:-3], "--sheet", str(sheet), "--json"], library_env).exit_code == 0
    assert invoke([*argv, "--force"], library_env).exit_code == 0 and notes.read_bytes().startswith(b"\x89PNG")


def test_mcp_ask_with_a_sheet_over_a_users_file_is_refused(library_env, root):
    notes = root / "notes.txt"
    notes.write_text("my notes")

    async def work(client):
        return await client.call_tool("ask", {"question": "when does the red circle appear", "paths": ["."],
                                              "sheet": "notes.txt"})

    refused = _session(library_env, root, work)
    assert refused.is_error and "output_exists" in refused.content[0].text and "overwrite" in refused.content[0].text
    assert notes.read_text() == "my notes"


# --- schemas: no request, no loop, no traceback ------------------------------------------------------


def test_a_ref_to_a_loopback_listener_is_refused_before_any_work_and_receives_nothing(
        library_env, tmp_path, footage, listener, simulator):
    schema = tmp_path / "remote.json"
    schema.write_text(json.dumps({"title": "remote", "type": "object",
                                  "properties": {"x": {"$ref": f"{listener.url}/part.json"}}}))
    result = invoke(["extract", "--schema", str(schema), "--in", str(footage["short_field"]), "--json"],
                    {**library_env, "MARLIN_PLANNER": "filler", "MARLIN_PLANNER_BASE_URL": "http://127.0.0.1:9/v1"})
    assert result.exit_code == 2
    error = document(result)["error"]
    assert error["code"] == "invalid_schema" and "nothing is fetched" in error["message"]
    assert listener.requests == [] and simulator.state.received == 0


def test_a_ref_over_mcp_reaches_no_listener_even_when_urls_are_allowed(library_env, root, listener):
    schema = {"title": "remote", "type": "object", "properties": {"x": {"$ref": f"{listener.url}/part.json"}}}

    async def work(client):
        return await client.call_tool("extract", {"schema": schema, "paths": ["."]})

    result = _session(library_env, root, work)
    assert result.is_error and "invalid_schema" in result.content[0].text
    assert listener.requests == []


def _doubling(levels: int) -> dict:
    """2 KB of $defs, each naming the one before twice, under a recursive part: 2**levels subschemas spelled out."""
    defs = {"d0": {"type": "string"}}
    for n in range(1, levels):
        defs[f"d{n}"] = {"type": "object", "properties": {"a": {"$ref": f"#/$defs/d{n - 1}"},
                                                          "b": {"$ref": f"#/$defs/d{n - 1}"}}}
    defs["node"] = {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"},
                                                     "leaf": {"$ref": f"#/$defs/d{levels - 1}"}}}
    return {"title": "doubling", "type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/node"}}}


def _nested(levels: int) -> dict:
    document = {"title": "deep", "type": "object"}
    inner = document
    for _ in range(levels):
        inner["properties"] = {"x": {"type": "object"}}
        inner = inner["properties"]["x"]
    return document


@pytest.mark.parametrize("schema, reason", [
    (_nested(200), "nests deeper than"),
    ({"title": "loop", "type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
      "properties": {"x": {"$ref": "#/$defs/a"}}}, "loop"),
    ({"title": "self", "type": "object", "allOf": [{"$ref": "#"}]}, "loop"),
    ({"title": "nowhere", "type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}, "leads nowhere"),
    (_doubling(30), "spell out to more than"),
])
def test_deep_and_looping_schemas_are_refused_up_front_with_the_reason(library_env, tmp_path, footage,
                                                                        simulator, schema, reason):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    result = invoke(["extract", "--schema", str(path), "--in", str(footage["short_field"]), "--json"],
                    {**library_env, "MARLIN_PLANNER": "filler", "MARLIN_PLANNER_BASE_URL": "http://127.0.0.1:9/v1"})
    assert result.exit_code == 2, result.stdout
    error = document(result)["error"]
    assert error["code"] == "invalid_schema" and reason in error["message"]
    assert simulator.state.received == 0


def test_a_recursive_schema_is_shown_to_the_llm_to_a_stated_depth_and_rows_are_checked_against_all_of_it():
    from marlin_agent.extraction.schema import RECURSION_DEPTH, validation_errors

    tree = {"title": "part", "type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}, "parts": {"type": "array", "items": {"$ref": "#"}}}}
    schema = load_schema(tree)
    shown, depth = schema.llm_document, 0
    while "parts" in shown.get("properties", {}):
        shown, depth = shown["properties"]["parts"]["items"], depth + 1
    assert depth == 1 + RECURSION_DEPTH  # the row itself, then the stated number of repeats, then left open
    assert shown == {"type": "object"} and "$ref" not in json.dumps(schema.llm_document)
    deep_row = {"name": "a"}
    for level in range(10):
        deep_row = {"name": f"level {level}", "parts": [deep_row]}
    assert validation_errors(schema, deep_row) == []
    deep_row["parts"][0]["parts"][0]["name"] = 3
    assert validation_errors(schema, deep_row) == ["parts/0/parts/0/name: 3 is not of type 'string'"]


def test_a_schema_file_may_refer_to_files_beside_it_on_the_cli_but_not_above_it_nor_over_mcp(tmp_path):
    (tmp_path / "part.json").write_text(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}))
    main = tmp_path / "main.json"
    main.write_text(json.dumps({"title": "m", "type": "object", "properties": {"p": {"$ref": "part.json"}}}))
    assert load_schema(main).llm_document["properties"]["p"]["properties"]["n"] == {"type": "integer"}
    # A "#/..." inside the other file means that file's own $defs.
    (tmp_path / "defs.json").write_text(json.dumps({"$defs": {"n": {"type": "integer"}, "part": {
        "type": "object", "properties": {"n": {"$ref": "#/$defs/n"}}}}}))
    main.write_text(json.dumps({"title": "m", "type": "object", "properties": {"p": {"$ref": "defs.json#/$defs/part"}}}))
    assert load_schema(main).llm_document["properties"]["p"]["properties"]["n"] == {"type": "integer"}
    with pytest.raises(InvalidSchema, match="only inside the schema"):
        load_schema(main, files_beside=False)
    nested = tmp_path / "inner"
    nested.mkdir()
    climbing = nested / "climb.json"
    climbing.write_text(json.dumps({"title": "c", "type": "object", "properties": {"p": {"$ref": "../part.json"}}}))
    with pytest.raises(InvalidSchema, match="not a file in the schema's folder"):
        load_schema(climbing)


# --- a cold server answers every first call -------------------------------------------------------


def test_twenty_concurrent_first_calls_on_a_cold_mcp_server_all_answer(library_env, root):
    import asyncio

    async def work(client):
        calls = [client.call_tool("list_videos", {}) if n % 2 else client.call_tool("search", {"query": f"red {n}"})
                 for n in range(20)]
        return await asyncio.gather(*calls)

    results = _session(library_env, root, work)
    failures = [r.content[0].text for r in results if r.is_error]
    assert failures == [] and len(results) == 20


# --- any file name ------------------------------------------------------------------------------


def test_a_folder_whose_name_is_not_utf8_is_indexed_with_the_video_beside_it(library_env, tmp_path, footage):
    import os
    import shutil

    from marlin_agent.file_names import text_path

    shelf = tmp_path / "shelf"
    odd = Path(os.fsdecode(bytes(shelf) + b"/caf\xe9"))
    odd.mkdir(parents=True)
    shutil.copy(footage["long_street"], odd / os.fsdecode(b"street\xff.mp4"))
    shutil.copy(footage["short_field"], shelf / "beside.mp4")
    result = invoke(["index", str(shelf), "--no-transcribe", "--json"], library_env)
    assert result.exit_code == 0, result.stdout
    report = document(result)
    assert report["videos_new"] == 2 and report["failed"] == []
    odd_entry = next(v for v in report["videos"] if "caf" in v["path"])
    assert odd_entry["path"].endswith("caf\\udce9/street\\udcff.mp4") and odd_entry["title"] == "street\\udcff"
    assert text_path(odd_entry["path"]).is_file()  # the text names the very file
    hits = document(invoke(["search", "white circle", "--json"], library_env))["results"]
    assert hits and hits[0]["video"]["path"] == odd_entry["path"]


# --- no request to this machine's own networks on a caller's behalf ---------------------------------


def test_mcp_urls_to_loopback_are_refused_before_any_request(library_env, root, listener):
    async def work(client):
        indexed = await client.call_tool("index", {"paths": [f"{listener.url}/clip.mp4"]})
        asked = await client.call_tool("ask", {"question": "when does it start", "paths": [f"{listener.url}/v"]})
        private = await client.call_tool("index", {"paths": ["http://10.0.0.1/v.mp4", "http://[::1]:9/v.mp4",
                                                             "http://169.254.169.254/latest"]})
        return indexed, asked, private

    indexed, asked, private = _session(library_env, root, work)
    for result in (indexed, asked, private):
        assert result.is_error and "path_not_allowed" in result.content[0].text, result.content
    assert "allow_private_urls" in indexed.content[0].text
    assert listener.requests == []


def test_a_guarded_fetch_follows_no_redirect_into_a_refused_address(tmp_path, footage):
    """Every request of a guarded fetch goes through the guard's proxy. Here 127.0.0.1 stands for a public
    host and 127.0.0.2 for an internal one; the public one serves a video, and redirects to the other."""
    import ipaddress

    from marlin_agent.errors import PathNotAllowed
    from marlin_agent.media.download import download_url

    hidden = Listener("127.0.0.2", body=footage["short_field"].read_bytes())
    public = Listener(redirect=f"{hidden.url}/secret.mp4", body=footage["short_field"].read_bytes())
    seen: list[str] = []

    def forbidden(address) -> bool:
        seen.append(str(address))
        return address == ipaddress.ip_address("127.0.0.2")

    try:
        with pytest.raises(PathNotAllowed, match="127.0.0.2"):
            download_url(f"{public.url}/video.mp4", tmp_path / "cache", forbidden)
        fetched = download_url(f"{public.url}/plain.mp4", tmp_path / "cache", forbidden)
    finally:
        hidden.close()
        public.close()
    assert hidden.requests == [] and "/video.mp4" in public.requests
    assert fetched.path.read_bytes() == footage["short_field"].read_bytes()
    assert seen.count("127.0.0.1") >= 3  # checked before, and by the proxy for each connection


def _recording(requests: list[str], redirect: str | None = None, body: bytes = b""):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            if redirect and self.path == "/video.mp4":
                self.send_response(302)
                self.send_header("Location", redirect)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "video/mp4" if body[4:8] == b"ftyp" else "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(body)

        do_HEAD = do_GET

        def log_message(self, *args) -> None:
            pass

    return Handler


# --- a full disk and a damaged index are named, found and mended --------------------------------------


def _doctor_index_check(env: dict[str, str]) -> dict:
    result = invoke(["doctor", "--json"], env)
    return next(check for check in document(result)["checks"] if check["name"] == "index")


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs (needs root, as in CI), filled but for a few kilobytes."""
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs root")
    filler = mount / "filler"
    filler.write_bytes(b"\0" * (2 * 1024 * 1024 - 24 * 1024))
    yield mount, filler
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_disk_full_as_a_json_document_and_the_re_run_completes(library_env, root, small_disk):
    mount, filler = small_disk
    env = {**library_env, "MARLIN_DB": str(mount / "index")}
    full = invoke(["index", str(root), "--no-transcribe", "--json"], env)
    assert full.exit_code != 0
    error = document(full)["error"]
    assert error["code"] == "disk_full" and str(mount / "index") in error["message"] and "MB" in error["message"]
    assert "again" in error["hint"]
    filler.unlink()
    again = invoke(["index", str(root), "--no-transcribe", "--json"], env)
    assert again.exit_code == 0, again.stdout
    assert document(again)["videos_new"] == 1
    hits = document(invoke(["search", "red circle", "--json"], env))["results"]
    assert len({(h["start"], h["end"], h["text"]) for h in hits}) == len(hits)  # nothing stored twice


def test_a_full_disk_under_the_staged_clips_is_disk_full_too(library_env, root, small_disk, tmp_path):
    mount, filler = small_disk
    import os

    rest = os.open(mount / "the rest", os.O_WRONLY | os.O_CREAT)  # every last page: a staged clip is a few kB
    try:
        while os.write(rest, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(rest)
    env = {**library_env, "MARLIN_HOME": str(mount / "home"), "MARLIN_DB": str(tmp_path / "index")}
    full = invoke(["index", str(root), "--no-transcribe", "--json"], env)
    error = document(full)["error"]
    assert full.exit_code != 0 and error["code"] == "disk_full" and "staging clips" in error["message"]
    filler.unlink()
    (mount / "the rest").unlink()
    assert document(invoke(["index", str(root), "--no-transcribe", "--json"], env))["videos_new"] == 1


def test_a_deleted_full_text_index_is_reported_by_doctor_and_rebuilt_by_index_repair(library_env, root):
    import shutil

    assert invoke(["index", str(root), "--no-transcribe", "--json"], library_env).exit_code == 0
    assert _doctor_index_check(library_env)["status"] == "ok"
    index = Path(library_env["MARLIN_HOME"]) / "index"
    shutil.rmtree(index / "segments.lance" / "_indices")

    broken = invoke(["search", "red circle", "--json"], library_env)
    assert broken.exit_code != 0 and document(broken)["error"]["code"] == "index_damaged"
    check = _doctor_index_check(library_env)
    assert check["status"] == "fail" and "full-text index" in check["detail"] and "--repair" in check["fix"]

    repaired = invoke(["index", "--repair", "--no-transcribe", "--json"], library_env)
    assert repaired.exit_code == 0, repaired.stdout
    assert document(repaired)["repair"]["rebuilt"] == ["the full-text index of segments"]
    assert _doctor_index_check(library_env)["status"] == "ok"
    hits = document(invoke(["search", "red circle", "--json"], library_env))["results"]
    assert hits and hits[0]["text"] == "a red circle appears"

    # A plain index run mends it too, even with nothing new to caption.
    shutil.rmtree(index / "segments.lance" / "_indices")
    assert document(invoke(["index", str(root), "--no-transcribe", "--json"], library_env))["videos_unchanged"] == 1
    assert _doctor_index_check(library_env)["status"] == "ok"


@pytest.mark.parametrize("table", ["videos", "chunks", "segments"])
def test_a_deleted_table_is_found_by_doctor_and_repair_without_the_footage_says_it_needs_it(library_env, root,
                                                                                             table):
    import shutil

    assert invoke(["index", str(root), "--no-transcribe", "--json"], library_env).exit_code == 0
    shutil.rmtree(Path(library_env["MARLIN_HOME"]) / "index" / f"{table}.lance")
    check = _doctor_index_check(library_env)
    assert check["status"] == "fail" and "--repair" in check["fix"], check

    repaired = invoke(["index", "--repair", "--no-transcribe", "--json"], library_env)
    left = document(repaired)["repair"]["problems_left"]
    if table == "videos":  # only the footage can give back a video's record: said, and not a success
        assert repaired.exit_code == 1 and left and "index --repair FILES" in left[-1], left
    else:  # the stored videos' files are there: their lost chunks are captioned again
        assert repaired.exit_code == 0 and not left, left
    again = invoke(["index", "--repair", str(root), "--no-transcribe", "--json"], library_env)
    assert again.exit_code == 0 and not document(again)["repair"]["problems_left"], again.stdout
    assert _doctor_index_check(library_env)["status"] == "ok"
    hits = document(invoke(["search", "red circle", "--json"], library_env))["results"]
    assert hits and hits[0]["video"]["path"] == str(root / "short_field.mp4")


@pytest.mark.parametrize("damage", ["flipped bytes", "truncated"])
def test_a_damaged_data_file_is_found_and_repair_returns_to_a_good_version_and_captions_again(
        library_env, root, footage, damage):
    import shutil

    assert invoke(["index", str(root), "--no-transcribe", "--json"], library_env).exit_code == 0
    shutil.copy(footage["long_street"], root / "long_street.mp4")
    assert invoke(["index", str(root), "--no-transcribe", "--json"], library_env).exit_code == 0
    data = Path(library_env["MARLIN_HOME"]) / "index" / "segments.lance" / "data"
    newest = max(data.iterdir(), key=lambda p: p.stat().st_mtime)
    raw = bytearray(newest.read_bytes())
    middle = len(raw) // 2
    raw[middle:middle + 200] = bytes(b ^ 0x5A for b in raw[middle:middle + 200])
    newest.write_bytes(bytes(raw) if damage == "flipped bytes" else bytes(raw[:1000]))
    if damage == "truncated":
        broken = invoke(["search", "white circle", "--json"], library_env)
        assert broken.exit_code != 0 and document(broken)["error"]["code"] == "index_damaged"

    check = _doctor_index_check(library_env)
    assert check["status"] == "fail" and "table segments" in check["detail"], check
    repaired = document(invoke(["index", "--repair", "--no-transcribe", "--json"], library_env))
    assert repaired["repair"]["restored"] and repaired["repair"]["problems_left"] == []
    # Whatever the older version lacked is asked of Marlin again (compaction often keeps it all).
    assert repaired["chunks_captioned"] == repaired["repair"]["forgotten_chunks"]
    assert _doctor_index_check(library_env)["status"] == "ok"
    hits = document(invoke(["search", "white circle", "--json"], library_env))["results"]
    assert any(hit["text"] == "a white circle appears" for hit in hits)


def test_chunks_whose_captions_were_lost_are_reported_and_captioned_again_by_repair(library_env, root, simulator):
    from marlin_agent.config import load_settings
    from marlin_agent.library.access import open_library

    assert invoke(["index", str(root), "--no-transcribe", "--json"], library_env).exit_code == 0
    library = open_library(load_settings(env=library_env))
    library.store.raw_table("segments").delete("kind = 'event' OR kind = 'scene'")  # as an older version might lack
    check = _doctor_index_check(library_env)
    assert check["status"] == "fail" and "lost their scenes and events" in check["detail"]
    calls = simulator.state.received
    repaired = document(invoke(["index", "--repair", "--no-transcribe", "--json"], library_env))
    assert repaired["repair"]["forgotten_chunks"] == 1 and repaired["chunks_captioned"] == 1
    assert simulator.state.received == calls + 1
    assert _doctor_index_check(library_env)["status"] == "ok"


# --- the footage that is there, and nothing that is not -------------------------------------------------


def _lying_copy(source: Path, target: Path, claimed: float) -> Path:
    """``source`` remuxed into Matroska whose header claims ``claimed`` seconds."""
    import struct

    import av

    with av.open(str(source)) as read, av.open(str(target), "w") as write:
        stream = write.add_stream_from_template(read.streams.video[0])
        for packet in read.demux(read.streams.video[0]):
            if packet.dts is not None:
                packet.stream = stream
                write.mux(packet)
    data = bytearray(target.read_bytes())
    at = data.find(b"\x44\x89\x88")  # Segment Info's Duration, an 8-byte float in milliseconds
    data[at + 3:at + 11] = struct.pack(">d", claimed * 1000)
    target.write_bytes(bytes(data))
    return target


def test_a_file_whose_metadata_understates_its_length_is_indexed_whole_and_the_report_says_so(
        library_env, tmp_path, footage):
    folder = tmp_path / "lying"
    folder.mkdir()
    _lying_copy(footage["long_street"], folder / "street.mkv", claimed=9.0)
    report = document(invoke(["index", str(folder), "--no-transcribe", "--json"], library_env))
    (video,) = report["videos"]
    assert video["chunks_planned"] == 4 and "9.0 s" in video["note"] and "200.0 s" in video["note"]
    hits = document(invoke(["search", "white circle", "--json"], library_env))["results"]
    assert hits[0]["start"] == pytest.approx(131, abs=1.5)  # footage past the claimed 9 s is searchable


def test_a_blip_of_a_few_milliseconds_is_not_a_video(make_footage):
    from marlin_agent.errors import VideoEmpty
    from marlin_agent.media.probe import MIN_FOOTAGE, probe_video

    blip = make_footage("blip", duration=0.125)
    with pytest.raises(VideoEmpty, match="too little to be a video"):
        probe_video(blip)
    assert MIN_FOOTAGE > 0.125


def test_index_exits_non_zero_with_its_report_when_every_video_failed(library_env, tmp_path):
    folder = tmp_path / "junk"
    folder.mkdir()
    (folder / "a.mp4").write_bytes(b"not a video at all" * 100)
    (folder / "b.mkv").write_bytes(b"")
    result = invoke(["index", str(folder), "--no-transcribe", "--json"], library_env)
    assert result.exit_code == 2
    report = document(result)
    assert report["videos_failed"] == 2 and {f["code"] for f in report["failed"]} <= {"video_unreadable", "video_empty"}


def test_mcp_search_over_paths_it_had_to_index_first_finds_them_on_the_first_call(library_env, root):
    async def work(client):
        return await client.call_tool("search", {"query": "red circle", "paths": ["."], "k": 3})

    result = _session(library_env, root, work)
    hits = result.structured_content["results"]
    assert hits and hits[0]["text"] == "a red circle appears"


# --- the clip cache keeps to its size ------------------------------------------------------------------


def test_cache_prune_removes_the_least_recently_used_clips_and_keeps_those_in_use(tmp_path):
    import os
    import time

    clips = tmp_path / "home" / "cache" / "clips"
    now = time.time()
    ages = {"oldest": 3 * 86400, "older": 2 * 86400, "old": 86400, "in_use": 60}
    for name, age in ages.items():
        folder = clips / name
        folder.mkdir(parents=True)
        (folder / "k.mp4").write_bytes(b"\0" * 400_000)
        sidecar = folder / "k.json"
        sidecar.write_text("{}")
        os.utime(sidecar, (now - age, now - age))
    env = {"MARLIN_HOME": str(tmp_path / "home")}
    pruned = document(invoke(["cache", "prune", "--max-gb", "0.0008", "--json"], env))  # ~840 KB: two clips fit
    assert pruned["clips_removed"] == 2 and pruned["kept_clips"] == 2
    assert sorted(p.name for p in clips.iterdir()) == ["in_use", "old"]
    emptied = document(invoke(["cache", "prune", "--max-gb", "0", "--json"], env))
    assert emptied["clips_removed"] == 1 and [p.name for p in clips.iterdir()] == ["in_use"]


def test_cache_prune_removes_what_a_killed_run_left_half_written_but_not_what_a_run_writes_now(tmp_path):
    import os
    import time

    folder = tmp_path / "home" / "cache" / "clips" / "video"
    folder.mkdir(parents=True)
    stale = [folder / "k.1a2b3c4d5e6f.partial.mp4", folder / "k.9f8e7d6c5b4a.tmp"]
    for leftover in stale:
        leftover.write_bytes(b"\0" * 1000)
        os.utime(leftover, (time.time() - 86400, time.time() - 86400))
    writing = folder / "k.0a0b0c0d0e0f.partial.mp4"
    writing.write_bytes(b"\0" * 1000)
    pruned = document(invoke(["cache", "prune", "--json"], {"MARLIN_HOME": str(tmp_path / "home")}))
    assert pruned["leftovers_removed"] == 2 and not any(p.exists() for p in stale) and writing.exists()


def test_reusing_a_staged_clip_marks_it_recently_used(footage, tmp_path):
    import os

    from marlin_agent.domain import Chunk
    from marlin_agent.media.probe import probe_video
    from marlin_agent.media.stage import stage_clip

    video = probe_video(footage["short_field"])
    staged = stage_clip(video, Chunk(index=0, start=0, end=24), tmp_path)
    sidecar = staged.path.with_suffix(".json")
    os.utime(sidecar, (1_000_000, 1_000_000))
    stage_clip(video, Chunk(index=0, start=0, end=24), tmp_path)
    assert sidecar.stat().st_mtime > 1_000_000
