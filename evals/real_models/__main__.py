"""The agent with a real small LLM: ``python -m evals.real_models``.

Everything the LLM planner and the judge decide was measured against scripted stand-ins until
this eval: it runs the realistic world's held-out questions (``questions.py``: present, absent
of every kind, speech) twice over the same index and Marlin simulator, once with the pipeline
planner and once with a real instruct model served on this machine as planner and judge, and
the injection suite with the real model as planner and judge. The model and its server are
fetched and built outside the repository (``server.py``); nothing here is shipped or needed by
the product.

    python -m evals.real_models                      # llama.cpp's llama-server, built once
    python -m evals.real_models --server llama-cpp-python
    python -m evals.real_models --base-url http://127.0.0.1:18910/v1 --model qwen2.5-coder-1.5b
    python -m evals.real_models --injection-only     # the injection suite alone (real_injection.json)

Rows land in ``<cache>/real-models/<server>/rows.jsonl`` as each question finishes (a run that is
stopped resumes there; ``--rows`` names another file, to ask again with a changed checkout); the summary
goes to ``evals/results/real_models.json`` and ``.md``, with the date and the server (``--results`` puts
it elsewhere). Each row keeps the planner's moves with their arguments (``calls``), so a loop can be read
from it; ``--only "scene|question"`` (repeatable) asks those questions alone:

    python -m evals.real_models --modes llm --no-injection --only "basketball_dunk|when is a timeout called?" \
        --rows /tmp/again.jsonl --results /tmp/again
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import statistics
import time
from pathlib import Path

from evals.real_models.questions import RealQuestion, real_questions
from evals.real_models.server import ServedModel, add_server_arguments, served_from
from evals.synthetic.offline_models import minilm_dir, nli_dir, whisper_base_dir
from evals.synthetic.realistic import realistic_suite
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.config import load_settings
from marlin_agent.errors import MarlinAgentError
from marlin_agent.verification.spans import iou

MODES = ("pipeline", "llm")


def _calls(answer) -> list[str]:
    """Each move as the planner made it (tool and arguments), so a loop can be read from the rows."""
    return [step.detail.removeprefix("move: ")[:240] for step in answer.trace
            if step.step == "planner" and step.detail.startswith("move: ")]


def _moves(answer) -> list[str]:
    return [call.split(" ", 1)[0] for call in _calls(answer)]


def _grounded(answer) -> bool:
    """Whether any candidate was grounded and checked for the answer (a found or a rejected moment)."""
    return bool(answer.moments or answer.rejected)


def row_of(question: RealQuestion, mode: str, answer, truth: tuple[float, float] | None, seconds: float) -> dict:
    best = answer.moments[0] if answer.moments else None
    on_span = bool(best and truth and iou((best.start, best.end), truth) >= 0.5)
    return {"key": question.key, "mode": mode, "scene": question.scene, "question": question.question,
            "present": question.present, "kind": question.kind, "found": answer.found, "on_span": on_span,
            "right": on_span if question.present else not answer.found,
            "moments": [[m.start, m.end, round(m.confidence, 3)] for m in answer.moments],
            "answer": answer.answer, "fallback": answer.fallback, "incomplete": answer.incomplete,
            "grounded": _grounded(answer), "moves": _moves(answer), "calls": _calls(answer), "marlin_calls": answer.usage.marlin_calls,
            "planner_tokens": answer.usage.planner_tokens, "seconds": round(seconds, 2), "error": None}


def error_row(question: RealQuestion, mode: str, exc: MarlinAgentError, seconds: float) -> dict:
    return {"key": question.key, "mode": mode, "scene": question.scene, "question": question.question,
            "present": question.present, "kind": question.kind, "found": False, "on_span": False,
            "right": not question.present, "moments": [], "answer": "", "fallback": None, "incomplete": None,
            "grounded": False, "moves": [], "calls": [], "marlin_calls": 0, "planner_tokens": 0, "seconds": round(seconds, 2),
            "error": exc.code, "message": exc.message}


async def ask_all(questions: list[RealQuestion], videos: Path, truths: dict, env: dict, mode: str,
                  rows_file: Path, done: set[tuple[str, str]]) -> None:
    from marlin_agent.app.ask import ask

    settings = load_settings(env=env)
    for question in questions:
        if (question.key, mode) in done:
            continue
        started = time.monotonic()
        try:
            answer = await ask(question.question, [str(videos / f"{question.scene}.mp4")], settings)
            row = row_of(question, mode, answer, truths.get((question.scene, question.event)),
                         time.monotonic() - started)
        except MarlinAgentError as exc:
            if exc.code not in ("planner_unavailable", "planner_error", "budget_exhausted"):
                raise
            row = error_row(question, mode, exc, time.monotonic() - started)
        with rows_file.open("a") as out:
            out.write(json.dumps(row) + "\n")
        print(f"{mode:8} {'ok  ' if row['right'] else 'MISS'} {row['seconds']:6.1f}s {question.kind:12} "
              f"{question.question[:60]!r} -> {row['answer'][:90]!r}" + (f" [{row['error']}]" if row['error'] else ""),
              flush=True)


def figures(rows: list[dict]) -> dict:
    present = [r for r in rows if r["present"]]
    tp = sum(r["on_span"] for r in present)
    fp = sum(r["found"] and not r["on_span"] for r in rows)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / len(present) if present else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    seconds = [r["seconds"] for r in rows]
    return {"questions": len(rows), "precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3),
            "absent_found": sum(r["found"] for r in rows if not r["present"]),
            "not_found_never_grounded": sum(1 for r in present if not r["found"] and not r["grounded"]),
            "planner_unavailable": sum(r["error"] == "planner_unavailable" for r in rows),
            "errors": sum(r["error"] is not None for r in rows),
            "fallbacks": sum(r["fallback"] is not None for r in rows),
            "fallbacks_unsaid": sum(r["fallback"] is not None and "pipeline planner answered" not in r["answer"]
                                    for r in rows),
            "seconds_mean": round(statistics.mean(seconds), 1) if seconds else 0.0,
            "seconds_median": round(statistics.median(seconds), 1) if seconds else 0.0,
            "moves_mean": round(statistics.mean(len(r["moves"]) for r in rows), 2) if rows else 0.0}


def offline_models(work: Path) -> dict[str, str]:
    """The environment naming the offline embedding, entailment and speech models, and the eval's home."""
    models = work / "models"
    models.mkdir(parents=True, exist_ok=True)
    return {"MARLIN_EMBED_MODEL": str(minilm_dir()), "MARLIN_VERIFY_MODEL": str(nli_dir(models)),
            "MARLIN_WHISPER_MODEL": str(whisper_base_dir(models)), "MARLIN_HOME": str(work / "home")}


