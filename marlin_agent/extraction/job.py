"""Batch extraction jobs: index what is missing, fill a row per unit, write as it goes.

The output file is also the job's journal: a row is appended the moment it is filled, so
a killed job re-run skips every row already written and carries on. Rows that failed
validation stay in the file (``valid: false`` with the error) and are retried only with
``retry_failed``, which first takes them out so no key appears twice. Parquet output is
written from the journal (``OUT.parquet.jsonl``) when the job finishes.

A sharded job (``shard``) takes whole videos, indexes them and writes its own part,
``OUT-0000I-of-0000N.jsonl``; the parts together hold exactly the rows of one unsharded run.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.domain import SCHEMA_VERSION, SchemaVersion, VideoRef
from marlin_agent.errors import InputError, PlannerNotConfigured
from marlin_agent.extraction.fill import Filled, RowFiller, from_marlin
from marlin_agent.extraction.schema import Schema
from marlin_agent.extraction.units import Per, units_of
from marlin_agent.library.shards import Shard


class Row(BaseModel):
    key: str
    video: VideoRef
    start: float
    end: float
    per: str
    data: Any
    valid: bool
    error: str | None = None
    model: str
    schema_name: str


class ExtractSummary(BaseModel):
    schema_version: SchemaVersion = SCHEMA_VERSION
    output: str
    rows_ok: int
    rows_failed: int
    rows_skipped: int
    tokens: int
    marlin_calls: int
    seconds: float


def _journal(output: Path) -> Path:
    return output.with_name(output.name + ".jsonl") if output.suffix == ".parquet" else output


def _read(journal: Path) -> list[Row]:
    rows = []
    if journal.is_file():
        for line in journal.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(Row.model_validate_json(line))
            except ValueError:
                continue  # a line cut short by a kill: its unit is redone
    return rows


def _rewrite(journal: Path, rows: list[Row]) -> None:
    partial = journal.with_name(journal.name + ".partial")
    partial.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    partial.replace(journal)


def write_parquet(journal: Path, target: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _read(journal)
    table = pa.table({
        "video_id": [r.video.id for r in rows], "video_path": [r.video.path for r in rows],
        "video_title": [r.video.title for r in rows], "start": [r.start for r in rows], "end": [r.end for r in rows],
        "per": [r.per for r in rows], "data": [json.dumps(r.data, ensure_ascii=False) for r in rows],
        "valid": [r.valid for r in rows], "error": [r.error for r in rows], "model": [r.model for r in rows],
        "schema": [r.schema_name for r in rows],
    })
    pq.write_table(table, target)


def _model_name(model) -> str:
    return getattr(model, "model_name", None) or str(model)


async def rows_of(schema: Schema, inputs: list[str], settings: Settings, output: Path, per: Per = "video",
                  model=None, instructions: str | None = None, retry_failed: bool = False,
                  on_progress: Callable | None = None, summary: dict | None = None,
                  shard: Shard | None = None) -> AsyncIterator[Row]:
    """Fill and write every row not written yet; yield each new row as it lands."""
    from marlin_agent.library.indexer import index_inputs, open_library

    if output.suffix not in (".jsonl", ".parquet"):
        raise InputError(f"{output.name}: the output must be .jsonl or .parquet")
    if shard is not None:
        output = output.with_name(shard.part_name(output.stem, output.suffix))
    if model is None and not schema.builtin:
        if not settings.planner.enabled:
            raise PlannerNotConfigured(
                f"the schema {schema.name} needs an LLM to fill it, and none is configured",
                hint="Give --planner a LiteLLM-style model (e.g. openai/gpt-4.1-mini) or serve a small model "
                     "locally and set MARLIN_PLANNER=<name> MARLIN_PLANNER_BASE_URL=http://127.0.0.1:8001/v1. "
                     "--schema marlin needs no LLM: it writes Marlin's own scenes and events.")
        from marlin_agent.chat_model import planner_model

        model = planner_model(settings.planner)
    filler = None if schema.builtin else RowFiller(schema, model, instructions)
    model_label = "marlin (no LLM)" if schema.builtin else _model_name(model)

    started = time.monotonic()
    journal = _journal(output)
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.touch()  # a shard with no videos of its own still leaves its (empty) part
    existing = _read(journal)
    lines = len(journal.read_text(encoding="utf-8").splitlines()) if journal.is_file() else 0
    if retry_failed:
        existing = [r for r in existing if r.valid]
    if retry_failed or lines != len(existing):  # drop failed rows to redo, and any line a kill cut short
        _rewrite(journal, existing)
    written = {r.key for r in existing}
    counts = {"ok": 0, "failed": 0, "skipped": 0, "tokens": 0}

    library = await asyncio.to_thread(open_library, settings)
    report = await index_inputs(inputs, settings, library, on_progress, shard=shard, shard_by="video")
    for outcome in report.videos:
        video = VideoRef(id=outcome.id, path=outcome.path, title=outcome.title)
        for unit in await asyncio.to_thread(units_of, library, video, per):
            key = f"{schema.name}:{per}:{unit.key}"
            if key in written:
                counts["skipped"] += 1
                continue
            filled: Filled = from_marlin(unit) if filler is None else await filler.fill(
                unit, settings.planner.max_tokens)
            row = Row(key=key, video=video, start=unit.start, end=unit.end, per=per, data=filled.data,
                      valid=filled.valid, error=filled.error, model=model_label, schema_name=schema.name)
            with journal.open("a", encoding="utf-8") as handle:
                handle.write(row.model_dump_json() + "\n")
            written.add(key)
            counts["ok" if row.valid else "failed"] += 1
            counts["tokens"] += filled.tokens
            yield row
    if output.suffix == ".parquet":
        await asyncio.to_thread(write_parquet, journal, output)
    if summary is not None:
        summary.update(ExtractSummary(output=str(output), rows_ok=counts["ok"], rows_failed=counts["failed"],
                                      rows_skipped=counts["skipped"], tokens=counts["tokens"],
                                      marlin_calls=report.marlin_calls,
                                      seconds=round(time.monotonic() - started, 3)).model_dump())


async def extract(schema: Schema, inputs: list[str], settings: Settings, output: Path, **options) -> ExtractSummary:
    """Run the job to the end and return its summary."""
    summary: dict = {}
    async for _ in rows_of(schema, inputs, settings, output, summary=summary, **options):
        pass
    return ExtractSummary.model_validate(summary)
