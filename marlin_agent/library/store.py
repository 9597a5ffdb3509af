"""The footage library: an embedded LanceDB index of videos, chunk captions and searchable segments.

Tables: ``videos``; ``chunks`` (one caption per chunk: scene, raw answer, model, prompt
version); ``segments`` (everything search can return — chunk scenes, caption events and
transcript lines — told apart by ``kind``); ``failures``; ``meta``. Events and transcript
lines share one table so that a single full-text query and a single vector query rank them
against each other: three tables cost six queries per search, measured at 140–180 ms on
100,000 segments against about 40 ms for one table.

Every row has a deterministic id (content id + times), so writes are upserts and an
interrupted run resumes without duplicates. A chunk's row is written after its segments
and is the mark that the chunk is done; a chunk that failed is kept in ``failures`` until
a later run succeeds. The embedding model is recorded, and a different one is refused.
"""

from __future__ import annotations

import json
import shutil
import threading
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.domain import ChunkCaption, Event, Record, VideoRef
from marlin_agent.errors import DbReadOnly, DbUnavailable, IndexMismatch, MissingDependency
from marlin_agent.library.embeddings import Embedder
from marlin_agent.library.storage_errors import storage_errors, translated
from marlin_agent.library.transcripts import Transcript

SCHEMA_VERSION = "2"
SEGMENT_KINDS = ("event", "scene", "transcript")
TABLES = ("videos", "chunks", "segments", "failures", "shards")
_RRF_K = 60
# Table versions younger than this survive a clean-up, so a search running in another process
# never loses the files of the version it is reading.
_KEEP_VERSIONS = timedelta(minutes=10)
# Below this many segments an exact scan is fast enough; above it an IVF index is built.
_VECTOR_INDEX_ROWS = 20_000
# The table-metadata cache of one connection (manifests, file metadata). LanceDB's default keeps what
# every version it has seen needs; bounded, a process that writes for hours stays flat. (The search
# indexes' cache keeps LanceDB's default: a library of a million segments searches from memory.)
_METADATA_CACHE_BYTES = 64 * 1024 * 1024


def _import_lancedb():
    """lancedb, without the REST catalogue client it loads eagerly and a local index never uses.

    That generated client's package imports every API class at once, about 1.5 s of every
    command that reads the index. Its package is registered here as a bare namespace, so its
    ``models`` (which lancedb does use) load on their own and the API classes only when asked
    for. Should a lancedb release need more of it at import time, the plain import is used."""
    import importlib.util
    import sys
    import types

    if sys.modules.get("lancedb") is not None:
        return sys.modules["lancedb"]
    client = "lance_namespace_urllib3_client"
    spec = importlib.util.find_spec(client)
    if spec is not None and spec.submodule_search_locations and client not in sys.modules:
        bare = types.ModuleType(client)
        bare.__path__, bare.__spec__ = list(spec.submodule_search_locations), spec
        sys.modules[client] = bare
        try:
            import lancedb

            return lancedb
        except Exception:  # noqa: BLE001 - retried below with the package's own import
            for name in [n for n, module in sys.modules.items()
                         if module is not None and n.split(".")[0] in ("lancedb", "lance_namespace", client)]:
                del sys.modules[name]
    import lancedb

    return lancedb


class VideoRecord(BaseModel):
    id: str
    path: str
    title: str = ""
    url: str = ""
    uploader: str = ""
    external_id: str = ""
    duration: float
    declared_duration: float | None = None  # the metadata's claim, when the streams held more
    fps: float
    width: int
    height: int
    has_audio: bool
    chunk_seconds: float
    chunks_planned: int
    transcript_source: str = ""
    model: str = ""
    prompt_version: int = 0
    indexed_at: str = ""


class ChunkWrite(BaseModel):
    video_id: str
    index: int
    caption: ChunkCaption
    model: str
    prompt_version: int


class FailureWrite(BaseModel):
    video_id: str
    start: float
    end: float
    code: str
    message: str


