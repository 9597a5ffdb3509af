"""`marlin-agent eval ...`: the eval suites' front door (grounding, presence, search)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Optional
from urllib.parse import urlparse

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

DataOpt = Annotated[Path, typer.Option("--data", help="TimeLens-format annotations: {video_id: {duration, spans, queries}}.")]
VideosOpt = Annotated[Optional[Path], typer.Option("--videos", help="Folder holding <video_id>.mp4 for every annotated video.")]
LimitOpt = Annotated[Optional[int], typer.Option("--limit", min=1, help="Only the first N queries.")]
OutOpt = Annotated[Optional[Path], typer.Option("--out", help="Where per-query results and predictions go (a re-run resumes there).")]
ResultsOpt = Annotated[Path, typer.Option("--results", help="The results table to update (results.md + results.json).")]
RESULTS = Path("evals/results")


def _about(settings) -> dict:
    host = urlparse(settings.server.base_url or "").hostname or "no server"
    return {"server": f"{settings.server.model} @ {host}"}


def _videos(videos: Path | None) -> Path:
    if videos is None:
        raise InputError("--videos is needed to run the suite", hint="Point --videos at the folder of <video_id>.mp4 files.")
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
    data: DataOpt, videos: VideosOpt = None, limit: LimitOpt = None,
    predictions: Annotated[Optional[Path], typer.Option("--predictions", help="Score this results file instead of running anything.")] = None,
    mode: Annotated[str, typer.Option("--mode", help="raw: Marlin find as the product chunks it; agent: find --verify.")] = "raw",
    out: OutOpt = None, results: ResultsOpt = RESULTS, as_json: JsonOpt = False, db: DbOpt = None, *, server: ServerFlags,

) -> None:
    """R1@0.3/0.5/0.7 and mIoU with TimeLens-Bench's own definitions."""
    from marlin_agent.evaluation.grounding import run_grounding, score_predictions
    from marlin_agent.evaluation.results import record
    from marlin_agent.evaluation.timelens import load_annotations, load_predictions

    if mode not in ("raw", "agent"):
        raise typer.BadParameter("--mode is raw or agent")

    async def work():
        settings = server.settings(**{"library.db": db})
        items = load_annotations(data, limit)
        if predictions is not None:
            return score_predictions(load_predictions(predictions), items, data.stem), settings
        folder = out or Path("eval-runs") / f"grounding-{data.stem}-{mode}"
        with chunk_progress("grounding", not as_json) as progress:
            report = await run_grounding(items, _videos(videos), settings, mode, folder, data.stem, progress)
        return report, settings

    report, settings = run(as_json, work)
    figures = report.scores.row()
    if predictions is None:
        record(results, f"grounding/{data.stem}/{mode}", {**figures, "queries": report.scores.queries},
               {"kind": "grounding", **_about(settings)})
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    console = Console()
    console.print(_scores_table(f"{data.stem} · {report.mode} · {report.scores.queries} queries", figures))
    if report.errors:
        console.print(f"[yellow]{report.errors} queries failed or had no prediction (scored 0)[/]")
    if report.per_query_path:
        console.print(f"per query: {report.per_query_path}\npredictions: {report.predictions_path}")


