"""Commands over the footage library: `index`, `search`, `ask`, `extract`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Optional

import typer

from marlin_agent.cli.options import (
    DbOpt,
    EndpointsOpt,
    JsonOpt,
    NoTranscribeOpt,
    RayOpt,
    ServerFlags,
    ShardOpt,
    WorkersOpt,
    ray_endpoints,
    takes_server_flags,
)
from marlin_agent.cli.running import library_command


def _nothing_indexed(report) -> int:
    """2 when every video named failed (the report says why), as for any input nothing can be done with."""
    return 2 if report.videos_failed and not report.videos and not report.videos_other_shards else 0


@takes_server_flags
def index_command(
    sources: Annotated[Optional[list[str]], typer.Argument(
        metavar="SOURCES...", help="Video files, folders (recursive) or URLs.", show_default=False)] = None,
    recaption: Annotated[bool, typer.Option(
        "--recaption", help="Caption every chunk again (after a model or prompt change).")] = False,
    failed_only: Annotated[bool, typer.Option(
        "--failed-only", help="With --recaption: only the chunks whose last caption failed or broke the "
        "format.")] = False,
    shard: ShardOpt = None,
    repair: Annotated[bool, typer.Option(
        "--repair", help="First mend a damaged index (see `doctor`): rebuild missing search indexes, return damaged "
        "tables to their last good version; then caption again what that lost (in SOURCES, or in every stored "
        "video).")] = False,
    finalize: Annotated[bool, typer.Option(
        "--finalize", help="After every --shard has finished: compact the index, build its vector index, list what is "
        "missing. Takes no sources.")] = False,
    ray: RayOpt = None, workers: WorkersOpt = None, endpoints: EndpointsOpt = None,
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False, *, server: ServerFlags,
) -> None:
    """Caption and transcribe footage into the library; resumes where an earlier run stopped."""
    from marlin_agent.cli.render import show_finalize_report, show_index_report
    from marlin_agent.indexing.run import index_inputs, repair_and_index
    from marlin_agent.indexing.shards import Shard
    from marlin_agent.scale.finalize import finalize_library

    if failed_only and not recaption:
        raise typer.BadParameter("--failed-only goes with --recaption")
    if finalize:
        if sources or shard is not None or recaption:
            raise typer.BadParameter("--finalize takes no sources, --shard or --recaption: "
                                     "run it once, after the shards")
        library_command(as_json, server, db, True, lambda settings, progress: finalize_library(settings),
                        show_finalize_report, needs_server=False)
        return
    if repair:
        if shard is not None or recaption or ray is not None:
            raise typer.BadParameter("--repair goes alone: run it once, then shard or recaption as usual")
        library_command(as_json, server, db, no_transcribe,
                        lambda settings, progress: repair_and_index(sources or [], settings, progress),
                        show_index_report)
        return
    if not sources:
        raise typer.BadParameter("give the files, folders or URLs to index (or --finalize after a sharded job)")
    servers = ray_endpoints(ray, workers, endpoints, shard)
    if ray is not None:
        if recaption:
            raise typer.BadParameter("--ray takes no --recaption: recaption in one process, or shard by shard")
        from marlin_agent.scale.ray_jobs import index_on_ray

        library_command(as_json, server, db, no_transcribe,
                        lambda settings, progress: index_on_ray(sources, settings, ray, workers, servers, progress),
                        show_index_report, needs_server=servers is None)
        return
    again = ("failed" if failed_only else "all") if recaption else None
    library_command(
        as_json, server, db, no_transcribe,
        lambda settings, progress: index_inputs(sources, settings, on_progress=progress, recaption=again,
                                                shard=None if shard is None else Shard.parse(shard)),
        show_index_report, exit_code=_nothing_indexed,
    )


@takes_server_flags
def search_command(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for, in words.", show_default=False)],
    within: Annotated[Optional[list[str]], typer.Option(
        "--in", metavar="SOURCE", help="Only these files, folders or URLs (indexed first if needed). "
        "Repeatable.")] = None,
    k: Annotated[int, typer.Option("-k", "--limit", min=1, max=200, help="How many moments to return.")] = 10,
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False, *, server: ServerFlags,
) -> None:
    """Search indexed footage: events, scenes and speech, by words and by meaning."""
    from marlin_agent.app.search import search_footage
    from marlin_agent.cli.render import show_search

    library_command(
        as_json, server, db, no_transcribe,
        lambda settings, progress: search_footage(query, settings, within, k, progress),
        show_search, needs_server=bool(within),
    )


@takes_server_flags
def ask_command(
    question: Annotated[str, typer.Argument(
        metavar="QUESTION", help='A question about the footage, e.g. "when does the goal '
        'happen".', show_default=False)],
    within: Annotated[list[str], typer.Option(
        "--in", metavar="SOURCE", help="Files, folders or URLs to answer over (indexed first if needed). Repeatable.")],
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False,
    threshold: Annotated[Optional[float], typer.Option(
        "--threshold", min=0, max=1, help="Confidence a moment needs to count as found.")] = None,
    clips: Annotated[Optional[Path], typer.Option(
        "--clips", help="Cut each moment found into a video file in this folder.")] = None,
    sheet: Annotated[Optional[Path], typer.Option(
        "--sheet", help="Write a contact sheet (PNG): a labelled thumbnail strip per moment.")] = None,
    html: Annotated[Optional[Path], typer.Option(
        "--html", help="Write the answer as one self-contained HTML page: each moment playable, its evidence, the "
        "rejected candidates.")] = None,
    planner: Annotated[Optional[str], typer.Option(
        "--planner", help='"pipeline" (no LLM, default) or a planner model: provider/name, or a name served at '
        'MARLIN_PLANNER_BASE_URL (env MARLIN_PLANNER).')] = None, *, server: ServerFlags,
) -> None:
    """Answer a question with verified moments (video, span, confidence, evidence) or an honest "not found"."""
    from marlin_agent.app.ask import ask
    from marlin_agent.cli.render import show_answer

    library_command(
        as_json, server, db, no_transcribe,
        lambda settings, progress: ask(question, within, settings, progress, clips, sheet, page=html),
        lambda console, answer: (show_answer(console, answer), html and console.print(f"Page: {html}")),
        more={"agent.threshold": threshold, "planner.model": planner},
    )


@takes_server_flags
def extract_command(
    schema: Annotated[str, typer.Option(
        "--schema", help='A JSON Schema file for one row, or "marlin" for Marlin\'s own scenes and events (no LLM).')],
    within: Annotated[list[str], typer.Option(
        "--in", metavar="SOURCE", help="Files, folders or URLs (indexed first if needed). Repeatable.")],
    output: Annotated[Optional[Path], typer.Option(
        "-o", "--output", help="OUT.jsonl or OUT.parquet; a re-run resumes it.")] = None,
    per: Annotated[Literal["video", "chunk"], typer.Option(
        "--per", help="One row per video (chunks merged in time order) or per chunk.")] = "video",
    planner: Annotated[Optional[str], typer.Option(
        "--planner", help="The LLM that fills the schema: provider/name, or a name served at "
        "MARLIN_PLANNER_BASE_URL.")] = None,
    instructions: Annotated[Optional[str], typer.Option("--instructions", help="Extra guidance for the LLM.")] = None,
    retry_failed: Annotated[bool, typer.Option(
        "--retry-failed", help="Fill again the rows that failed validation.")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace an output file that is not this job's own (another tool's, or another schema's rows). "
        "Without it such a file is refused, untouched.")] = False,
    shard: Annotated[Optional[str], typer.Option(
        "--shard", metavar="I/N", help="Do shard I of N (0-based): this shard's whole videos, into its own part, "
        "OUT-0000I-of-0000N.jsonl. See docs/scale.md.")] = None,
    ray: RayOpt = None, workers: WorkersOpt = None, endpoints: EndpointsOpt = None,
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False, *, server: ServerFlags,
) -> None:
    """Turn footage into rows that match a JSON Schema: written as they land, resumable, failures kept."""
    from marlin_agent.cli.render import show_extract
    from marlin_agent.extraction.job import claim, extract
    from marlin_agent.extraction.schema import load_schema
    from marlin_agent.file_names import safe_stem
    from marlin_agent.indexing.shards import Shard

    servers = ray_endpoints(ray, workers, endpoints, shard)
    job: dict = {}

    def first() -> None:
        """A bad schema or an output that is not ours is refused before any footage is touched."""
        job["schema"] = loaded = load_schema(schema)
        # The title is the schema author's text, not a path: it names a file in the current folder.
        job["target"] = target = output or Path(f"{safe_stem(loaded.name, 'rows')}.jsonl")
        if not force and shard is None:
            claim(target, loaded)

    async def work(settings, progress):
        share = None if shard is None else Shard.parse(shard)
        loaded, target = job["schema"], job["target"]
        if ray is not None:
            from marlin_agent.scale.extract_on_ray import extract_on_ray

            return await extract_on_ray(loaded, within, settings, target, ray, workers, servers, per=per,
                                        instructions=instructions, retry_failed=retry_failed, on_progress=progress,
                                        force=force)
        return await extract(loaded, within, settings, target, per=per, instructions=instructions,
                             retry_failed=retry_failed, on_progress=progress, shard=share, force=force)

    library_command(as_json, server, db, no_transcribe, work, show_extract, more={"planner.model": planner},
                    needs_server=servers is None, first=first)
