"""A watch left running while what it delivers to goes away: `python -m evals.soak [--minutes 30]`.

`marlin-agent watch` follows a camera folder into which a clip lands every ``--every`` seconds, every other one
showing the event asked about. Alerts go to a webhook receiver and an MQTT broker (Debian's mosquitto), each
taken down for ``--outage`` minutes in the middle of the run, and the watch is killed with SIGKILL twice (once
while the broker is down) and started again each time. When the clips stop, the watch is given time to
deliver what it still holds, then stopped, and the run is checked:

- every clip with the event has exactly one alert, and no clip without it has one;
- every alert reached the webhook and the MQTT subscriber at least once (duplicates are counted, not failed:
  delivery is at least once);
- ``alerts.jsonl`` holds each alert once and, for each target, a final "delivered" line.

Results go to ``evals/results/soak.json``. It takes as long as ``--minutes`` says, plus the drain.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video
from evals.synthetic.live import Mosquitto, WebhookReceiver, free_port
from evals.synthetic.offline_models import minilm_dir, nli_dir
from evals.synthetic.simulator import MarlinSimulator
from evals.synthetic.watch_cli import FAST_WATCH_CONFIG, WatchProcess

QUESTION = "when does the red circle appear"
# Deliveries retried at least once a minute: a receiver back after five minutes gets its alerts soon after.
SOAK_CONFIG = FAST_WATCH_CONFIG + "retry_max_seconds = 60.0\n"


def _clips(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "event": make_video(folder / "event.mp4", FootageSpec(duration=12, width=160, height=120, fps=4, events=[
            SyntheticEvent(colour="red", shape="circle", start=3, end=8)])),
        "quiet": make_video(folder / "quiet.mp4", FootageSpec(duration=12, width=160, height=120, fps=4, events=[
            SyntheticEvent(colour="blue", shape="square", start=3, end=8)])),
    }


class Soak:
    """The run's moving parts and what happened, with the minute each thing happened at."""

    def __init__(self, work: Path, minutes: float, every: float, outage: float) -> None:
        self.work, self.minutes, self.every, self.outage = work, minutes, every, outage
        self.camera = work / "camera"
        self.camera.mkdir(parents=True)
        self.clips = _clips(work / "clips")
        self.hook_port, self.started = free_port(), time.monotonic()
        self.log: list[str] = []
        self.dropped: list[str] = []  # clip names, in order
        self.hook_bodies: list[dict] = []
        self.mqtt_messages: list[dict] = []
        self.unexpected_exits = 0

    def minute(self) -> float:
        return (time.monotonic() - self.started) / 60

    def note(self, text: str) -> None:
        self.log.append(f"{self.minute():6.2f} min: {text}")
        print(self.log[-1], flush=True)

    def drop_clip(self) -> None:
        kind = "event" if len(self.dropped) % 2 == 0 else "quiet"
        name = f"{len(self.dropped):03d}-{kind}.mp4"
        partial = self.camera / f".{name}.part"  # hidden while copied, as sync clients do
        shutil.copy(self.clips[kind], partial)
        partial.rename(self.camera / name)
        self.dropped.append(name)


def _schedule(minutes: float, outage: float) -> list[tuple[float, str]]:
    """(minute, what) for the run: two outages in the middle, two kills (the second while the broker is down)."""
    hook_down, broker_down = 0.3 * minutes, 0.55 * minutes
    return sorted([(0.25 * minutes, "kill"), (hook_down, "hook down"), (hook_down + outage, "hook up"),
                   (broker_down, "broker down"), (broker_down + outage / 2, "kill"),
                   (broker_down + outage, "broker up")])


def run(minutes: float, every: float, outage: float, drain: float, work: Path) -> dict:
    soak = Soak(work, minutes, every, outage)
    home = work / "home"
    home.mkdir()
    (home / "config.toml").write_text(SOAK_CONFIG)
    with MarlinSimulator() as simulator:
        env = {"MARLIN_HOME": str(home), "MARLIN_BASE_URL": simulator.base_url,
               "MARLIN_EMBED_MODEL": str(minilm_dir()), "MARLIN_VERIFY_MODEL": str(nli_dir(work / "models")),
               "MARLIN_PLANNER": "pipeline"}
        broker = Mosquitto(work).__enter__()
        hook = WebhookReceiver(port=soak.hook_port).__enter__()
        args = [str(soak.camera), "--ask", QUESTION, "--no-transcribe", "--notify", hook.url,
                "--notify", f"mqtt://127.0.0.1:{broker.port}/soak/alerts"]
        watch = WatchProcess(args, env)
        watch.started()
        runs = [watch]
        soak.note("watch started")
        plan = _schedule(minutes, outage)
        next_clip = 0.0
        try:
            while soak.minute() < minutes:
                if watch.process.poll() is not None:  # never expected: counted, and the watch started again
                    soak.note(f"watch exited on its own ({watch.process.returncode}): {watch.lines[-3:]}")
                    soak.unexpected_exits += 1
                    watch = WatchProcess(args, env)
                    runs.append(watch)
                if soak.minute() * 60 >= next_clip:
                    soak.drop_clip()
                    next_clip += every
                while plan and soak.minute() >= plan[0][0]:
                    _, what = plan.pop(0)
                    if what == "kill":
                        watch.process.kill()
                        watch.process.wait(30)
                        soak.note(f"watch killed (SIGKILL) after {len(soak.dropped)} clips")
                        watch = WatchProcess(args, env)
                        runs.append(watch)
                        soak.note("watch started again")
                    elif what == "hook down":
                        soak.hook_bodies += hook.bodies
                        hook.__exit__()
                        soak.note("webhook receiver down")
                    elif what == "hook up":
                        hook = WebhookReceiver(port=soak.hook_port).__enter__()
                        soak.note("webhook receiver back")
                    elif what == "broker down":
                        soak.mqtt_messages += [payload for _, payload, _, _ in broker.messages]
                        broker.__exit__()
                        soak.note("MQTT broker down")
                    elif what == "broker up":
                        broker = Mosquitto(work, port=broker.port).__enter__()
                        soak.note("MQTT broker back")
                time.sleep(0.5)
            soak.note(f"clips stop ({len(soak.dropped)} dropped); draining for up to {drain:g} min")
            deadline = time.monotonic() + drain * 60
            while time.monotonic() < deadline and not (
                    _judged_all(home, soak) and _report(soak, home, runs, hook, broker)["passed"]):
                time.sleep(2)
            time.sleep(3)  # room for a late duplicate
            code = watch.stop()
            soak.note(f"watch stopped (exit {code})")
        finally:
            soak.hook_bodies += hook.bodies
            soak.mqtt_messages += [payload for _, payload, _, _ in broker.messages]
            hook.__exit__()
            broker.__exit__()
        return _report(soak, home, runs)


