"""`watch`: how soon an alert follows the footage, and whether a day of segments stays within bounds.

- **latency**: a live HLS stream (loopback) recorded in 5 s segments, with the simulator answering
  at once; for the segment that holds the event, the time from its file closing (its mtime) to the
  webhook receiving the alert, beside the time the simulator spent answering that segment's requests.
  The target: alert latency <= Marlin's time + 2 s.
- **day**: 24 hours of 10-second segments (8,640) in simulated time, through the watch's own
  bookkeeping (noticing, state rows in the library, occurrences, alerts, retention deleting recordings
  and forgetting them from the index); Marlin, indexing and verification are left out (each segment
  is "judged" by a stand-in that finds the event in every 50th), so a day runs in minutes. The
  watch's resident memory is sampled as it goes; the recordings folder must end within retention.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
import time
from pathlib import Path

from evals.synthetic import simulator as sim_module
from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video
from evals.synthetic.live import LiveHls, WebhookReceiver, hls_segments, keyframed
from evals.synthetic.offline_models import minilm_dir, nli_dir, whisper_base_dir
from evals.synthetic.simulator import MarlinSimulator


def _rss_mb() -> float:
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS")) / 1024


def _env(scratch: Path, base_url: str) -> dict[str, str]:
    models = scratch / "models"
    return {"MARLIN_HOME": str(scratch / "home"), "MARLIN_BASE_URL": base_url, "MARLIN_EMBED_MODEL": str(minilm_dir()),
            "MARLIN_WHISPER_MODEL": str(whisper_base_dir(models)), "MARLIN_VERIFY_MODEL": str(nli_dir(models)),
            "MARLIN_GRAPH_CACHE": str(models / "graphs")}


class _Timed:
    """The simulator's answering time, summed: the Marlin side of the latency."""

    def __init__(self) -> None:
        self.seconds, self.calls, self._lock = 0.0, 0, threading.Lock()
        self._original = sim_module.complete

    def __enter__(self) -> _Timed:
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return self._original(*args, **kwargs)
            finally:
                with self._lock:
                    self.seconds += time.perf_counter() - started
                    self.calls += 1

        sim_module.complete = timed
        return self

    def __exit__(self, *exc) -> None:
        sim_module.complete = self._original


def latency() -> dict:
    from marlin_agent.config import load_settings
    from marlin_agent.watch.runner import Watcher

    with tempfile.TemporaryDirectory() as scratch_dir, MarlinSimulator() as simulator, \
            WebhookReceiver() as hook, _Timed() as marlin:
        scratch = Path(scratch_dir)
        video = make_video(scratch / "door.mp4", FootageSpec(duration=25, backdrop="street", events=[
            SyntheticEvent(colour="red", shape="circle", start=11, end=14)]))
        segments = hls_segments(keyframed(video, scratch / "key.mp4"), scratch / "hls", 1.0)
        settings = load_settings({"library.transcribe": False, "media.chunk_seconds": 5.0},
                                 env=_env(scratch, simulator.base_url))
        received: list[float] = []
        stop = asyncio.Event()

        async def main(live: LiveHls) -> list:
            watcher = Watcher([live.url], ["when does the red circle appear"], settings, [hook.url])
            alerts = []
            marks: list[tuple[float, int]] = []

            async def watch_calls() -> None:  # the simulator's time per segment: reset when one closes
                while not stop.is_set():
                    marks.append((time.time(), marlin.calls))
                    await asyncio.sleep(0.05)

            ticker = asyncio.ensure_future(watch_calls())
            live.go_live()
            async for event in watcher.run(stop):
                if event.type == "alert":
                    alerts.append(event)
                    while len(hook.bodies) < len(alerts):
                        await asyncio.sleep(0.01)
                    received.append(time.time())
                    stop.set()
            ticker.cancel()
            return alerts

        with LiveHls(scratch / "hls", segments) as live:
            marlin_before = marlin.seconds
            alerts = asyncio.run(main(live))
        closed = Path(alerts[0].video.path).stat().st_mtime
        total = received[0] - closed
        # Marlin's part: the simulator's time answering this watch (all of it happened for the
        # segments up to the alert; a generous reading of "Marlin's time").
        marlin_seconds = marlin.seconds - marlin_before
    return {"segment_closed_to_webhook_s": round(total, 3), "marlin_seconds": round(marlin_seconds, 3),
            "agent_seconds": round(total - marlin_seconds, 3), "target": "latency <= Marlin's time + 2 s",
            "met": total <= marlin_seconds + 2.0}


