"""The store the product runs: LanceDB, in a folder or in a bucket (S3, GCS, Azure).

One table per kind of row. Events, scenes and transcript lines share ``segments``, so one
full-text query and one vector query rank them against each other: three tables cost six
queries per search, measured at 140–180 ms on 100,000 segments against about 40 ms for one.
Writes are merges on ``id``; every write makes a table version, pruned by ``optimize``.
"""

from __future__ import annotations

import re
import shutil
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import ClassVar, TypeVar

from marlin_agent.errors import DbReadOnly, DbUnavailable, MissingDependency
from marlin_agent.library.lance_import import import_lancedb, lancedb_core
from marlin_agent.library.lance_reads import CoreReads
from marlin_agent.library.protocol import TABLES, Where
from marlin_agent.library.storage_errors import storage_errors, translated

# Table versions younger than this survive a clean-up, so a search running in another process
# never loses the files of the version it is reading.
_KEEP_VERSIONS = timedelta(minutes=10)
# Below this many segments an exact scan is fast enough; above it an IVF index is built.
_VECTOR_INDEX_ROWS = 20_000
# The table-metadata cache of one connection (manifests, file metadata). LanceDB's default keeps what
# every version it has seen needs; bounded, a process that writes for hours stays flat. (The search
# indexes' cache keeps LanceDB's default: a library of a million segments searches from memory.)
_METADATA_CACHE_BYTES = 64 * 1024 * 1024
# Ids per delete: a filter naming thousands of ids at once is slow to parse.
_IDS_PER_DELETE = 500


T = TypeVar("T")


def _core_reads(uri: str) -> CoreReads | None:
    """A reader of the local index at ``uri`` through lancedb's compiled core; None when that cannot be had."""
    try:
        core = lancedb_core()
        return CoreReads(core, uri, _METADATA_CACHE_BYTES) if core is not None else None
    except Exception:  # noqa: BLE001 - the whole API is used instead, and says what is wrong
        return None


def _store_reason(exc: Exception) -> str:
    """The part of an object store's error a user can act on (its own message is a Rust debug dump)."""
    text = str(exc)
    code = re.search(r"<Code>([^<]+)</Code>", text)
    if code:
        return {"NoSuchBucket": "the bucket does not exist", "AccessDenied": "access denied",
                "InvalidAccessKeyId": "the access key is not known", "SignatureDoesNotMatch": "the secret key is wrong",
                }.get(code[1], code[1])
    for needle, reason in (("onnection refused", "the endpoint refused the connection"),
                           ("error sending request", "the endpoint could not be reached"),
                           ("dns error", "the endpoint's host name does not resolve"),
                           ("credential", "no credentials were found")):
        if needle in text:
            return reason
    return text.splitlines()[0][:300] if text else type(exc).__name__


