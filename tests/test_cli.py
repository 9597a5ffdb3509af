"""The command line: JSON documents on stdout, specific errors, no tracebacks."""


import pytest

from marlin_agent.cli.main import app
from tests.cli_runner import document, invoke, runner


def test_caption_json_has_the_documented_shape(footage, env):
    result = invoke(["caption", str(footage["short_field"]), "--json"], env)
    assert result.exit_code == 0, result.stderr
    doc = document(result)
    assert doc["schema_version"] == "1"
    assert doc["video"]["duration"] == pytest.approx(24.0, abs=0.1)
    assert [set(c) >= {"start", "end", "scene"} for c in doc["chunks"]] == [True]
    assert [(e["start"], e["end"], e["text"]) for e in doc["events"]] == [
        (4.0, 9.0, "a red circle appears"), (12.5, 20.0, "a blue square moves from left to right")]
    assert doc["usage"]["marlin_calls"] == 1


def test_find_json_has_the_documented_shape(footage, env):
    result = invoke(["find", "the red ball", str(footage["short_field"]), "--json"], env)
    assert result.exit_code == 0, result.stderr
    doc = document(result)
    assert doc["query"] == "the red ball"
    (candidate,) = doc["candidates"]
    assert set(candidate) >= {"start", "end", "chunk_start", "chunk_end"}
    assert (candidate["start"], candidate["end"]) == (4.0, 9.0)


def test_start_and_end_limit_the_search(footage, env):
    doc = document(invoke(["find", "white circle", str(footage["long_street"]), "--start", "120", "--end", "180", "--json"], env))
    (candidate,) = doc["candidates"]
    assert (candidate["chunk_start"], candidate["chunk_end"]) == (120, 180)
    assert candidate["start"] == pytest.approx(131.0, abs=1)


def test_human_output_lists_events_with_times(footage, env):
    result = invoke(["caption", str(footage["short_field"])], env)
    assert result.exit_code == 0
    assert "0:04.0–0:09.0" in result.stdout and "a red circle appears" in result.stdout


def test_hosted_mode_works_with_the_key_and_fails_clearly_without_it(footage, env, simulator):
    simulator.state.api_key = "hosted-key"
    simulator.state.refuse_file_urls = True
    ok = invoke(["caption", str(footage["short_field"]), "--json"], {**env, "MARLIN_API_KEY": "hosted-key"})
    assert ok.exit_code == 0, ok.stdout
    assert {r.transport for r in simulator.state.calls} == {"base64"}
    refused = invoke(["caption", str(footage["short_field"]), "--json"], env)
    assert refused.exit_code == 4
    assert document(refused)["error"]["code"] == "auth_failed"
    assert "hosted-key" not in refused.stdout + refused.stderr


def test_no_server_configured_is_a_clear_error_and_never_falls_back_to_a_simulator(footage, marlin_home):
    result = invoke(["caption", str(footage["short_field"]), "--json"], {"MARLIN_HOME": str(marlin_home), "MARLIN_BASE_URL": None})
    assert result.exit_code == 3
    error = document(result)["error"]
    assert error["code"] == "server_not_configured" and "MARLIN_BASE_URL" in error["hint"]


def _garbage(tmp_path):
    path = tmp_path / "garbage.mp4"
    path.write_text("not a video at all\n" * 20)
    return path


def _zero(tmp_path):
    path = tmp_path / "zero.mp4"
    path.write_bytes(b"")
    return path


def _truncated(tmp_path, footage):
    path = tmp_path / "truncated.mp4"
    path.write_bytes(footage["short_field"].read_bytes()[:50_000])
    return path


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda tmp, footage: tmp / "missing.mp4", "video_not_found"),
        (lambda tmp, footage: _garbage(tmp), "video_unreadable"),
        (lambda tmp, footage: _truncated(tmp, footage), "video_truncated"),
        (lambda tmp, footage: _zero(tmp), "video_empty"),
    ],
    ids=["missing", "not-a-video", "truncated", "zero-length"],
)
def test_bad_videos_get_specific_errors(make, code, tmp_path, footage, env):
    result = invoke(["caption", str(make(tmp_path, footage)), "--json"], env)
    assert result.exit_code == 2
    error = document(result)["error"]
    assert error["code"] == code and error["message"] and error["hint"]


