"""Indexing footage into the library and searching it: the library acceptance."""

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from marlin_agent.app.search import search_footage
from marlin_agent.config import load_settings
from marlin_agent.errors import IndexMismatch, NoVideosFound
from marlin_agent.indexing.run import index_inputs
from marlin_agent.library.access import open_library


def overlaps(hit, start, end):
    return hit.start < end and start < hit.end


def index(inputs, env, **flags):
    settings = load_settings(flags, env=env)
    return asyncio.run(index_inputs([str(i) for i in inputs], settings))


def search(query, env, within=None, k=5):
    settings = load_settings(env=env)
    return asyncio.run(search_footage(query, settings, [str(w) for w in within] if within else None, k)).results


@pytest.fixture
def folder(tmp_path, footage, speech_video):
    """Several videos: one over three minutes, one without audio, one with speech, one corrupt."""
    root = tmp_path / "footage"
    (root / "nested").mkdir(parents=True)
    shutil.copy(footage["long_street"], root / "long_street.mp4")  # 200 s, no audio
    shutil.copy(footage["short_field"], root / "nested" / "short_field.mp4")
    shutil.copy(speech_video, root / "speech.mp4")
    (root / "corrupt.mp4").write_bytes(footage["short_field"].read_bytes()[:30_000])
    (root / "notes.txt").write_text("not footage")
    return root


def test_a_folder_is_indexed_and_the_corrupt_video_is_reported(folder, library_env, simulator):
    report = index([folder], library_env)
    assert report.videos_new == 3 and report.videos_failed == 1
    (skipped,) = report.failed
    assert skipped.source.endswith("corrupt.mp4") and skipped.code == "video_truncated"
    assert report.chunks_captioned == 4 + 1 + 1 and report.chunks_failed == 0
    assert report.marlin_calls == len(simulator.state.calls) == 6
    assert report.minutes_of_footage == pytest.approx((200 + 24 + 30) / 60, abs=0.01)
    by_name = {v.path.rsplit("/", 1)[-1]: v for v in report.videos}
    assert by_name["long_street.mp4"].transcript == "none"  # no audio stream: empty, not an error


def test_searching_for_an_event_finds_its_video_and_moment_first(folder, library_env):
    index([folder], library_env, **{"library.transcribe": False})
    for query, video, start, end in [
        ("white circle", "long_street", 131, 140),
        ("a blue square moving left to right", "short_field", 12.5, 20),
        ("red square", "long_street", 70, 78),
    ]:
        top = search(query, library_env)[0]
        assert top.video.title == video and overlaps(top, start, end), (query, top)
        assert top.source == "event"


def test_speech_is_transcribed_and_found_at_the_right_time(folder, library_env):
    index([folder], library_env)
    top = search("the referee blows the whistle", library_env)[0]
    assert top.source == "transcript" and top.video.title == "speech"
    assert "referee" in top.text.lower() and overlaps(top, 18.0, 20.6)


def test_indexing_again_makes_no_marlin_calls(folder, library_env, simulator):
    index([folder], library_env)
    simulator.state.reset()
    again = index([folder], library_env)
    assert again.videos_unchanged == 3 and again.marlin_calls == 0 and simulator.state.records == []


def test_a_moved_file_is_recognised_by_its_content(folder, library_env, simulator, tmp_path):
    index([folder / "long_street.mp4"], library_env, **{"library.transcribe": False})
    moved = tmp_path / "elsewhere" / "renamed.mp4"
    moved.parent.mkdir()
    shutil.move(folder / "long_street.mp4", moved)
    simulator.state.reset()
    report = index([moved], library_env, **{"library.transcribe": False})
    assert report.videos_unchanged == 1 and simulator.state.records == []
    assert search("white circle", library_env)[0].video.path == str(moved)