def _alert_lines(home: Path) -> list[dict]:
    logged = list((home / "watch").glob("*/alerts.jsonl"))
    return [json.loads(line) for path in logged for line in path.read_text().splitlines() if line.strip()]


def _alerted(home: Path) -> set[str]:
    return {line["id"] for line in _alert_lines(home) if line.get("type") == "alert"}


def _judged_all(home: Path, soak: Soak) -> bool:
    from marlin_agent.config import load_settings
    from marlin_agent.library.access import open_library
    from marlin_agent.watch.state import watch_status

    try:
        [status] = watch_status(open_library(load_settings(env={"MARLIN_HOME": str(home),
                                                                "MARLIN_EMBED_MODEL": str(minilm_dir())})))
    except Exception:  # noqa: BLE001 - the store mid-write, say: asked again on the next pass
        return False
    return status.footage.judged + status.footage.failed >= len(soak.dropped) and not status.footage.pending


def _report(soak: Soak, home: Path, runs: list[WatchProcess], hook: WebhookReceiver | None = None,
            broker: Mosquitto | None = None) -> dict:
    """What the run delivered and the checks on it; ``hook`` and ``broker``: receivers still up, whose messages
    are counted too."""
    lines = _alert_lines(home)
    alerts = [line for line in lines if line.get("type") == "alert"]
    deliveries = [line for line in lines if line.get("type") == "delivery"]
    alert_ids = Counter(a["id"] for a in alerts)
    by_clip = Counter(Path(a["video"]["path"]).name for a in alerts)
    event_clips = [n for n in soak.dropped if "-event" in n]
    quiet_clips = [n for n in soak.dropped if "-quiet" in n]
    bodies = soak.hook_bodies + (hook.bodies if hook else [])
    messages = soak.mqtt_messages + ([payload for _, payload, _, _ in broker.messages] if broker else [])
    hook_ids, mqtt_ids = Counter(b["id"] for b in bodies), Counter(m["id"] for m in messages)
    final = {(d["alert"], d["target"]): d["status"] for d in deliveries}
    targets = {d["target"] for d in deliveries}
    checks = {
        "every event clip alerted once": all(by_clip[n] == 1 for n in event_clips),
        "no quiet clip alerted": not any(by_clip[n] for n in quiet_clips),
        "alerts.jsonl holds each alert once": all(count == 1 for count in alert_ids.values()),
        "the watch never exited on its own": soak.unexpected_exits == 0,
        "every alert reached the webhook": set(alert_ids) <= set(hook_ids),
        "every alert reached the MQTT subscriber": set(alert_ids) <= set(mqtt_ids),
        "alerts.jsonl says delivered for every alert and target": len(targets) == 2 and all(
            final.get((alert, target)) == "delivered" for alert in alert_ids for target in targets),
    }
    return {
        "minutes": soak.minutes, "clip_every_seconds": soak.every, "outage_minutes": soak.outage,
        "clips": len(soak.dropped), "event_clips": len(event_clips), "alerts": len(alert_ids),
        "watch_runs": len(runs), "webhook_received": sum(hook_ids.values()),
        "webhook_duplicates": sum(c - 1 for c in hook_ids.values()), "mqtt_received": sum(mqtt_ids.values()),
        "mqtt_duplicates": sum(c - 1 for c in mqtt_ids.values()),
        "missing_alerts": sorted(n for n in event_clips if by_clip[n] != 1),
        "checks": checks, "passed": all(checks.values()), "timeline": soak.log,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=20.0, help="seconds between two clips")
    parser.add_argument("--outage", type=float, default=5.0, help="minutes each receiver is down")
    parser.add_argument("--drain", type=float, default=8.0, help="minutes allowed for deliveries after the clips")
    parser.add_argument("--results", type=Path, default=Path("evals/results"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        report = run(args.minutes, args.every, args.outage, args.drain, Path(work))
    report["date"] = time.strftime("%Y-%m-%d")
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "soak.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "timeline"}, indent=1))
    raise SystemExit(0 if report["passed"] else 1)


if __name__ == "__main__":
    main()
