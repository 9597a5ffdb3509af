"""A plain-text summary of one video within a character budget and a time limit, for hosts
that want prose.

OpenClaw's video hook (and anything like it) hands a video to a command and pastes what
it prints into the conversation; it keeps 500 characters unless configured otherwise and
gives the command 120 s. The budget is spent in order of use to a reader: what the video
is, what the opening scene shows, the timeline of events, what is said, and then the later
scenes; the text keeps the video's own order.

An indexed video is described from the index, at once and without Marlin. Otherwise its
chunks are captioned until the time limit; what is done by then is described, with a line
saying how much and how to have all of it next time (index it once).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from marlin_agent.clock import clock
from marlin_agent.config import Settings
from marlin_agent.domain import Caption, Chunk, ChunkFailure, VideoCaption, VideoInfo
from marlin_agent.errors import MarlinAgentError, TimeLimitReached
from marlin_agent.library.transcripts import TranscriptLine, speech_of

# OpenClaw's video hook keeps 500 characters unless its maxChars says more, and gives a
# command 120 s; the limit leaves room for starting up and for what is said.
DEFAULT_MAX_CHARS = 500
DEFAULT_TIME_LIMIT = 100.0


def _fit(text: str, budget: int) -> str:
    if len(text) <= budget:
        return text
    if budget <= 1:
        return ""
    cut = text[: budget - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[budget // 2:] else cut) + "…"


class _Page:
    """Lines placed by section and position, within a character budget."""

    def __init__(self, budget: int) -> None:
        self.budget, self.used = budget, 0
        self.lines: dict[tuple[int, int], str] = {}

    def room(self) -> int:
        return self.budget - self.used - (1 if self.lines else 0)  # a newline before the next line

    def add(self, key: tuple[int, int], text: str) -> bool:
        if not text or len(text) > self.room():
            return False
        self.used += len(text) + (1 if self.lines else 0)
        self.lines[key] = text
        return True

    def add_run(self, section: int, title: str, items: list[str], leave: int = 0) -> None:
        """A titled list, as many items as fit (keeping ``leave`` characters), and what was left out."""
        if not items or not self.add((section, -1), title):
            return
        for index, item in enumerate(items):
            rest = len(items) - index - 1
            note = f"… ({rest} more)" if rest else ""
            if len(item) + 1 + (len(note) + 1 if note else 0) > self.room() - leave:
                self.add((section, index), f"… ({len(items) - index} more)")
                return
            self.add((section, index), item)

    def text(self) -> str:
        return "\n".join(self.lines[key] for key in sorted(self.lines))


def describe_text(result: VideoCaption, max_chars: int = DEFAULT_MAX_CHARS, speech: list[TranscriptLine] | None = None,
                  note: str = "") -> str:
    """``result`` (and what is said in it) as prose of at most ``max_chars`` characters; ``note``,
    if any, is kept as the last line."""
    video = result.video
    audio = "with audio" if video.has_audio else "no audio"
    header = f"Video: {video.path.name}, {clock(video.duration)}, {video.width}x{video.height}, {audio}."
    chunks = [c for c in result.chunks if c.scene.strip()]
    scenes = [f"Scene: {c.scene.strip()}" if len(chunks) == 1 else
              f"Scene {clock(c.start)}-{clock(c.end)}: {c.scene.strip()}" for c in chunks]
    events = [f"{clock(e.start)}-{clock(e.end)} {e.text}" for e in result.events]
    said = [f"{clock(line.start)} {line.text}" for line in speech or []]
    failed = (f"({len(result.failures)} of {len(result.failures) + len(result.chunks)} chunks could not be described.)"
              if result.failures else "")

    page = _Page(max_chars - (len(note) + 1 if note and len(note) < max_chars // 2 else 0))
    page.add((0, 0), _fit(header, page.budget))
    if scenes:
        page.add((1, 0), _fit(scenes[0], max(0, min(page.room(), max(160, max_chars // 3)))))
    # Events first, but keep a share of what is left for speech when there is any.
    page.add_run(3, "Events:", events, leave=page.room() // 3 if said else 0)
    page.add_run(4, "Speech:", said)
    for index, scene in enumerate(scenes[1:], 1):
        page.add((1, index), scene)
    page.add((5, 0), failed)
    if note and len(note) < max_chars // 2:
        page.budget = max_chars
        page.add((6, 0), note)
    return page.text()


class _Hearing:
    """Transcription on a thread of its own, so that a time limit can stop waiting for it
    (a daemon thread: a process that is done does not wait for Whisper either)."""

    def __init__(self, video: VideoInfo, settings: Settings, warn) -> None:
        self.lines: list[TranscriptLine] | None = None
        self._done = threading.Event()
        self.finished = False

        def hear() -> None:
            try:
                self.lines = asyncio.run(speech_of(video, settings, warn=warn))
            finally:
                self._done.set()

        threading.Thread(target=hear, name="describe-speech", daemon=True).start()

    async def wait(self, seconds: float | None) -> list[TranscriptLine] | None:
        self.finished = await asyncio.to_thread(self._done.wait, seconds)
        return self.lines if self.finished else None


def _indexed_caption(video: VideoInfo, settings: Settings) -> VideoCaption | None:
    """The video's captions from the index, when every chunk of it is there; else None."""
    from marlin_agent.marlin.scan import chunks_for, join_across_boundaries

    if "://" not in settings.db_path and not Path(settings.db_path).is_dir():
        return None  # no index yet: do not create one just to look
    try:
        from marlin_agent.library.access import open_library
        from marlin_agent.library.records import chunk_id

        library = open_library(settings)
        planned = {chunk_id(video.content_id, c.start, c.end) for c in chunks_for(video, settings)}
        if not planned <= library.done_chunk_ids(video.content_id):
            return None
        captions = [c for c in library.chunk_captions(video.content_id)
                    if chunk_id(video.content_id, c.start, c.end) in planned]
    except MarlinAgentError:  # no library extra, an index of another embedding model, ...
        return None
    return VideoCaption(video=video, chunks=captions, events=join_across_boundaries(captions))


