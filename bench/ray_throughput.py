"""Indexing throughput as a Ray job against one process: how close W workers come to W times one.

The server is the simulator with a fixed latency per request, so the ideal is plain arithmetic:
each worker (shard) keeps one request in flight, and a job takes as long as its largest shard,
``largest share × latency`` (shards split by hash, so not quite evenly). Clips are staged beforehand (a warm run at no latency), so the figures
measure the job: Ray's start-up, scheduling, the shards' own index writes and the final compaction.
The single process at the same number of requests in flight is the baseline Ray has to pay for.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video
from evals.synthetic.offline_models import minilm_dir
from evals.synthetic.palette import OBJECT_COLOURS, SHAPES
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.config import load_settings
from marlin_agent.indexing.run import index_inputs
from marlin_agent.indexing.shards import Shard
from marlin_agent.library.records import chunk_id
from marlin_agent.media import plan_chunks, probe_video
from marlin_agent.media.content_id import content_id
from marlin_agent.scale.ray_jobs import index_on_ray

LATENCY = 2.0
CHUNK_SECONDS = 30


def _footage(folder: Path, videos: int, minutes: int) -> list[Path]:
    paths = []
    for n in range(videos):
        colour, shape = list(OBJECT_COLOURS)[n % len(OBJECT_COLOURS)], SHAPES[n % len(SHAPES)]
        events = [SyntheticEvent(colour=colour, shape=shape, start=30 * m + 5, end=30 * m + 15)
                  for m in range(2 * minutes)]
        spec = FootageSpec(duration=60 * minutes, width=160, height=120, fps=4, events=events)
        paths.append(make_video(folder / f"clip{n:02d}.mp4", spec))
    return paths


def _largest_share(videos: list[Path], workers: int) -> int:
    """Chunks in the largest of ``workers`` shards, owned the way the indexer owns them."""
    shares = [0] * workers
    for path in videos:
        info, video_id = probe_video(path), content_id(path)
        for chunk in plan_chunks(0.0, info.duration, CHUNK_SECONDS):
            key = chunk_id(video_id, chunk.start, chunk.end)
            shares[next(i for i in range(workers) if Shard(index=i, count=workers).owns(key))] += 1
    return max(shares)


def run(videos: int = 6, minutes: int = 2, worker_counts: tuple[int, ...] = (1, 2)) -> dict:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    rows = []
    with tempfile.TemporaryDirectory() as scratch, MarlinSimulator(think="none") as simulator:
        folder = Path(scratch) / "footage"
        folder.mkdir()
        paths = _footage(folder, videos, minutes)
        env = {"MARLIN_HOME": f"{scratch}/home", "MARLIN_BASE_URL": simulator.base_url,
               "MARLIN_EMBED_MODEL": str(minilm_dir()), "HF_HUB_OFFLINE": "1"}
        os.environ.update(env)  # what the Ray workers inherit
        base = {"library.transcribe": False, "media.chunk_seconds": CHUNK_SECONDS, "server.concurrency": 1}

        def settings_for(db: str, **more):
            return load_settings({**base, "library.db": f"{scratch}/{db}", **more}, env=env)

        asyncio.run(index_inputs([str(folder)], settings_for("warm")))  # stage every clip once
        chunks = simulator.state.received
        simulator.state.latency = LATENCY
        for workers in worker_counts:
            for how in ("one process", "ray"):
                # One process keeps ``workers`` requests in flight from one queue; shards each keep one.
                ideal = LATENCY * (-(-chunks // workers) if how == "one process" else _largest_share(paths, workers))
                simulator.state.reset()
                before = simulator.state.received
                started = time.perf_counter()
                if how == "ray":
                    report = asyncio.run(index_on_ray([str(folder)], settings_for(f"ray-{workers}"), "local",
                                                      workers=workers))
                else:
                    settings = settings_for(f"single-{workers}", **{"server.concurrency": workers})
                    report = asyncio.run(index_inputs([str(folder)], settings))
                seconds = time.perf_counter() - started
                rows.append({"how": how, "workers": workers, "chunks": report.chunks_captioned,
                             "calls": simulator.state.received - before,
                             "peak_in_flight": simulator.state.peak_in_flight, "seconds": round(seconds, 1),
                             "ideal_seconds": round(ideal, 1), "overhead_seconds": round(seconds - ideal, 1),
                             "share_of_ideal": round(ideal / seconds, 3)})
    return {"latency_s": LATENCY, "chunks": chunks, "cores": os.cpu_count(), "rows": rows}


if __name__ == "__main__":
    for row in run()["rows"]:
        print(row)
