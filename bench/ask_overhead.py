"""`ask` overhead beyond model time, and Marlin calls per question, on a library of 20 videos.

The simulator answers every request after a fixed latency. Windows are grounded side by
side, each in two rounds (find, then find again on a tighter window), so the model's share
of a question's wall time is about two latencies; the rest is the agent's own work
(retrieval, staging, embedding, verification).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video
from evals.synthetic.offline_models import minilm_dir
from evals.synthetic.palette import BACKDROPS, OBJECT_COLOURS, SHAPES
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.app.ask import ask
from marlin_agent.config import load_settings
from marlin_agent.indexing.run import index_inputs

LATENCY = 0.5


def _library(folder: Path, count: int = 20) -> list[str]:
    colours, backdrops = list(OBJECT_COLOURS), list(BACKDROPS)
    questions = []
    for n in range(count):
        colour, shape = colours[n % len(colours)], SHAPES[(n // len(colours)) % len(SHAPES)]
        start = 5.0 + (n * 7) % 40
        spec = FootageSpec(duration=60 + (n % 3) * 40, width=240, height=180, fps=6, backdrop=backdrops[n % 3],
                           events=[SyntheticEvent(colour=colour, shape=shape, start=start, end=start + 8)])
        make_video(folder / f"video{n:02d}.mp4", spec)
        questions.append(f"when does the {colour} {shape} appear")
    return questions


def run(questions_asked: int = 10) -> dict:
    with tempfile.TemporaryDirectory() as scratch, MarlinSimulator(think="none") as simulator:
        folder = Path(scratch) / "footage"
        folder.mkdir()
        present = _library(folder)
        absent = ["when does an orange star appear", "when does the dog bark", "a green elephant walks by"]
        env = {"MARLIN_HOME": f"{scratch}/home", "MARLIN_BASE_URL": simulator.base_url,
               "MARLIN_EMBED_MODEL": str(minilm_dir())}
        settings = load_settings({"library.transcribe": False}, env=env)
        asyncio.run(index_inputs([str(folder)], settings))
        simulator.state.latency = LATENCY
        rows = []
        for question in present[: questions_asked - len(absent)] + absent:
            simulator.state.reset()
            started = time.perf_counter()
            answer = asyncio.run(ask(question, [str(folder)], settings))
            wall = time.perf_counter() - started
            rows.append({"question": question, "found": answer.found, "calls": answer.usage.marlin_calls,
                         "seconds": round(wall, 2), "overhead_seconds": round(wall - 2 * LATENCY, 2)})
    return {
        "videos": 20, "latency_s": LATENCY, "questions": len(rows),
        "calls_per_question_max": max(r["calls"] for r in rows),
        "calls_per_question_mean": round(statistics.mean(r["calls"] for r in rows), 1),
        "seconds_p50": round(statistics.median(r["seconds"] for r in rows), 2),
        "overhead_p50": round(statistics.median(r["overhead_seconds"] for r in rows), 2),
        "found_present": sum(r["found"] for r in rows if "orange" not in r["question"] and "dog" not in r["question"]
                             and "elephant" not in r["question"]),
        "found_absent": sum(r["found"] for r in rows if any(w in r["question"] for w in ("orange", "dog", "elephant"))),
        "rows": rows,
    }


if __name__ == "__main__":
    result = run()
    for row in result.pop("rows"):
        print(row)
    print(result)