def day(segments: int = 8640, seconds: float = 10.0, retention_hours: float = 2.0) -> dict:
    """A simulated day of segments through the watch's bookkeeping (see the module's docstring)."""
    from marlin_agent.config import load_settings
    from marlin_agent.domain import Evidence, Moment, VideoRef
    from marlin_agent.watch import runner as runner_module
    from marlin_agent.watch.records import Footage

    with tempfile.TemporaryDirectory() as scratch_dir, MarlinSimulator() as simulator:
        scratch = Path(scratch_dir)
        settings = load_settings({"library.transcribe": False, "watch.retention_hours": retention_hours},
                                 env=_env(scratch, simulator.base_url))
        now = [1_800_000_000.0]
        (scratch / "camera").mkdir()
        watcher = runner_module.Watcher([str(scratch / "camera")], ["a parcel is delivered"], settings,
                                        clock=lambda: now[0])
        recordings = watcher.home / "recordings" / "stand-in"
        recordings.mkdir(parents=True)
        samples: list[tuple[int, float]] = []
        alerts = 0

        async def judge(footage: Footage):  # the stand-in for indexing + answering (module docstring)
            n = int(round((footage.origin - 1_800_000_000.0) / seconds))
            alerts_made, changed = [], {}
            if n % 50 == 0:
                moment = Moment(video=VideoRef(id=f"v{n}", path=footage.path, title=Path(footage.path).stem),
                                start=2.0, end=6.0, confidence=0.9,
                                evidence=[Evidence(kind="grounding", text="a parcel", start=2, end=6, score=1.0)])
                alert = await watcher._occurrence(footage, footage.questions[0], moment, "Found", None, changed)
                alerts_made = [alert] if alert is not None else []
            judged = footage.model_copy(update={"status": "judged", "judged": footage.questions, "video_id": f"v{n}"})
            await asyncio.to_thread(watcher.state.judged, judged, alerts_made, list(changed.values()))
            watcher._recordings.append((footage.origin + seconds, footage.path, f"v{n}"))
            return alerts_made

        async def picture(alert_id, footage, question, moment, answer, tools):  # no clip for a stand-in
            from marlin_agent.watch.records import Alert

            return Alert(id=alert_id, watch=watcher.spec.id, question=question, source=footage.source,
                         video=moment.video, start=moment.start, end=moment.end, confidence=moment.confidence,
                         evidence=moment.evidence, answer=answer)

        watcher._judge, watcher._alert = judge, picture

        async def main() -> None:
            nonlocal alerts
            stop = asyncio.Event()
            events = watcher.run(stop)
            consumer = asyncio.ensure_future(_drain(events))
            while not hasattr(watcher, "state"):
                await asyncio.sleep(0.05)
            started = time.perf_counter()
            for n in range(segments):
                now[0] = 1_800_000_000.0 + (n + 1) * seconds
                path = recordings / f"{n:05d}.mkv"
                path.write_bytes(b"\0" * 1024)
                await watcher._found(Footage(key=path.name, source=str(scratch / "camera"), path=str(path),
                                             kind="segment", timeline="stand-in", origin=now[0] - seconds,
                                             wall_start=now[0] - seconds, duration=seconds,
                                             questions=watcher.questions))
                while watcher._todo.qsize():
                    await asyncio.sleep(0.001)
                if n % 720 == 0 or n == segments - 1:
                    samples.append((n, round(_rss_mb(), 1)))
            stop.set()
            alerts = await consumer
            samples.append((segments, round(_rss_mb(), 1)))
            samples.append((-1, round(time.perf_counter() - started, 1)))

        asyncio.run(main())
        elapsed = samples.pop()[1]
        kept = sorted(recordings.glob("*.mkv"))
        horizon_segments = retention_hours * 3600 / seconds
        first_hour, last = samples[1][1], samples[-1][1]
        return {"segments": segments, "simulated_hours": segments * seconds / 3600, "wall_seconds": elapsed,
                "alerts": alerts, "rss_mb_by_segment": samples,
                "rss_growth_after_first_hour_mb": round(last - first_hour, 1),
                "recordings_kept": len(kept), "retention_segments": horizon_segments,
                "within_retention": len(kept) <= horizon_segments + 2}


async def _drain(events) -> int:
    count = 0
    async for event in events:
        count += event.type == "alert"
    return count


def run() -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return {"latency": latency(), "day": day()}
