"""`describe`: plain prose within a budget, for hosts like OpenClaw's video hook."""

import re

from tests.cli_runner import invoke


def _event_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"\d+:\d\d\.\d-\d+:\d\d\.\d ", line)]


def test_describe_prints_the_scene_and_timed_events_as_plain_text(footage, env):
    result = invoke(["describe", str(footage["short_field"])], env)
    assert result.exit_code == 0, result.stderr
    text = result.stdout.strip()
    assert text.startswith("Video: short_field.mp4, 0:24.0, ")
    assert "Scene: " in text
    assert "0:04.0-0:09.0 a red circle appears" in text
    assert "{" not in text and "[" not in text  # prose, not JSON or markup


def test_describe_keeps_within_the_character_budget_and_says_what_it_left_out(footage, env):
    full = invoke(["describe", str(footage["long_street"]), "--max-chars", "4000"], env).stdout.strip()
    assert full.count("Scene 0:") + full.count("Scene 1:") + full.count("Scene 2:") + full.count("Scene 3:") >= 3
    for budget in (400, 200, 120, 60):
        text = invoke(["describe", str(footage["long_street"]), "--max-chars", str(budget)], env).stdout.rstrip("\n")
        assert len(text) <= budget, (budget, text)
        assert text.startswith("Video: long_street.mp4")
    short = invoke(["describe", str(footage["long_street"]), "--max-chars", "300"], env).stdout
    shown, left_out = _event_lines(short), re.search(r"… \((\d+) more\)", short)
    assert shown and left_out, short
    assert len(shown) + int(left_out.group(1)) == len(_event_lines(full))


def test_by_default_the_summary_fits_what_openclaw_keeps(footage, env):
    text = invoke(["describe", str(footage["long_street"])], env).stdout.rstrip("\n")
    assert len(text) <= 500 and text.startswith("Video: long_street.mp4") and "Events:" in text


def test_an_unindexed_video_is_described_as_far_as_the_time_limit_allows_and_says_so(footage, env, simulator):
    simulator.state.latency = 3.0  # four 50 s chunks, one at a time: 12 s for all of them
    result = invoke(["describe", str(footage["long_street"]), "--concurrency", "1", "--time-limit", "7"], env)
    assert result.exit_code == 0, result.stderr
    text = result.stdout.rstrip("\n")
    assert len(text) <= 500 and text.startswith("Video: long_street.mp4")
    described = re.search(r"\(Described (\d):(\d\d)\.\d of 3:20\.0 in the time allowed; `marlin-agent index` it",
                          text.splitlines()[-1])
    assert described and 0 < int(described.group(1)) * 60 + int(described.group(2)) < 200, text


def test_when_nothing_is_described_in_time_it_fails_and_says_to_index_first(footage, env, simulator):
    simulator.state.latency = 6.0
    result = invoke(["describe", str(footage["long_street"]), "--time-limit", "1"], env)
    assert result.exit_code == 3 and result.stdout == ""
    said = " ".join(result.stderr.split())
    assert "is not indexed, and no part of it was described within 1 s" in said and "Index it once" in said


def test_an_indexed_video_is_described_from_the_index_without_asking_marlin(footage, library_env, simulator):
    indexed = invoke(["index", str(footage["long_street"]), "--no-transcribe", "--json"], library_env)
    assert indexed.exit_code == 0, indexed.stdout + indexed.stderr
    simulator.state.reset()
    result = invoke(["describe", str(footage["long_street"]), "--max-chars", "4000"], library_env)
    assert result.exit_code == 0, result.stderr
    assert simulator.state.calls == []
    assert "2:11.0-2:20.0 a white circle appears" in result.stdout and "Scene 0:00.0-0:50.0" in result.stdout


def test_describe_adds_what_is_said_and_keeps_it_within_the_budget(speech_video, env, offline_models):
    env = {**env, **offline_models}
    text = invoke(["describe", str(speech_video)], env).stdout
    assert "Speech:\n" in text and "goalkeeper saves the penalty" in text.lower()
    assert "0:02.0-0:06.0 a red circle appears" in text
    short = invoke(["describe", str(speech_video), "--max-chars", "260"], env).stdout.rstrip("\n")
    assert len(short) <= 260 and "Events:" in short and "Speech:" in short
    quiet = invoke(["describe", str(speech_video), "--no-speech"], env).stdout
    assert "Speech:" not in quiet


def test_describe_fails_with_a_message_on_stderr_and_nothing_on_stdout(tmp_path, env):
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"not a video")
    result = invoke(["describe", str(bad)], env)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "error" in result.stderr


def test_the_python_api_describes_the_same_way(footage, env):
    from marlin_agent import VideoAgent

    text = VideoAgent(env=env).describe(footage["short_field"], max_chars=300, speech=False)
    assert text.startswith("Video: short_field.mp4") and len(text) <= 300
    assert text == invoke(["describe", str(footage["short_field"]), "--max-chars", "300", "--no-speech"],
                          env).stdout.rstrip("\n")
