"""`watch` when things go wrong around it: receivers that are down for a while, a watch killed before its
log was written, and failure paths that would quote a secret. Nothing is lost, nothing leaks, and what the
watch keeps is readable by its user only."""

from __future__ import annotations

import json
import shutil
import signal
import stat
import sys
from pathlib import Path

import pytest

from evals.synthetic.watch_cli import FAST_WATCH_CONFIG, WatchProcess

QUESTION = "when does the red circle appear"
# Quick retries for a test: every try at most two seconds after the last.
RETRYING = FAST_WATCH_CONFIG + "notify_retries = 1\nretry_max_seconds = 2.0\n"


@pytest.fixture(scope="module")
def event_clip(make_footage) -> Path:
    return make_footage("failures_event", duration=14, backdrop="street",
                        events=[{"colour": "red", "shape": "circle", "start": 4, "end": 9}])


def _log(home: Path) -> list[dict]:
    """What alerts.jsonl holds so far (nothing before the first alert)."""
    return [json.loads(line) for log in home.glob("watch/*/alerts.jsonl") for line in log.read_text().splitlines()]


def test_an_alert_whose_receiver_is_down_is_delivered_when_it_comes_back_even_across_a_kill(
        tmp_path, watch_env, event_clip):
    from evals.synthetic.live import WebhookReceiver, free_port

    home = Path(watch_env["MARLIN_HOME"])
    (home / "config.toml").write_text(RETRYING)
    port = free_port()
    camera = tmp_path / "camera"
    camera.mkdir()
    args = [str(camera), "--ask", QUESTION, "--no-transcribe", "--notify", f"http://127.0.0.1:{port}/hook"]

    # The receiver is down when the alert is raised, and comes back while the watch runs.
    first = WatchProcess(args, watch_env)
    first.started()
    shutil.copy(event_clip, camera / "one.mp4")
    first.wait_for(lambda: any("has not reached" in line and "still trying" in line for line in first.lines),
                   what="the failing delivery said")
    with WebhookReceiver(port=port) as receiver:
        first.wait_for(lambda: receiver.bodies, what="the delivery once the receiver is back")
        one = receiver.bodies[0]["id"]
        first.wait_for(lambda: any(e.get("type") == "delivery" for e in _log(home)), what="the outcome logged")
    [landed] = [e for e in _log(home) if e["type"] == "delivery"]
    assert landed["alert"] == one and landed["status"] == "delivered" and landed["tries"] > 1
    # Down again: the next alert cannot land before the watch is killed.
    shutil.copy(event_clip, camera / "two.mp4")
    first.wait_for(lambda: len(first.alerts) == 2, what="the second alert")
    first.process.kill()
    first.process.wait(10)
    [log] = home.glob("watch/*/alerts.jsonl")
    log.write_text(log.read_text().splitlines(keepends=True)[0])  # the lines a kill -9 can cost

    with WebhookReceiver(port=port) as receiver:
        second = WatchProcess(args, watch_env)
        second.wait_for(lambda: receiver.bodies, what="the pending alert sent at the next start")
        second.wait_for(lambda: sum(e.get("type") == "delivery" for e in _log(home)) == 2, what="both outcomes")
        assert second.stop() == 0
    two = receiver.bodies[0]["id"]
    assert two != one and [b["id"] for b in receiver.bodies] == [two]
    logged = _log(home)
    assert sorted(e["id"] for e in logged if e["type"] == "alert") == sorted([one, two])
    outcomes = {e["alert"]: e for e in logged if e["type"] == "delivery"}
    assert {k: v["status"] for k, v in outcomes.items()} == {one: "delivered", two: "delivered"}


def test_a_receiver_that_never_comes_back_is_given_up_after_its_own_time_and_said(tmp_path, watch_env, event_clip):
    from evals.synthetic.live import free_port

    home = Path(watch_env["MARLIN_HOME"])
    dead = f"http://127.0.0.1:{free_port()}/hook"
    (home / "config.toml").write_text(RETRYING + f'[watch.give_up_hours_by_target]\n"{dead}" = 0.002\n')
    camera = tmp_path / "camera"
    camera.mkdir()
    watch = WatchProcess([str(camera), "--ask", QUESTION, "--no-transcribe", "--notify", dead], watch_env)
    try:
        watch.started()
        shutil.copy(event_clip, camera / "one.mp4")
        watch.wait_for(lambda: any(e.get("type") == "delivery" for e in _log(home)), what="the delivery given up")
    finally:
        assert watch.stop() == 0
    [outcome] = [e for e in _log(home) if e["type"] == "delivery"]
    assert outcome["status"] == "failed" and outcome["error"].startswith("given up after")
    assert any("did not reach" in line and "given up" in line for line in watch.lines)


def test_secrets_stay_out_of_every_text_a_failing_watch_writes_and_its_files_are_private(
        tmp_path, watch_env, event_clip):
    from evals.synthetic.live import free_port

    home = Path(watch_env["MARLIN_HOME"])
    (home / "config.toml").write_text(RETRYING + "give_up_hours = 0.002\n")
    (home / "credentials.toml").write_text('[watch.secrets]\nHOOK_TOKEN = "tok-9Secret"\n')
    home.chmod(0o755)
    before = set(home.rglob("*"))
    camera = tmp_path / "camera"
    camera.mkdir()
    stream = f"http://viewer:${{CAM_PW}}@127.0.0.1:{free_port()}/live.m3u8"  # nothing listens there
    args = [str(camera), stream, "--ask", QUESTION, "--no-transcribe",
            "--notify", f"http://127.0.0.1:{free_port()}/hook?token=${{HOOK_TOKEN}}",
            "--notify", "cmd:/no/such/folder/${HOOK_TOKEN}/on-alert"]
    watch = WatchProcess(args, {**watch_env, "CAM_PW": "pa55-w0rd"})
    try:
        watch.started()
        shutil.copy(event_clip, camera / "one.mp4")
        watch.wait_for(lambda: sum(e.get("type") == "delivery" for e in _log(home)) == 2, what="both given up")
        watch.wait_for(lambda: any("could not open" in line for line in watch.lines), what="the stream's failure")
    finally:
        assert watch.stop(signal.SIGTERM) == 0
    said = "\n".join(watch.lines) + json.dumps(watch.alerts)
    assert "${CAM_PW}" in said and "${HOOK_TOKEN}" in said  # the failures are told, by the secrets' names
    written = [p for p in home.rglob("*") if p not in before]
    for text in [said] + [p.read_bytes().decode("utf-8", "replace") for p in written if p.is_file()]:
        assert "pa55-w0rd" not in text and "tok-9Secret" not in text
        assert "pa55%2Dw0rd" not in text
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    loose = [str(p) for p in written if not p.is_symlink() and p.stat().st_mode & 0o077]
    assert not loose, loose


def test_files_the_user_asks_for_keep_the_users_own_permissions(tmp_path, library_env, event_clip):
    import os
    import subprocess

    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "marlin_agent", "ask", QUESTION, "--in", str(event_clip),
                           "--clips", str(out / "clips"), "--sheet", str(out / "sheet.png"), "--json"],
                          env={**os.environ, **library_env}, capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: os.umask(0o022))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE((out / "sheet.png").stat().st_mode) == 0o644
    assert stat.S_IMODE((out / "clips").stat().st_mode) == 0o755
    assert all(stat.S_IMODE(clip.stat().st_mode) == 0o644 for clip in (out / "clips").iterdir())
    index = Path(library_env["MARLIN_HOME"]) / "index"
    assert all(not p.stat().st_mode & 0o077 for p in index.rglob("*") if not p.is_symlink())
