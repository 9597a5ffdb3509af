"""Check the index for damage, and repair it.

A crash, a bad disk or a stray ``rm`` can leave the index with missing or altered files while
LanceDB still opens it. ``check`` reads every table whole, checks each stored vector (the
embedder writes unit-length vectors, so a flipped byte shows as a wrong length), queries the
full-text and vector indexes, and checks that the tables agree with each other. ``repair``
rebuilds a missing or broken search index, returns a damaged table to its newest version that
reads cleanly (LanceDB keeps versions), and forgets the captions that this loses so the next
index run asks Marlin for them again.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from pydantic import BaseModel

from marlin_agent.library.protocol import TABLES
from marlin_agent.library.records import RepairReport
from marlin_agent.library.storage_errors import reason
from marlin_agent.library.store import Library

# How far a stored vector's length may stray from 1 before it counts as altered (float32 rounding
# stays below 1e-5).
_LENGTH_SLACK = 1e-3
_BATCH = 8192


class TableHealth(BaseModel):
    name: str
    rows: int = 0
    version: int = 0
    problem: str | None = None


class IndexHealth(BaseModel):
    uri: str
    tables: list[TableHealth]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def _read_whole(table) -> str | None:
    """Why ``table`` (at its checked-out version) does not read cleanly; None when it does. Read in
    batches: a big index is checked without holding it in memory."""
    rows = 0
    try:
        for batch in table.search().limit(None).to_batches(_BATCH):
            if "vector" in batch.schema.names and batch.num_rows:
                column = batch.column("vector")
                vectors = column.values.to_numpy(zero_copy_only=False).reshape(len(column), -1)
                with np.errstate(all="ignore"):  # a flipped exponent overflows: that is what is sought
                    lengths = np.linalg.norm(vectors.astype(np.float64), axis=1)
                bad = np.flatnonzero(~np.isfinite(lengths) | (np.abs(lengths - 1.0) > _LENGTH_SLACK))
                if len(bad):
                    return f"{len(bad)} stored vector(s) were altered (first at row {rows + int(bad[0])})"
            rows += batch.num_rows
    except Exception as exc:  # noqa: BLE001 - any failure to read is the damage being looked for
        return f"cannot be read: {reason(exc)}"
    return None


def _search_indexes(library: Library, store) -> list[str]:
    """What is wrong with the segments' full-text and vector indexes: each is listed and queried once,
    through the store's own reads (a command that only reads never needs more of LanceDB for this)."""
    problems = []
    indexed = store.indexed_columns("segments")
    if ["text"] not in indexed:
        problems.append("the full-text index of segments is missing")
    else:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # A word the table holds: the index must then be read (a stop word would skip it).
                word = max((store.first_value("segments", "text") or "footage").split(), key=len, default="footage")
                store.matching(word, 1)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"the full-text index of segments is damaged: {reason(exc)}")
    if ["vector"] in indexed:
        try:
            store.nearest([0.0] * library.embedder.dim, 1)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"the vector index of segments is damaged: {reason(exc)}")
    return problems


# The tables every index that has captioned anything holds (the others are made when first needed).
_CORE = ("videos", "chunks", "segments")
# What only the footage can give back: a video's record (its path, length and size) is read from its file.
LOST_VIDEOS = "belong to no stored video"


def _agreement(tables: dict[str, Any]) -> list[str]:
    """Rows that point at rows another table lacks."""
    problems = []
    if "chunks" in tables and "videos" in tables:
        videos = set(tables["videos"].to_arrow().column("id").to_pylist())
        chunks = tables["chunks"].to_arrow().select(["id", "video_id"]).to_pylist()
        orphans = [c["id"] for c in chunks if c["video_id"] not in videos]
        if orphans:
            problems.append(f"{len(orphans)} chunk(s) {LOST_VIDEOS} (their video records are gone)")
        if "segments" in tables:
            segments = tables["segments"].to_arrow().select(["chunk_id", "kind"]).to_pylist()
            covered = {row["chunk_id"] for row in segments}
            bare = [c["id"] for c in chunks if c["id"] not in covered]
            if bare:
                problems.append(f"{len(bare)} captioned chunk(s) have lost their scenes and events")
            known = {c["id"] for c in chunks}
            stray = sum(row["kind"] != "transcript" and row["chunk_id"] not in known for row in segments)
            if stray:
                problems.append(f"{stray} scene and event row(s) belong to no stored chunk")
    return problems


