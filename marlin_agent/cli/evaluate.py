"""`marlin-agent eval ...`: the eval suites' front door (grounding, presence, search)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal, Optional

import typer
from rich.console import Console
from rich.table import Table

from marlin_agent.cli.options import (
    CommandApp,
    DbOpt,
    JsonOpt,
    ServerFlags,
    takes_server_flags,
)
from marlin_agent.cli.output import chunk_progress, emit_json, run
from marlin_agent.errors import InputError

eval_app = CommandApp(help="Measure grounding, presence verification and search against any Marlin server.",
                       no_args_is_help=True)

DataOpt = Annotated[Path, typer.Option(
    "--data", help="TimeLens-format annotations: {video_id: {duration, spans, queries}}.")]
VideosOpt = Annotated[Optional[Path], typer.Option(
    "--videos", help="Folder holding <video_id>.mp4 for every annotated video.")]
LimitOpt = Annotated[Optional[int], typer.Option("--limit", min=1, help="Only the first N queries.")]
OutOpt = Annotated[Optional[Path], typer.Option(
    "--out", help="Where per-query results and predictions go (a re-run resumes there).")]
ResultsOpt = Annotated[Optional[Path], typer.Option(
    "--results", help="The folder of the results table to update (results.md + results.json); "
    "default $MARLIN_HOME/evals.")]


def _runs(settings) -> Path:
    from marlin_agent.evaluation.results import runs_dir

    return runs_dir(settings)


def _record(results: Path | None, settings, name: str, figures: dict, kind: str, **about) -> Path:
    """Add the run's row to the results table, labelled with what served it; say where."""
    from marlin_agent.evaluation.results import record, results_dir, server_label

    folder = results_dir(settings, results)
    record(folder, name, figures, {"kind": kind, "server": asyncio.run(server_label(settings)), **about})
    return folder


def _with_table(report, table: Path | None) -> dict:
    return {**report.model_dump(mode="json"), "results_table": str(table / "results.md") if table else None}


def _say_table(console: Console, table: Path | None) -> None:
    if table is not None:
        console.print(f"results table: {table / 'results.md'}", markup=False)


def _videos(videos: Path | None) -> Path:
    if videos is None:
        raise InputError("--videos is needed to run the suite",
                         hint="Point --videos at the folder of <video_id>.mp4 files.")
    if not videos.is_dir():
        raise InputError(f"{videos} is not a folder", hint="Point --videos at the folder of <video_id>.mp4 files.")
    return videos


def _scores_table(title: str, figures: dict) -> Table:
    table = Table(title=title)
    for column in figures:
        table.add_column(column)
    table.add_row(*(str(v) for v in figures.values()))
    return table


@eval_app.command("grounding")
@takes_server_flags
def grounding_command(
    data: Annotated[Optional[Path], typer.Option(
        "--data", help="TimeLens-format annotations: {video_id: {duration, spans, queries}}.")] = None,
    videos: VideosOpt = None, limit: LimitOpt = None,
    predictions: Annotated[Optional[Path], typer.Option(
        "--predictions", help="Score this results file (.json or .jsonl) instead of running anything; with "
        "--data, also report which annotations it lacks.")] = None,
    mode: Annotated[str, typer.Option(
        "--mode", help="raw: Marlin find as the product chunks it; agent: find --verify.")] = "raw",
    round_seconds: Annotated[bool, typer.Option(
        "--round-seconds", help="Round predicted times to whole seconds before scoring, as the benchmark's own "
        "inference does.")] = False,
    out: OutOpt = None, results: ResultsOpt = None, as_json: JsonOpt = False, db: DbOpt = None, *, server: ServerFlags,

) -> None:
    """R1@0.3/0.5/0.7 and mIoU with TimeLens-Bench's own definitions."""
    from marlin_agent.evaluation.grounding import run_grounding, score_predictions
    from marlin_agent.evaluation.timelens import load_annotations, load_predictions

    if mode not in ("raw", "agent"):
        raise typer.BadParameter("--mode is raw or agent")
    if data is None and predictions is None:
        raise typer.BadParameter("give --data (annotations to run), --predictions (a results file to score), or both")
    rounding = "whole seconds" if round_seconds else "none"

    async def work():
        settings = server.settings(**{"library.db": db})
        items = load_annotations(data, limit) if data is not None else None
        if predictions is not None:
            suite = data.stem if data is not None else predictions.stem
            return score_predictions(load_predictions(predictions), items, suite, rounding), settings
        folder = out or _runs(settings) / f"grounding-{data.stem}-{mode}"
        with chunk_progress("grounding", not as_json) as progress:
            report = await run_grounding(items, _videos(videos), settings, mode, folder, data.stem, progress,
                                         rounding)
        return report, settings

    report, settings = run(as_json, work)
    figures = report.scores.row()
    table = None
    if predictions is None:
        table = _record(results, settings, f"grounding/{report.suite}/{mode}",
                {**figures, "queries": report.scores.queries, "rounding": report.rounding}, "grounding")
    if as_json:
        emit_json(_with_table(report, table))
        return
    console = Console()
    console.print(_scores_table(f"{report.suite} · {report.mode} · {report.entries} entries", figures))
    for line in _grounding_notes(report):
        console.print(line)
    _say_table(console, table)


