"""Reliability against a Marlin stand-in that misbehaves: nothing bad is stored as good, one
video's failure never stops the rest, and every failure says what happened."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from evals.synthetic.simulator import MarlinSimulator
from tests.cli_runner import document, invoke


@pytest.fixture
def clips(tmp_path, footage):
    """Two short videos (one chunk each) and the 200 s street (four chunks)."""
    root = tmp_path / "clips"
    root.mkdir()
    shutil.copy(footage["short_field"], root / "field.mp4")
    shutil.copy(footage["long_street"], root / "street.mp4")
    return root


def index(paths, env, *flags):
    return invoke(["index", *map(str, paths), "--no-transcribe", "--json", *flags], env)


def _street_last_chunk(record):
    """The street's last chunk (150-200 s), the only one showing the purple circle."""
    return any("purple circle" in seen for seen in record.seen)


@pytest.mark.parametrize("fault", ["empty", "prose"])
def test_an_answer_that_is_no_caption_is_a_failed_chunk_and_is_retried_on_the_next_run(
        fault, clips, library_env, simulator):
    simulator.state.fault = fault
    first = index([clips / "field.mp4"], library_env)
    assert first.exit_code == 3, first.stderr  # the server failed every video given: the report says why
    report = document(first)
    assert report["chunks_captioned"] == 0 and report["chunks_failed"] == 1 and report["videos_failed"] == 1
    (video,) = report["videos"]
    assert video["status"] == "failed" and video["failures"][0]["code"] == "caption_unusable"
    assert report["failed"][0]["code"] == "caption_unusable"

    simulator.state.fault = None
    simulator.state.reset()
    second = document(index([clips / "field.mp4"], library_env))
    assert second["marlin_calls"] == 1 and second["chunks_captioned"] == 1 and second["chunks_failed"] == 0
    asked = document(invoke(["ask", "when does the red circle appear", "--in", str(clips / "field.mp4"), "--json",
                             "--no-transcribe"], library_env))
    assert asked["found"] is True


def test_a_caption_cut_off_mid_event_is_kept_for_search_but_captioned_again_next_run(clips, library_env, simulator):
    simulator.state.fault = "truncated"
    report = document(index([clips / "street.mp4"], library_env))
    (video,) = report["videos"]
    assert report["chunks_captioned"] == 0 and video["chunks_failed"] == 4
    assert {f["code"] for f in video["failures"]} == {"caption_off_format"}

    simulator.state.fault = None
    simulator.state.reset()
    again = document(index([clips / "street.mp4"], library_env))
    assert again["marlin_calls"] == 4 and again["chunks_captioned"] == 4 and again["chunks_failed"] == 0
    assert document(index([clips / "street.mp4"], library_env))["marlin_calls"] == 0  # now done for good


def test_one_video_failing_entirely_does_not_stop_the_folder(clips, library_env, simulator):
    simulator.state.fault = "error500"
    simulator.state.fault_when = lambda record: abs((record.clip_duration or 0) - 24.0) < 0.5  # the field clip
    result = index([clips], library_env, "--concurrency", "1")
    assert result.exit_code == 0, result.stdout + result.stderr
    report = document(result)
    by_name = {v["path"].rsplit("/", 1)[-1]: v for v in report["videos"]}
    assert by_name["street.mp4"]["status"] == "new" and by_name["street.mp4"]["chunks_done"] == 4
    field = by_name["field.mp4"]
    assert field["status"] == "failed" and field["chunks_failed"] == 1
    assert field["failures"][0]["code"] == "server_error" and "HTTP 500" in field["failures"][0]["message"]
    assert report["videos_failed"] == 1 and report["failed"][0]["source"].endswith("field.mp4")

    # The retry fails again: still a report. (Wide enough that a long temporary path does not wrap.)
    human = invoke(["index", str(clips), "--no-transcribe"], {**library_env, "COLUMNS": "200"})
    assert human.exit_code == 0 and "field.mp4" in human.stdout and "HTTP 500" in human.stdout


def test_recaption_redoes_every_chunk_or_only_the_failed_ones(clips, library_env, simulator):
    assert document(index([clips / "street.mp4"], library_env))["marlin_calls"] == 4
    simulator.state.fault = "truncated"
    simulator.state.fault_when = _street_last_chunk
    redone = document(index([clips / "street.mp4"], library_env, "--recaption"))
    assert redone["marlin_calls"] == 4 and redone["chunks_captioned"] == 3 and redone["chunks_failed"] == 1

    simulator.state.fault = None
    only_failed = document(index([clips / "street.mp4"], library_env, "--recaption", "--failed-only"))
    assert only_failed["marlin_calls"] == 1 and only_failed["chunks_captioned"] == 1
    assert invoke(["index", str(clips), "--failed-only"], library_env).exit_code == 2


