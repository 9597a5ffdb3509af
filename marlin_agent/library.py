"""The footage library: an embedded LanceDB index of videos, chunk scenes, events and speech.

Every row has a deterministic id (content id + times), so writes are upserts and an
interrupted run resumes without duplicates. A chunk's row is written after its events and
is the mark that the chunk is done; a chunk that failed is kept in ``failures`` until a
later run succeeds. The embedding model is recorded, and a different one is refused.
"""

from __future__ import annotations

import json
import threading
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.domain import ChunkCaption, Record
from marlin_agent.embeddings import Embedder
from marlin_agent.errors import IndexMismatch, MissingDependency
from marlin_agent.transcripts import Transcript

SCHEMA_VERSION = "1"
TEXT_TABLES = {"chunks": "scene", "events": "text", "transcript_lines": "text"}
SOURCE_OF_TABLE = {"chunks": "scene", "events": "event", "transcript_lines": "transcript"}
_RRF_K = 60


class VideoRecord(BaseModel):
    id: str
    path: str
    title: str = ""
    url: str = ""
    uploader: str = ""
    external_id: str = ""
    duration: float
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


class VideoRef(Record):
    id: str
    path: str
    title: str


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


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def chunk_id(video_id: str, start: float, end: float) -> str:
    return f"{video_id}:{start:.3f}-{end:.3f}"


def _quote_ids(ids: list[str]) -> str:
    # Content ids are hex and chunk ids add digits, ':', '.' and '-': safe inside quotes.
    return ", ".join(f"'{i}'" for i in ids if all(c.isalnum() or c in ":.-" for c in i))


