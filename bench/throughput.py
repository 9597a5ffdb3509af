"""Chunk throughput against the simulator with added latency: achieved vs ideal concurrency.

Each request takes ``latency`` seconds on the server; with ``c`` requests allowed in
flight, N chunks ideally take ceil(N / c) × latency. Clips are staged and the
simulator's analysis is warmed first, so the figure measures the client's scheduling.
"""

from __future__ import annotations

import asyncio
import math
import tempfile
import time
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.config import load_settings
from marlin_agent.marlin import MarlinClient
from marlin_agent.marlin.scan import caption_video

LATENCY = 1.0


def _long_video(folder: Path, minutes: int) -> Path:
    events = [SyntheticEvent(colour="red", shape="circle", start=60 * m + 10, end=60 * m + 20) for m in range(minutes)]
    spec = FootageSpec(duration=60 * minutes, width=160, height=120, fps=4, events=events)
    return make_video(folder / "throughput.mp4", spec)


def run(minutes: int = 16, concurrencies: tuple[int, ...] = (1, 4, 8, 16)) -> dict:
    rows = []
    with tempfile.TemporaryDirectory() as scratch, MarlinSimulator(think="none") as simulator:
        video = _long_video(Path(scratch), minutes)
        env = {"MARLIN_HOME": scratch, "MARLIN_BASE_URL": simulator.base_url}
        for concurrency in concurrencies:
            settings = load_settings({"server.concurrency": concurrency}, env=env)

            async def once(settings=settings) -> float:
                async with MarlinClient(settings.server) as client:
                    started = time.perf_counter()
                    await caption_video(video, settings, client)
                    return time.perf_counter() - started

            simulator.state.latency = 0.0
            asyncio.run(once())  # stage clips and warm the simulator's eyes
            simulator.state.latency = LATENCY
            simulator.state.reset()
            elapsed = asyncio.run(once())
            ideal = math.ceil(minutes / concurrency) * LATENCY
            rows.append({
                "concurrency": concurrency,
                "chunks": minutes,
                "seconds": round(elapsed, 2),
                "ideal_seconds": ideal,
                "peak_in_flight": simulator.state.peak_in_flight,
                "share_of_ideal": round(ideal / elapsed, 3),
            })
    return {"latency_s": LATENCY, "rows": rows}


if __name__ == "__main__":
    for row in run()["rows"]:
        print(row)
