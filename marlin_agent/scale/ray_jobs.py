"""Jobs on Ray: the shards of ``--shard I/N`` as Ray tasks, one per worker.

Each task is one shard of the job (the same deterministic share as ``index --shard I/N``), so
it needs no coordination and writes only its own rows. Ray schedules the tasks on the
cluster's workers and retries one whose worker dies; a retried shard (like a re-run job) finds
its finished chunks in the index and asks Marlin only for the rest. The driver shows the
shards' progress and takes each shard's result as it finishes; an index job then merges the
reports and compacts the index once (an extraction job, ``scale.extract_on_ray``, writes rows).

Ray is an optional extra (``ray``); nothing here imports it before a job asks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from marlin_agent.config import Settings
from marlin_agent.errors import JobFailed, MarlinAgentError, MissingDependency
from marlin_agent.indexing.reports import IndexProgress, IndexReport
from marlin_agent.indexing.run import index_inputs
from marlin_agent.indexing.shards import Shard
from marlin_agent.library.access import open_library
from marlin_agent.scale.finalize import finalize

# What a worker needs from the driver's environment: LanceDB's object-store credentials and the
# model locations and offline switches. Everything else travels inside the settings.
_FORWARDED = ("AWS_", "GOOGLE_", "AZURE_", "HF_", "MARLIN_")
# Seconds between two looks at the shards' progress.
_POLL = 0.5

T = TypeVar("T")


def _ray(address: str):
    # A cluster started where ~/.ray/auth_token exists runs with token authentication; Ray 2.60
    # reads that mode from the cluster only for ``auto``, so a driver given the address must be told,
    # before Ray is imported (its configuration is read once, at import).
    token = os.environ.get("RAY_AUTH_TOKEN") or (Path.home() / ".ray" / "auth_token").is_file()
    if address not in ("local", "auto") and token and "RAY_AUTH_MODE" not in os.environ:
        os.environ["RAY_AUTH_MODE"] = "token"
    try:
        import ray
    except ImportError as exc:
        raise MissingDependency("Running a job on Ray", "ray") from exc
    return ray


def _connect(ray, address: str) -> None:
    """``local``: a cluster for this job on this machine; ``auto``: the running cluster (``ray start``,
    RAY_ADDRESS); else a cluster's address, e.g. ``ray://head:10001``."""
    env = {k: v for k, v in os.environ.items() if k.startswith(_FORWARDED)}
    options = {"runtime_env": {"env_vars": env}, "log_to_driver": False, "ignore_reinit_error": True}
    try:
        if address == "local":
            ray.init(include_dashboard=False, **options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise JobFailed(f"cannot reach the Ray cluster at {address}: {str(exc).splitlines()[0][:300]}",
                        hint="Start one with `ray start --head` (then --ray auto), give its address, "
                             "or use --ray local for a cluster on this machine.") from None


def _index_shard(settings: Settings, inputs: list[str], shard: Shard, progress) -> IndexReport:
    """One shard of an index job, run on a worker."""
    return asyncio.run(index_inputs(inputs, settings, on_progress=shard_progress(progress, shard), shard=shard))


def shard_progress(progress, shard: Shard) -> Callable[[IndexProgress], None]:
    """What a shard on a worker hands the indexer: its progress, sent on to the driver's display."""
    def report(p: IndexProgress) -> None:
        progress.report.remote(shard.index, p.overall_done, p.overall_total, p.looking)

    return report


class _Progress:
    """The shards' progress as they last reported it (a Ray actor: workers write, the driver reads)."""

    def __init__(self) -> None:
        self.shards: dict[int, tuple[int, int, int]] = {}

    def report(self, index: int, done: int, total: int, looking: int) -> None:
        self.shards[index] = (done, total, looking)

    def read(self) -> tuple[int, int, int]:
        values = list(self.shards.values())
        return tuple(sum(v[n] for v in values) for n in range(3)) if values else (0, 0, 0)


def _results(ray, refs) -> list:
    """The shards' reports; a shard that failed for good says why, in the project's own errors."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, MarlinAgentError):
            raise cause from None
        raise JobFailed(f"a shard failed on the cluster: {str(cause or exc).splitlines()[0][:300]}") from None
    except ray.exceptions.RayError as exc:  # a worker that kept dying, beyond Ray's retries
        raise JobFailed(f"a shard could not finish on the cluster: {str(exc).splitlines()[0][:300]}") from None


def merge_reports(reports: list[IndexReport]) -> IndexReport:
    """The job's report: counts added up; a video's outcome from every shard that worked on it."""
    merged = IndexReport(shard=f"{len(reports)} Ray tasks")
    for report in reports:
        for field in ("videos_failed", "chunks_captioned", "chunks_failed", "transcript_lines", "minutes_of_footage",
                      "marlin_calls", "marlin_prompt_tokens", "marlin_completion_tokens"):
            setattr(merged, field, getattr(merged, field) + getattr(report, field))
        merged.failed += report.failed
    outcomes: dict[str, list] = {}
    for report in reports:
        for video in report.videos:
            outcomes.setdefault(video.id, []).append(video)
    for parts in outcomes.values():
        first = parts[0]
        done, planned, failed = (sum(getattr(p, f) for p in parts) for f in ("chunks_done", "chunks_planned",
                                                                              "chunks_failed"))
        statuses = {p.status for p in parts}
        status = next((s for s in ("failed", "partial", "new", "updated") if s in statuses), "unchanged")
        if status == "failed" and done:
            status = "partial"
        merged.videos.append(first.model_copy(update={
            "status": status, "chunks_done": done, "chunks_planned": planned, "chunks_failed": failed,
            "transcript": next((p.transcript for p in parts if p.transcript != "none"), "none"),
            "failures": [f for p in parts for f in p.failures]}))
        counter = f"videos_{status}"
        setattr(merged, counter, getattr(merged, counter) + 1)
    merged.minutes_of_footage = round(merged.minutes_of_footage, 2)
    return merged


async def index_on_ray(inputs: list[str], settings: Settings, address: str, workers: int | None = None,
                       endpoints: list[str] | None = None,
                       on_progress: Callable[[IndexProgress], None] | None = None) -> IndexReport:
    """Index ``inputs`` as one Ray task per worker (``workers``, default the cluster's CPUs),
    shard i talking to ``endpoints[i % len(endpoints)]``; then compact the index once."""
    started = time.monotonic()
    reports = await run_shards(_index_shard, (inputs,), settings, address, workers, endpoints, on_progress)
    await asyncio.to_thread(lambda: finalize(open_library(settings)))
    merged = merge_reports(reports)
    merged.seconds = round(time.monotonic() - started, 2)
    return merged


async def run_shards(work: Callable[..., T], args: tuple, settings: Settings, address: str, workers: int | None,
                     endpoints: list[str] | None, on_progress: Callable[[IndexProgress], None] | None = None,
                     on_result: Callable[[T], None] | None = None) -> list[T]:
    """``work(settings, *args, shard, progress)`` as one Ray task per shard; the results in shard order.

    The index's tables are created here, once, before any shard writes. ``on_result`` sees each
    shard's result on the driver as soon as that shard finishes, so a caller can keep it before
    the rest are done. ``progress`` is an actor that ``shard_progress`` reports to.
    """
    ray = _ray(address)
    library = await asyncio.to_thread(open_library, settings)
    await asyncio.to_thread(library.create_tables)
    # Ray prints its cluster's news (a worker that died, a task retried) on stdout, which under
    # --json holds one document only: its lines go to stderr with the other logs.
    with contextlib.redirect_stdout(sys.stderr):
        await asyncio.to_thread(_connect, ray, address)
        try:
            return await _wait_for_shards(ray, work, args, settings, workers, endpoints, on_progress, on_result)
        finally:
            await asyncio.to_thread(ray.shutdown)


async def _wait_for_shards(ray, work, args, settings, workers, endpoints, on_progress, on_result) -> list:
    count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    servers = endpoints or [settings.server.base_url]
    progress = ray.remote(_Progress).options(num_cpus=0).remote()
    task = ray.remote(work).options(max_retries=3, retry_exceptions=False)
    # Settings travel pickled, not as JSON, which would mask the API keys they carry.
    refs = [task.remote(_served_by(settings, servers[i % len(servers)]), *args, Shard(index=i, count=count), progress)
            for i in range(count)]
    results, pending = {}, list(refs)
    while pending:
        finished, pending = await asyncio.to_thread(ray.wait, pending, num_returns=1, timeout=_POLL)
        for ref in finished:
            results[ref] = (await asyncio.to_thread(_results, ray, [ref]))[0]
            if on_result is not None:
                on_result(results[ref])
        if on_progress is not None:
            done, total, looking = await asyncio.to_thread(ray.get, progress.read.remote())
            on_progress(IndexProgress("", 0, 0, done, total, looking))
    return [results[ref] for ref in refs]


def _served_by(settings: Settings, endpoint: str | None) -> Settings:
    if not endpoint or endpoint == settings.server.base_url:
        return settings
    return settings.model_copy(update={"server": settings.server.model_copy(update={"base_url": endpoint})})