class Writes(BaseModel):
    """What one write stores: video records, captioned chunks and failed chunks, and the
    chunks it retires (with their segments and failures): those of an older chunk plan."""

    videos: list[VideoRecord] = []
    chunks: list[ChunkWrite] = []
    failures: list[FailureWrite] = []
    retired: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.videos or self.chunks or self.failures or self.retired)

    def __add__(self, other: Writes) -> Writes:
        return Writes(videos=self.videos + other.videos, chunks=self.chunks + other.chunks,
                      failures=self.failures + other.failures, retired=self.retired + other.retired)


class ShardRun(BaseModel):
    """One shard's run, as it last reported: each shard writes only its own row, so shards
    running at once never write the same row (which an object store's merge cannot promise)."""

    id: str  # "I/N"
    index: int
    count: int
    status: str  # running | finished
    host: str = ""
    started_at: str = ""
    finished_at: str = ""
    chunks_planned: int = 0
    chunks_done: int = 0
    chunks_failed: int = 0


class WatchRow(BaseModel):
    """One record of a standing question's state; ``record`` is its JSON (marlin_agent/watch owns the shapes)."""

    id: str
    watch: str
    kind: str
    record: str
    at: str


class SearchHit(Record):
    video: VideoRef
    start: float
    end: float
    text: str
    source: str  # event | scene | transcript
    score: float


class ChunkFailureRecord(Record):
    id: str
    video_id: str
    start: float
    end: float
    code: str
    message: str
    attempts: int
    at: str


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _ranks(rows: list[dict], worse) -> dict[str, int]:
    """Competition ranks (1, 2, 2, 4) by ``worse`` (smaller is better). The same words in two
    chunks score alike in both halves; giving them one rank, instead of the order they happen to
    be stored in, makes a search answer the same over any copy of the index, however written."""
    ranks: dict[str, int] = {}
    ordered = sorted(rows, key=lambda row: round(worse(row), 6))
    for n, row in enumerate(ordered):
        previous = ordered[n - 1] if n else None
        tied = previous is not None and round(worse(previous), 6) == round(worse(row), 6)
        ranks[row["id"]] = ranks[previous["id"]] if tied else n + 1
    return ranks


def _store_reason(exc: Exception) -> str:
    """The part of an object store's error a user can act on (its own message is a Rust debug dump)."""
    import re

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


def chunk_id(video_id: str, start: float, end: float) -> str:
    return f"{video_id}:{start:.3f}-{end:.3f}"


def _quote_ids(ids: list[str]) -> str:
    # Content ids are hex and chunk ids add digits, ':', '.' and '-': safe inside quotes.
    return ", ".join(f"'{i}'" for i in ids if all(c.isalnum() or c in ":.-" for c in i))


