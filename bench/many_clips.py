"""Many short clips: indexing throughput across videos, and index size over no-op runs.

200 clips of 3 s are one chunk each, so requests can only overlap across videos. The
simulator answers each request after a fixed latency; with ``c`` requests allowed in flight
the run ideally takes ceil(200 / c) × latency. Clips are probed and staged by a warm-up run
into another database first, so the figure measures scheduling and storing, not decoding.
Then the same command runs five more times over the unchanged clips; the index on disk
should not grow.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import tempfile
import time
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video
from evals.synthetic.offline_models import minilm_dir
from evals.synthetic.palette import BACKDROPS, MOTIONS, OBJECT_COLOURS, SHAPES
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.config import load_settings
from marlin_agent.indexing.run import index_inputs

LATENCY = 2.0


def _clips(folder: Path, count: int, seconds: float) -> Path:
    """``count`` distinct clips: every backdrop, colour, shape, motion and two start times."""
    folder.mkdir(parents=True, exist_ok=True)
    kinds = itertools.product(BACKDROPS, OBJECT_COLOURS, SHAPES, MOTIONS, (0.25, 0.75))
    for n, (backdrop, colour, shape, motion, start) in zip(range(count), kinds, strict=False):
        event = SyntheticEvent(colour=colour, shape=shape, motion=motion, start=start, end=seconds - 0.25)
        make_video(folder / f"clip{n:03d}.mp4", FootageSpec(duration=seconds, width=160, height=120, fps=4,
                                                            backdrop=backdrop, events=[event]))
    return folder


def _size_mb(folder: Path) -> float:
    return round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6, 3)


def run(count: int = 200, seconds: float = 3.0, concurrency: int = 16, noop_runs: int = 5) -> dict:
    with tempfile.TemporaryDirectory() as scratch, MarlinSimulator(think="none") as simulator:
        clips = _clips(Path(scratch) / "clips", count, seconds)
        env = {"MARLIN_HOME": f"{scratch}/home", "MARLIN_BASE_URL": simulator.base_url,
               "MARLIN_EMBED_MODEL": str(minilm_dir()), "HF_HUB_OFFLINE": "1"}

        def index(db: str) -> float:
            settings = load_settings({"server.concurrency": concurrency, "library.transcribe": False,
                                      "library.db": f"{scratch}/{db}"}, env=env)
            started = time.perf_counter()
            report = asyncio.run(index_inputs([str(clips)], settings))
            assert report.chunks_failed == 0, report.failed
            return time.perf_counter() - started

        index("warm")
        simulator.state.latency = LATENCY
        simulator.state.reset()
        elapsed = index("index")
        ideal = math.ceil(count / concurrency) * LATENCY
        first = _size_mb(Path(scratch) / "index")
        sizes = []
        for _ in range(noop_runs):
            index("index")
            sizes.append(_size_mb(Path(scratch) / "index"))
        return {
            "clips": count, "clip_seconds": seconds, "concurrency": concurrency, "latency_s": LATENCY,
            "seconds": round(elapsed, 2), "ideal_seconds": ideal, "share_of_ideal": round(ideal / elapsed, 3),
            "peak_in_flight": simulator.state.peak_in_flight,
            "index_mb_first_run": first, "index_mb_after_noop_runs": sizes,
            "noop_growth_percent": round(100 * (sizes[-1] - first) / first, 2),
        }


if __name__ == "__main__":
    print(run())
