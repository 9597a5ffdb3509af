"""Batch extraction jobs: index what is missing, fill a row per unit, write as it goes.

The output file is also the job's journal: a row is appended the moment it is filled, so
a killed job re-run skips every row already written and carries on. Rows that failed
validation stay in the file (``valid: false`` with the error) and are retried only with
``retry_failed``, which first takes them out so no key appears twice. Parquet output is
written from the journal (``OUT.parquet.jsonl``) when the job finishes.

An output is appended to only when it is this job's own: every row carries the schema's
fingerprint, and a file holding anything else (another tool's lines, another schema's rows)
is refused unless the caller asks to replace it (``force``).

A sharded job (``shard``) takes whole videos, indexes them and writes its own part,
``OUT-0000I-of-0000N.jsonl``; the parts together hold exactly the rows of one unsharded run.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.domain import SCHEMA_VERSION, SchemaVersion, VideoRef
from marlin_agent.errors import InputError, OutputBusy, OutputNotOurs, PlannerNotConfigured
from marlin_agent.extraction.fill import Filled, RowFiller, from_marlin
from marlin_agent.extraction.schema import Schema
from marlin_agent.extraction.units import Per, units_of
from marlin_agent.indexing.shards import Shard
from marlin_agent.private_files import as_users


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
    schema_id: str | None = None  # the schema's fingerprint: which job's output this row belongs to
    attempts: int = 0  # answers the LLM gave for it (1: valid the first time; 0: no LLM)
    first_valid: bool | None = None  # whether the LLM's first answer matched the schema (None: no LLM)
    warnings: list[str] = []  # values the row holds that its captions do not say (and say otherwise)


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
        for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rows.append(Row.model_validate_json(line))
            except ValueError:
                continue  # a line cut short by a kill: its unit is redone
    return rows


_ROW_START = '{"key":'  # how every row this tool writes begins (Row's first field)


def _cut_row(line: str) -> bool:
    """Whether ``line`` can be a row that a kill cut short: the start of one, and not whole JSON (a whole
    object that is not a row is someone's unterminated line)."""
    if not (line.startswith(_ROW_START) or _ROW_START.startswith(line)):
        return False
    try:
        json.loads(line)
    except ValueError:
        return True
    return False


def _foreign(journal: Path, schema: Schema) -> str | None:
    """Why ``journal`` is not this job's own output (None when it is, or holds nothing).

    Only the last line may fail to read: a kill can cut it short. Any other line that is not a row,
    or a row of another schema, means the file belongs to someone else."""
    try:
        text = journal.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return "it is not a text file"
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = Row.model_validate_json(line)
        except ValueError:
            if number == len(lines) and not text.endswith("\n") and _cut_row(line):
                continue
            return f"line {number} is not a row this tool wrote"
        if row.schema_name != schema.name or (row.schema_id and row.schema_id != schema.fingerprint):
            return f"it holds rows of another schema ({row.schema_name}, or an earlier version of it)"
    return None


def _rewrite(journal: Path, rows: list[Row]) -> None:
    partial = journal.with_name(journal.name + ".partial")
    partial.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    as_users(partial).replace(journal)


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
    as_users(target)


def check_output(output: Path) -> None:
    if output.suffix not in (".jsonl", ".parquet"):
        raise InputError(f"{output.name}: the output must be .jsonl or .parquet")


def claim(output: Path, schema: Schema, force: bool = False) -> None:
    """Make sure writing ``output`` destroys nothing: it is new, empty, or this schema's own rows.

    Anything else is refused untouched, or removed when ``force`` says the caller wants it replaced."""
    check_output(output)
    journal = _journal(output)
    if output.is_dir() or journal.is_dir():
        raise InputError(f"{output} is a folder; give a file name ending in .jsonl or .parquet")
    if journal.is_file():
        reason = _foreign(journal, schema)
    elif output != journal and output.is_file():
        reason = "this tool keeps no journal beside it"
    else:
        return
    if reason is None:
        return
    if not force:
        raise OutputNotOurs(f"{output} already exists and is not this job's output ({reason}); nothing was "
                            "written to it")
    journal.unlink(missing_ok=True)
    output.unlink(missing_ok=True)


class Journal:
    """The output file as the job's journal: the rows written so far, and where the next one goes.

    ``force`` replaces an output that is not this job's own; without it such a file is refused, untouched."""

    def __init__(self, output: Path, schema: Schema, locks: Path, retry_failed: bool = False,
                 force: bool = False) -> None:
        check_output(output)
        self.output, self.path = output, _journal(output)
        self._lock = _hold(output, locks)  # before the file is judged: the other writer may be mid-row
        claim(output, schema, force)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()  # a shard with no videos of its own still leaves its (empty) part
        as_users(self.path)
        existing = _read(self.path)
        lines = len(self.path.read_text(encoding="utf-8").splitlines())
        if retry_failed:
            existing = [r for r in existing if r.valid]
        if retry_failed or lines != len(existing):  # drop failed rows to redo, and any line a kill cut short
            _rewrite(self.path, existing)
        self.written = {r.key for r in existing}

    def append(self, row: Row) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(row.model_dump_json() + "\n")
        self.written.add(row.key)

    def close(self) -> None:
        """Write the Parquet file, if that is the output, and let another job write it."""
        try:
            if self.output.suffix == ".parquet":
                write_parquet(self.path, self.output)
        finally:
            self.release()

    def release(self) -> None:
        if not self._lock.closed:
            self._lock.close()


def _hold(output: Path, locks: Path):
    """One writer per output on this machine: an exclusive lock named after the output's real path, kept
    under ``locks`` (never beside the user's file), held until the job ends."""
    locks.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(str(output.expanduser().resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    handle = open(locks / f"extract-{name}.lock", "a+")  # noqa: SIM115 - held for the whole job
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise OutputBusy(f"another extract is writing {output} now") from None
    return handle


class Tally(BaseModel):
    """What filling rows cost and skipped; added up over the shards of a job."""

    skipped: int = 0
    tokens: int = 0
    marlin_calls: int = 0

    def add(self, other: Tally) -> None:
        for field in Tally.model_fields:
            setattr(self, field, getattr(self, field) + getattr(other, field))


def filling_model(schema: Schema, settings: Settings, model=None):
    """The LLM that fills ``schema``'s rows (``model``, else the configured planner); None for Marlin's own
    schema. Refuses at once when a custom schema has none."""
    if schema.builtin or model is not None:
        return model
    if not settings.planner.enabled:
        raise PlannerNotConfigured(
            f"the schema {schema.name} needs an LLM to fill it, and none is configured",
            hint='a LiteLLM-style model (e.g. openai/gpt-4.1-mini), or serve a small model locally and set '
                 "MARLIN_PLANNER=<name> MARLIN_PLANNER_BASE_URL=http://127.0.0.1:8001/v1. The schema \"marlin\" needs "
                 "no LLM: it writes Marlin's own scenes and events.", parameter="planner")
    from marlin_agent.llm.models import planner_llm

    return planner_llm(settings.planner, settings.home)


def row_filler(schema: Schema, settings: Settings, model=None, instructions: str | None = None) -> RowFiller | None:
    """What fills ``schema``'s rows: ``None`` for Marlin's own schema, else an LLM (see ``filling_model``)."""
    if schema.builtin:
        return None
    return RowFiller(schema, filling_model(schema, settings, model), instructions,
                     timeout=settings.planner.request_timeout)


async def fill_rows(schema: Schema, inputs: list[str], settings: Settings, per: Per, filler: RowFiller | None,
                    written: set[str], tally: Tally, on_progress: Callable | None = None,
                    shard: Shard | None = None) -> AsyncIterator[Row]:
    """Index the inputs (a shard's whole videos), then fill every row whose key is not in ``written``."""
    from marlin_agent.indexing.run import index_inputs
    from marlin_agent.library.access import open_library

    model_label = "marlin (no LLM)" if filler is None else filler.model_name
    library = await asyncio.to_thread(open_library, settings)
    report = await index_inputs(inputs, settings, library, on_progress, shard=shard, shard_by="video")
    tally.marlin_calls += report.marlin_calls
    for outcome in report.videos:
        video = VideoRef(id=outcome.id, path=outcome.path, title=outcome.title)
        for unit in await asyncio.to_thread(units_of, library, video, per):
            key = f"{schema.name}:{per}:{unit.key}"
            if key in written:
                tally.skipped += 1
                continue
            filled: Filled = from_marlin(unit) if filler is None else await filler.fill(
                unit, settings.planner.max_tokens)
            tally.tokens += filled.tokens
            yield Row(key=key, video=video, start=unit.start, end=unit.end, per=per, data=filled.data,
                      valid=filled.valid, error=filled.error, model=model_label, schema_name=schema.name,
                      schema_id=schema.fingerprint, attempts=filled.attempts,
                      first_valid=filled.first_valid if filled.attempts else None,
                      warnings=filled.contradictions)


def summarise(journal: Journal, rows: list[Row], tally: Tally, seconds: float) -> ExtractSummary:
    valid = sum(r.valid for r in rows)
    return ExtractSummary(output=str(journal.output), rows_ok=valid, rows_failed=len(rows) - valid,
                          rows_skipped=tally.skipped, tokens=tally.tokens, marlin_calls=tally.marlin_calls,
                          seconds=round(seconds, 3))


async def rows_of(schema: Schema, inputs: list[str], settings: Settings, output: Path, per: Per = "video",
                  model=None, instructions: str | None = None, retry_failed: bool = False,
                  on_progress: Callable | None = None, summary: dict | None = None,
                  shard: Shard | None = None, overwrite: bool = False) -> AsyncIterator[Row]:
    """Fill and write every row not written yet; yield each new row as it lands."""
    check_output(output)
    if shard is not None:
        output = output.with_name(shard.part_name(output.stem, output.suffix))
    # No LLM to fill the rows is said before the output is opened: a refused job leaves no empty file.
    filler = row_filler(schema, settings, model, instructions)
    # A file that is not ours, or that another job writes now: refused before any work.
    journal = Journal(output, schema, settings.home / "locks", retry_failed, overwrite)
    started = time.monotonic()
    tally, new = Tally(), []
    try:
        async for row in fill_rows(schema, inputs, settings, per, filler, journal.written, tally, on_progress,
                                   shard):
            journal.append(row)
            new.append(row)
            yield row
        await asyncio.to_thread(journal.close)
    finally:
        journal.release()
    if summary is not None:
        summary.update(summarise(journal, new, tally, time.monotonic() - started).model_dump())


async def extract(schema: Schema, inputs: list[str], settings: Settings, output: Path, **options) -> ExtractSummary:
    """Run the job to the end and return its summary."""
    summary: dict = {}
    async for _ in rows_of(schema, inputs, settings, output, summary=summary, **options):
        pass
    return ExtractSummary.model_validate(summary)
