"""Cold start: how long library commands take in a new process, against `marlin-agent --help`.

An indexed folder of three short clips; each command runs in a fresh process (as a user or a
host agent calls it), three times, and the median counts. `ask` runs against the simulator
with no added latency and its Marlin time subtracted (the time the simulator spent answering),
so the figure is the agent's own overhead: imports, models, index checks, verification.
Targets: `search` and the non-model part of `ask` under 1 s; the ratios to `--help` are what
compare across machines.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video
from evals.synthetic.offline_models import minilm_dir, nli_dir
from evals.synthetic.simulator import MarlinSimulator

RUNS = 3


def _clips(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for n, (colour, shape) in enumerate([("red", "circle"), ("blue", "square"), ("yellow", "triangle")]):
        make_video(folder / f"clip{n}.mp4", FootageSpec(duration=20, width=160, height=120, fps=4, events=[
            SyntheticEvent(colour=colour, shape=shape, start=4, end=9)]))
    return folder


def _median_seconds(args: list[str], env: dict[str, str], simulator: MarlinSimulator | None = None) -> float:
    times = []
    for _ in range(RUNS):
        busy_before = simulator.state.busy_seconds if simulator else 0.0
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "marlin_agent", *args], env=env, check=True, capture_output=True)
        elapsed = time.perf_counter() - started
        if simulator is not None:
            elapsed -= simulator.state.busy_seconds - busy_before
        times.append(elapsed)
    return round(statistics.median(times), 3)


def run() -> dict:
    with tempfile.TemporaryDirectory() as scratch, MarlinSimulator(think="none") as simulator:
        clips = _clips(Path(scratch) / "clips")
        env = {**os.environ, "MARLIN_HOME": f"{scratch}/home", "MARLIN_BASE_URL": simulator.base_url,
               "MARLIN_EMBED_MODEL": str(minilm_dir()), "MARLIN_VERIFY_MODEL": str(nli_dir(Path(scratch))),
               "HF_HUB_OFFLINE": "1"}
        subprocess.run([sys.executable, "-m", "marlin_agent", "index", str(clips), "--no-transcribe", "--json"],
                       env=env, check=True, capture_output=True)
        help_s = _median_seconds(["--help"], env)
        search_s = _median_seconds(["search", "a red circle", "--json"], env)
        ask_s = _median_seconds(["ask", "when does the red circle appear", "--in", str(clips), "--no-transcribe",
                                 "--json"], env, simulator)
    return {"runs": RUNS, "help_s": help_s, "search_s": search_s, "ask_overhead_s": ask_s,
            "search_x_help": round(search_s / help_s, 2), "ask_overhead_x_help": round(ask_s / help_s, 2)}


if __name__ == "__main__":
    print(run())