def _quoted(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _sql(where: Where | None) -> str | None:
    """``where`` as a LanceDB filter; "false" when it names no row (an empty list)."""
    clauses = []
    for column, wanted in (where or {}).items():
        if isinstance(wanted, bool):
            clauses.append(f"{column} = {'true' if wanted else 'false'}")
        elif isinstance(wanted, int):
            clauses.append(f"{column} = {wanted}")
        elif isinstance(wanted, str):
            clauses.append(f"{column} = {_quoted(wanted)}")
        elif not wanted:
            return "false"
        else:
            clauses.append(f"{column} IN ({', '.join(_quoted(v) for v in wanted)})")
    return " AND ".join(clauses) or None


def _schemas(dim: int):
    import pyarrow as pa

    times = [pa.field("start", pa.float64()), pa.field("end", pa.float64())]
    made_by = [pa.field("model", pa.string()), pa.field("prompt_version", pa.int32())]
    return {
        "videos": pa.schema([pa.field("id", pa.string()), pa.field("record", pa.string()),
                             pa.field("path", pa.string()), pa.field("title", pa.string())]),
        "chunks": pa.schema([pa.field("id", pa.string()), pa.field("video_id", pa.string()),
                             pa.field("idx", pa.int32()), *times, pa.field("scene", pa.string()),
                             pa.field("raw", pa.string()), pa.field("format_ok", pa.bool_()), *made_by]),
        "segments": pa.schema([pa.field("id", pa.string()), pa.field("video_id", pa.string()),
                               pa.field("chunk_id", pa.string()), pa.field("kind", pa.string()), *times,
                               pa.field("text", pa.string()), *made_by, pa.field("words", pa.string()),
                               pa.field("vector", pa.list_(pa.float32(), dim))]),
        "failures": pa.schema([pa.field("id", pa.string()), pa.field("video_id", pa.string()), *times,
                               pa.field("code", pa.string()), pa.field("message", pa.string()),
                               pa.field("attempts", pa.int32()), pa.field("at", pa.string())]),
        "shards": pa.schema([pa.field(name, kind) for name, kind in (
            ("id", pa.string()), ("index", pa.int32()), ("count", pa.int32()), ("status", pa.string()),
            ("host", pa.string()), ("started_at", pa.string()), ("finished_at", pa.string()),
            ("chunks_planned", pa.int32()), ("chunks_done", pa.int32()), ("chunks_failed", pa.int32()))]),
        # A standing question's state (marlin_agent/watch): its footage, judgements, alerts and gaps,
        # each a JSON record, so a restarted watch resumes from the library it writes into.
        "watch": pa.schema([pa.field(name, pa.string()) for name in ("id", "watch", "kind", "record", "at")]),
        "meta": pa.schema([pa.field("key", pa.string()), pa.field("value", pa.string())]),
    }


class LanceStore:
    """One LanceDB database; safe to share between threads of one process."""

    health_checks: ClassVar[str | None] = "lance"  # its files are what library.health reads and mends

    def __init__(self, uri: str) -> None:
        self.uri = uri
        if "://" not in uri and not Path(uri).is_dir():
            try:
                Path(uri).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise DbReadOnly(f"cannot create the index at {uri}: {exc.strerror or exc}") from None
        self._lock = threading.RLock()
        self._tables: dict[str, object] = {}
        self._partitions: int | None = None
        self._connection = None
        # A local index is read through lancedb's compiled core until something needs its whole API
        # (a write, upkeep, repair): a command that only reads never imports it (library.lance_reads).
        self._reads = _core_reads(uri) if "://" not in uri else None
        try:
            if self._reads is None:
                self._db  # noqa: B018 - connect now: a bucket that cannot be reached says so here
            self.meta()  # an unreadable folder or bucket says so now, not at the first search
        except (OSError, ValueError, RuntimeError) as exc:
            if "://" not in uri:
                raise translated(exc, uri, "opening it") or exc from exc
            raise DbUnavailable(f"cannot open the index at {uri}: {_store_reason(exc)}") from None

    @property
    def _db(self):
        """lancedb's connection (its whole API), made on first need."""
        if self._connection is None:
            with self._lock:
                if self._connection is None:
                    try:
                        lancedb = import_lancedb()
                    except ImportError as exc:
                        raise MissingDependency("The footage library", "library") from exc
                    # See other processes' writes at once: an index run and a search may overlap. Object
                    # stores take their credentials and endpoint from the environment (AWS_*, GOOGLE_*,
                    # AZURE_*), which LanceDB reads itself.
                    # A bounded cache: LanceDB's default keeps every table version's metadata it has seen,
                    # so a process that writes for hours (a watch, the MCP server) grew by ~5 MB per 100 writes.
                    session = lancedb.Session(metadata_cache_size_bytes=_METADATA_CACHE_BYTES)
                    self._connection = lancedb.connect(self.uri, read_consistency_interval=timedelta(0),
                                                       session=session)
        return self._connection

    def _through_core(self, read: Callable[[CoreReads], T]) -> T | None:
        """``read`` by the compiled core while nothing here has needed the whole API; None once something
        has, or when the core fails (the whole API then reads, and reports what is wrong as it always has)."""
        reads = self._reads
        if reads is None or self._connection is not None:
            return None
        try:
            return read(reads)
        except Exception:  # noqa: BLE001 - the same read is made again through the whole API
            self._reads = None
            return None

    # --- tables -------------------------------------------------------------------------

    def tables(self) -> set[str]:
        return self._names()

    def _names(self) -> set[str]:
        if (names := self._through_core(CoreReads.table_names)) is not None:
            return names
        names = set()
        token = None
        while True:
            page = self._db.list_tables(page_token=token) if token else self._db.list_tables()
            names.update(page.tables)
            token = page.page_token
            if not token:
                return names

    def _table(self, name: str):
        with self._lock:
            if name not in self._tables:
                opened = self._open(name) if name in self._names() else None
                if opened is not None:
                    self._tables[name] = opened
                else:
                    dim = int(self.meta().get("embed_dim") or 0)
                    self._tables[name] = self._create(name, _schemas(dim)[name])
            return self._tables[name]

    @storage_errors("checking its tables")
    def _open(self, name: str):
        """The table ``name``; None when its folder holds no committed version yet (its creation was cut
        short, by a full disk or a kill), which is then cleared so the table can be made again."""
        try:
            return self._db.open_table(name)
        except ValueError:
            if "://" in self.uri or any((Path(self.uri) / f"{name}.lance" / "_versions").glob("*.manifest")):
                raise
            shutil.rmtree(Path(self.uri) / f"{name}.lance", ignore_errors=True)
            return None

    def tables_ready(self) -> bool:
        names = self._names()
        if not {"meta", *TABLES} <= names or not self.meta().get("embed_model"):
            return False
        return any(index.columns == ["text"] for index in self._table("segments").list_indices())

    @storage_errors("creating its tables")
    def create_tables(self, dim: int) -> None:
        """Every table, now. On an object store a table created twice at once becomes an overwrite
        of the first (LanceDB 0.40), so one process makes them before the others write
        (``index --shard 0/N``, or a Ray job's driver)."""
        with self._lock:
            for name in TABLES:
                if name not in self._tables and name not in self._names():
                    self._tables[name] = self._create(name, _schemas(dim)[name])
                else:
                    self._table(name)

    def _create(self, name: str, schema):
        """Create a table, or open it when another process (a shard of the same job) created it
        first: both commit version 1, and the store lets only one of them."""
        try:
            table = self._db.create_table(name, schema=schema, exist_ok=True)
        except Exception:  # noqa: BLE001 - whatever the loser's error, the winner's table is there
            if name not in self._names():
                raise
            table = self._db.open_table(name)
        if name == "segments" and not any(index.columns == ["text"] for index in table.list_indices()):
            try:
                # The sync API's documented way (0.41 docs); its deprecation points at the async one.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    table.create_fts_index("text", replace=True)
            except Exception:  # noqa: BLE001 - another process built it at the same moment
                if not any(index.columns == ["text"] for index in table.list_indices()):
                    raise
        return table

    # --- settings -----------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        if "meta" not in self._names():
            return {}
        rows = self._through_core(lambda reads: reads.scan("meta"))
        if rows is None:
            table = self._open("meta")  # not _table: making a missing table reads the settings first
            rows = table.to_arrow().to_pylist() if table is not None else []
        return {row["key"]: row["value"] for row in rows}

    def set_meta(self, values: Mapping[str, str]) -> None:
        with self._lock:
            table = self._open("meta") if "meta" in self._names() else None
            if table is None:
                table = self._create("meta", _schemas(0)["meta"])
            rows = [{"key": key, "value": value} for key, value in values.items()]
            table.merge_insert("key").when_matched_update_all().when_not_matched_insert_all().execute(rows)

    # --- rows ---------------------------------------------------------------------------

    def add(self, table: str, rows: Sequence[Mapping]) -> None:
        if rows:
            with self._lock:
                self._table(table).merge_insert("id").when_matched_update_all() \
                    .when_not_matched_insert_all().execute(list(rows))

    def rows(self, table: str, where: Where | None = None, columns: Sequence[str] | None = None) -> list[dict]:
        if table not in self._names():
            return []
        core = self._through_core(lambda reads: reads.scan(table, _sql(where), columns))
        if core is not None:
            return core
        query = self._table(table).search()
        if (condition := _sql(where)) is not None:
            query = query.where(condition)
        if columns:
            return query.select(list(columns)).limit(None).to_arrow().to_pylist()
        return query.limit(None).to_list()

    def delete(self, table: str, where: Where) -> None:
        if table not in self._names():
            return
        with self._lock:
            for part in _batches(where):
                if (condition := _sql(part)) != "false":
                    self._table(table).delete(condition or "true")

    def count(self, table: str, where: Where | None = None) -> int:
        if table not in self._names() or (condition := _sql(where)) == "false":
            return 0
        core = self._through_core(lambda reads: reads.count(table, condition))
        return core if core is not None else self._table(table).count_rows(condition)

    # --- the two rankings of segments ---------------------------------------------------

    def nearest(self, vector: Sequence[float], k: int, where: Where | None = None) -> list[tuple[dict, float]]:
        if self._ranks_nothing(where):
            return []
        core = self._through_core(lambda reads: reads.nearest(vector, k, _sql(where), self._probes()))
        if core is not None:
            return [(row, row.pop("_distance")) for row in core]
        query = self._table("segments").search(list(vector), vector_column_name="vector").nprobes(self._probes())
        return [(row, row.pop("_distance")) for row in self._ranked(query, k, where)]

    def matching(self, text: str, k: int, where: Where | None = None) -> list[tuple[dict, float]]:
        if self._ranks_nothing(where):
            return []
        core = self._through_core(lambda reads: reads.matching(text, k, _sql(where)))
        if core is not None:
            return [(row, row.pop("_score")) for row in core]
        query = self._table("segments").search(text, query_type="fts", fts_columns="text")
        return [(row, row.pop("_score")) for row in self._ranked(query, k, where)]

    def _ranks_nothing(self, where: Where | None) -> bool:
        return "segments" not in self._names() or _sql(where) == "false"

    def _ranked(self, query, k: int, where: Where | None) -> list[dict]:
        if condition := _sql(where):
            query = query.where(condition, prefilter=True)
        # No select(): naming columns makes LanceDB 0.40 log a deprecation warning per query.
        return query.limit(k).to_arrow().drop_columns(["vector"]).to_pylist()

    def _probes(self) -> int:
        """Partitions to probe: a fixed share of them, so recall holds as the index grows."""
        if self._partitions is None:
            self._partitions = int(self.meta().get("vector_partitions") or 0)
        return max(20, self._partitions // 8)

    # --- upkeep -------------------------------------------------------------------------

    @storage_errors("compacting it")
    def optimize(self) -> None:
        """Compact small writes, fold new rows into the indexes, and add a vector index once
        exact scans would get slow; call after a big run."""
        with self._lock:
            for name in (*TABLES, "watch"):
                if name in self._names():
                    # Every write makes a table version; without pruning, an index grows with each run.
                    self._table(name).optimize(cleanup_older_than=_KEEP_VERSIONS)
            if "segments" in self._names():
                segments = self._table("segments")
                has_vector_index = any(index.columns == ["vector"] for index in segments.list_indices())
                rows = segments.count_rows()
                if not has_vector_index and rows >= _VECTOR_INDEX_ROWS:
                    from lancedb.index import IvfFlat

                    # IVF_FLAT keeps exact distances inside the probed partitions: no recall lost
                    # to compression, and it trains in about a second per 60,000 rows. Partitions
                    # of ~1,600 rows: measured on 100,000 segments, 64 partitions with 20 probed
                    # kept 99.6% of the exact top 30 at 13 ms (LanceDB's default: 30 ms).
                    partitions = max(16, rows // 1600)
                    segments.create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=partitions),
                                          replace=True)
                    self.set_meta({"vector_partitions": str(partitions)})
                    self._partitions = partitions
                if rows >= _VECTOR_INDEX_ROWS and not any(index.columns == ["video_id"]
                                                          for index in segments.list_indices()):
                    # `--in` filters by video before both halves of a search; without an index on
                    # the column that filter scans every row (232 ms p50 at 1,000,000 segments).
                    segments.create_scalar_index("video_id", index_type="BTREE")

    def has_vector_index(self) -> bool:
        return "segments" in self._names() and any(
            index.columns == ["vector"] for index in self._table("segments").list_indices())

    def versions(self, table: str) -> list[int]:
        if table not in self._names():
            return []
        return sorted(v["version"] for v in self._db.open_table(table).list_versions())

    def restore(self, table: str, version: int) -> None:
        with self._lock:
            opened = self._db.open_table(table)
            opened.checkout(version)
            opened.restore()
            self._tables.pop(table, None)

    # LanceDB's own: what `doctor` and `index --repair` (library.health) read and mend.

    def indexed_columns(self, table: str) -> list[list[str]]:
        """The columns of each index of ``table`` (none when it does not exist)."""
        if table not in self._names():
            return []
        core = self._through_core(lambda reads: reads.indexed_columns(table))
        return core if core is not None else [list(index.columns) for index in self._table(table).list_indices()]

    def first_value(self, table: str, column: str):
        """``column`` of one row of ``table``; None when it has none."""
        if table not in self._names():
            return None
        rows = self._through_core(lambda reads: reads.scan(table, columns=[column], limit=1))
        if rows is None:
            rows = self._table(table).search().select([column]).limit(1).to_list()
        return rows[0][column] if rows else None

    def raw_table(self, name: str):
        """The table as stored, opened afresh (no cached handle, nothing created)."""
        return self._db.open_table(name)

    def drop_table(self, name: str) -> None:
        with self._lock:
            self._tables.pop(name, None)
            self._db.drop_table(name, ignore_missing=True)

    def forget_table_handles(self) -> None:
        """Open every table afresh next time (after a repair changed them underneath)."""
        with self._lock:
            self._tables.clear()
            self._reads = None

    def rebuild_search_indexes(self) -> None:
        """Build the full-text index of segments again (and the vector index, when it has one)."""
        with self._lock:
            segments = self._table("segments")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                segments.create_fts_index("text", replace=True)
            if any(index.columns == ["vector"] for index in segments.list_indices()):
                from lancedb.index import IvfFlat

                partitions = int(self.meta().get("vector_partitions") or 16)
                segments.create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=partitions),
                                      replace=True)


def _batches(where: Where) -> list[Where]:
    """``where`` split so that no list in it names more than a batch of ids."""
    long = next((column for column, wanted in where.items()
                 if not isinstance(wanted, str | int | bool) and len(wanted) > _IDS_PER_DELETE), None)
    if long is None:
        return [where]
    values = list(where[long])
    return [{**where, long: values[n:n + _IDS_PER_DELETE]} for n in range(0, len(values), _IDS_PER_DELETE)]
