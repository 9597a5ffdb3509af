"""Run every eval suite on both synthetic worlds against the Marlin simulator and record the figures.

    python -m evals.run_synthetic [--videos 12] [--results evals/results]

Builds the toy suite (coloured shapes) and the realistic-language world (``scenes.py``), both
cached under .cache/evals, starts the simulator, then runs exactly the commands a user runs
against a real server:

1. calibration: ``eval presence --fit`` on the realistic world's calibration part plus the toy
   suite; the fitted weights and threshold are shipped in ``configs/calibrations.toml`` under the
   test entailment model's fingerprint (a user's copy of that model finds them with nothing to
   copy by hand), recorded in ``calibration.toml`` in the results folder, and used for everything
   after;
2. the realistic world's held-out part: ``eval presence`` (with a plot) and ``eval grounding``;
3. the toy suite: ``eval grounding`` (raw and agent), ``eval presence``, ``eval search``, and
   extraction with a scripted stand-in for the LLM.
Every row is a simulator run, and says so: the simulator names itself in /v1/models and ``eval``
labels its rows "simulator". The figures measure the agent against a harsh stand-in, not Marlin.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from typer.testing import CliRunner

from evals.synthetic.offline_models import minilm_dir, nli_dir, whisper_base_dir
from evals.synthetic.planner_server import PlannerServer
from evals.synthetic.realistic import realistic_suite
from evals.synthetic.simulator import MarlinSimulator
from evals.synthetic.suites import extraction_labels, grounding_suite
from marlin_agent.cli.main import app
from marlin_agent.config import load_settings

CALIBRATION_FILE = "calibration.toml"


@contextmanager
def planner_stand_in():
    """The scripted planner (and judge) behind an OpenAI-compatible server on a loopback port."""
    server = PlannerServer("127.0.0.1", 0, "scripted-planner")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def merged_suite(folder: Path, parts: list[Path], name: str) -> Path:
    """One suite file from several whose videos share ``folder/videos``."""
    merged: dict = {}
    for part in parts:
        merged.update(json.loads(part.read_text()))
    target = folder / f"{name}.json"
    target.write_text(json.dumps(merged, indent=1))
    return target


def calibration_toml(fitted: dict, model: str) -> str:
    weights = "\n".join(f"{kind} = {value}" for kind, value in fitted["weights"].items())
    return (f"# Fitted by `python -m evals.run_synthetic` (eval presence --fit) for the entailment model\n"
            f"# {model}, on the realistic world's calibration part and the toy suite, against the simulator.\n"
            f"# Shipped in configs/calibrations.toml; this copy records the run.\n"
            f"[agent]\nthreshold = {fitted['threshold']}\n\n[verify]\nbias = {fitted['bias']}\n\n"
            f"[verify.weights]\n{weights}\n")


def ship_calibration(fitted: dict, model_folder: Path, cache: Path) -> None:
    """Put the fit into the shipped calibrations, under the test model's fingerprint and folder name."""
    from marlin_agent.verification.calibration import onnx_fingerprint, write_calibration

    table = {"model": model_folder.name, "names": [model_folder.name], "fitted": True,
             "note": "fitted by python -m evals.run_synthetic on the realistic world's calibration part and the toy "
                     "suite, against the simulator",
             "threshold": fitted["threshold"], "bias": fitted["bias"], "weights": fitted["weights"]}
    write_calibration(Path(__file__).parents[1] / "configs" / "calibrations.toml",
                      onnx_fingerprint(model_folder, cache), table)