def run_injection(served: ServedModel, env: dict, cache: Path) -> dict:
    """The toy suite's present and absent questions over captions that carry a sign telling the reader to
    report the event, with the real model as planner and judge."""
    from evals.synthetic.injection import INJECTION, injected_figures
    from evals.synthetic.suites import grounding_suite

    toy = grounding_suite(cache / "toy", videos=12)
    with MarlinSimulator() as simulator:
        simulator.state.inject = INJECTION
        settings = load_settings({"library.transcribe": False}, env={**env, "MARLIN_BASE_URL": simulator.base_url,
                                                                      "MARLIN_HOME": str(cache / "injection-home")})
        figures = injected_figures(toy, cache / "toy" / "videos", settings)
    return figures.model_dump() | {"recall": figures.recall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_server_arguments(parser)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--limit", type=int, default=0, help="ask only the first N questions")
    parser.add_argument("--no-injection", action="store_true")
    parser.add_argument("--injection-only", action="store_true",
                        help="run the injection suite alone (its figures go to real_injection.json)")
    parser.add_argument("--only", action="append", default=[], metavar="KEY",
                        help="ask only this question, named as the rows name it (\"scene|question\"); repeatable")
    parser.add_argument("--rows", type=Path, help="the rows file to resume (default <cache>/real-models/<server>/"
                                                  "rows.jsonl); a new one asks everything again with this checkout")
    args = parser.parse_args()
    served = served_from(args)
    args.results.mkdir(parents=True, exist_ok=True)
    if args.injection_only:
        try:
            started = time.monotonic()
            injection = run_injection(served, {**offline_models(args.cache / "real-models"), **served.env()},
                                      args.cache / "real-models")
        finally:
            served.stop()
        summary = {"date": datetime.date.today().isoformat(), "server": served.server, "model": served.model,
                   "minutes": round((time.monotonic() - started) / 60, 1), "injection": injection}
        (args.results / "real_injection.json").write_text(json.dumps(summary, indent=1))
        print(json.dumps(summary, indent=1))
        return
    try:
        summary = evaluate(served, args)
    finally:
        served.stop()
    (args.results / "real_models.json").write_text(json.dumps(summary, indent=1))
    (args.results / "real_models.md").write_text(markdown(summary))
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))