def _lance(library: Library):
    """The library's LanceDB store, whose files these checks read; None for a store that keeps its own health
    (one that does not declare ``health_checks = "lance"``, see ``protocol.Store``)."""
    return library.store if getattr(library.store, "health_checks", None) == "lance" else None


def check(library: Library) -> IndexHealth:
    """Everything wrong with the index, table by table; nothing is changed."""
    store = _lance(library)
    if store is None:
        return IndexHealth(uri=library.uri, tables=[], problems=[])
    names = store.tables()
    report, readable = [], {}
    # A folder deleted under an index that has begun: the table is gone, not merely empty.
    problems: list[str] = [f"table {name}: is missing (its folder was deleted)" for name in _CORE
                           if "meta" in names and name not in names and any(n in names for n in _CORE)]
    for name in ("meta", *TABLES):
        if name not in names:
            continue
        health = TableHealth(name=name)
        try:
            table = store.raw_table(name)
            health.version = table.version
            health.rows = table.count_rows()
            table.list_versions()  # the version history must read too: repair walks it
        except Exception as exc:  # noqa: BLE001 - a table that does not even open is damaged
            health.problem = f"cannot be opened: {reason(exc)}"
        else:
            health.problem = _read_whole(table)
            if health.problem is None:
                readable[name] = table
        if health.problem:
            problems.append(f"table {name}: {health.problem}")
        report.append(health)
    if "segments" in readable:
        problems += _search_indexes(library, store)
    if not any(p.startswith("table ") for p in problems):
        problems += _agreement(readable)
    return IndexHealth(uri=library.uri, tables=report, problems=problems)


def _restore(table) -> str | None:
    """Return ``table`` to its newest version that reads cleanly; what was done, or None if none does."""
    latest = table.version
    for version in sorted((v["version"] for v in table.list_versions()), reverse=True):
        if version >= latest:
            continue
        try:
            table.checkout(version)
        except Exception:  # noqa: BLE001 - that version's files are gone too: look further back
            continue
        if _read_whole(table) is None:
            table.checkout_latest()
            table.restore(version)
            return f"returned from version {latest} to version {version}"
    table.checkout_latest()
    return None


def mend_search_indexes(library: Library) -> bool:
    """Rebuild the segments' search indexes when they are missing or broken; whether that was needed.
    Cheap (one query each), so every index run does it: a deleted full-text index does not wait for
    someone to run ``doctor``."""
    store = _lance(library)
    if store is None or "segments" not in store.tables():
        return False
    if store.count("segments") == 0 or not _search_indexes(library, store):
        return False
    store.rebuild_search_indexes()
    return True


def repair(library: Library) -> RepairReport:
    """Repair what ``check`` finds; the next index run captions again whatever the repair forgot."""
    report = RepairReport(uri=library.uri)
    store = _lance(library)
    if store is None:
        report.forgotten_chunks = library.forget_uncovered_chunks()
        return report
    for health in check(library).tables:
        if health.problem is None:
            continue
        table = None
        try:
            table = store.raw_table(health.name)
            done = _restore(table)
        except Exception:  # noqa: BLE001 - a table that does not open is made again, empty
            done = None
        if done is None:
            store.drop_table(health.name)
            done = "made again, empty (no older version read cleanly)"
        report.restored.append(f"{health.name}: {done}")
    missing = [name for name in _CORE if name not in store.tables()]
    store.forget_table_handles()
    library.forget_video_refs()
    if missing:
        library.create_tables()
        report.restored += [f"{name}: made again, empty (its folder was deleted)" for name in missing]
    if "segments" in store.tables() and _search_indexes(library, store):
        store.rebuild_search_indexes()
        report.rebuilt.append("the full-text index of segments")
    library.forget_stray_segments()  # their chunks are gone: captioned again, they would be there twice
    report.forgotten_chunks = library.forget_uncovered_chunks()
    report.problems_left = left_after_repair(library)
    return report


def left_after_repair(library: Library) -> list[str]:
    """What is still wrong, each with what would mend it."""
    return [problem + ("; give the footage to mend it: marlin-agent index --repair FILES-OR-FOLDERS"
                       if LOST_VIDEOS in problem else "") for problem in check(library).problems]
