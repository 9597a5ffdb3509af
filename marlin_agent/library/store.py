"""The footage library: videos, chunk captions and searchable segments, over any ``Store``.

Tables: ``videos``; ``chunks`` (one caption per chunk: scene, raw answer, model, prompt
version); ``segments`` (everything search can return — chunk scenes, caption events and
transcript lines — told apart by ``kind``); ``failures``; ``shards``; ``watch``. Where the rows
live is the store's business (``library.protocol``); what they mean is this module's.

Every row has a deterministic id (content id + times), so writes are upserts and an
interrupted run resumes without duplicates. A chunk's row is written after its segments
and is the mark that the chunk is done; a chunk that failed is kept in ``failures`` until
a later run succeeds. The embedding model is recorded, and a different one is refused.
"""

from __future__ import annotations

import json
import threading

from marlin_agent.domain import ChunkCaption, Event, VideoRef
from marlin_agent.errors import IndexMismatch, MarlinAgentError
from marlin_agent.library.embeddings import Embedder
from marlin_agent.library.fusion import fuse
from marlin_agent.library.protocol import Store
from marlin_agent.library.records import (
    SCHEMA_VERSION,
    SEGMENT_KINDS,
    ChunkFailureRecord,
    ChunkWrite,
    FailureWrite,
    SearchHit,
    Segment,
    ShardRun,
    VideoRecord,
    WatchRow,
    Writes,
    chunk_id,
    utc_now,
)
from marlin_agent.library.storage_errors import storage_errors
from marlin_agent.library.transcripts import Transcript


