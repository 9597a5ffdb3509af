"""Index memory: peak RSS of a whole `index` run should stay flat as videos get longer.

Each run indexes one synthetic video (with speech, so transcription runs too) in a fresh
process against the simulator, and reports that process's peak resident memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SpeechLine, SyntheticEvent, make_video
from evals.synthetic.offline_models import minilm_dir, whisper_base_dir
from evals.synthetic.simulator import MarlinSimulator

# VmHWM, not ru_maxrss: after fork+exec, ru_maxrss still counts the parent's pages, so a
# parent that just drew a long video would inflate every child's figure.
_CHILD = """
import asyncio, json, sys
from marlin_agent.config import load_settings
from marlin_agent.indexing.run import index_inputs
overrides = {"library.transcribe": sys.argv[2] == "1"}
report = asyncio.run(index_inputs([sys.argv[1]], load_settings(overrides)))
print(json.dumps({"chunks": report.chunks_captioned, "lines": report.transcript_lines,
                  "peak_rss_mb": next(int(l.split()[1]) for l in open("/proc/self/status")
                                      if l.startswith("VmHWM")) // 1024}))
"""


def _video(folder: Path, minutes: int) -> Path:
    seconds = minutes * 60
    events = [SyntheticEvent(colour="red", shape="circle", start=t + 5, end=t + 15) for t in range(0, seconds, 120)]
    speech = [SpeechLine(text=f"Marker number {n} is now on screen.", start=t + 20)
              for n, t in enumerate(range(0, seconds - 30, 300))]
    return make_video(folder / f"{minutes}min.mp4", FootageSpec(duration=seconds, width=160, height=120, fps=4,
                                                                events=events, speech=speech))


def run(minutes: tuple[int, ...] = (5, 20, 60), transcribe: bool = True) -> dict:
    rows = []
    with tempfile.TemporaryDirectory() as scratch, MarlinSimulator(think="none") as simulator:
        models = Path(scratch) / "models"
        for length in minutes:
            video = _video(Path(scratch), length)
            env = {**os.environ, "MARLIN_HOME": f"{scratch}/home-{length}", "MARLIN_BASE_URL": simulator.base_url,
                   "MARLIN_EMBED_MODEL": str(minilm_dir()), "MARLIN_WHISPER_MODEL": str(whisper_base_dir(models)),
                   "HF_HUB_OFFLINE": "1"}
            done = subprocess.run([sys.executable, "-c", _CHILD, str(video), "1" if transcribe else "0"], env=env, capture_output=True, text=True,
                                  check=True)
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append({"minutes": length, **figures})
    return {"rows": rows, "growth_mb": round(rows[-1]["peak_rss_mb"] - rows[0]["peak_rss_mb"], 1)}


if __name__ == "__main__":
    print(run())
