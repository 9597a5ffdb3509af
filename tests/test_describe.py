"""`describe`: plain prose within a budget, for hosts like OpenClaw's video hook."""

import re

from tests.test_cli import invoke


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
    full = invoke(["describe", str(footage["long_street"])], env).stdout.strip()
    assert full.count("Scene 0:") + full.count("Scene 1:") + full.count("Scene 2:") + full.count("Scene 3:") >= 3
    for budget in (400, 200, 120, 60):
        text = invoke(["describe", str(footage["long_street"]), "--max-chars", str(budget)], env).stdout.rstrip("\n")
        assert len(text) <= budget, (budget, text)
        assert text.startswith("Video: long_street.mp4")
    short = invoke(["describe", str(footage["long_street"]), "--max-chars", "300"], env).stdout
    shown, left_out = _event_lines(short), re.search(r"… \((\d+) more\)", short)
    assert shown and left_out, short
    assert len(shown) + int(left_out.group(1)) == len(_event_lines(full))


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
