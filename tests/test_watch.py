"""`watch` over folders: new files judged once they settle, alerts delivered once (webhook, MQTT, a command)
across kills, the Python API's generator and the MCP server's view; streams are in test_watch_streams."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals.synthetic.footage import as_transport_stream
from evals.synthetic.live import mosquitto_binary
from evals.synthetic.watch_cli import WatchProcess
from marlin_agent.verification.spans import iou
from tests.machine import needs
from tests.plugins import installed_plugin, with_plugin

QUESTION = "when does the red circle appear"

@pytest.fixture(scope="module")
def clips(make_footage) -> dict[str, Path]:
    return {
        "event": make_footage("watch_event", duration=20, backdrop="street",
                              events=[{"colour": "red", "shape": "circle", "start": 6, "end": 12}]),
        "quiet": make_footage("watch_quiet", duration=20, backdrop="street",
                              events=[{"colour": "blue", "shape": "square", "start": 5, "end": 11}]),
    }


def test_a_growing_folder_gets_one_alert_at_the_true_span_and_none_for_footage_without_the_event(
        tmp_path, watch_env, clips):
    camera = tmp_path / "camera"
    camera.mkdir()
    shutil.copy(clips["event"], camera / "before.mp4")  # already there: not new footage
    watch = WatchProcess([str(camera), "--ask", QUESTION, "--no-transcribe"], watch_env)
    try:
        watch.started()
        shutil.copy(clips["event"], camera / "copied.mp4")
        (camera / "broken.mp4").write_bytes(b"\0not a video" * 500)  # a corrupt file: reported, not fatal
        with open(camera / "slow.mp4", "wb") as slow:  # a file written over a few seconds
            data = clips["quiet"].read_bytes()
            for n in range(0, len(data), len(data) // 6 + 1):
                slow.write(data[n:n + len(data) // 6 + 1])
                slow.flush()
                time.sleep(0.5)
        watch.wait_for(lambda: watch.judged("copied.mp4") and watch.judged("slow.mp4"), what="both files judged")
        watch.wait_for(lambda: any("could not judge" in line and "broken.mp4" in line for line in watch.lines),
                       what="the corrupt file reported")
    finally:
        code = watch.stop()
    assert code == 0, watch.lines[-10:]
    from marlin_agent.config import load_settings
    from marlin_agent.library.access import open_library
    from marlin_agent.watch.state import watch_status

    [status] = watch_status(open_library(load_settings(env=watch_env)))
    assert (status.footage.judged, status.footage.failed, status.footage.pending) == (2, 1, 0)
    assert Path(status.failed[0].path).name == "broken.mp4" and status.failed[0].error
    assert len(watch.alerts) == 1, watch.alerts
    alert = watch.alerts[0]
    assert alert["type"] == "alert" and alert["question"] == QUESTION
    assert Path(alert["video"]["path"]).name == "copied.mp4"
    assert iou((alert["start"], alert["end"]), (6, 12)) >= 0.5, alert
    assert Path(alert["clip"]).is_file() and Path(alert["thumbnail"]).is_file()
    assert {e["kind"] for e in alert["evidence"]} >= {"grounding"}
    logged = list(Path(watch_env["MARLIN_HOME"], "watch").glob("*/alerts.jsonl"))
    assert len(logged) == 1 and [json.loads(x)["id"] for x in logged[0].read_text().splitlines()] == [alert["id"]]


def test_a_recording_that_pauses_and_goes_on_is_judged_whole_and_alerted_once(tmp_path, watch_env, clips):
    """A camera writing a transport stream stops for longer than a file takes to settle, then goes on: its
    first part (with the start of the red circle, 6-12 s) is judged and alerted; the whole file, judged once it
    settles again, is the same recording, and the circle already alerted is not alerted twice."""
    whole = as_transport_stream(clips["event"], tmp_path / "whole.ts")
    data = whole.read_bytes()
    cut = (len(data) * 45 // 100) // 188 * 188  # about 9 s in, on a transport packet's edge
    camera = tmp_path / "camera"
    camera.mkdir()
    watch = WatchProcess([str(camera), "--ask", QUESTION, "--no-transcribe"], watch_env)
    try:
        watch.started()
        (camera / "cam.ts").write_bytes(data[:cut])
        # The alert comes on stdout and "judged" on stderr, two pipes read apart: wait for both.
        watch.wait_for(lambda: watch.judged("cam.ts") and watch.alerts, what="the first part judged and alerted")
        assert len(watch.alerts) == 1, watch.lines[-10:]
        with open(camera / "cam.ts", "ab") as going_on:
            going_on.write(data[cut:])
        watch.wait_for(lambda: watch.judged_count == 2, what="the whole recording judged")
    finally:
        code = watch.stop()
    assert code == 0, watch.lines[-10:]
    assert not any("could not judge" in line for line in watch.lines), watch.lines
    assert len(watch.alerts) == 1 and iou((watch.alerts[0]["start"], watch.alerts[0]["end"]), (6, 12)) > 0.3, (
        [(a["start"], a["end"], a["id"]) for a in watch.alerts], watch.lines[-12:])


def alerted(run: WatchProcess) -> set[str]:
    """The names of the files a watch process has printed alerts for."""
    return {Path(a["video"]["path"]).name for a in list(run.alerts)}


ON_ALERT = """import json, sys
alert = json.load(sys.stdin)
with open(sys.argv[1], "a") as out:
    out.write(alert["id"] + "\\n")