def evaluate(served: ServedModel, args) -> dict:
    work = args.cache / "real-models"
    world = work / "world"
    realistic_suite(world, "heldout")
    videos = world / "videos"
    truths = {}
    for path in videos.glob("*.spans.json"):
        spans = json.loads(path.read_text())["spans"]
        truths.update({(path.name.removesuffix(".spans.json"), int(k)): tuple(v) for k, v in spans.items()})
    unknown = set(args.only) - {q.key for q in real_questions()}
    if unknown:
        raise SystemExit(f"no such question: {', '.join(sorted(unknown))}")
    questions = [q for q in real_questions() if not args.only or q.key in args.only][: args.limit or None]
    tag = served.server.split(" ")[0].strip("()")
    rows_file = args.rows or work / tag / "rows.jsonl"
    rows_file.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if rows_file.exists():
        done = {(r["key"], r["mode"]) for r in map(json.loads, rows_file.read_text().splitlines())}
    base = offline_models(work)
    started = time.monotonic()
    with MarlinSimulator() as simulator:
        for mode in args.modes.split(","):
            env = {**base, "MARLIN_BASE_URL": simulator.base_url,
                   **(served.env() if mode == "llm" else {"MARLIN_PLANNER": "pipeline"})}
            asyncio.run(ask_all(questions, videos, truths, env, mode, rows_file, done))
    rows = [r for r in map(json.loads, rows_file.read_text().splitlines())
            if r["key"] in {q.key for q in questions}]
    summary = {"date": datetime.date.today().isoformat(), "server": served.server, "model": served.model,
               "marlin": "simulator (evals/synthetic), realistic world, held-out scenes",
               "questions": len(questions), "minutes": round((time.monotonic() - started) / 60, 1),
               "by_mode": {mode: figures([r for r in rows if r["mode"] == mode]) for mode in args.modes.split(",")},
               "rows": rows}
    if not args.no_injection:
        summary["injection"] = run_injection(served, {**base, **served.env()}, work)
    return summary


def markdown(summary: dict) -> str:
    lines = [f"# Real-model eval, {summary['date']}", "",
             f"Planner and judge: **{summary['model']}** served by {summary['server']}. Marlin: {summary['marlin']}. "
             f"{summary['questions']} questions.", "",
             "| mode | P | R | F1 | absent found | not found, never grounded | planner_unavailable | errors | "
             "fallbacks (unsaid) | s/question mean (median) | moves/question |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for mode, f in summary["by_mode"].items():
        lines.append(f"| {mode} | {f['precision']} | {f['recall']} | {f['f1']} | {f['absent_found']} | "
                     f"{f['not_found_never_grounded']} | {f['planner_unavailable']} | {f['errors']} | "
                     f"{f['fallbacks']} ({f['fallbacks_unsaid']}) | {f['seconds_mean']} ({f['seconds_median']}) | "
                     f"{f['moves_mean']} |")
    if "injection" in summary:
        i = summary["injection"]
        lines += ["", f"Injection (a sign in every caption telling the reader to report the event), the real model as "
                      f"planner and judge: {i['absent_found']} of {i['absent']} absent events found; recall "
                      f"{i['recall']} ({i['present_found']} of {i['present']})."]
    lines += ["", "| mode | kind | question | right | answer | fallback |", "|---|---|---|---|---|---|"]
    for r in summary["rows"]:
        lines.append(f"| {r['mode']} | {r['kind']} | {r['question']} | {'yes' if r['right'] else 'NO'} | "
                     f"{(r['answer'] or r.get('message', ''))[:120].replace('|', '/')} | {r['fallback'] or ''} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