def test_a_run_with_nothing_to_do_writes_nothing_and_takes_no_lock(clips, library_env, simulator):
    from marlin_agent.config import load_settings
    from marlin_agent.library.access import open_library

    assert document(index([clips], library_env))["chunks_captioned"] == 5
    def versions() -> dict[str, int]:  # read afresh: each index run writes through its own connection
        library = open_library(load_settings(env=library_env))
        return {name: library.store.raw_table(name).version for name in ("videos", "chunks", "segments", "failures")
                if name in library.store.tables()}

    before = versions()
    for _ in range(3):
        assert document(index([clips], library_env))["videos_unchanged"] == 2
    assert versions() == before


@pytest.fixture
def held_lock(library_env):
    """Another process indexing into the same database: its lock, held until released."""
    import fcntl
    from pathlib import Path

    folder = Path(library_env["MARLIN_HOME"]) / "index"
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / ".index.lock", "w")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    yield handle
    handle.close()


def _short_lock_wait(library_env, seconds: float) -> None:
    from pathlib import Path

    config = Path(library_env["MARLIN_HOME"]) / "config.toml"
    config.write_text((config.read_text() if config.is_file() else "") + f"\n[library]\nlock_wait = {seconds}\n")


def test_asking_over_indexed_footage_needs_no_lock_while_another_process_indexes(clips, library_env, request):
    assert index([clips / "field.mp4"], library_env).exit_code == 0
    request.getfixturevalue("held_lock")
    asked = invoke(["ask", "when does the red circle appear", "--in", str(clips / "field.mp4"), "--json",
                    "--no-transcribe"], library_env)
    assert asked.exit_code == 0, asked.stdout + asked.stderr
    assert document(asked)["found"] is True
    assert document(index([clips / "field.mp4"], library_env))["videos_unchanged"] == 1


def test_a_run_with_work_waits_for_the_other_process_then_goes_on(clips, library_env, held_lock):
    import threading

    threading.Timer(1.5, held_lock.close).start()  # the other run finishes
    result = index([clips / "field.mp4"], library_env)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert document(result)["chunks_captioned"] == 1


def test_a_run_that_waited_its_bound_is_index_busy_not_a_server_problem(clips, library_env, held_lock):
    _short_lock_wait(library_env, 0.5)
    result = index([clips / "field.mp4"], library_env)
    assert result.exit_code == 5
    error = document(result)["error"]
    assert error["code"] == "index_busy" and "waited" in error["message"] and "lock_wait" in error["hint"]


def _cli_without(module: str, args: list[str], env: dict[str, str]):
    """The CLI in a fresh interpreter where ``module`` cannot be imported (its extra not installed)."""
    program = (f"import sys\nsys.modules[{module!r}] = None  # any import of it now fails\n"
               f"from marlin_agent.cli.main import app\napp({json.dumps(args)})")
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env, "MARLIN_API_KEY": "", "MARLIN_MODEL": "", "MARLIN_MEDIA": ""})


def test_ask_with_a_sheet_but_no_pillow_fails_before_any_work(clips, library_env, simulator, tmp_path):
    result = _cli_without("PIL", ["ask", "when does the red circle appear", "--in", str(clips / "field.mp4"),
                                  "--sheet", str(tmp_path / "sheet.png"), "--json", "--no-transcribe"], library_env)
    assert result.returncode == 2, result.stdout + result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "missing_dependency" and "marlin-agent[sheet]" in error["hint"]
    assert simulator.state.received == 0  # not one Marlin call spent on an answer that could not be drawn


def test_the_marlin_schema_extracts_without_the_llm_extra(clips, library_env, tmp_path):
    out = tmp_path / "rows.jsonl"
    result = _cli_without("pydantic_ai", ["extract", "--schema", "marlin", "--in", str(clips / "field.mp4"), "-o",
                                          str(out), "--json", "--no-transcribe"], library_env)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["valid"] and rows[0]["data"]["events"]


def test_usage_counts_every_request_the_server_saw_retries_included(clips, library_env, simulator):
    simulator.state.fail_next = 2
    result = invoke(["caption", str(clips / "field.mp4"), "--json"], library_env)
    assert result.exit_code == 0, result.stderr
    assert document(result)["usage"]["marlin_calls"] == simulator.state.received == 3


def test_per_lists_its_choices_and_refuses_others(library_env):
    assert "<video|chunk>" in invoke(["extract", "--help"], library_env).stdout
    wrong = invoke(["extract", "--schema", "marlin", "--in", ".", "--per", "frame"], library_env)
    assert wrong.exit_code == 2 and "'frame' is not one of 'video'," in wrong.stderr


