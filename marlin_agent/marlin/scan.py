"""Caption or ground a whole video, chunk by chunk, with times in the video's own seconds.

Chunks are staged on worker threads while earlier chunks are already with the server, so
the CPU and the server work at the same time. A chunk that fails is recorded and the rest
go on; a failure that every request would meet (no server, bad key) stops the run.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from marlin_agent.config import Settings
from marlin_agent.domain import (
    Candidate,
    Caption,
    Chunk,
    ChunkCaption,
    ChunkFailure,
    ChunkProgress,
    Event,
    FindResult,
    StagedClip,
    Usage,
    VideoCaption,
    VideoInfo,
)
from marlin_agent.errors import ChunkFailed, InvalidTimeRange, MarlinAgentError
from marlin_agent.marlin.client import MarlinClient
from marlin_agent.marlin.modes import CAPTION, FIND, Mode
from marlin_agent.marlin.prompts import checked_event
from marlin_agent.media import plan_chunks, probe_video, stage_clip

T = TypeVar("T")


def chunks_for(video: VideoInfo, settings: Settings, start: float | None = None,
               end: float | None = None) -> list[Chunk]:
    """The chunks covering ``[start, end]`` of ``video`` (the whole video by default)."""
    lo = 0.0 if start is None else start
    hi = video.duration if end is None else end
    if lo >= hi:
        raise InvalidTimeRange(f"the range ends before it starts: --start {lo:g} is not before --end {hi:g}")
    if lo < 0 or hi > video.duration + 1e-3:
        raise InvalidTimeRange(
            f"the range {lo:.2f}–{hi:.2f} s is not inside {video.path.name} (0–{video.duration:.2f} s)"
        )
    return plan_chunks(lo, min(hi, video.duration), settings.media.chunk_seconds)


class ChunkRunner:
    """Stage each chunk and ask the server about it; collect answers and failures."""

    def __init__(self, video: VideoInfo, settings: Settings, client: MarlinClient,
                 on_progress: ChunkProgress | None = None, staging: asyncio.Semaphore | None = None) -> None:
        """``staging``: stagings allowed at once, shared when several videos run side by side
        (each staging then decodes on one thread); by default one per core for this video."""
        self.video = video
        self.settings = settings
        self.client = client
        self.on_progress = on_progress
        self._cores = max(1, os.cpu_count() or 1)
        self._shared_staging = staging is not None
        self._staging = staging or asyncio.Semaphore(self._cores)
        self._decoder_threads = self._cores

    async def _stage(self, chunk: Chunk) -> StagedClip:
        async with self._staging:
            return await asyncio.to_thread(
                stage_clip, self.video, chunk, self.settings.cache_dir,
                self.settings.media.stage_fps, self.settings.server.max_pixels, self._decoder_threads,
            )

    async def run(
        self,
        chunks: list[Chunk],
        ask: Callable[[StagedClip], Awaitable[T]],
        on_chunk: Callable[[Chunk, T | MarlinAgentError], Awaitable[None]] | None = None,
    ) -> tuple[list[tuple[Chunk, T]], list[ChunkFailure]]:
        """Ask about every chunk; ``on_chunk`` sees each answer (or failure) as soon as it lands,
        so a caller can store it before the rest finish."""
        done = 0
        total = len(chunks)
        # Side-by-side stagings each take one core; a lone chunk of a lone video gets them all.
        side_by_side = self._cores if self._shared_staging else min(total, self._cores)
        self._decoder_threads = max(1, self._cores // max(1, side_by_side))
        if self.on_progress:
            self.on_progress(0, total)

        async def one(chunk: Chunk) -> tuple[Chunk, T | MarlinAgentError]:
            nonlocal done
            try:
                outcome: T | MarlinAgentError = await ask(await self._stage(chunk))
            except MarlinAgentError as exc:
                if exc.stops_run:  # a dead server, a full disk: every chunk would fail alike
                    raise
                outcome = exc
            if on_chunk is not None:
                await on_chunk(chunk, outcome)
            done += 1
            if self.on_progress:
                self.on_progress(done, total)
            return chunk, outcome

        tasks = [asyncio.create_task(one(chunk)) for chunk in chunks]
        try:
            finished = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        answers = [(c, o) for c, o in finished if not isinstance(o, MarlinAgentError)]
        failures = [
            ChunkFailure(start=c.start, end=c.end, code=o.code, message=o.message)
            for c, o in finished if isinstance(o, MarlinAgentError)
        ]
        if chunks and not answers:
            first = next(o for _, o in finished if isinstance(o, MarlinAgentError))
            raise ChunkFailed(f"every chunk of {self.video.path.name} failed; the first: {first.message}",
                              hint=first.hint) from first
        return answers, failures


# An event cut by a chunk boundary comes back as two events that touch the boundary.
_BOUNDARY_SLACK = 0.75
_SAME_EVENT_WORDS = 0.5


def _words(text: str) -> set[str]:
    return {w for w in text.lower().replace(",", " ").split() if len(w) > 2}


def _same_event(a: Event, b: Event) -> bool:
    left, right = _words(a.text), _words(b.text)
    return bool(left and right) and len(left & right) / len(left | right) >= _SAME_EVENT_WORDS


def join_across_boundaries(captions: list[ChunkCaption]) -> list[Event]:
    """All events in time order, with an event split by a chunk boundary joined again."""
    joined: list[Event] = []
    for previous, current in zip([None, *captions], captions, strict=False):
        pending = list(current.events)
        if previous is not None and previous.end == current.start:
            for index, event in enumerate(pending):
                if event.start - current.start > _BOUNDARY_SLACK:
                    continue
                match = next((j for j, e in enumerate(joined) if previous.end - e.end <= _BOUNDARY_SLACK
                              and e.end <= previous.end and _same_event(e, event)), None)
                if match is not None:
                    head = joined[match]
                    joined[match] = Event(start=head.start, end=max(head.end, event.end), text=head.text)
                    pending[index] = None
        joined.extend(e for e in pending if e is not None)
    return sorted(joined, key=lambda e: (e.start, e.end))


def to_video_time(chunk: Chunk, start: float, end: float) -> tuple[float, float]:
    """Times Marlin gave inside ``chunk`` (from 0) as the video's seconds, kept within the chunk."""
    return (round(min(chunk.start + start, chunk.end), 3), round(min(chunk.start + end, chunk.end), 3))


