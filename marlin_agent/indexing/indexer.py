"""The indexer: for each video, the chunk plan, its captions, its transcript and the writes.

Marlin requests stay in flight while later chunks are staged and the audio is transcribed on
another thread; each chunk is stored the moment its caption lands.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from marlin_agent.config import Settings
from marlin_agent.domain import Caption, Chunk, ChunkFailure, Usage, VideoInfo
from marlin_agent.errors import ChunkFailed, MarlinAgentError, MissingDependency, ServerNotConfigured
from marlin_agent.file_names import escaped, path_text
from marlin_agent.indexing.batching import GroupWriter
from marlin_agent.indexing.reports import IndexProgress, IndexReport, Recaption, ShardBy, VideoOutcome
from marlin_agent.indexing.shards import Shard
from marlin_agent.indexing.write_lock import WriteLock
from marlin_agent.library.health import mend_search_indexes
from marlin_agent.library.records import ChunkWrite, FailureWrite, ShardRun, VideoRecord, Writes, chunk_id, utc_now
from marlin_agent.library.store import Library
from marlin_agent.library.transcripts import (
    SubtitlesUnreadable,
    Transcriber,
    Transcript,
    cached_transcript,
    parse_subtitles,
)
from marlin_agent.marlin.prompts import PROMPT_VERSION
from marlin_agent.media.clip_cache import prune
from marlin_agent.media.probe import probe_video
from marlin_agent.media.sources import SkippedSource, SourceVideo

if TYPE_CHECKING:  # the client (and the OpenAI SDK) load only when a run has chunks to caption
    from marlin_agent.marlin.client import MarlinClient

log = logging.getLogger(__name__)

# Videos worked on at once: enough that short videos (one chunk each) keep every request slot
# of the client busy while the next ones are probed and staged; the client still bounds requests.
_MIN_VIDEOS_IN_FLIGHT = 4


def videos_in_flight(concurrency: int) -> int:
    return max(_MIN_VIDEOS_IN_FLIGHT, 2 * concurrency)


@dataclass
class _Snapshot:
    """What the index held when read: one read per run (and once more when the write lock is
    taken), instead of two queries per video."""

    videos: dict[str, VideoRecord]
    done: set[str]
    failed: set[str]
    stored: set[str]  # every stored chunk, off-format ones too

    @classmethod
    def read(cls, library: Library) -> _Snapshot:
        return cls(videos={v.id: v for v in library.list_videos()}, done=library.done_chunk_ids(),
                   failed={f.id for f in library.failures()}, stored=library.stored_chunk_ids())


@dataclass
class _VideoRun:
    """One video being captioned: its plan, what has been stored or has failed so far, and its
    row, which goes out with the first write (one write, not two), from its owner only."""

    video: VideoInfo
    record: VideoRecord
    existing: VideoRecord | None
    whole: list[Chunk]  # every chunk of the video
    plan: list[Chunk]  # this run's share of them
    todo: list[Chunk]  # the share not captioned yet
    owner: bool
    first_write: Writes
    stored: int = 0
    failed: int = 0
    failures: list[ChunkFailure] = field(default_factory=list)

    def take_first_write(self) -> Writes:
        writes, self.first_write = self.first_write, Writes()
        return writes


class Indexer:
    def __init__(self, settings: Settings, library: Library, client: MarlinClient | None,
                 transcriber: Transcriber | None, on_progress: Callable[[IndexProgress], None] | None = None,
                 recaption: Recaption | None = None, lock: WriteLock | None = None, shard: Shard | None = None,
                 shard_by: ShardBy = "chunk") -> None:
        self.settings = settings
        self.recaption = recaption
        self.lock = lock
        self.shard, self.shard_by = shard, shard_by
        self.wrote = False
        self.library = library
        self.writer = GroupWriter(library)
        self._snapshot: _Snapshot | None = None
        self._locking = asyncio.Lock()
        self._lock_taken = False
        self._claimed: set[str] = set()  # content ids this run works on (a copy twice in a folder is done once)
        self.client = client
        self.transcriber = transcriber
        self.on_progress = on_progress
        self.report = IndexReport(shard=str(shard) if shard else "")
        self._overall_done = 0
        self._overall_total = 0
        self._looking = 0
        self._transcribing = asyncio.Semaphore(1)  # whisper already uses every core
        self._staging = asyncio.Semaphore(max(1, os.cpu_count() or 1))  # one per core, across all videos

    async def run(self, sources: list[SourceVideo], skipped: list[SkippedSource] = ()) -> IndexReport:
        started = time.monotonic()
        self.report.failed.extend(skipped)
        self.report.videos_failed += len(skipped)
        slots = asyncio.Semaphore(videos_in_flight(self.settings.server.concurrency))
        self._snapshot = await asyncio.to_thread(_Snapshot.read, self.library)

        async def one(source: SourceVideo) -> None:
            async with slots:
                await self._index_video(source)

        self._looking = len(sources)
        self._progress("", 0, 0)  # something to show while the first videos are probed
        if self.shard is not None:
            run = ShardRun(id=str(self.shard), index=self.shard.index, count=self.shard.count, status="running",
                           host=socket.gethostname(), started_at=utc_now())
            await asyncio.to_thread(self.library.put_shard_run, run)

        await asyncio.gather(*(one(source) for source in sources))
        if self.shard is not None:
            planned = sum(v.chunks_planned for v in self.report.videos)
            done = sum(v.chunks_done for v in self.report.videos)
            run = run.model_copy(update={"status": "finished", "finished_at": utc_now(), "chunks_planned": planned,
                                         "chunks_done": done, "chunks_failed": planned - done})
            await asyncio.to_thread(self.library.put_shard_run, run)
        if self.wrote and self.shard is None:
            # Shards leave compaction and the vector index to `index --finalize`: run by every
            # shard at once, they would only fight over the same table versions.
            await asyncio.to_thread(self.library.optimize)
        if self.shard is None:
            await asyncio.to_thread(mend_search_indexes, self.library)
        if self.wrote:  # what this run staged counts against the clip cache's size
            await asyncio.to_thread(prune, self.settings.cache_dir, self.settings.media.clip_cache_gb or None)
        spent = self.client.usage if self.client else Usage()
        self.report.marlin_calls = spent.marlin_calls
        self.report.marlin_prompt_tokens = spent.marlin_prompt_tokens
        self.report.marlin_completion_tokens = spent.marlin_completion_tokens
        self.report.seconds = round(time.monotonic() - started, 2)
        self.report.minutes_of_footage = round(self.report.minutes_of_footage, 2)
        return self.report

    def _progress(self, name: str, done: int, total: int, phase: str = "captioning") -> None:
        if self.on_progress:
            self.on_progress(IndexProgress(name, done, total, self._overall_done, self._overall_total,
                                           max(0, self._looking), phase))

    def _looked_at(self, name: str, done: int = 0, total: int = 0) -> None:
        """One video fewer whose work is unknown: the run's total is that much closer to final."""
        self._looking -= 1
        self._progress(name, done, total)

    async def _transcript(self, source: SourceVideo, video: VideoInfo) -> Transcript | None:
        if source.subtitles is not None:
            try:
                return await asyncio.to_thread(parse_subtitles, source.subtitles)
            except (SubtitlesUnreadable, MissingDependency):
                pass  # hear it instead: a broken subtitle file is no reason to go without speech
        if self.transcriber is None:
            return None
        async with self._transcribing:
            return await asyncio.to_thread(cached_transcript, video, self.transcriber, self.settings.cache_dir)

    async def _index_video(self, source: SourceVideo) -> None:
        video = await self._probe(source)
        if video is None:
            return
        from marlin_agent.marlin.scan import chunks_for

        whole = chunks_for(video, self.settings)
        owner, plan = self._share(video.content_id, whole)
        if not owner and not plan:
            self.report.videos_other_shards += 1
            self._looked_at(video.path.name)
            return
        self.report.minutes_of_footage += video.duration * len(plan) / max(1, len(whole)) / 60
        if video.content_id in self._claimed:  # the same footage again under another name, in this run
            self._unchanged(self._record(source, video, None, len(whole)), video, plan)
            return
        self._claimed.add(video.content_id)
        existing, todo, wants_transcript = self._work(source, video, plan, owner)
        if todo or wants_transcript:
            # Something to write: take the lock (waiting for another indexing process if need be),
            # then look again, since that process may have done this video meanwhile.
            await self._locked()
            existing, todo, wants_transcript = self._work(source, video, plan, owner)
        record = self._record(source, video, existing, len(whole))
        if not todo and not wants_transcript:
            await self._refresh(record, existing, whole, owner)
            self._unchanged(record, video, plan)
            return
        if todo and self.client is None:
            raise ServerNotConfigured(f"{video.path.name} needs captions but no Marlin server is configured")
        if wants_transcript and source.subtitles is None and self.transcriber is not None and video.has_audio:
            await asyncio.to_thread(self.transcriber.folder)  # before any request: no model, no run
        run = _VideoRun(video=video, record=record, existing=existing, whole=whole, plan=plan, todo=todo,
                        owner=owner, first_write=Writes(videos=[record] if owner else []),
                        stored=len(plan) - len(todo))
        transcript_task = asyncio.create_task(self._transcript(source, video)) if wants_transcript else None
        self._overall_total += len(todo)
        self._looked_at(video.path.name, run.stored, len(plan))
        await self._caption(run, transcript_task)
        if transcript_task is not None:
            await self._add_transcript(run, transcript_task)
        await self._finish(run)

    async def _probe(self, source: SourceVideo) -> VideoInfo | None:
        """The video's streams, or None with the failure reported (an unreadable file is one video lost)."""
        try:
            return await asyncio.to_thread(probe_video, source.path, self.settings.cache_dir)
        except MarlinAgentError as exc:
            self.report.videos_failed += 1
            self.report.failed.append(SkippedSource(source=str(source.path), code=exc.code, reason=exc.message))
            self._looked_at(source.path.name)
            return None

    def _unchanged(self, record: VideoRecord, video: VideoInfo, plan: list[Chunk]) -> None:
        self.report.videos_unchanged += 1
        self.report.videos.append(self._outcome(record, "unchanged", len(plan), len(plan), 0))
        self._looked_at(video.path.name, len(plan), len(plan))

    async def _refresh(self, record: VideoRecord, existing: VideoRecord | None, whole: list[Chunk],
                       owner: bool) -> None:
        """Nothing to caption: a moved or renamed file still gets its new path and title, and chunks
        of an older plan go."""
        if owner and (existing is None or (existing.path, existing.title) != (record.path, record.title)
                      or self._stale(record.id, whole)):
            await self._locked()  # reads the index again: the stale list below is the current one
            await self.writer.write(Writes(videos=[record], retired=self._stale(record.id, whole)))

    async def _caption(self, run: _VideoRun, transcript_task: asyncio.Task | None) -> None:
        """Caption the chunks still to do, storing each as it lands."""
        if not run.todo:
            await self.writer.write(run.take_first_write())
            return
        from marlin_agent.marlin.scan import ChunkRunner

        runner = ChunkRunner(run.video, self.settings, self.client, staging=self._staging)
        try:
            await runner.run(run.todo, self.client.caption, on_chunk=partial(self._store, run))
        except ChunkFailed:
            pass  # every chunk of this video failed: each is recorded, and the other videos go on
        except MarlinAgentError:
            if transcript_task:
                transcript_task.cancel()
            raise
        self.report.chunks_captioned += run.stored - (len(run.plan) - len(run.todo))
        self.report.chunks_failed += run.failed

    async def _store(self, run: _VideoRun, chunk: Chunk, outcome: Caption | MarlinAgentError) -> None:
        """One chunk's answer (or failure), written at once; the video's row rides on the first write."""
        from marlin_agent.marlin.scan import in_video_time

        writes = run.take_first_write()
        video_id = run.video.content_id
        if isinstance(outcome, MarlinAgentError):
            failure = ChunkFailure(start=chunk.start, end=chunk.end, code=outcome.code, message=outcome.message)
        else:
            writes.chunks.append(ChunkWrite(video_id=video_id, index=chunk.index, caption=in_video_time(chunk, outcome),
                                            model=self.settings.server.model, prompt_version=PROMPT_VERSION))
            # An off-format caption is kept for search, but fails until a later run gets a proper one.
            failure = None if outcome.format_ok else ChunkFailure(
                start=chunk.start, end=chunk.end, code="caption_off_format",
                message=f"the caption broke Marlin's format: {outcome.raw.strip()[:300]}")
        if failure is not None:
            writes.failures.append(FailureWrite(video_id=video_id, **failure.model_dump()))
        await self.writer.write(writes)
        if failure is None:
            run.stored += 1
        else:
            run.failed += 1
            run.failures.append(failure)
        self._overall_done += 1
        self._progress(run.video.path.name, run.stored + run.failed, len(run.plan))

    async def _add_transcript(self, run: _VideoRun, transcript_task: asyncio.Task) -> None:
        if not transcript_task.done():
            self._progress(run.video.path.name, run.stored + run.failed, len(run.plan), "transcribing")
        try:
            transcript = await transcript_task
        except MarlinAgentError as exc:
            self.report.failed.append(SkippedSource(source=str(run.video.path), code=exc.code,
                                                    reason=f"transcript: {exc.message}"))
            return
        if transcript is None:
            return
        await self.writer.write(run.take_first_write())  # the video's row, if no chunk carried it
        await asyncio.to_thread(self.library.put_transcript, run.video.content_id, transcript)
        run.record = run.record.model_copy(update={"transcript_source": transcript.source})
        self.report.transcript_lines += len(transcript.lines)

    async def _finish(self, run: _VideoRun) -> None:
        """The video's final row, and its outcome in the report."""
        record = run.record.model_copy(update={"indexed_at": time.strftime("%Y-%m-%dT%H:%M:%S")})
        name, looked = run.video.path.name, run.stored + run.failed
        # Chunks of an older plan (other boundaries) go once the new plan is complete, not before:
        # until then they still answer for the parts of the video whose new chunks failed.
        if run.owner:
            self._progress(name, looked, len(run.plan), "writing")
            retired = [] if run.failed else self._stale(record.id, run.whole)
            await self.writer.write(Writes(videos=[record], retired=retired))
        status = ("failed" if not run.stored else "partial") if run.failed else ("updated" if run.existing else "new")
        counter = f"videos_{status}"
        setattr(self.report, counter, getattr(self.report, counter) + 1)
        if status == "failed":
            first = run.failures[0]
            self.report.failed.append(SkippedSource(
                source=str(run.video.path), code=first.code,
                reason=f"every chunk failed ({len(run.failures)}); the first: {first.message}"))
        self.report.videos.append(self._outcome(record, status, len(run.plan), run.stored, run.failed, run.failures))
        self._progress(name, looked, len(run.plan), "done")

    def _share(self, video_id: str, plan: list[Chunk]) -> tuple[bool, list[Chunk]]:
        """Whether this run owns the video (its row and transcript), and the chunks it captions."""
        if self.shard is None:
            return True, plan
        owner = self.shard.owns(video_id)
        if self.shard_by == "video":
            return owner, plan if owner else []
        return owner, [c for c in plan if self.shard.owns(chunk_id(video_id, c.start, c.end))]

    def _work(self, source: SourceVideo, video: VideoInfo, plan: list[Chunk],
              owner: bool) -> tuple[VideoRecord | None, list[Chunk], bool]:
        """What the index holds for ``video``, the chunks still to caption, and whether it needs a transcript."""
        existing = self._snapshot.videos.get(video.content_id)
        todo = self._todo(video.content_id, plan)
        wants_transcript = owner and (self.transcriber is not None or source.subtitles is not None) and not (
            existing and existing.transcript_source)
        return existing, todo, wants_transcript

    async def _locked(self) -> None:
        """Hold the database's write lock from here to the end of the run; the first time, read
        the index again, since another process may have written to it before letting go."""
        self.wrote = True
        async with self._locking:
            if not self._lock_taken:
                if self.lock is not None:
                    await self.lock.acquire()
                self._snapshot = await asyncio.to_thread(_Snapshot.read, self.library)
                self._lock_taken = True

    def _stale(self, video_id: str, plan: list[Chunk]) -> list[str]:
        """Stored chunks (or failures) of this video that the current plan does not have: cut
        with another chunk length, or before chunks became equal. A sharded run leaves them to a
        run without shards: its owner cannot tell whether the other shards' chunks all landed."""
        if self.shard is not None:
            return []
        planned = {chunk_id(video_id, c.start, c.end) for c in plan}
        prefix = f"{video_id}:"
        return sorted(i for i in self._snapshot.stored | self._snapshot.failed
                      if i.startswith(prefix) and i not in planned)

    def _todo(self, video_id: str, plan: list[Chunk]) -> list[Chunk]:
        """The chunks to caption: those not done yet; with ``recaption``, every chunk, or only those
        whose last attempt failed or broke the format."""
        if self.recaption == "all":
            return plan
        ids = [chunk_id(video_id, c.start, c.end) for c in plan]
        if self.recaption == "failed":
            return [c for c, i in zip(plan, ids, strict=True) if i in self._snapshot.failed]
        return [c for c, i in zip(plan, ids, strict=True) if i not in self._snapshot.done]

    def _record(self, source: SourceVideo, video: VideoInfo, existing: VideoRecord | None, planned: int) -> VideoRecord:
        return VideoRecord(
            id=video.content_id, path=path_text(video.path),
            # A local file is called what the user calls it now (a renamed copy is not its old name);
            # a download keeps the title its page gave, even when a re-run reads it from the cache.
            title=source.title or (existing.title if existing and source.url else "") or escaped(video.path.stem),
            url=source.url or (existing.url if existing else ""),
            uploader=source.uploader or (existing.uploader if existing else ""),
            external_id=source.external_id or (existing.external_id if existing else ""),
            duration=video.duration, declared_duration=video.declared_duration, fps=video.fps, width=video.width,
            height=video.height,
            has_audio=video.has_audio, chunk_seconds=self.settings.media.chunk_seconds, chunks_planned=planned,
            transcript_source=existing.transcript_source if existing else "", model=self.settings.server.model,
            prompt_version=PROMPT_VERSION, indexed_at=existing.indexed_at if existing else "",
        )

    @staticmethod
    def _outcome(record: VideoRecord, status: str, planned: int, done: int, failed: int,
                 failures: list[ChunkFailure] = ()) -> VideoOutcome:
        note = (f"its metadata says {record.declared_duration:.1f} s but its streams hold {record.duration:.1f} s: "
                "all of it is indexed" if record.declared_duration is not None else "")
        return VideoOutcome(id=record.id, path=record.path, title=record.title, status=status, chunks_done=done,
                            chunks_planned=planned, chunks_failed=failed,
                            transcript=record.transcript_source or "none", failures=list(failures), note=note)