def run_all(cache: Path, videos: int, results: Path, home: Path, journal: Path | None = None,
            ship: bool = True) -> dict[str, dict]:
    """Every eval against the simulator, figures into ``results``; with ``ship`` the calibration fit goes into
    configs/calibrations.toml, with ``journal`` every verification read is logged there (evals.replay)."""
    worlds = cache / "worlds"
    toy = grounding_suite(worlds, videos=videos)
    calibration = merged_suite(worlds, [realistic_suite(worlds, "calibration"), toy], "calibration")
    heldout = realistic_suite(worlds, "heldout")
    models = cache / "models"
    models.mkdir(parents=True, exist_ok=True)
    nli = nli_dir(models)
    out: dict[str, dict] = {}
    with MarlinSimulator() as simulator:
        env = {"MARLIN_HOME": str(home), "MARLIN_BASE_URL": simulator.base_url, "MARLIN_EMBED_MODEL": str(minilm_dir()),
               "MARLIN_WHISPER_MODEL": str(whisper_base_dir(models)), "MARLIN_VERIFY_MODEL": str(nli),
               "MARLIN_PLANNER": "pipeline", **({"MARLIN_VERIFY_JOURNAL": str(journal)} if journal else {})}
        runner = CliRunner()

        def run(name: str, data: Path, *args: str, extra_env: dict | None = None) -> dict:
            common = ["--data", str(data), "--videos", str(worlds / "videos"), "--results", str(results), "--json"]
            result = runner.invoke(app, [*args, *common], env={**env, **(extra_env or {})})
            if result.exit_code != 0:
                raise SystemExit(f"{name} failed: {result.stdout}{result.stderr}")
            out[name] = json.loads(result.stdout)
            return out[name]

        # The calibration run has an honest scripted judge (the planner stand-in) read every span, so the
        # judge's weight is fitted like the others; the pipeline runs after it have none.
        with planner_stand_in() as planner_url:
            judged = {"MARLIN_PLANNER": "scripted-planner", "MARLIN_PLANNER_BASE_URL": planner_url}
            fitted = run("presence/calibration", calibration, "eval", "presence", "--fit",
                         "--out", str(home / "runs" / "calibration"), extra_env=judged)["fitted"]
        (results / CALIBRATION_FILE).write_text(calibration_toml(fitted, nli.name))
        if ship:
            ship_calibration(fitted, nli, home / "cache")
        run("presence/realistic-heldout", heldout, "eval", "presence", "--out", str(home / "runs" / "heldout"),
            "--plot", str(results / "presence-realistic-heldout.png"))
        run("grounding/realistic-heldout", heldout, "eval", "grounding", "--mode", "agent",
            "--out", str(home / "runs" / "heldout-grounding"))
        run("grounding/raw", toy, "eval", "grounding", "--mode", "raw", "--out", str(home / "runs" / "raw"))
        run("grounding/agent", toy, "eval", "grounding", "--mode", "agent", "--out", str(home / "runs" / "agent"))
        run("presence/toy", toy, "eval", "presence", "--out", str(home / "runs" / "presence"),
            "--plot", str(results / "presence-synthetic-timelens.png"))
        run("search", toy, "eval", "search")
        out["extract"] = _extract(toy, env, results, home)
        out["injection"] = _injection(toy, worlds / "videos", env, results, simulator)
    return out


def _injection(data: Path, videos: Path, env: dict, results: Path, simulator: MarlinSimulator) -> dict:
    """Captions that carry instructions, asked with a pipeline and with a planner and judge that obey them."""
    from evals.synthetic.injection import run_injection
    from marlin_agent.evaluation.results import record

    settings = load_settings({"library.transcribe": False}, env=env)
    figures = run_injection(data, videos, settings, simulator)
    clean = next(f for f in figures if not f.injected)
    for row in figures:
        if row.injected:
            record(results, f"injection/{row.mode}", {
                "absent found": f"{row.absent_found} of {row.absent}", "recall injected": row.recall,
                "recall clean": clean.recall}, {"kind": "injection", "server": "simulator (evals/synthetic) with "
                                                "a sign in every caption; planner and judge: ObeyingPlanner"})
    return {f"{row.mode}{'-injected' if row.injected else ''}": row.model_dump() | {"recall": row.recall}
            for row in figures}


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
        headline = (report.get("scores") or report.get("at_threshold") or report.get("moment_recall")
                    or (report if name == "injection" else None)
                    or {"valid_rate": report.get("valid_rate"), "field_accuracy": report.get("field_accuracy")})
        print(name, json.dumps(headline))


if __name__ == "__main__":
    main()