def in_video_time(chunk: Chunk, caption: Caption) -> ChunkCaption:
    """A chunk's caption with its event times offset into the video's time."""
    events = [Event(start=s, end=e, text=event.text)
              for event in caption.events for s, e in [to_video_time(chunk, event.start, event.end)]]
    return ChunkCaption(start=chunk.start, end=chunk.end, scene=caption.scene, events=events,
                        raw=caption.raw, format_ok=caption.format_ok)


def _spent_since(client: MarlinClient, before: Usage, started: float) -> Usage:
    """What ``client`` spent since ``before`` was read (a client may serve several requests)."""
    now = client.usage
    return Usage(marlin_calls=now.marlin_calls - before.marlin_calls,
                 marlin_prompt_tokens=now.marlin_prompt_tokens - before.marlin_prompt_tokens,
                 marlin_completion_tokens=now.marlin_completion_tokens - before.marlin_completion_tokens,
                 seconds=round(time.monotonic() - started, 3))


async def caption_video(path: Path, settings: Settings, client: MarlinClient, start: float | None = None,
                        end: float | None = None, on_progress: ChunkProgress | None = None) -> VideoCaption:
    """Caption every chunk of the video (or of ``[start, end]``) and merge in time order."""
    before, started = client.usage, time.monotonic()
    video = await asyncio.to_thread(probe_video, path, settings.cache_dir)
    answers, failures = await _each_chunk(CAPTION, {}, video, settings, client, start, end, on_progress)
    captions = [in_video_time(chunk, caption) for chunk, caption in answers]
    return VideoCaption(video=video, chunks=captions, events=join_across_boundaries(captions), failures=failures,
                        usage=_spent_since(client, before, started))


async def ask_over_video(mode: Mode, path: Path, settings: Settings, client: MarlinClient,
                         arguments: dict[str, str] | None = None, start: float | None = None,
                         end: float | None = None) -> tuple[list[tuple[Chunk, Any]], list[ChunkFailure]]:
    """Ask every chunk of the video (or of ``[start, end]``) in ``mode``: (chunk, answer) in time order, in the
    chunk's own time as the mode reads it, and the chunks that failed. Any registered mode, Marlin's own two
    included, runs over a video this way."""
    mode.prompt(**(arguments or {}))  # wrong arguments are refused before any footage is staged
    video = await asyncio.to_thread(probe_video, path, settings.cache_dir)
    return await _each_chunk(mode, arguments or {}, video, settings, client, start, end)


async def _each_chunk(mode: Mode, arguments: dict[str, str], video: VideoInfo, settings: Settings,
                      client: MarlinClient, start: float | None, end: float | None,
                      on_progress: ChunkProgress | None = None) -> tuple[list[tuple[Chunk, Any]], list[ChunkFailure]]:
    """``mode`` asked of each chunk of ``video`` (staged side by side): (chunk, answer) in time order, and the
    chunks that failed."""
    async def ask(clip: StagedClip):
        return await client.ask(clip, mode, **arguments)

    answers, failures = await ChunkRunner(video, settings, client, on_progress).run(
        chunks_for(video, settings, start, end), ask)
    return sorted(answers, key=lambda pair: pair[0].start), failures


def _rank(candidate: Candidate) -> tuple:
    """Unverified candidates, ordered by how well the answer kept Marlin's format, whether
    the span is a plausible event (neither a blink nor the whole chunk), then time."""
    width = candidate.end - candidate.start
    chunk_width = candidate.chunk_end - candidate.chunk_start
    plausible = 0.3 <= width <= 0.9 * chunk_width
    return (not candidate.format_ok, not plausible, candidate.start)


async def find_in_video(query: str, path: Path, settings: Settings, client: MarlinClient, start: float | None = None,
                        end: float | None = None, on_progress: ChunkProgress | None = None) -> FindResult:
    """Ground ``query`` in every chunk: one unverified candidate per chunk, best first."""
    checked_event(query)  # refuse an unusable query before any footage is staged
    before, started = client.usage, time.monotonic()
    video = await asyncio.to_thread(probe_video, path, settings.cache_dir)
    answers, failures = await _each_chunk(FIND, {"event": query}, video, settings, client, start, end, on_progress)
    candidates = []
    for chunk, span in answers:
        if span is None:
            failures.append(ChunkFailure(start=chunk.start, end=chunk.end, code="no_span",
                                         message="Marlin's answer held no time range"))
            continue
        s, e = to_video_time(chunk, span.start, span.end)
        candidates.append(Candidate(start=s, end=e, chunk_start=chunk.start, chunk_end=chunk.end,
                                    raw=span.raw, format_ok=span.format_ok))
    return FindResult(query=query, video=video, candidates=sorted(candidates, key=_rank), failures=failures,
                      usage=_spent_since(client, before, started))