async def _caption_within(video: VideoInfo, settings: Settings, seconds: float | None) -> tuple[VideoCaption, float]:
    """Caption the video's chunks until ``seconds`` run out: what was captioned, and how many
    seconds of the video were left undescribed."""
    from marlin_agent.marlin.client import MarlinClient
    from marlin_agent.marlin.scan import ChunkRunner, chunks_for, in_video_time, join_across_boundaries

    chunks = chunks_for(video, settings)
    answered: list[tuple[Chunk, Caption]] = []
    failures: list[ChunkFailure] = []

    async def keep(chunk: Chunk, outcome: Caption | MarlinAgentError) -> None:
        if isinstance(outcome, MarlinAgentError):
            failures.append(ChunkFailure(start=chunk.start, end=chunk.end, code=outcome.code, message=outcome.message))
        else:
            answered.append((chunk, outcome))

    async with MarlinClient(settings.server) as client:
        run = ChunkRunner(video, settings, client).run(chunks, client.caption, on_chunk=keep)
        try:
            await asyncio.wait_for(run, timeout=seconds)
        except TimeoutError:
            if not answered:
                raise TimeLimitReached(
                    f"{video.path.name} ({clock(video.duration)}) is not indexed, and no part of it was described "
                    f"within {seconds or 0:.0f} s",
                    hint=f"Index it once (`marlin-agent index '{video.path}'`); describe then reads the index "
                         "at once. Or allow more time with --time-limit.") from None
    captions = [in_video_time(chunk, caption) for chunk, caption in sorted(answered, key=lambda pair: pair[0].start)]
    reached = {(f.start, f.end) for f in failures} | {(c.start, c.end) for c, _ in answered}
    undescribed = sum(c.duration for c in chunks if (c.start, c.end) not in reached)
    return VideoCaption(video=video, chunks=captions, events=join_across_boundaries(captions), failures=failures), \
        undescribed


async def describe_video(path: Path, settings: Settings, *, max_chars: int = DEFAULT_MAX_CHARS, speech: bool = True,
                         time_limit: float | None = DEFAULT_TIME_LIMIT,
                         serve: Callable[[Settings], Awaitable[Settings]] | None = None, warn=None) -> str:
    """The summary of ``path``: from the index when it holds the whole video, else from Marlin
    within ``time_limit`` seconds (None: no limit). ``serve`` makes sure a server is up, and is
    only called when Marlin is needed."""
    from marlin_agent.media import probe_video

    started = time.monotonic()

    def left() -> float | None:
        return None if not time_limit else max(0.0, time_limit - (time.monotonic() - started))

    video = await asyncio.to_thread(probe_video, path, settings.cache_dir)
    hearing = _Hearing(video, settings, warn) if speech else None
    caption = await asyncio.to_thread(_indexed_caption, video, settings)
    note = ""
    if caption is None:
        if serve is not None:
            settings = await serve(settings)
        caption, undescribed = await _caption_within(video, settings, left())
        if undescribed > 0:
            note = (f"(Described {clock(video.duration - undescribed)} of {clock(video.duration)} in the time allowed; "
                    f"`marlin-agent index` it once for all of it.)")
    said = None
    if hearing is not None:
        said = await hearing.wait(left())
        if not hearing.finished and warn:
            warn("speech left out: transcription did not finish within the time limit")
    return describe_text(caption, max_chars, said, note)
