"""A watch's bookkeeping over many segments in simulated time, without Marlin (bench and tests).

Each segment is a 1 KB stand-in file noticed by the watch as a stream segment; the piece is "judged" by
a stand-in that finds the event in every ``alert_every``-th segment (no indexing, Marlin or
verification), so the watch's own work is what runs: state rows in the library, occurrences and
alerts, retention deleting recordings and forgetting them from the index and the state. The watch's
resident memory is sampled as it goes.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from marlin_agent.config import Settings
from marlin_agent.domain import Evidence, Moment, VideoRef
from marlin_agent.watch.records import Alert, Footage
from marlin_agent.watch.runner import Watcher

EPOCH = 1_800_000_000.0


def rss_mb() -> float:
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS")) / 1024


def simulate(settings: Settings, folder: Path, segments: int, seconds: float = 10.0, alert_every: int = 50,
             sample_every: int = 720) -> dict:
    """Run ``segments`` stand-in segments through a watch over ``folder``; figures of what it kept."""
    now = [EPOCH]
    folder.mkdir(parents=True, exist_ok=True)
    watcher = Watcher([str(folder)], ["a parcel is delivered"], settings, clock=lambda: now[0])
    recordings = watcher.home / "recordings" / "stand-in"
    recordings.mkdir(parents=True, exist_ok=True)
    samples: list[tuple[int, float]] = []

    async def judge(footage: Footage) -> list[Alert]:
        n = int(round((footage.origin - EPOCH) / seconds))
        made, changed = [], {}
        if n % alert_every == 0:
            moment = Moment(video=VideoRef(id=f"v{n}", path=footage.path, title=Path(footage.path).stem),
                            start=2.0, end=6.0, confidence=0.9,
                            evidence=[Evidence(kind="grounding", text="a parcel", start=2, end=6, score=1.0)])
            alert = await watcher._occurrence(footage, footage.questions[0], moment, "Found", None, changed)
            made = [alert] if alert is not None else []
        await watcher._settle(footage, f"v{n}", made, changed)
        return made

    async def picture(alert_id, footage, question, moment, answer, tools) -> Alert:  # no clip for a stand-in
        return Alert(id=alert_id, watch=watcher.spec.id, question=question, source=footage.source,
                     video=moment.video, start=moment.start, end=moment.end, confidence=moment.confidence,
                     evidence=moment.evidence, answer=answer)

    watcher._judge, watcher._alert = judge, picture

    async def drain(events) -> int:
        return sum([event.type == "alert" async for event in events])

    async def main() -> tuple[int, float]:
        stop = asyncio.Event()
        consumer = asyncio.ensure_future(drain(watcher.run(stop)))
        while not hasattr(watcher, "state"):
            await asyncio.sleep(0.05)
        started = time.perf_counter()
        for n in range(segments):
            now[0] = EPOCH + (n + 1) * seconds
            path = recordings / f"{n:05d}.mkv"
            path.write_bytes(b"\0" * 1024)
            await watcher._found(Footage(key=path.name, source="stand-in", path=str(path), kind="segment",
                                         timeline="stand-in", origin=now[0] - seconds, wall_start=now[0] - seconds,
                                         duration=seconds, questions=watcher.questions))
            while watcher._todo.qsize() or watcher._judged < n + 1:
                await asyncio.sleep(0.001)
            if n % sample_every == 0 or n == segments - 1:
                samples.append((n + 1, round(rss_mb(), 1)))
        stop.set()
        return await consumer, time.perf_counter() - started

    alerts, elapsed = asyncio.run(main())
    footage_rows = len(watcher.library.watch_rows(watcher.spec.id, "footage"))
    return {"segments": segments, "simulated_hours": round(segments * seconds / 3600, 2),
            "wall_seconds": round(elapsed, 1), "alerts": alerts, "rss_mb_by_segment": samples,
            "recordings_kept": len(list(recordings.glob("*.mkv"))), "footage_rows_kept": footage_rows,
            "retention_segments": settings.watch.retention_hours * 3600 / seconds}