@eval_app.command("presence")
@takes_server_flags
def presence_command(
    data: DataOpt, videos: VideosOpt = None, limit: LimitOpt = None, out: OutOpt = None,
    results: ResultsOpt = RESULTS, as_json: JsonOpt = False, db: DbOpt = None, *, server: ServerFlags,

    fit: Annotated[bool, typer.Option("--fit", help="Learn verification weights and a threshold from this run "
                                      "(use a calibration suite, then check them on another).")] = False,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="Draw precision and recall against the threshold "
                                                 "into this PNG.")] = None,
) -> None:
    """Does `ask` find events that happen, and only those? Precision, recall, per-kind figures, the threshold."""
    from marlin_agent.evaluation.presence import presence_cases, run_presence
    from marlin_agent.evaluation.results import record
    from marlin_agent.evaluation.timelens import load_annotations

    async def work():
        settings = server.settings(**{"library.db": db})
        cases = presence_cases(load_annotations(data, limit), data)
        folder = out or Path("eval-runs") / f"presence-{data.stem}"
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
    record(results, f"presence/{data.stem}", figures, {"kind": "presence", **_about(settings),
                                                       "verification": settings.verify.model})
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    console = Console()
    console.print(_scores_table(f"{data.stem}: {report.positives} present, {report.negatives} absent", figures))
    console.print(f"Best threshold {report.best.threshold} (F1 {report.best.f1:.3f}; precision "
                  f"{report.best.precision:.3f}, recall {report.best.recall:.3f}).")
    if report.fitted is not None:
        fitted = report.fitted
        weights = ", ".join(f"{k} = {v}" for k, v in fitted.weights.items())
        console.print(f"Fitted on this run: under [verify] set weights = {{ {weights} }} and bias = {fitted.bias}; "
                      f"under [agent] threshold = {fitted.threshold} (F1 {fitted.at_threshold.f1:.3f} here — "
                      "check it on a held-out suite).")
        console.print("How well each signal alone separates right spans from the rest (AUC): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in fitted.separation.items()))
    if plot is not None:
        console.print(f"Plot: {plot}")


@eval_app.command("search")
@takes_server_flags
def search_command(
    data: DataOpt, videos: VideosOpt = None, limit: LimitOpt = None, results: ResultsOpt = RESULTS, as_json: JsonOpt = False, db: DbOpt = None, *, server: ServerFlags,

) -> None:
    """Recall@1/5/10 of the right video and of a moment overlapping the true span."""
    from marlin_agent.evaluation.results import record
    from marlin_agent.evaluation.search_eval import run_search
    from marlin_agent.evaluation.timelens import load_annotations

    async def work():
        settings = server.settings(**{"library.db": db})
        report = await run_search(load_annotations(data, limit), _videos(videos), settings, data.stem)
        return report, settings

    report, settings = run(as_json, work)
    figures = {**{f"video {k}": v for k, v in report.video_recall.items()},
               **{f"moment {k}": v for k, v in report.moment_recall.items()}, "queries": report.queries}
    record(results, f"search/{data.stem}", figures, {"kind": "search", **_about(settings)})
    if as_json:
        emit_json(report.model_dump(mode="json"))
    else:
        Console().print(_scores_table(f"{data.stem} · {report.queries} queries", figures))


@eval_app.command("extract")
@takes_server_flags
def extract_command(
    schema: Annotated[str, typer.Option("--schema", help='The JSON Schema rows are filled with (or "marlin").')],
    labels: Annotated[Path, typer.Option("--labels", help='Labelled rows, JSON lines: {"video_id", "data", ["start", "end"]}.')],
    videos: VideosOpt = None, per: Annotated[Literal["video", "chunk"], typer.Option("--per", help="video or chunk, as the labels are.")] = "video",
    planner: Annotated[Optional[str], typer.Option("--planner", help="The LLM that fills the schema.")] = None,
    out: OutOpt = None, results: ResultsOpt = RESULTS, as_json: JsonOpt = False, db: DbOpt = None, *, server: ServerFlags,

) -> None:
    """Schema-valid rate and field accuracy of extraction against labelled rows."""
    from marlin_agent.evaluation.extraction import load_labels, run_extract_eval
    from marlin_agent.evaluation.results import record
    from marlin_agent.extraction.schema import load_schema

    async def work():
        settings = server.settings(**{"library.db": db, "planner.model": planner})
        loaded = load_schema(schema)
        folder = out or Path("eval-runs") / f"extract-{labels.stem}"
        report = await run_extract_eval(loaded, load_labels(labels), _videos(videos), settings, folder, labels.stem,
                                        per=per)
        return report, settings

    report, settings = run(as_json, work)
    figures = {"valid rate": report.valid_rate, "field accuracy": report.field_accuracy, "rows": report.rows}
    record(results, f"extract/{report.suite}", figures, {"kind": "extract", **_about(settings)})
    if as_json:
        emit_json(report.model_dump(mode="json"))
    else:
        Console().print(_scores_table(f"{report.suite} · {report.labelled} labelled rows",
                                      {**figures, **report.per_field}))
