"""Run every eval suite on synthetic footage against the Marlin simulator and record the figures.

    python -m evals.run_synthetic [--videos 12] [--results evals/results]

Builds the suite (cached under .cache/evals), starts the simulator, then runs exactly the
commands a user runs against a real server: eval grounding (raw and agent), eval presence
and eval search. The figures land in evals/results/results.md and results.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path

from typer.testing import CliRunner

from evals.synthetic.offline_models import minilm_dir
from evals.synthetic.simulator import MarlinSimulator
from evals.synthetic.suites import extraction_labels, grounding_suite
from marlin_agent.config import load_settings
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
        out["extract"] = _extract(data, env, results, home)
    return out


def _extract(data: Path, env: dict, results: Path, home: Path) -> dict:
    """Extraction is filled by an LLM; here the scripted extractor stands in for it."""
    from evals.synthetic.scripted_extractor import ScriptedExtractor
    from marlin_agent.evaluation.extraction import load_labels, run_extract_eval
    from marlin_agent.evaluation.results import record
    from marlin_agent.extraction.schema import load_schema

    labels = extraction_labels(data)
    settings = load_settings({"library.transcribe": False}, env=env)
    schema = load_schema(Path(__file__).parent / "synthetic" / "schemas" / "objects.json")
    report = asyncio.run(run_extract_eval(schema, load_labels(labels), data.parent / "videos", settings,
                                          home / "runs" / "extract", labels.stem, model=ScriptedExtractor().model()))
    record(results, f"extract/{report.suite}", {"valid rate": report.valid_rate,
                                                "field accuracy": report.field_accuracy, "rows": report.rows},
           {"kind": "extract", "server": "scripted extractor (evals/synthetic)"})
    return report.model_dump()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=12)
    parser.add_argument("--results", type=Path, default=Path("evals/results"))
    args = parser.parse_args()
    cache = Path(".cache/evals") / f"suite-{args.videos}"
    with tempfile.TemporaryDirectory() as home:
        figures = run_all(cache, args.videos, args.results, Path(home))
    for name, report in figures.items():
        headline = (report.get("scores") or report.get("best") or report.get("moment_recall")
                    or {"valid_rate": report.get("valid_rate"), "field_accuracy": report.get("field_accuracy")})
        print(name, json.dumps(headline))


if __name__ == "__main__":
    main()