"""


@needs(mosquitto_binary() is not None, "mosquitto (an MQTT broker)", "apt-get install mosquitto")
def test_alerts_reach_a_webhook_an_mqtt_broker_and_a_command_once_even_across_a_kill_9(
        tmp_path, watch_env, clips, simulator):
    from evals.synthetic.live import Mosquitto, WebhookReceiver
    home = Path(watch_env["MARLIN_HOME"])
    (home / "credentials.toml").write_text('[watch.secrets]\nHOOK_TOKEN = "tok-5ecret"\n')
    script, received = tmp_path / "on_alert.py", tmp_path / "received.txt"
    script.write_text(ON_ALERT)
    camera = tmp_path / "camera"
    camera.mkdir()
    with WebhookReceiver(fail_first=1) as hook, Mosquitto(tmp_path, topic="home/marlin/#") as broker:
        args = [str(camera), "--ask", QUESTION, "--no-transcribe",
                "--notify", hook.url + "?token=${HOOK_TOKEN}",
                "--notify", f"mqtt://127.0.0.1:{broker.port}/home/marlin/alerts",
                "--notify", f"cmd:{sys.executable} {script} {received}"]
        first = WatchProcess(args, watch_env)
        first.started()
        shutil.copy(clips["event"], camera / "one.mp4")
        # Killed once the broker and the command have the alert and the webhook has refused it once
        # (503): its retry, a second later, has not happened yet.
        first.wait_for(lambda: broker.messages and received.exists() and hook.failures_left == 0,
                       what="the first deliveries")
        time.sleep(0.3)
        first.process.kill()
        first.process.wait(10)
        # While it is down: one file with the event, one without; and one more while it judges.
        simulator.state.latency = 0.3
        shutil.copy(clips["event"], camera / "two.mp4")
        shutil.copy(clips["quiet"], camera / "three.mp4")
        second = WatchProcess(args, watch_env)
        second.wait_for(lambda: any("judged" in line for line in second.lines), what="the first piece judged")
        calls = len(simulator.state.calls)
        shutil.copy(clips["event"], camera / "four.mp4")
        second.wait_for(lambda: len(simulator.state.calls) > calls + 1, what="four.mp4 being judged")
        second.process.kill()  # in the middle of judging four.mp4
        second.process.wait(10)
        third = WatchProcess(args, watch_env)
        # A piece's "judged" line comes before its alerts reach stdout: the last alert is waited for itself.
        third.wait_for(lambda: all(third.judged(n) or second.judged(n) for n in ("two.mp4", "three.mp4", "four.mp4"))
                       and third.judged("four.mp4") and "four.mp4" in alerted(third), what="everything judged")
        ids = {a["id"] for run in (first, second, third) for a in run.alerts}
        third.wait_for(lambda: len(hook.bodies) >= len(ids) and len(broker.messages) >= len(ids)
                       and received.exists() and len(received.read_text().split()) >= len(ids),
                       what="every alert delivered")
        time.sleep(1.5)  # room for a duplicate to show up, if one were coming
        assert third.stop() == 0
    names = sorted(Path(a["video"]["path"]).name for run in (first, second, third) for a in run.alerts)
    assert set(names) == {"one.mp4", "two.mp4", "four.mp4"}, names
    assert len(ids) == 3
    assert sorted(b["id"] for b in hook.bodies) == sorted(ids), "each alert reaches the webhook exactly once"
    assert all(path.endswith("?token=tok-5ecret") for path in hook.paths)
    assert sorted(m[1]["id"] for m in broker.messages) == sorted(ids)
    assert all(topic == "home/marlin/alerts" and qos == 1 and not retained
               for topic, _, qos, retained in broker.messages)
    assert sorted(received.read_text().split()) == sorted(ids)
    for run in (first, second, third):
        assert not any("tok-5ecret" in line for line in run.lines)
    state = next(home.glob("watch/*/alerts.jsonl")).read_text()
    assert "tok-5ecret" not in state and "${HOOK_TOKEN}" in state


def _mcp(env: dict[str, str], root: Path, work):
    """``work(client)`` against `marlin-agent mcp --root ROOT`, driven by the SDK's own client."""
    import asyncio

    from mcp import Client, StdioServerParameters

    async def run():
        params = StdioServerParameters(command=sys.executable, args=["-m", "marlin_agent", "mcp", "--root", str(root)],
                                       env={**os.environ, **env}, cwd=str(root))
        async with Client(params, read_timeout_seconds=120) as client:
            return await work(client)

    return asyncio.run(run())


