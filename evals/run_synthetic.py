"""Run every eval suite on synthetic footage against the Marlin simulator and record the figures.

    python -m evals.run_synthetic [--videos 12] [--results evals/results]

Builds the suite (cached under .cache/evals), starts the simulator, then runs exactly the
commands a user runs against a real server: eval grounding (raw and agent), eval presence
and eval search. The figures land in evals/results/results.md and results.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from typer.testing import CliRunner

from evals.synthetic.offline_models import minilm_dir
from evals.synthetic.simulator import MarlinSimulator
from evals.synthetic.suites import grounding_suite
from marlin_agent.cli import app


def run_all(suite_dir: Path, videos: int, results: Path, home: Path) -> dict[str, dict]:
    data = grounding_suite(suite_dir, videos=videos)
    out: dict[str, dict] = {}
    with MarlinSimulator() as simulator:
        env = {"MARLIN_HOME": str(home), "MARLIN_BASE_URL": simulator.base_url, "MARLIN_EMBED_MODEL": str(minilm_dir()),
               "MARLIN_PLANNER": "pipeline"}
        runner = CliRunner()
        common = ["--data", str(data), "--videos", str(suite_dir / "videos"), "--results", str(results), "--json"]
        for name, args in {
            "grounding/raw": ["eval", "grounding", "--mode", "raw", "--out", str(home / "runs" / "raw")],
            "grounding/agent": ["eval", "grounding", "--mode", "agent", "--out", str(home / "runs" / "agent")],
            "presence": ["eval", "presence", "--out", str(home / "runs" / "presence")],
            "search": ["eval", "search"],
        }.items():
            result = runner.invoke(app, [*args, *common], env=env)
            if result.exit_code != 0:
                raise SystemExit(f"{name} failed: {result.stdout}{result.stderr}")
            out[name] = json.loads(result.stdout)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=12)
    parser.add_argument("--results", type=Path, default=Path("evals/results"))
    args = parser.parse_args()
    cache = Path(".cache/evals") / f"suite-{args.videos}"
    with tempfile.TemporaryDirectory() as home:
        figures = run_all(cache, args.videos, args.results, Path(home))
    for name, report in figures.items():
        print(name, json.dumps(report.get("scores") or report.get("best") or report.get("moment_recall")))


if __name__ == "__main__":
    main()
