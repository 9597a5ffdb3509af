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


def _env(scratch: Path, base_url: str) -> dict[str, str]:
    models = scratch / "models"
    return {"MARLIN_HOME": str(scratch / "home"), "MARLIN_BASE_URL": base_url, "MARLIN_EMBED_MODEL": str(minilm_dir()),
            "MARLIN_WHISPER_MODEL": str(whisper_base_dir(models)), "MARLIN_VERIFY_MODEL": str(nli_dir(models)),
            "MARLIN_GRAPH_CACHE": str(models / "graphs")}


class _Timed:
    """When the simulator was answering (each call's start and end, wall clock): Marlin's part of the latency."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, float]] = []
        self._lock = threading.Lock()
        self._original = sim_module.complete

    def __enter__(self) -> _Timed:
        def timed(*args, **kwargs):
            started = time.time()
            try:
                return self._original(*args, **kwargs)
            finally:
                with self._lock:
                    self.calls.append((started, time.time()))

        sim_module.complete = timed
        return self

    def __exit__(self, *exc) -> None:
        sim_module.complete = self._original

    def busy(self, start: float, end: float) -> float:
        """Seconds within ``[start, end]`` when at least one call was being answered (overlaps counted once)."""
        spans = sorted((max(a, start), min(b, end)) for a, b in self.calls if b > start and a < end)
        total, reach = 0.0, start
        for a, b in spans:
            if b > reach:
                total += b - max(a, reach)
                reach = b
        return total


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

        async def main(live: LiveHls) -> list:
            stop = asyncio.Event()
            watcher = Watcher([live.url], ["when does the red circle appear"], settings, [hook.url])
            alerts = []
            live.go_live()
            async for event in watcher.run(stop):
                if event.type == "alert":
                    alerts.append(event)
                    while len(hook.bodies) < len(alerts):
                        await asyncio.sleep(0.005)
                    received.append(time.time())
                    stop.set()
            return alerts

        with LiveHls(scratch / "hls", segments) as live:
            alerts = asyncio.run(main(live))
        closed = Path(alerts[0].video.path).stat().st_mtime  # the segment's last write: its closing
        total = received[0] - closed
        marlin_seconds = marlin.busy(closed, received[0])
    return {"segment_closed_to_webhook_s": round(total, 3), "marlin_seconds": round(marlin_seconds, 3),
            "agent_seconds": round(total - marlin_seconds, 3), "target": "latency <= Marlin's time + 2 s",
            "met": total <= marlin_seconds + 2.0}


def day(segments: int = 8640, seconds: float = 10.0, retention_hours: float = 2.0) -> dict:
    """A simulated day of segments through the watch's bookkeeping (``evals/synthetic/watch_day.py``)."""
    from evals.synthetic.watch_day import simulate
    from marlin_agent.config import load_settings

    with tempfile.TemporaryDirectory() as scratch_dir, MarlinSimulator() as simulator:
        scratch = Path(scratch_dir)
        settings = load_settings({"library.transcribe": False, "watch.retention_hours": retention_hours},
                                 env=_env(scratch, simulator.base_url))
        figures = simulate(settings, scratch / "camera", segments, seconds)
    samples = figures["rss_mb_by_segment"]
    figures["rss_growth_after_first_sample_mb"] = round(samples[-1][1] - samples[1][1], 1)
    figures["within_retention"] = figures["recordings_kept"] <= figures["retention_segments"] + 2
    return figures


def run() -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return {"latency": latency(), "day": day()}