def test_the_python_api_yields_alerts_and_the_mcp_server_reports_the_watch(tmp_path, watch_env, clips):
    from marlin_agent import VideoAgent

    camera = tmp_path / "camera"
    camera.mkdir()
    shutil.copy(clips["event"], camera / "waiting.mp4")
    shutil.copy(clips["quiet"], camera / "nothing.mp4")
    (camera / "linked.mp4").symlink_to(clips["event"])  # a file outside the MCP server's roots
    watching = VideoAgent(env=watch_env, transcribe=False).watch(camera, ask=QUESTION, backlog=True)
    alerts = [next(watching), next(watching)]
    watching.close()  # stops the watch cleanly
    [alert] = [a for a in alerts if Path(a.video.path).name == "waiting.mp4"]
    assert alert.type == "alert"
    # A camera stream's watch, with its address: not for a client whose roots do not hold its recordings.
    from marlin_agent.config import load_settings
    from marlin_agent.library.access import open_library
    from marlin_agent.watch.records import WatchSpec
    from marlin_agent.watch.state import WatchState

    stream = WatchSpec.of(["rtsp://admin:${CAM_PW}@192.168.1.20/stream1"])
    WatchState(open_library(load_settings(env=watch_env)), stream, tmp_path / "journal.jsonl").started([QUESTION])

    async def status(client):
        listed = (await client.call_tool("watch_status", {})).structured_content
        resource = await client.read_resource("marlin://watch/alerts")
        return listed, json.loads(resource.contents[0].text)

    listed, alerts = _mcp(watch_env, camera, status)  # the home, with the recordings, is outside
    [watch] = listed["watches"]
    assert watch["sources"] == [str(camera.resolve())] and watch["questions"] == [QUESTION]
    assert [a["id"] for a in watch["recent_alerts"]] == [alert.id]
    assert [a["id"] for a in alerts["alerts"]] == [alert.id]
    # A server whose roots do not hold the watched folder shows nothing of it.
    other = tmp_path / "elsewhere"
    other.mkdir()
    elsewhere = _mcp(watch_env, other, lambda client: client.call_tool("watch_status", {}))
    assert elsewhere.structured_content["watches"] == []


def test_a_failing_server_is_waited_out_and_the_footage_judged_once_it_answers(tmp_path, watch_env, clips, simulator):
    camera = tmp_path / "camera"
    camera.mkdir()
    watch = WatchProcess([str(camera), "--ask", QUESTION, "--no-transcribe"], watch_env)
    try:
        watch.started()
        simulator.state.fault = "error500"
        shutil.copy(clips["event"], camera / "during_outage.mp4")
        watch.wait_for(lambda: any("waits, tried again" in line for line in watch.lines), what="the piece to wait")
        assert not watch.alerts and not watch.judged("during_outage.mp4")
        simulator.state.fault = None
        watch.wait_for(lambda: watch.alerts, what="the alert once the server answers")
    finally:
        assert watch.stop() == 0
    assert len(watch.alerts) == 1 and Path(watch.alerts[0]["video"]["path"]).name == "during_outage.mp4"




# A kind of alert target another package adds: alerts carried to a loft (a folder), one file each.
PIGEON = '''import json
from pathlib import Path


class Pigeon:
    example = "pigeon:LOFT"

    def __init__(self, text, loft):
        self.text, self.loft = text, loft

    @classmethod
    def accepts(cls, text, settings):
        return text.startswith("pigeon:")

    @classmethod
    def parse(cls, text, settings):
        return cls(text, Path(text[len("pigeon:"):]))

    def send(self, document):
        (self.loft / (document["id"] + ".json")).write_text(json.dumps(document))
'''
def test_a_kind_of_alert_target_another_package_adds_is_listed_and_gets_the_alerts(tmp_path, watch_env, clips):
    site = installed_plugin(tmp_path, "marlin_pigeon", PIGEON, {"marlin_agent.alert_targets": {"pigeon": "marlin_pigeon:Pigeon"}})
    env = with_plugin(watch_env, site)
    unknown = subprocess.run([sys.executable, "-m", "marlin_agent", "watch", str(tmp_path), "--ask", QUESTION,
                              "--notify", "carrier://x", "--json"], env={**os.environ, **env}, capture_output=True,
                             text=True, timeout=120)
    assert unknown.returncode == 2 and "pigeon:LOFT" in json.loads(unknown.stdout)["error"]["hint"], unknown.stdout
    loft, camera = tmp_path / "loft", tmp_path / "camera"
    loft.mkdir()
    camera.mkdir()
    run = WatchProcess([str(camera), "--ask", QUESTION, "--no-transcribe", "--notify", f"pigeon:{loft}"], env)
    run.started()
    shutil.copy(clips["event"], camera / "one.mp4")
    run.wait_for(lambda: list(loft.glob("*.json")), what="the alert carried to the loft")
    assert run.stop() == 0
    [carried] = loft.glob("*.json")
    assert json.loads(carried.read_text())["id"] in {alert["id"] for alert in run.alerts}