class Library:
    """The library over ``store`` (LanceDB at ``uri`` when none is given); safe to share between
    threads of one process."""

    def __init__(self, uri: str, embedder: Embedder, store: Store | None = None) -> None:
        if store is None:
            from marlin_agent.library.lance import LanceStore

            store = LanceStore(uri)
        self.uri, self.embedder, self.store = uri, embedder, store
        self._lock = threading.RLock()
        self._refs: dict[str, VideoRef] = {}
        self._check_embedding_model()

    # --- settings and tables ------------------------------------------------------------

    def _check_embedding_model(self) -> None:
        meta = self.store.meta()
        recorded = meta.get("embed_model")
        if recorded is not None and recorded != self.embedder.name and not self._same_model(recorded, meta):
            raise IndexMismatch(
                f"the index at {self.uri} was built with the embedding model {recorded!r}, "
                f"not {self.embedder.name!r}",
                hint=f"Either set MARLIN_EMBED_MODEL={recorded} to keep using this index, or index into "
                     f"a new database with --db NEW_PATH (the staged clips and captions cache are reused).",
            )

    def _same_model(self, recorded: str, meta: dict) -> bool:
        """Whether the model named ``recorded`` (another folder, or a hub name) is this one by content: the
        index's own record of it, or for an index made before it kept one, the recorded model where it still
        is. A model that cannot be found or read is not the same."""
        try:
            theirs = meta.get("embed_identity") or Embedder(recorded, self.embedder.cache).identity_if_here()
            return theirs is not None and theirs == self.embedder.identity()
        except (MarlinAgentError, OSError):
            return False

    def _ensure_meta(self) -> None:
        with self._lock:
            if not self.store.meta().get("embed_model"):
                self.store.set_meta({"embed_model": self.embedder.name, "embed_dim": str(self.embedder.dim),
                                     "embed_identity": self.embedder.identity(),
                                     "schema_version": SCHEMA_VERSION})

    def tables_ready(self) -> bool:
        """Whether every table (and the full-text index) exists, so writers need create nothing."""
        return self.store.tables_ready()

    def create_tables(self) -> None:
        """Create every table now: shards must not race to create them (see ``LanceStore.create_tables``)."""
        with self._lock:
            self._ensure_meta()
            self.store.create_tables(int(self.store.meta().get("embed_dim") or self.embedder.dim))

    # --- videos -------------------------------------------------------------------------

    @storage_errors("reading a video")
    def get_video(self, video_id: str) -> VideoRecord | None:
        rows = self.store.rows("videos", {"id": video_id})
        return VideoRecord.model_validate_json(rows[0]["record"]) if rows else None

    @storage_errors("listing videos")
    def list_videos(self) -> list[VideoRecord]:
        return [VideoRecord.model_validate_json(r["record"]) for r in self.store.rows("videos")]

    # --- chunks -------------------------------------------------------------------------

    @storage_errors("reading what is captioned")
    def done_chunk_ids(self, video_id: str | None = None) -> set[str]:
        """Chunks captioned in Marlin's format (of one video, or all). An off-format caption is
        kept (its events are searchable) but not done: the next run captions the chunk again."""
        where = {"video_id": video_id, "format_ok": True} if video_id else {"format_ok": True}
        return {row["id"] for row in self.store.rows("chunks", where, ["id"])}

    @storage_errors("reading what is captioned")
    def done_chunk_counts(self) -> dict[str, int]:
        """How many chunks of each video are captioned in Marlin's format, read in one pass."""
        counts: dict[str, int] = {}
        for row in self.store.rows("chunks", {"format_ok": True}, ["id", "video_id"]):
            counts[row["video_id"]] = counts.get(row["video_id"], 0) + 1
        return counts

    @storage_errors("reading what is captioned")
    def stored_chunk_ids(self) -> set[str]:
        """Every chunk with a stored caption, in Marlin's format or not."""
        return {row["id"] for row in self.store.rows("chunks", None, ["id"])}

    @storage_errors("reading captions")
    def chunk_captions(self, video_id: str) -> list[ChunkCaption]:
        """A video's stored chunk captions in time order, their events read back from the segments."""
        events: dict[str, list[Event]] = {}
        for segment in self.segments(video_id, "event"):
            events.setdefault(segment.chunk_id, []).append(Event(start=segment.start, end=segment.end,
                                                                 text=segment.text))
        rows = self.store.rows("chunks", {"video_id": video_id})
        return sorted((ChunkCaption(start=r["start"], end=r["end"], scene=r["scene"], events=events.get(r["id"], []),
                                    raw=r["raw"], format_ok=r["format_ok"]) for r in rows), key=lambda c: c.start)

    def put_video(self, video: VideoRecord) -> None:
        self.write(Writes(videos=[video]))

    def put_chunk(self, video_id: str, index: int, caption: ChunkCaption, model: str, prompt_version: int) -> None:
        """Write a captioned chunk: its scene and events first, then the chunk row that marks it done."""
        self.write(Writes(chunks=[ChunkWrite(video_id=video_id, index=index, caption=caption, model=model,
                                             prompt_version=prompt_version)]))

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
                self.store.add("videos", [{"id": v.id, "record": v.model_dump_json(), "path": v.path,
                                           "title": v.title} for v in latest.values()])
                self._refs.update({v.id: VideoRef(id=v.id, path=v.path, title=v.title) for v in latest.values()})

    def _retire(self, ids: list[str]) -> None:
        self.store.delete("segments", {"chunk_id": ids})
        for name in ("chunks", "failures"):
            self.store.delete(name, {"id": ids})

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
        self.store.delete("segments", {"chunk_id": ids})
        self.store.add("segments", segments)
        self.store.add("chunks", [{
            "id": cid, "video_id": w.video_id, "idx": w.index, "start": w.caption.start, "end": w.caption.end,
            "scene": w.caption.scene, "raw": w.caption.raw, "format_ok": w.caption.format_ok, "model": w.model,
            "prompt_version": w.prompt_version,
        } for cid, w in zip(ids, chunks, strict=True)])
        self.store.delete("failures", {"id": ids})

    def _write_failures(self, failures: list[FailureWrite]) -> None:
        ids = [chunk_id(f.video_id, f.start, f.end) for f in failures]
        previous = {r["id"]: r["attempts"] for r in self.store.rows("failures", {"id": ids})}
        rows: dict[str, dict] = {}
        for cid, f in zip(ids, failures, strict=True):
            attempts = rows[cid]["attempts"] + 1 if cid in rows else previous.get(cid, 0) + 1
            rows[cid] = {"id": cid, "video_id": f.video_id, "start": f.start, "end": f.end, "code": f.code,
                         "message": f.message, "attempts": attempts, "at": utc_now()}
        self.store.add("failures", list(rows.values()))

    @storage_errors("reading failures")
    def failures(self, video_id: str | None = None) -> list[ChunkFailureRecord]:
        rows = self.store.rows("failures", {"video_id": video_id} if video_id else None)
        return [ChunkFailureRecord.model_validate(r) for r in rows]

    @storage_errors("writing a shard's record")
    def put_shard_run(self, run: ShardRun) -> None:
        with self._lock:
            self._ensure_meta()
            self.store.add("shards", [run.model_dump()])

    @storage_errors("reading shard records")
    def shard_runs(self) -> list[ShardRun]:
        return [ShardRun.model_validate(r) for r in self.store.rows("shards")]

    # --- standing questions -------------------------------------------------------------

    @storage_errors("writing a watch's state")
    def put_watch_rows(self, rows: list[WatchRow]) -> None:
        """Store a watch's records in one write: what lands together is committed together."""
        with self._lock:
            self._ensure_meta()
            self.store.add("watch", [row.model_dump() for row in rows])

    @storage_errors("reading a watch's state")
    def watch_rows(self, watch: str | None = None, kind: str | None = None) -> list[WatchRow]:
        where = {column: value for column, value in (("watch", watch), ("kind", kind)) if value is not None}
        rows = self.store.rows("watch", where or None)
        return sorted((WatchRow.model_validate(r) for r in rows), key=lambda r: (r.at, r.id))

    @storage_errors("writing a watch's state")
    def delete_watch_rows(self, ids: list[str]) -> None:
        if ids:
            with self._lock:
                self.store.delete("watch", {"id": ids})

    @storage_errors("forgetting a video")
    def forget_video(self, video_id: str) -> None:
        """Remove a video and everything indexed from it (a recording its retention deleted)."""
        with self._lock:
            for name, column in (("segments", "video_id"), ("chunks", "video_id"), ("failures", "video_id"),
                                 ("videos", "id")):
                self.store.delete(name, {column: video_id})
            self._refs.pop(video_id, None)

    # --- transcripts and segments -------------------------------------------------------

    @storage_errors("writing a transcript")
    def put_transcript(self, video_id: str, transcript: Transcript) -> None:
        items = [(line.start, line.end, line.text, json.dumps([w.model_dump() for w in line.words]))
                 for line in transcript.lines]
        vectors = self.embedder.embed([text for _, _, text, _ in items])
        chunk, source = f"{video_id}:speech", transcript.source
        rows = [{"id": f"{chunk}#t{n}", "video_id": video_id, "chunk_id": chunk, "kind": "transcript", "start": start,
                 "end": end, "text": text, "model": source, "prompt_version": 0, "words": words, "vector": vectors[n]}
                for n, (start, end, text, words) in enumerate(items)]
        with self._lock:
            self._ensure_meta()
            self.store.delete("segments", {"video_id": video_id, "kind": "transcript"})
            self.store.add("segments", rows)

    @storage_errors("reading segments")
    def segments(self, video_id: str, kind: str | None = None) -> list[Segment]:
        """A video's segments in time order (``kind``: event, scene or transcript)."""
        where = {"video_id": video_id, **({"kind": kind} if kind in SEGMENT_KINDS else {})}
        segments = [Segment.model_validate({k: v for k, v in row.items() if k in Segment.model_fields})
                    for row in self.store.rows("segments", where)]
        return sorted(segments, key=lambda s: (s.start, s.end))

    # --- upkeep -------------------------------------------------------------------------

    def forget_stray_segments(self) -> int:
        """Drop scene and event rows whose chunk row is gone (its table lost), so captioning the chunk again
        does not store them twice; how many were dropped."""
        with self._lock:
            known = {row["id"] for row in self.store.rows("chunks", None, ["id"])}
            stray = sorted({row["chunk_id"] for row in self.store.rows("segments", None, ["chunk_id", "kind"])
                            if row["kind"] != "transcript" and row["chunk_id"] not in known})
            if stray:
                self.store.delete("segments", {"chunk_id": stray})
            return len(stray)

    def forget_uncovered_chunks(self) -> int:
        """Drop chunk rows whose scenes and events are gone (a table returned to an older version), so
        the next index run captions those chunks again; how many were dropped."""
        with self._lock:
            covered = {row["chunk_id"] for row in self.store.rows("segments", None, ["chunk_id"])}
            lost = [row["id"] for row in self.store.rows("chunks", None, ["id"]) if row["id"] not in covered]
            if lost:
                self.store.delete("chunks", {"id": lost})
            return len(lost)

    @storage_errors("compacting it")
    def optimize(self) -> None:
        """Compact small writes, fold new rows into the indexes, and add a vector index once
        exact scans would get slow; call after a big run."""
        with self._lock:
            self.store.optimize()

    @storage_errors("checking its vector index")
    def has_vector_index(self) -> bool:
        return self.store.has_vector_index()

    @storage_errors("counting its rows")
    def counts(self) -> dict[str, int]:
        names = self.store.tables()
        counts = {name: self.store.count(name) for name in ("videos", "chunks", "segments") if name in names}
        if "segments" in names:
            for kind in SEGMENT_KINDS:
                counts[kind] = self.store.count("segments", {"kind": kind})
        return counts

    # --- search -------------------------------------------------------------------------

    @storage_errors("searching")
    def search(self, query: str, k: int = 10, video_ids: list[str] | None = None) -> list[SearchHit]:
        """Full text and vectors over scenes, events and speech, fused by reciprocal rank."""
        if not query.strip() or "segments" not in self.store.tables() or (video_ids is not None and not video_ids):
            return []
        where = {"video_id": video_ids} if video_ids else None
        # Each half contributes its top ``depth``, so a moment ranked well by only one of them
        # still reaches the top k.
        depth = max(20, 3 * k)
        top = fuse(self.store.nearest(self.embedder.embed([query])[0], depth, where),
                   self.store.matching(query, depth, where), k)
        videos = self._video_refs({row["video_id"] for row, _ in top})
        return [
            SearchHit(video=videos.get(row["video_id"]) or VideoRef(id=row["video_id"], path="", title=""),
                      start=row["start"], end=row["end"], text=row["text"], source=row["kind"],
                      score=round(score, 6))
            for row, score in top
        ]

    def forget_video_refs(self) -> None:
        """Read video titles afresh at the next search (after a repair changed the tables underneath)."""
        with self._lock:
            self._refs.clear()

    def _video_refs(self, ids: set[str]) -> dict[str, VideoRef]:
        """Video references for search hits, from a small in-memory map refreshed on a miss
        (another process may have indexed new videos since it was read)."""
        if ids - self._refs.keys():
            rows = self.store.rows("videos", None, ["id", "path", "title"])
            self._refs = {r["id"]: VideoRef(id=r["id"], path=r["path"], title=r["title"]) for r in rows}
        return {i: self._refs[i] for i in ids if i in self._refs}