class Library:
    """One LanceDB database; safe to share between threads of one process."""

    def __init__(self, uri: str, embedder: Embedder) -> None:
        try:
            lancedb = _import_lancedb()
        except ImportError as exc:
            raise MissingDependency("The footage library", "library") from exc
        self.uri = uri
        self.embedder = embedder
        if "://" not in uri and not Path(uri).is_dir():
            try:
                Path(uri).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise DbReadOnly(f"cannot create the index at {uri}: {exc.strerror or exc}") from None
        self._lock = threading.RLock()
        self._tables: dict[str, object] = {}
        self._refs: dict[str, VideoRef] = {}
        self._partitions: int | None = None
        try:
            # See other processes' writes at once: an index run and a search may overlap. Object
            # stores take their credentials and endpoint from the environment (AWS_*, GOOGLE_*,
            # AZURE_*), which LanceDB reads itself.
            # A bounded cache: LanceDB's default keeps every table version's metadata it has seen, so a
            # process that writes for hours (a watch, the MCP server) grew by ~5 MB per 100 writes.
            session = lancedb.Session(metadata_cache_size_bytes=_METADATA_CACHE_BYTES)
            self._db = lancedb.connect(uri, read_consistency_interval=timedelta(0), session=session)
            self._check_embedding_model()
        except (OSError, ValueError, RuntimeError) as exc:
            if "://" not in uri:
                raise translated(exc, uri, "opening it") or exc from exc
            raise DbUnavailable(f"cannot open the index at {uri}: {_store_reason(exc)}") from None

    # --- schema -------------------------------------------------------------------------

    def _names(self) -> set[str]:
        names: set[str] = set()
        token = None
        while True:
            page = self._db.list_tables(page_token=token) if token else self._db.list_tables()
            names.update(page.tables)
            token = page.page_token
            if not token:
                return names

    def _schemas(self, dim: int):
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
        }

    def _table(self, name: str):
        with self._lock:
            if name not in self._tables:
                opened = self._open(name) if name in self._names() else None
                if opened is not None:
                    self._tables[name] = opened
                else:
                    dim = int(self._meta().get("embed_dim") or self.embedder.dim)
                    self._tables[name] = self._create(name, self._schemas(dim)[name])
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
        """Whether every table (and the full-text index) exists, so writers need create nothing."""
        names = self._names()
        if not {"meta", *TABLES} <= names or not self._meta().get("embed_model"):
            return False
        return any(index.columns == ["text"] for index in self._table("segments").list_indices())

    @storage_errors("creating its tables")
    def create_tables(self) -> None:
        """Create every table now. Shards must not race to create them: on an object store, a table
        created twice at once becomes an overwrite of the first (LanceDB 0.40), so one process makes
        them before the others write (``index --shard 0/N``, or a Ray job's driver)."""
        with self._lock:
            self._ensure_meta()
            for name in TABLES:
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

    def _meta(self) -> dict[str, str]:
        table = self._open("meta") if "meta" in self._names() else None
        if table is None:
            return {}
        return {row["key"]: row["value"] for row in table.to_arrow().to_pylist()}

    def _check_embedding_model(self) -> None:
        meta = self._meta()
        recorded = meta.get("embed_model")
        if recorded is None:
            return
        if recorded != self.embedder.name:
            raise IndexMismatch(
                f"the index at {self.uri} was built with the embedding model {recorded!r}, "
                f"not {self.embedder.name!r}",
                hint=f"Either set MARLIN_EMBED_MODEL={recorded} to keep using this index, or index into "
                     f"a new database with --db NEW_PATH (the staged clips and captions cache are reused).",
            )

    def _ensure_meta(self) -> None:
        with self._lock:
            if self._meta().get("embed_model"):
                return
            import pyarrow as pa

            rows = [{"key": "embed_model", "value": self.embedder.name},
                    {"key": "embed_dim", "value": str(self.embedder.dim)},
                    {"key": "schema_version", "value": SCHEMA_VERSION}]
            table = self._create("meta", pa.schema([pa.field("key", pa.string()), pa.field("value", pa.string())]))
            table.merge_insert("key").when_matched_update_all().when_not_matched_insert_all().execute(rows)

    def _set_meta(self, key: str, value: str) -> None:
        self._db.open_table("meta").merge_insert("key").when_matched_update_all() \
            .when_not_matched_insert_all().execute([{"key": key, "value": value}])

    def _probes(self) -> int:
        """Partitions to probe: a fixed share of them, so recall holds as the index grows."""
        if self._partitions is None:
            self._partitions = int(self._meta().get("vector_partitions") or 0)
        return max(20, self._partitions // 8)

    def _upsert(self, name: str, rows: list[dict]) -> None:
        if rows:
            self._table(name).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(rows)

    def _rows(self, name: str, where: str | None = None) -> list[dict]:
        if name not in self._names():
            return []
        query = self._table(name).search()
        if where:
            query = query.where(where)
        return query.limit(None).to_list()

    # --- videos -------------------------------------------------------------------------

    @storage_errors("reading a video")
    def get_video(self, video_id: str) -> VideoRecord | None:
        rows = self._rows("videos", f"id = '{video_id}'")
        return VideoRecord.model_validate_json(rows[0]["record"]) if rows else None

    def put_video(self, video: VideoRecord) -> None:
        self.write(Writes(videos=[video]))

    @storage_errors("listing videos")
    def list_videos(self) -> list[VideoRecord]:
        return [VideoRecord.model_validate_json(r["record"]) for r in self._rows("videos")]

    # --- chunks -------------------------------------------------------------------------

    @storage_errors("reading what is captioned")
    def done_chunk_ids(self, video_id: str | None = None) -> set[str]:
        """Chunks captioned in Marlin's format (of one video, or all). An off-format caption is
        kept (its events are searchable) but not done: the next run captions the chunk again."""
        where = (f"video_id = '{video_id}' AND " if video_id else "") + "format_ok = true"
        if "chunks" not in self._names():
            return set()
        rows = self._table("chunks").search().where(where).select(["id"]).limit(None).to_arrow()
        return set(rows.column("id").to_pylist())

    @storage_errors("reading what is captioned")
    def stored_chunk_ids(self) -> set[str]:
        """Every chunk with a stored caption, in Marlin's format or not."""
        if "chunks" not in self._names():
            return set()
        return set(self._table("chunks").search().select(["id"]).limit(None).to_arrow().column("id").to_pylist())

    @storage_errors("reading captions")
    def chunk_captions(self, video_id: str) -> list[ChunkCaption]:
        """A video's stored chunk captions in time order, their events read back from the segments."""
        events: dict[str, list[Event]] = {}
        for row in self.segments(video_id, "event"):
            events.setdefault(row["chunk_id"], []).append(Event(start=row["start"], end=row["end"], text=row["text"]))
        rows = self._rows("chunks", f"video_id = '{video_id}'")
        return sorted((ChunkCaption(start=r["start"], end=r["end"], scene=r["scene"], events=events.get(r["id"], []),
                                    raw=r["raw"], format_ok=r["format_ok"]) for r in rows), key=lambda c: c.start)

    def put_chunk(self, video_id: str, index: int, caption: ChunkCaption, model: str, prompt_version: int) -> None:
        """Write a captioned chunk: its scene and events first, then the chunk row that marks it done."""
        self.write(Writes(chunks=[ChunkWrite(video_id=video_id, index=index, caption=caption, model=model,
                                             prompt_version=prompt_version)]))

    def put_failure(self, video_id: str, start: float, end: float, code: str, message: str) -> None:
        self.write(Writes(failures=[FailureWrite(video_id=video_id, start=start, end=end, code=code, message=message)]))

    @storage_errors("writing captions")
    def write(self, writes: Writes) -> None:
        """Store a batch of videos, captioned chunks and failures in a few table writes.

        Each table version costs a write and disk until pruned, so an indexing run groups what
        lands together. Segments go in before the chunk rows that mark their chunks done, so an
        interrupted write leaves at worst segments that the next run replaces."""
        with self._lock:
            self._ensure_meta()
            if writes.retired:
                self._retire(writes.retired)
            if writes.chunks:
                self._write_chunks(writes.chunks)
            if writes.failures:
                self._write_failures(writes.failures)
            if writes.videos:
                latest = {video.id: video for video in writes.videos}  # the last word on each video
                self._upsert("videos", [{"id": v.id, "record": v.model_dump_json(), "path": v.path, "title": v.title}
                                        for v in latest.values()])
                self._refs.update({v.id: VideoRef(id=v.id, path=v.path, title=v.title) for v in latest.values()})

    def _retire(self, ids: list[str]) -> None:
        where = f"IN ({_quote_ids(ids)})"
        names = self._names()
        if "segments" in names:
            self._table("segments").delete(f"chunk_id {where}")
        for name in ("chunks", "failures"):
            if name in names:
                self._table(name).delete(f"id {where}")

    def _write_chunks(self, chunks: list[ChunkWrite]) -> None:
        items: list[tuple[str, str, str, float, float, str, ChunkWrite]] = []  # id, chunk, kind, times, text, write
        for write in chunks:
            caption, cid = write.caption, chunk_id(write.video_id, write.caption.start, write.caption.end)
            if caption.scene:
                items.append((f"{cid}#s0", cid, "scene", caption.start, caption.end, caption.scene, write))
            items += [(f"{cid}#e{n}", cid, "event", e.start, e.end, e.text, write)
                      for n, e in enumerate(caption.events)]
        vectors = self.embedder.embed([item[5] for item in items])
        segments = [{"id": sid, "video_id": w.video_id, "chunk_id": cid, "kind": kind, "start": start, "end": end,
                     "text": text, "model": w.model, "prompt_version": w.prompt_version, "words": "",
                     "vector": vectors[n]}
                    for n, (sid, cid, kind, start, end, text, w) in enumerate(items)]
        ids = [chunk_id(w.video_id, w.caption.start, w.caption.end) for w in chunks]
        self._table("segments").delete(f"chunk_id IN ({_quote_ids(ids)})")
        self._upsert("segments", segments)
        self._upsert("chunks", [{
            "id": cid, "video_id": w.video_id, "idx": w.index, "start": w.caption.start, "end": w.caption.end,
            "scene": w.caption.scene, "raw": w.caption.raw, "format_ok": w.caption.format_ok, "model": w.model,
            "prompt_version": w.prompt_version,
        } for cid, w in zip(ids, chunks, strict=True)])
        if "failures" in self._names():
            self._table("failures").delete(f"id IN ({_quote_ids(ids)})")

    def _write_failures(self, failures: list[FailureWrite]) -> None:
        ids = [chunk_id(f.video_id, f.start, f.end) for f in failures]
        previous = {r["id"]: r["attempts"] for r in self._rows("failures", f"id IN ({_quote_ids(ids)})")}
        rows: dict[str, dict] = {}
        for cid, f in zip(ids, failures, strict=True):
            attempts = rows[cid]["attempts"] + 1 if cid in rows else previous.get(cid, 0) + 1
            rows[cid] = {"id": cid, "video_id": f.video_id, "start": f.start, "end": f.end, "code": f.code,
                         "message": f.message, "attempts": attempts, "at": utc_now()}
        self._upsert("failures", list(rows.values()))

    @storage_errors("reading failures")
    def failures(self, video_id: str | None = None) -> list[ChunkFailureRecord]:
        rows = self._rows("failures", f"video_id = '{video_id}'" if video_id else None)
        return [ChunkFailureRecord.model_validate(r) for r in rows]

    @storage_errors("writing a shard's record")
    def put_shard_run(self, run: ShardRun) -> None:
        with self._lock:
            self._ensure_meta()
            self._upsert("shards", [run.model_dump()])

    @storage_errors("reading shard records")
    def shard_runs(self) -> list[ShardRun]:
        return [ShardRun.model_validate(r) for r in self._rows("shards")]

    # --- standing questions -------------------------------------------------------------

    @storage_errors("writing a watch's state")
    def put_watch_rows(self, rows: list[WatchRow]) -> None:
        """Store a watch's records in one write: what lands together is committed together."""
        with self._lock:
            self._ensure_meta()
            self._upsert("watch", [row.model_dump() for row in rows])

    @storage_errors("reading a watch's state")
    def watch_rows(self, watch: str | None = None, kind: str | None = None) -> list[WatchRow]:
        clauses = [f"{column} = '{value.replace(chr(39), chr(39) * 2)}'"
                   for column, value in (("watch", watch), ("kind", kind)) if value is not None]
        rows = self._rows("watch", " AND ".join(clauses) or None)
        return sorted((WatchRow.model_validate(r) for r in rows), key=lambda r: (r.at, r.id))

    @storage_errors("writing a watch's state")
    def delete_watch_rows(self, ids: list[str]) -> None:
        with self._lock:
            if ids and "watch" in self._names():
                self._table("watch").delete(f"id IN ({_quote_ids(ids)})")

    @storage_errors("forgetting a video")
    def forget_video(self, video_id: str) -> None:
        """Remove a video and everything indexed from it (a recording its retention deleted)."""
        with self._lock:
            names = self._names()
            for name, column in (("segments", "video_id"), ("chunks", "video_id"), ("failures", "video_id"),
                                 ("videos", "id")):
                if name in names:
                    self._table(name).delete(f"{column} = '{video_id}'")
            self._refs.pop(video_id, None)

    # --- transcripts --------------------------------------------------------------------

    def _segment_rows(self, video_id: str, chunk: str, kind: str, items: list[tuple[float, float, str, str]],
                      model: str, prompt_version: int) -> list[dict]:
        vectors = self.embedder.embed([text for _, _, text, _ in items])
        return [
            {"id": f"{chunk}#{kind[0]}{n}", "video_id": video_id, "chunk_id": chunk, "kind": kind, "start": start,
             "end": end, "text": text, "model": model, "prompt_version": prompt_version, "words": words,
             "vector": vectors[n]}
            for n, (start, end, text, words) in enumerate(items)
        ]

    @storage_errors("writing a transcript")
    def put_transcript(self, video_id: str, transcript: Transcript) -> None:
        items = [(line.start, line.end, line.text, json.dumps([w.model_dump() for w in line.words]))
                 for line in transcript.lines]
        rows = self._segment_rows(video_id, f"{video_id}:speech", "transcript", items, transcript.source, 0)
        with self._lock:
            self._ensure_meta()
            self._table("segments").delete(f"video_id = '{video_id}' AND kind = 'transcript'")
            self._upsert("segments", rows)

    @storage_errors("reading segments")
    def segments(self, video_id: str, kind: str | None = None) -> list[dict]:
        """A video's segments in time order (``kind``: event, scene or transcript)."""
        where = f"video_id = '{video_id}'" + (f" AND kind = '{kind}'" if kind in SEGMENT_KINDS else "")
        rows = self._rows("segments", where)
        for row in rows:
            row.pop("vector", None)
        return sorted(rows, key=lambda r: (r["start"], r["end"]))

    # --- upkeep -------------------------------------------------------------------------

    def table_names(self) -> set[str]:
        return self._names()

    def raw_table(self, name: str):
        """The table as stored, opened afresh (no cached handle, nothing created): for checks and repair."""
        return self._db.open_table(name)

    def drop_table(self, name: str) -> None:
        with self._lock:
            self._tables.pop(name, None)
            self._db.drop_table(name, ignore_missing=True)

    def forget_table_handles(self) -> None:
        """Open every table afresh next time (after a repair changed them underneath)."""
        with self._lock:
            self._tables.clear()
            self._refs.clear()

    def rebuild_search_indexes(self) -> None:
        """Build the full-text index of segments again (and the vector index, when it has one)."""
        with self._lock:
            segments = self._table("segments")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                segments.create_fts_index("text", replace=True)
            if any(index.columns == ["vector"] for index in segments.list_indices()):
                from lancedb.index import IvfFlat

                partitions = int(self._meta().get("vector_partitions") or 16)
                segments.create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=partitions),
                                      replace=True)

    def forget_uncovered_chunks(self) -> int:
        """Drop chunk rows whose scenes and events are gone (a table returned to an older version), so
        the next index run captions those chunks again; how many were dropped."""
        with self._lock:
            names = self._names()
            if "chunks" not in names:
                return 0
            covered = set()
            if "segments" in names:
                covered = set(self._table("segments").search().select(["chunk_id"]).limit(None).to_arrow()
                              .column("chunk_id").to_pylist())
            ids = self._table("chunks").search().select(["id"]).limit(None).to_arrow().column("id").to_pylist()
            lost = [i for i in ids if i not in covered]
            for start in range(0, len(lost), 500):
                self._table("chunks").delete(f"id IN ({_quote_ids(lost[start:start + 500])})")
            return len(lost)

    @storage_errors("compacting it")
    def optimize(self) -> None:
        """Compact small writes, fold new rows into the indexes, and add a vector index once
        exact scans would get slow; call after a big run."""
        with self._lock:
            for name in ("videos", "chunks", "segments", "failures", "watch"):
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
                    self._set_meta("vector_partitions", str(partitions))
                    self._partitions = partitions
                if rows >= _VECTOR_INDEX_ROWS and not any(index.columns == ["video_id"]
                                                          for index in segments.list_indices()):
                    # `--in` filters by video before both halves of a search; without an index on
                    # the column that filter scans every row (232 ms p50 at 1,000,000 segments).
                    segments.create_scalar_index("video_id", index_type="BTREE")

    @storage_errors("checking its vector index")
    def has_vector_index(self) -> bool:
        return "segments" in self._names() and any(
            index.columns == ["vector"] for index in self._table("segments").list_indices())

    @storage_errors("counting its rows")
    def counts(self) -> dict[str, int]:
        counts = {name: self._table(name).count_rows() for name in ("videos", "chunks", "segments")
                  if name in self._names()}
        if "segments" in self._names():
            for kind in SEGMENT_KINDS:
                counts[kind] = self._table("segments").count_rows(f"kind = '{kind}'")
        return counts

    # --- search -------------------------------------------------------------------------

    @storage_errors("searching")
    def search(self, query: str, k: int = 10, video_ids: list[str] | None = None) -> list[SearchHit]:
        """Full text and vectors over scenes, events and speech, fused by reciprocal rank."""
        if not query.strip() or "segments" not in self._names() or (video_ids is not None and not video_ids):
            return []
        table = self._table("segments")
        where = f"video_id IN ({_quote_ids(video_ids)})" if video_ids else None
        # Each half contributes its top ``depth``, so a moment ranked well by only one of them
        # still reaches the top k.
        depth = max(20, 3 * k)
        vector = table.search(self.embedder.embed([query])[0], vector_column_name="vector").nprobes(self._probes())
        words = table.search(query, query_type="fts", fts_columns="text")
        halves = []
        for half in (vector, words):
            half = half.where(where, prefilter=True) if where else half
            # No select(): naming columns makes LanceDB 0.40 log a deprecation warning per query.
            halves.append(half.limit(depth).to_arrow().drop_columns(["vector"]).to_pylist())
        by_distance = _ranks(halves[0], lambda row: row["_distance"])
        by_words = _ranks(halves[1], lambda row: -row["_score"])
        rows = {row["id"]: row for half in halves for row in half}
        fused = {i: sum(1 / (_RRF_K + ranks[i]) for ranks in (by_distance, by_words) if i in ranks) for i in rows}
        top = sorted(fused, key=lambda i: (-fused[i], i))[:k]
        videos = self._video_refs({rows[i]["video_id"] for i in top})
        return [
            SearchHit(video=videos.get(rows[i]["video_id"]) or VideoRef(id=rows[i]["video_id"], path="", title=""),
                      start=rows[i]["start"], end=rows[i]["end"], text=rows[i]["text"], source=rows[i]["kind"],
                      score=round(fused[i], 6))
            for i in top
        ]

    def _video_refs(self, ids: set[str]) -> dict[str, VideoRef]:
        """Video references for search hits, from a small in-memory map refreshed on a miss
        (another process may have indexed new videos since it was read)."""
        if ids - self._refs.keys():
            rows = self._table("videos").search().select(["id", "path", "title"]).limit(None).to_arrow().to_pylist()
            self._refs = {r["id"]: VideoRef(id=r["id"], path=r["path"], title=r["title"]) for r in rows}
        return {i: self._refs[i] for i in ids if i in self._refs}