def test_bad_videos_in_human_mode_print_the_error_and_hint_on_stderr(tmp_path, env):
    result = invoke(["caption", str(tmp_path / "missing.mp4")], env)
    assert result.exit_code == 2 and result.stdout == ""
    assert "no such file" in result.stderr and "hint" in result.stderr


@pytest.mark.parametrize(
    ("fault", "overrides", "code"),
    [
        ("garbage", {}, "server_bad_response"),
        (None, {"MARLIN_BASE_URL": "http://127.0.0.1:9/v1"}, "server_unavailable"),
        (None, {"MARLIN_API_KEY": "wrong"}, "auth_failed"),
    ],
    ids=["garbage", "down", "wrong-key"],
)
def test_server_problems_get_specific_errors(fault, overrides, code, footage, env, simulator):
    simulator.state.fault = fault
    if code == "auth_failed":
        simulator.state.api_key = "right"
    result = invoke(["find", "red circle", str(footage["short_field"]), "--json"], {**env, **overrides})
    assert result.exit_code != 0
    assert document(result)["error"]["code"] == code


def test_an_empty_event_is_refused(footage, env):
    result = invoke(["find", "  ", str(footage["short_field"]), "--json"], env)
    assert result.exit_code == 2 and document(result)["error"]["code"] == "empty_query"


def test_version_and_help_need_no_server():
    assert runner.invoke(app, ["--version"]).stdout.startswith("marlin-agent ")
    assert "caption" in runner.invoke(app, ["--help"]).stdout


def test_index_then_search_json_documents(footage, library_env):
    indexed = invoke(["index", str(footage["short_field"]), str(footage["vertical_night"]), "--no-transcribe", "--json"],
                     library_env)
    assert indexed.exit_code == 0, indexed.stderr
    report = document(indexed)
    assert report["videos_new"] == 2 and report["marlin_calls"] == 2 and report["chunks_captioned"] == 2
    found = invoke(["search", "white square", "-k", "3", "--json"], library_env)
    assert found.exit_code == 0, found.stderr
    doc = document(found)
    assert doc["query"] == "white square"
    top = doc["results"][0]
    assert set(top) == {"video", "start", "end", "text", "source", "score"}
    assert set(top["video"]) == {"id", "path", "title"}
    assert top["video"]["title"] == "vertical_night" and top["source"] == "event"
    assert (top["start"], top["end"]) == (pytest.approx(10.0, abs=1), pytest.approx(16.0, abs=1))


def test_index_without_a_server_fails_only_when_captions_are_needed(footage, library_env):
    no_server = {**library_env, "MARLIN_BASE_URL": None}
    result = invoke(["index", str(footage["short_field"]), "--no-transcribe", "--json"], no_server)
    assert result.exit_code == 3 and document(result)["error"]["code"] == "server_not_configured"
    assert invoke(["index", str(footage["short_field"]), "--no-transcribe"], library_env).exit_code == 0
    again = invoke(["index", str(footage["short_field"]), "--no-transcribe", "--json"], no_server)
    assert again.exit_code == 0 and document(again)["videos_unchanged"] == 1


def test_an_empty_folder_is_a_clear_error(tmp_path, library_env):
    (tmp_path / "empty").mkdir()
    result = invoke(["index", str(tmp_path / "empty"), "--json"], library_env)
    assert result.exit_code == 2 and document(result)["error"]["code"] == "no_videos_found"


@pytest.mark.parametrize("argv, code", [
    (["ask", "   ", "--in", "nowhere", "--json"], "empty_query"),
    (["search", "   ", "--json"], "empty_query"),
    (["search", "a red car", "-k", "0", "--json"], "bad_input"),
    (["ask", "--json"], "bad_input"),
])
def test_an_unusable_question_or_argument_is_a_json_error_before_any_work(argv, code, tmp_path):
    result = invoke(argv, {"MARLIN_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"})
    assert result.exit_code == 2
    assert document(result)["error"]["code"] == code, result.stdout
