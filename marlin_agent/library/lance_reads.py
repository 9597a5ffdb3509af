"""Reading a local LanceDB index through lancedb's compiled core, without its Python API.

A command that only reads (search, ask over indexed footage) spends most of its start importing
lancedb's Python layer (``library.lance_import``). The reads it makes are few: the table names,
whole tables, filtered scans, one vector and one full-text ranking. Here each is built on the
core's query objects exactly as lancedb 0.40's synchronous API builds it (same filter, limit,
probes, columns and text query), so the rows come back the same, in the same order;
``tests/test_lance_reads.py`` holds the two side by side on one index.

Whatever this cannot do, or fails to do, ``LanceStore`` does with the whole API instead, so errors
read as they always have.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from types import ModuleType
from typing import TypeVar

T = TypeVar("T")


def _run(work: Callable[[], Awaitable[T]]) -> T:
    """What ``work`` awaits (the core's calls must be made inside a running loop), on an event loop of its
    own in this thread. Inside a running loop (an async caller) that cannot be: the caller reads through
    the whole API instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        async def awaited() -> T:
            return await work()

        return asyncio.run(awaited())
    raise RuntimeError("the compiled core's reads need a thread without a running event loop")


class CoreReads:
    """Read-only queries of one local database; safe to share between threads (each query runs on an
    event loop of its own, in the calling thread)."""

    def __init__(self, core: ModuleType, uri: str, metadata_cache_bytes: int) -> None:
        import pyarrow

        self._arrow = pyarrow
        self._lock = threading.Lock()
        self._tables: dict[str, object] = {}

        session = core.Session(metadata_cache_size_bytes=metadata_cache_bytes)
        # Positional, as lancedb.connect passes them: uri, api_key, region, host_override, sql_host_override,
        # read_consistency_interval (seconds: 0, see other processes' writes at once), client_config,
        # storage_options, session, manifest_enabled, namespace properties.
        self._connection = _run(lambda: core.connect(uri, None, None, None, None, 0.0, None, None, session,
                                                     False, None))

    def table_names(self) -> set[str]:
        async def listed() -> set[str]:  # pages, each awaited in one loop
            names: set[str] = set()
            token = None
            while True:
                page = await self._connection.list_tables(None, token, None)
                names.update(page["tables"])
                if not (token := page.get("page_token")):
                    return names

        return _run(listed)

    def _table(self, name: str):
        with self._lock:
            table = self._tables.get(name)
        if table is None:
            table = _run(lambda: self._connection.open_table(name, None, None, None, None))
            with self._lock:
                self._tables.setdefault(name, table)
        return table

    def count(self, table: str, condition: str | None = None) -> int:
        opened = self._table(table)
        return _run(lambda: opened.count_rows(condition))

    def indexed_columns(self, table: str) -> list[list[str]]:
        """The columns of each index of ``table``."""
        opened = self._table(table)
        return [list(index.columns) for index in _run(opened.list_indices)]

    def scan(self, table: str, condition: str | None = None, columns: Sequence[str] | None = None,
             limit: int | None = None) -> list[dict]:
        """Every row ``condition`` names (all without it, up to ``limit``), with only ``columns`` when given."""
        return self._rows(self._query(table, condition, limit, columns))

    def nearest(self, vector: Sequence[float], k: int, condition: str | None, probes: int) -> list[dict]:
        """The ``k`` segments nearest ``vector`` (L2, the column's own metric), filtered before ranking,
        with ``_distance``; without their vectors."""
        # pa.array of the list, as lancedb converts a query vector; both probe bounds, as its nprobes() sets them.
        ranked = self._query("segments", condition, k).nearest_to(self._arrow.array(list(vector)))
        ranked.distance_range(None, None)
        ranked.nprobes(probes)
        ranked.maximum_nprobes(probes)
        ranked.column("vector")
        return self._rows(ranked, drop="vector")

    def matching(self, text: str, k: int, condition: str | None) -> list[dict]:
        """The ``k`` segments whose ``text`` best matches ``text`` (BM25), filtered before ranking, with
        ``_score``; without their vectors."""
        ranked = self._query("segments", condition, k).nearest_to_text({"query": text, "columns": ["text"]})
        return self._rows(ranked, drop="vector")

    def _query(self, table: str, condition: str | None, limit: int | None = None,
               columns: Sequence[str] | None = None):
        """A query of ``table``, its parts set in the order lancedb's synchronous API sets them."""
        query = self._table(table).query()
        if limit is not None:
            query.limit(limit)
        if columns:
            query.select_columns(list(columns))
        if condition is not None:
            query.where(condition)
        return query

    def _rows(self, query, drop: str | None = None) -> list[dict]:
        async def executed():
            stream = await query.execute(None, None)
            return self._arrow.Table.from_batches([batch async for batch in stream], stream.schema)

        result = _run(executed)
        if drop is not None:
            result = result.drop_columns([drop])
        return result.to_pylist()