def test_a_failed_chunk_is_recorded_and_retried_on_the_next_run(folder, library_env, simulator):
    simulator.state.fail_next = 1
    first = index([folder / "long_street.mp4"], library_env, **{"server.max_retries": 0, "server.concurrency": 1,
                                                                "library.transcribe": False})
    assert first.chunks_failed == 1 and first.videos_partial == 1
    library = open_library(load_settings(env=library_env))
    (failure,) = library.failures()
    assert failure.code == "server_error" and failure.attempts == 1
    simulator.state.reset()
    second = index([folder / "long_street.mp4"], library_env, **{"library.transcribe": False})
    assert second.marlin_calls == 1 and second.chunks_captioned == 1 and second.chunks_failed == 0
    assert library.failures() == [] and library.counts()["chunks"] == 4


def test_search_in_limits_results_to_those_sources(folder, library_env):
    index([folder], library_env, **{"library.transcribe": False})
    hits = search("circle", library_env, within=[folder / "nested"], k=10)
    assert hits and {h.video.title for h in hits} == {"short_field"}


def test_search_in_indexes_what_is_not_indexed_yet(folder, library_env, simulator):
    hits = search("white circle", library_env, within=[folder / "long_street.mp4"])
    assert overlaps(hits[0], 131, 140)
    assert len(simulator.state.calls) == 4


def test_an_empty_folder_is_a_clear_error(tmp_path, library_env):
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoVideosFound):
        index([tmp_path / "empty"], library_env)


def test_a_different_embedding_model_is_refused_with_the_fix(folder, library_env):
    index([folder / "nested"], library_env, **{"library.transcribe": False})
    with pytest.raises(IndexMismatch) as caught:
        index([folder / "nested"], {**library_env, "MARLIN_EMBED_MODEL": "some/other-model"})
    assert "MARLIN_EMBED_MODEL=" in caught.value.hint and "--db" in caught.value.hint


def test_killing_an_index_run_midway_and_rerunning_completes_it_without_duplicates(folder, library_env, simulator):
    simulator.state.latency = 0.6
    env = {**os.environ, **library_env}
    command = [sys.executable, "-m", "marlin_agent", "index", str(folder), "--no-transcribe", "--concurrency", "1", "--json"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(simulator.state.calls) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert 3 <= len(simulator.state.calls) < 6, "the run should have been killed midway"

    library = open_library(load_settings(env=library_env))
    stored_before = library.counts().get("chunks", 0)
    simulator.state.latency = 0.0
    simulator.state.reset()
    report = index([folder], library_env, **{"library.transcribe": False})
    assert report.marlin_calls == 6 - stored_before
    counts = library.counts()
    assert counts["chunks"] == 6 and counts["videos"] == 3
    ids = [row["id"] for row in library.store.rows("segments")]
    assert len(ids) == len(set(ids))
    assert counts["event"] == 4 + 2 + 1 and counts["scene"] == 6


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def web(tmp_path, speech_video):
    """A loopback web server with a page that embeds a video and its English subtitles."""
    root = tmp_path / "web"
    root.mkdir()
    shutil.copy(speech_video, root / "clip.mp4")
    (root / "clip.vtt").write_text("WEBVTT\n\n00:00:04.500 --> 00:00:07.600\nThe goalkeeper saves the penalty kick.\n\n"
                                   "00:00:17.500 --> 00:00:20.600\nNow the referee blows the final whistle.\n")
    (root / "match.html").write_text(
        "<html><head><title>Cup final highlights</title></head><body><video controls>"
        '<source src="clip.mp4" type="video/mp4"><track kind="subtitles" src="clip.vtt" srclang="en" label="English">'
        "</video></body></html>")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_url_is_downloaded_with_its_title_and_subtitles_and_searchable(web, library_env, simulator):
    report = index([f"{web}/match.html"], library_env)
    (video,) = report.videos
    assert video.title.startswith("Cup final highlights") and video.transcript == "subtitles"
    top = search("referee whistle", library_env)[0]
    assert top.source == "transcript" and top.start == pytest.approx(17.5)
    simulator.state.reset()
    again = index([f"{web}/match.html"], library_env)
    assert again.videos_unchanged == 1 and simulator.state.records == []


def test_a_dead_url_is_reported_and_the_rest_is_indexed(web, library_env, footage):
    report = index([f"{web}/gone.mp4", footage["short_field"]], library_env, **{"library.transcribe": False})
    assert report.videos_new == 1
    (dead,) = report.failed
    assert dead.code == "source_unavailable" and "404" in dead.reason
