"""What the command line adds to the commands over the library: `index`'s modes (recaption, shards,
repair, finalize, Ray), `ask --html`, `extract`'s shards and Ray."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from marlin_agent.cli.commands import Invocation
from marlin_agent.cli.options import EndpointsOpt, RayOpt, ShardOpt, WorkersOpt, ray_endpoints
from marlin_agent.config import with_values
from marlin_agent.errors import exit_code_for


def _nothing_indexed(report) -> int:
    """Non-zero when every video named failed (the report says why): 3 when the server failed every one
    (the same command may work later), else 2, as for any input nothing can be done with."""
    every_one = all(video.status == "failed" for video in report.videos) and not report.videos_unchanged
    if not (report.videos_failed and every_one and not report.videos_other_shards):
        return 0
    return 3 if report.failed and all(exit_code_for(f.code) == 3 for f in report.failed) else 2


def _finalize(call: Invocation, shard: str | None, recaption: bool) -> None:
    """index --finalize is the finalize capability, under index's name."""
    from marlin_agent.app.capabilities import BY_NAME
    from marlin_agent.cli.render import show_finalize_report

    if call.arguments["sources"] or shard is not None or recaption:
        raise typer.BadParameter("--finalize takes no sources, --shard or --recaption: run it once, after the shards")
    call.needs_server, call.show = False, show_finalize_report
    finalizing = BY_NAME["finalize"]

    async def finalized(run, arguments):
        return await finalizing.function(run=run)

    call.work = finalized


def _repair(call: Invocation) -> None:
    call.arguments["repair"] = True
    # Damage the repair could not mend is a failure (1, storage), the report saying what would mend it.
    call.exit_code = lambda report: 1 if report.repair and report.repair.problems_left else _nothing_indexed(report)


def _on_ray(call: Invocation, ray: str, workers: int | None, servers: list[str] | None) -> None:
    from marlin_agent.scale.ray_jobs import index_on_ray

    call.needs_server = servers is None

    async def on_ray(run, arguments):
        return await index_on_ray(arguments["sources"], run.settings, ray, workers, servers, run.on_index)

    call.work = on_ray


def index_modes(
    call: Invocation,
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
) -> None:
    """index's own spellings of its recaption, shard and repair, and its command-line modes (finalize, Ray);
    without them, the sources are indexed (this shard's share, recaptioned if asked)."""
    from marlin_agent.cli.render import show_index_report
    from marlin_agent.indexing.shards import Shard

    if failed_only and not recaption:
        raise typer.BadParameter("--failed-only goes with --recaption")
    call.show = show_index_report
    if finalize:
        return _finalize(call, shard, recaption)
    if repair:
        if shard is not None or recaption or ray is not None:
            raise typer.BadParameter("--repair goes alone: run it once, then shard or recaption as usual")
        return _repair(call)
    if not call.arguments["sources"]:
        raise typer.BadParameter("give the files, folders or URLs to index (or --finalize after a sharded job)")
    servers = ray_endpoints(ray, workers, endpoints, shard)
    if ray is not None:
        if recaption:
            raise typer.BadParameter("--ray takes no --recaption: recaption in one process, or shard by shard")
        return _on_ray(call, ray, workers, servers)
    if shard is not None:
        Shard.parse(shard)  # a shard that does not exist is refused before anything is opened
    call.arguments |= {"recaption": ("failed" if failed_only else "all") if recaption else None, "shard": shard}
    call.exit_code = _nothing_indexed
    return None


def ask_page(
    call: Invocation,
    html: Annotated[Optional[Path], typer.Option(
        "--html", help="Write the answer as one self-contained HTML page: each moment playable, its evidence, the "
        "rejected candidates.")] = None,
) -> None:
    """ask --html: the answer as a page too."""
    from marlin_agent.cli.render import show_answer

    call.arguments["page"] = html
    call.show = lambda console, answer: (show_answer(console, answer), html and console.print(f"Page: {html}"))


def extract_modes(
    call: Invocation,
    shard: Annotated[Optional[str], typer.Option(
        "--shard", metavar="I/N", help="Do shard I of N (0-based): this shard's whole videos, into its own part, "
        "OUT-0000I-of-0000N.jsonl. See docs/scale.md.")] = None,
    ray: RayOpt = None, workers: WorkersOpt = None, endpoints: EndpointsOpt = None,
) -> None:
    """extract's shards (the capability's, spelled beside --ray, which a shard excludes) and Ray jobs."""
    servers = ray_endpoints(ray, workers, endpoints, shard)
    call.arguments["shard"] = shard
    call.needs_server = servers is None
    if ray is None:
        return

    async def on_ray(run, arguments):
        from marlin_agent.app.capabilities import job_options
        from marlin_agent.scale.extract_on_ray import extract_on_ray

        settings = with_values(run.settings, {"planner.model": arguments["planner"]})
        return await extract_on_ray(arguments["schema"], arguments["sources"], settings, arguments["output"], ray,
                                    workers, servers, on_progress=run.on_index, **job_options(arguments))

    call.work = on_ray