def test_a_hung_server_is_reported_in_two_timeouts_per_request_with_a_line_while_waiting(
        clips, library_env, simulator):
    simulator.state.fault = "hang"
    result = invoke(["index", str(clips), "--no-transcribe", "--concurrency", "1", "--timeout", "0.6"], library_env)
    assert result.exit_code == 3, result.stdout + result.stderr
    said = " ".join(result.stderr.split())
    assert "stopped answering" in said and "2 requests in a row" in said
    assert "has not answered" in said and "(--timeout sets this)" in said  # said while it waited
    assert simulator.state.received == 4  # two chunks, each sent twice; nothing after the server was given up on


def test_the_timeout_comes_from_marlin_timeout_and_otherwise_scales_with_the_clip(tmp_path):
    from marlin_agent.config import load_settings
    from marlin_agent.marlin.client import request_timeout

    scaled = load_settings(env={"MARLIN_HOME": str(tmp_path)}).server
    assert request_timeout(scaled, 60.0) == 120.0 and request_timeout(scaled, 3.0) == 34.5
    fixed = load_settings(env={"MARLIN_HOME": str(tmp_path), "MARLIN_TIMEOUT": "45"}).server
    assert request_timeout(fixed, 60.0) == request_timeout(fixed, 3.0) == 45.0
    assert load_settings({"server.request_timeout": 9}, env={"MARLIN_HOME": str(tmp_path)}).server.request_timeout == 9


def test_a_server_that_dies_mid_run_is_named_and_the_work_done_is_kept(clips, library_env, simulator):
    simulator.state.fault = "die"
    simulator.state.fault_when = _street_last_chunk
    result = index([clips / "street.mp4"], library_env, "--concurrency", "1")
    assert result.exit_code == 3
    error = document(result)["error"]
    assert error["code"] == "server_stopped" and simulator.base_url in error["message"]
    answered = int(re.search(r"stopped answering after (\d) answer", error["message"]).group(1))
    assert answered >= 1 and "three ways" not in error["hint"] and "only for the rest" in error["hint"]

    with MarlinSimulator() as revived:  # back up (on a new port): only the missing chunks are asked for
        again = document(index([clips / "street.mp4"], {**library_env, "MARLIN_BASE_URL": revived.base_url}))
        assert again["marlin_calls"] == again["chunks_captioned"] == 4 - answered


def test_a_server_answering_500_fails_the_chunks_with_the_status_and_the_rest_goes_on(clips, library_env, simulator):
    simulator.state.fault = "error500"
    result = index([clips], library_env)
    assert result.exit_code == 3, result.stdout + result.stderr  # nothing could be captioned: the server's doing
    report = document(result)
    assert report["videos_failed"] == 2 and report["chunks_failed"] == 5
    assert {f["code"] for v in report["videos"] for f in v["failures"]} == {"server_error"}


def test_a_server_answering_an_html_page_stops_the_run_at_once_pointing_at_the_url(clips, library_env, simulator):
    simulator.state.fault = "garbage"  # a web server, not an API: every request would meet the same page
    result = index([clips], library_env, "--concurrency", "1")
    assert result.exit_code == 3
    error = document(result)["error"]
    assert error["code"] == "server_bad_response" and "/v1" in error["hint"]
    assert simulator.state.received == 1


def _namespaces_work() -> bool:
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _cli_with_read_only(folder, args: list[str], env: dict[str, str]):
    """The CLI with ``folder`` mounted read-only: a user and mount namespace of its own, so it
    holds even for root (to whom permission bits mean nothing) and needs no privileges."""
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    return subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(folder), sys.executable, "-m",
                           "marlin_agent", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env, "MARLIN_API_KEY": "", "MARLIN_MODEL": "", "MARLIN_MEDIA": ""})


@pytest.mark.skipif(not _namespaces_work(), reason="no user namespaces here to mount a folder read-only")
def test_a_read_only_index_can_be_read_and_refuses_writes_with_a_clear_error(clips, library_env, simulator):
    from pathlib import Path

    assert index([clips / "field.mp4"], library_env).exit_code == 0
    db = Path(library_env["MARLIN_HOME"]) / "index"

    asked = _cli_with_read_only(db, ["ask", "when does the red circle appear", "--in", str(clips / "field.mp4"),
                                     "--json", "--no-transcribe"], library_env)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert json.loads(asked.stdout)["found"] is True
    searched = _cli_with_read_only(db, ["search", "red circle", "--json"], library_env)
    assert searched.returncode == 0 and json.loads(searched.stdout)["results"], searched.stderr

    simulator.state.reset()
    simulator.state.received = 0
    more = _cli_with_read_only(db, ["index", str(clips / "street.mp4"), "--json", "--no-transcribe"], library_env)
    error = json.loads(more.stdout)["error"]
    assert more.returncode == 2 and error["code"] == "db_read_only" and "--db" in error["hint"]
    assert simulator.state.received == 0  # refused before any footage was sent
    inside = _cli_with_read_only(db, ["index", str(clips / "field.mp4"), "--db", str(db / "new"), "--json"],
                                 library_env)
    assert inside.returncode == 2 and json.loads(inside.stdout)["error"]["code"] == "db_read_only"
    assert "Traceback" not in more.stderr + inside.stderr


