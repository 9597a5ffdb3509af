"""An extraction job on Ray: each shard indexes its whole videos and fills their rows on a worker.

Workers on other hosts cannot write the driver's output file, so a shard hands its rows back
when it finishes and the driver, the only writer, appends them to the one output (the same
journal a local job keeps). A worker that dies is retried by Ray; a killed driver loses only
the rows of the shards still running, never their Marlin calls (the captions are in the
index), and its re-run fills just the rows the output lacks.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from marlin_agent.config import Settings
from marlin_agent.errors import InputError
from marlin_agent.extraction.job import ExtractSummary, Journal, Row, Tally, fill_rows, row_filler, summarise
from marlin_agent.extraction.schema import Schema
from marlin_agent.extraction.units import Per
from marlin_agent.indexing.shards import Shard
from marlin_agent.library.access import open_library
from marlin_agent.scale.finalize import finalize
from marlin_agent.scale.ray_jobs import run_shards, shard_progress


def _extract_shard(settings: Settings, schema: Schema, inputs: list[str], per: Per, instructions: str | None,
                   written: set[str], shard: Shard, progress) -> tuple[list[Row], Tally]:
    """One shard, run on a worker: its new rows, and what filling them cost."""
    filler = row_filler(schema, settings, None, instructions)
    tally = Tally()

    async def rows() -> list[Row]:
        return [row async for row in fill_rows(schema, inputs, settings, per, filler, written, tally,
                                               shard_progress(progress, shard), shard)]

    return asyncio.run(rows()), tally


async def extract_on_ray(schema: Schema, inputs: list[str], settings: Settings, output: Path, address: str,
                         workers: int | None = None, endpoints: list[str] | None = None, per: Per = "video",
                         instructions: str | None = None, retry_failed: bool = False,
                         on_progress=None, overwrite: bool = False, model=None, shard: Shard | None = None,
                         ) -> ExtractSummary:
    """Fill ``schema`` over ``inputs`` as one Ray task per worker, into ``output``; then compact the index.

    It takes every option of the ``extract`` capability by name (``app.capabilities.job_options``); one that
    a cluster cannot honour is refused, never dropped."""
    if model is not None:
        raise InputError("a model object lives in this process and cannot be sent to Ray workers",
                         hint="Name the planner model in the settings ([planner] model) instead.")
    if shard is not None:
        raise InputError("a Ray job shards the footage itself: give --ray or --shard, not both")
    started = time.monotonic()
    row_filler(schema, settings, None, instructions)  # no LLM configured: say so before any cluster starts
    journal = Journal(output, schema, settings.home / "locks", retry_failed, overwrite)
    tally, new = Tally(), []

    def keep(result: tuple[list[Row], Tally]) -> None:
        rows, cost = result
        for row in rows:
            if row.key not in journal.written:  # one video under two names: its rows come twice
                journal.append(row)
                new.append(row)
        tally.add(cost)

    try:
        await run_shards(_extract_shard, (schema, inputs, per, instructions, set(journal.written)), settings,
                         address, workers, endpoints, on_progress, on_result=keep)
        await asyncio.to_thread(lambda: finalize(open_library(settings)))
        await asyncio.to_thread(journal.close)
    finally:
        journal.release()
    return summarise(journal, new, tally, time.monotonic() - started)