class Library:
    """One LanceDB database; safe to share between threads of one process."""

    def __init__(self, uri: str, embedder: Embedder) -> None:
        try:
            import lancedb
        except ImportError as exc:
            raise MissingDependency("The footage library", "library") from exc
        self.uri = uri
        self.embedder = embedder
        if "://" not in uri:
            Path(uri).mkdir(parents=True, exist_ok=True)
        # See other processes' writes at once: an index run and a search may overlap.
        self._db = lancedb.connect(uri, read_consistency_interval=timedelta(0))
        self._lock = threading.RLock()
        self._tables: dict[str, object] = {}
        self._check_embedding_model()

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

        vector = pa.list_(pa.float32(), dim)
        times = [pa.field("start", pa.float64()), pa.field("end", pa.float64())]
        return {
            "meta": pa.schema([pa.field("key", pa.string()), pa.field("value", pa.string())]),
            "videos": pa.schema([pa.field("id", pa.string()), pa.field("record", pa.string()),
                                 pa.field("path", pa.string()), pa.field("title", pa.string())]),
            "chunks": pa.schema([pa.field("id", pa.string()), pa.field("video_id", pa.string()),
                                 pa.field("idx", pa.int32()), *times, pa.field("scene", pa.string()),
                                 pa.field("raw", pa.string()), pa.field("format_ok", pa.bool_()),
                                 pa.field("model", pa.string()), pa.field("prompt_version", pa.int32()),
                                 pa.field("vector", vector)]),
            "events": pa.schema([pa.field("id", pa.string()), pa.field("video_id", pa.string()),
                                 pa.field("chunk_id", pa.string()), *times, pa.field("text", pa.string()),
                                 pa.field("model", pa.string()), pa.field("prompt_version", pa.int32()),
                                 pa.field("vector", vector)]),
            "transcript_lines": pa.schema([pa.field("id", pa.string()), pa.field("video_id", pa.string()),
                                           *times, pa.field("text", pa.string()), pa.field("source", pa.string()),
                                           pa.field("words", pa.string()), pa.field("vector", vector)]),
            "failures": pa.schema([pa.field("id", pa.string()), pa.field("video_id", pa.string()), *times,
                                   pa.field("code", pa.string()), pa.field("message", pa.string()),
                                   pa.field("attempts", pa.int32()), pa.field("at", pa.string())]),
        }

    def _table(self, name: str):
        with self._lock:
            if name not in self._tables:
                if name in self._names():
                    self._tables[name] = self._db.open_table(name)
                else:
                    dim = int(self._meta().get("embed_dim") or self.embedder.dim)
                    table = self._db.create_table(name, schema=self._schemas(dim)[name], exist_ok=True)
                    if name in TEXT_TABLES:
                        # The sync API's documented way (0.41 docs); its deprecation points at the async one.
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            table.create_fts_index(TEXT_TABLES[name], replace=True)
                    self._tables[name] = table
            return self._tables[name]

    def _meta(self) -> dict[str, str]:
        if "meta" not in self._names():
            return {}
        return {row["key"]: row["value"] for row in self._db.open_table("meta").to_arrow().to_pylist()}

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
            table = self._db.create_table("meta", schema=pa.schema([pa.field("key", pa.string()),
                                                                    pa.field("value", pa.string())]), exist_ok=True)
            table.merge_insert("key").when_matched_update_all().when_not_matched_insert_all().execute(rows)

    def _upsert(self, name: str, rows: list[dict]) -> None:
        if rows:
            self._table(name).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(rows)

    def _rows(self, name: str, where: str | None = None) -> list[dict]:
        if name not in self._names():
            return []
        query = self._table(name).search()
        if where:
            query = query.where(where)
        return query.limit(None).to_list() if hasattr(query, "limit") else []

    # --- videos -------------------------------------------------------------------------

    def get_video(self, video_id: str) -> VideoRecord | None:
        rows = self._rows("videos", f"id = '{video_id}'")
        return VideoRecord.model_validate_json(rows[0]["record"]) if rows else None

    def put_video(self, video: VideoRecord) -> None:
        with self._lock:
            self._ensure_meta()
            self._upsert("videos", [{"id": video.id, "record": video.model_dump_json(), "path": video.path,
                                     "title": video.title}])

    def list_videos(self) -> list[VideoRecord]:
        return [VideoRecord.model_validate_json(r["record"]) for r in self._rows("videos")]

    # --- chunks -------------------------------------------------------------------------

    def done_chunk_ids(self, video_id: str) -> set[str]:
        return {r["id"] for r in self._rows("chunks", f"video_id = '{video_id}'")}

    def put_chunk(self, video_id: str, index: int, caption: ChunkCaption, model: str, prompt_version: int) -> None:
        """Write a captioned chunk: its events first, then the chunk row that marks it done."""
        cid = chunk_id(video_id, caption.start, caption.end)
        texts = [caption.scene or "(no scene)"] + [e.text for e in caption.events]
        vectors = self.embedder.embed(texts)
        with self._lock:
            self._ensure_meta()
            events = self._table("events")
            events.delete(f"chunk_id = '{cid}'")
            self._upsert("events", [
                {"id": f"{cid}#{n}", "video_id": video_id, "chunk_id": cid, "start": e.start, "end": e.end,
                 "text": e.text, "model": model, "prompt_version": prompt_version, "vector": vectors[n + 1]}
                for n, e in enumerate(caption.events)
            ])
            self._upsert("chunks", [{
                "id": cid, "video_id": video_id, "idx": index, "start": caption.start, "end": caption.end,
                "scene": caption.scene, "raw": caption.raw, "format_ok": caption.format_ok, "model": model,
                "prompt_version": prompt_version, "vector": vectors[0],
            }])
            if "failures" in self._names():
                self._table("failures").delete(f"id = '{cid}'")

    def put_failure(self, video_id: str, start: float, end: float, code: str, message: str) -> None:
        cid = chunk_id(video_id, start, end)
        with self._lock:
            previous = self._rows("failures", f"id = '{cid}'")
            attempts = (previous[0]["attempts"] if previous else 0) + 1
            self._upsert("failures", [{"id": cid, "video_id": video_id, "start": start, "end": end, "code": code,
                                       "message": message, "attempts": attempts, "at": _now()}])

    def failures(self, video_id: str | None = None) -> list[ChunkFailureRecord]:
        rows = self._rows("failures", f"video_id = '{video_id}'" if video_id else None)
        return [ChunkFailureRecord.model_validate(r) for r in rows]

    # --- transcripts --------------------------------------------------------------------

    def put_transcript(self, video_id: str, transcript: Transcript) -> None:
        vectors = self.embedder.embed([line.text for line in transcript.lines])
        rows = [
            {"id": f"{video_id}:t:{line.start:.3f}-{line.end:.3f}", "video_id": video_id, "start": line.start,
             "end": line.end, "text": line.text, "source": transcript.source,
             "words": json.dumps([w.model_dump() for w in line.words]), "vector": vectors[n]}
            for n, line in enumerate(transcript.lines)
        ]
        with self._lock:
            self._ensure_meta()
            self._table("transcript_lines").delete(f"video_id = '{video_id}'")
            self._upsert("transcript_lines", rows)

    def transcript(self, video_id: str, start: float | None = None, end: float | None = None) -> list[dict]:
        rows = sorted(self._rows("transcript_lines", f"video_id = '{video_id}'"), key=lambda r: r["start"])
        return [r for r in rows if (start is None or r["end"] > start) and (end is None or r["start"] < end)]

    # --- upkeep -------------------------------------------------------------------------

    def optimize(self) -> None:
        """Compact small writes and fold new rows into the indexes; call after a big run."""
        with self._lock:
            for name in ("videos", "chunks", "events", "transcript_lines", "failures"):
                if name in self._names():
                    self._table(name).optimize()

    def counts(self) -> dict[str, int]:
        return {name: self._table(name).count_rows() for name in ("videos", "chunks", "events", "transcript_lines")
                if name in self._names()}

    # --- search -------------------------------------------------------------------------

    def search(self, query: str, k: int = 10, video_ids: list[str] | None = None) -> list[SearchHit]:
        """Full text and vectors over scenes, events and speech, fused by reciprocal rank."""
        present = [name for name in TEXT_TABLES if name in self._names()]
        if not present or (video_ids is not None and not video_ids):
            return []
        where = f"video_id IN ({_quote_ids(video_ids)})" if video_ids else None
        vector = self.embedder.embed([query])[0]
        depth = max(20, 3 * k)
        by_vector: list[tuple[float, str, dict]] = []
        by_text: list[tuple[float, str, dict]] = []
        for name in present:
            table = self._table(name)
            semantic = table.search(vector, vector_column_name="vector")
            lexical = table.search(query, query_type="fts", fts_columns=TEXT_TABLES[name])
            if where:
                semantic, lexical = semantic.where(where, prefilter=True), lexical.where(where, prefilter=True)
            by_vector += [(row["_distance"], name, row) for row in semantic.limit(depth).to_list()]
            by_text += [(-row["_score"], name, row) for row in lexical.limit(depth).to_list()]
        fused: dict[tuple[str, str], float] = {}
        rows: dict[tuple[str, str], tuple[str, dict]] = {}
        for ranking in (by_vector, by_text):
            ranking.sort(key=lambda item: item[0])
            for rank, (_, name, row) in enumerate(ranking):
                key = (name, row["id"])
                fused[key] = fused.get(key, 0.0) + 1.0 / (_RRF_K + rank + 1)
                rows[key] = (name, row)
        best = sorted(fused, key=fused.get, reverse=True)[:k]
        videos = {v.id: v for v in self.list_videos()}
        hits = []
        for key in best:
            name, row = rows[key]
            video = videos.get(row["video_id"])
            hits.append(SearchHit(
                video=VideoRef(id=row["video_id"], path=video.path if video else "", title=video.title if video else ""),
                start=row["start"], end=row["end"], text=row[TEXT_TABLES[name]], source=SOURCE_OF_TABLE[name],
                score=round(fused[key], 6),
            ))
        return hits