def _grounding_notes(report) -> list[str]:
    """What a grounding report's reader should know besides the figures: rounding, and entries the
    benchmark's own rules did not count, or counted at zero."""
    notes = []
    if report.rounding != "none":
        notes.append(f"Predicted times rounded to {report.rounding} before scoring.")
    if report.duplicate_entries:
        notes.append(f"[yellow]{report.duplicate_entries} keys appear more than once; each counts once, "
                     "with its last value.[/]")
    if report.annotations_without_entry:
        notes.append(f"[yellow]{report.annotations_without_entry} annotated queries have no entry in the file "
                     "(not counted, as the benchmark does not count them).[/]")
    if report.entries_without_annotation:
        notes.append(f"[yellow]{report.entries_without_annotation} entries match no annotation (counted, against "
                     "the span their key names).[/]")
    if report.errors:
        notes.append(f"[yellow]{report.errors} queries failed or had no prediction (scored 0)[/]")
    if report.per_query_path:
        notes.append(f"per query: {report.per_query_path}\npredictions: {report.predictions_path}")
    return notes


@eval_app.command("presence")
@takes_server_flags
def presence_command(
    data: DataOpt, videos: VideosOpt = None, limit: LimitOpt = None, out: OutOpt = None,
    results: ResultsOpt = None, as_json: JsonOpt = False, db: DbOpt = None, *, server: ServerFlags,

    fit: Annotated[bool, typer.Option("--fit", help="Learn verification weights and a threshold from this run "
                                      "(use a calibration suite, then check them on another).")] = False,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="Draw precision and recall against the threshold "
                                                 "into this PNG.")] = None,
) -> None:
    """Does `ask` find events that happen, and only those? Precision, recall, per-kind figures, the threshold."""
    from marlin_agent.evaluation.presence import presence_cases, run_presence
    from marlin_agent.evaluation.timelens import load_annotations

    async def work():
        settings = server.settings(**{"library.db": db})
        cases = presence_cases(load_annotations(data, limit), data)
        folder = out or _runs(settings) / f"presence-{data.stem}"
        with chunk_progress("presence", not as_json) as progress:
            return await run_presence(cases, _videos(videos), settings, folder, data.stem, progress, fit), settings

    report, settings = run(as_json, work)
    if plot is not None:
        from marlin_agent.evaluation.plot import plot_presence

        plot_presence(report, plot)
    figures = {"precision": report.at_threshold.precision, "recall": report.at_threshold.recall,
               "F1": report.at_threshold.f1, "threshold": report.threshold, "best threshold": report.best.threshold,
               "best F1": report.best.f1, "on true span": report.found_at_true_span, "cases": report.cases,
               **{f"recall {k.kind}": k.rate for k in report.question_kinds},
               **{f"precision {k.kind}": k.precision for k in report.negative_kinds}}
    if report.fitted is not None:
        figures.update({"fitted threshold": report.fitted.threshold, "fitted F1": report.fitted.at_threshold.f1})
    table = _record(results, settings, f"presence/{data.stem}", figures, "presence",
                    verification=settings.verify.model)
    if as_json:
        emit_json(_with_table(report, table))
        return
    console = Console()
    console.print(_scores_table(f"{data.stem}: {report.positives} present, {report.negatives} absent", figures))
    console.print(f"Best threshold {report.best.threshold} (F1 {report.best.f1:.3f}; precision "
                  f"{report.best.precision:.3f}, recall {report.best.recall:.3f}).")
    if report.fitted is not None:
        fitted = report.fitted
        weights = ", ".join(f"{k} = {v}" for k, v in fitted.weights.items())
        # Plain text: rich would read "[verify]" and "[agent]" as markup and drop them.
        console.print(f"Fitted on this run: under [verify] set weights = {{ {weights} }} and bias = {fitted.bias}; "
                      f"under [agent] threshold = {fitted.threshold} (F1 {fitted.at_threshold.f1:.3f} here — "
                      "check it on a held-out suite).", markup=False)
        console.print("How well each signal alone separates right spans from the rest (AUC): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in fitted.separation.items()))
    if plot is not None:
        console.print(f"Plot: {plot}", markup=False)
    _say_table(console, table)


@eval_app.command("questions")
@takes_server_flags
def questions_command(
    data: Annotated[Path, typer.Option("--data", help="A JSON list of questions, each with its form and what a right "
                                       "answer holds (spans, count, duration; see evals/README.md).",
                                       exists=True, dir_okay=False)],
    videos: VideosOpt = None, out: OutOpt = None, results: ResultsOpt = None, as_json: JsonOpt = False,
    db: DbOpt = None, *, server: ServerFlags,
) -> None:
    """Is every question form answered right? The share right overall and per form (every, count, first, last,
    before, after, between, how long), and answers that came back in another form than asked."""
    from marlin_agent.evaluation.forms_eval import load_questions, run_questions

    async def work():
        settings = server.settings(**{"library.db": db})
        folder = out or _runs(settings) / f"questions-{data.stem}"
        items = load_questions(data)
        with chunk_progress("questions", not as_json) as progress:
            answered = []

            def tick(row: dict) -> None:
                answered.append(row)
                if progress is not None:
                    progress(len(answered), len(items))

            report, _ = await run_questions(items, _videos(videos), settings, folder, data.stem, on_row=tick)
            return report, settings

    report, settings = run(as_json, work)
    figures = {"right": report.right, "questions": report.questions, "in another form": report.different_form,
               **{f"{form}": share for form, share in report.by_form.items()}}
    table = _record(results, settings, f"questions/{data.stem}", figures, "questions")
    if as_json:
        emit_json(_with_table(report, table))
        return
    console = Console()
    console.print(_scores_table(f"{data.stem}: {report.questions} questions", figures))
    _say_table(console, table)


@eval_app.command("search")
@takes_server_flags
def search_command(
    data: DataOpt, videos: VideosOpt = None, limit: LimitOpt = None, results: ResultsOpt = None,
    as_json: JsonOpt = False, db: DbOpt = None, *, server: ServerFlags,

) -> None:
    """Recall@1/5/10 of the right video and of a moment overlapping the true span."""
    from marlin_agent.evaluation.search_eval import run_search
    from marlin_agent.evaluation.timelens import load_annotations

    async def work():
        settings = server.settings(**{"library.db": db})
        report = await run_search(load_annotations(data, limit), _videos(videos), settings, data.stem)
        return report, settings

    report, settings = run(as_json, work)
    figures = {**{f"video {k}": v for k, v in report.video_recall.items()},
               **{f"moment {k}": v for k, v in report.moment_recall.items()}, "queries": report.queries}
    table = _record(results, settings, f"search/{data.stem}", figures, "search")
    if as_json:
        emit_json(_with_table(report, table))
    else:
        Console().print(_scores_table(f"{data.stem} · {report.queries} queries", figures))
        _say_table(Console(), table)


@eval_app.command("extract")
@takes_server_flags
def extract_command(
    schema: Annotated[str, typer.Option("--schema", help='The JSON Schema rows are filled with (or "marlin").')],
    labels: Annotated[Path, typer.Option(
        "--labels", help='Labelled rows, JSON lines: {"video_id", "data", ["start", "end"]}.')],
    videos: VideosOpt = None, per: Annotated[Literal["video", "chunk"], typer.Option(
        "--per", help="video or chunk, as the labels are.")] = "video",
    planner: Annotated[Optional[str], typer.Option("--planner", help="The LLM that fills the schema.")] = None,
    out: OutOpt = None, results: ResultsOpt = None, as_json: JsonOpt = False, db: DbOpt = None, *, server: ServerFlags,

) -> None:
    """Schema-valid rate and field accuracy of extraction against labelled rows."""
    from marlin_agent.evaluation.extraction import load_labels, run_extract_eval
    from marlin_agent.extraction.schema import load_schema

    async def work():
        settings = server.settings(**{"library.db": db, "planner.model": planner})
        loaded = load_schema(schema)
        folder = out or _runs(settings) / f"extract-{labels.stem}"
        report = await run_extract_eval(loaded, load_labels(labels), _videos(videos), settings, folder, labels.stem,
                                        per=per)
        return report, settings

    report, settings = run(as_json, work)
    figures = {"valid rate": report.valid_rate, "field accuracy": report.field_accuracy, "rows": report.rows}
    table = _record(results, settings, f"extract/{report.suite}", figures, "extract")
    if as_json:
        emit_json(_with_table(report, table))
    else:
        _say_table(Console(), table)
        Console().print(_scores_table(f"{report.suite} · {report.labelled} labelled rows",
                                      {**figures, **report.per_field}))