def test_many_short_videos_keep_every_request_slot_busy(tmp_path, library_env, simulator):
    from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video

    folder = tmp_path / "short"
    folder.mkdir()
    for n, (colour, shape) in enumerate([(c, s) for c in ("red", "blue", "yellow", "white") for s in ("circle", "square")]):
        make_video(folder / f"clip{n}.mp4", FootageSpec(duration=2.0, width=96, height=64, fps=4, events=[
            SyntheticEvent(colour=colour, shape=shape, start=0.25, end=1.75)]))
    simulator.state.latency = 1.5
    report = document(index([folder], library_env, "--concurrency", "8"))
    assert report["videos_new"] == 8
    assert simulator.state.peak_in_flight >= 6  # one chunk each: only requests across videos overlap


def test_a_renamed_copy_is_listed_under_the_name_the_user_gave(clips, library_env, tmp_path):
    assert index([clips / "field.mp4"], library_env).exit_code == 0
    renamed = tmp_path / "elsewhere" / "final-cut.mp4"
    renamed.parent.mkdir()
    shutil.copy(clips / "field.mp4", renamed)
    (video,) = document(index([renamed], library_env))["videos"]
    assert video["status"] == "unchanged" and video["title"] == "final-cut" and video["path"] == str(renamed)
    hits = document(invoke(["search", "red circle", "--json"], library_env))["results"]
    assert {hit["video"]["title"] for hit in hits} == {"final-cut"}


def test_the_run_says_how_many_videos_it_is_still_looking_at_before_any_total_is_known(clips, library_env):
    import asyncio

    from marlin_agent.config import load_settings
    from marlin_agent.indexing.run import index_inputs

    events = []
    settings = load_settings({"library.transcribe": False}, env=library_env)
    asyncio.run(index_inputs([str(clips)], settings, on_progress=events.append))
    first = events[0]
    assert (first.video, first.looking, first.overall_total) == ("", 2, 0)
    assert events[-1].looking == 0 and events[-1].overall_done == events[-1].overall_total == 5
    assert all(e.looking >= later.looking for e, later in zip(events, events[1:], strict=False))


def test_library_commands_show_no_model_loading_bars_and_help_shows_flags_as_flags(clips, library_env):
    assert index([clips / "field.mp4"], library_env).exit_code == 0
    searched = invoke(["search", "red circle", "--json"], library_env)
    assert searched.exit_code == 0 and "Loading weights" not in searched.stderr
    for command in (["index"], ["ask"], ["engine", "start"], []):
        shown = invoke([*command, "--help"], library_env).stdout
        assert "<bool>" not in shown and "--help" in shown
    assert "<float>" in invoke(["index", "--help"], library_env).stdout  # options that take values keep their type


def test_doctor_describes_the_index_once_and_plainly(clips, library_env):
    from pathlib import Path

    (Path(library_env["MARLIN_HOME"]) / "index").mkdir(parents=True)
    empty = {c["name"]: c for c in document(invoke(["doctor", "--json", "--no-start"], library_env))["checks"]}
    assert empty["index"]["detail"].startswith("0 videos (0 chunks) at ")
    assert index([clips], library_env).exit_code == 0
    full = {c["name"]: c for c in document(invoke(["doctor", "--json", "--no-start"], library_env))["checks"]}
    assert re.fullmatch(r"2 videos \(5 chunks; \d+ events, 5 scenes\) at .*", full["index"]["detail"])


def test_ask_that_must_index_says_it_is_waiting_for_the_other_process(clips, library_env, held_lock):
    import logging

    class ReleaseOnceWaiting(logging.Handler):  # the other process finishes once this one says it waits
        def emit(self, record):
            if "waiting for another process" in record.getMessage():
                held_lock.close()

    watcher = ReleaseOnceWaiting()
    logging.getLogger("marlin_agent.indexing.write_lock").addHandler(watcher)
    try:
        asked = invoke(["ask", "when does the red circle appear", "--in", str(clips / "field.mp4"), "--json",
                        "--no-transcribe"], library_env)
    finally:
        logging.getLogger("marlin_agent.indexing.write_lock").removeHandler(watcher)
    assert asked.exit_code == 0, asked.stdout + asked.stderr
    assert "waiting for another process indexing into" in " ".join(asked.stderr.split())
    assert document(asked)["found"] is True


def test_a_human_mode_hint_keeps_the_extra_in_square_brackets(library_env):
    result = _cli_without("lancedb", ["search", "a red circle"], library_env)
    assert result.returncode == 2
    assert "pip install 'marlin-agent[library]'" in " ".join(result.stderr.split())  # not eaten as markup
