"""The agent's tools: typed functions over the library, Marlin and the media code.

Both planners work through one ``Toolbox``: the pipeline calls the tools in a fixed
order, the LLM planner is handed them to call as it sees fit. The toolbox holds nothing of a
question: every tool takes the question's ``RunContext`` (``run_context``), which records each
call in the trace with what it cost (Marlin calls, seconds), counts the calls against the
question's budget and keeps every moment that went through ``verify``, so a run cut short
still has its evidence. The ``run`` parameter is not part of what a planner model sees.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path

from marlin_agent.clock import clock
from marlin_agent.config import Settings
from marlin_agent.domain import Chunk, Event, Evidence, Moment, StagedClip, VideoInfo, VideoRef
from marlin_agent.errors import (
    BudgetExhausted,
    ChunkFailed,
    InputError,
    InvalidTimeRange,
    MarlinAgentError,
    ServerNotConfigured,
)
from marlin_agent.file_names import text_path
from marlin_agent.library.records import Segment, chunk_window
from marlin_agent.library.store import Library
from marlin_agent.marlin.client import MarlinClient
from marlin_agent.marlin.prompts import checked_event
from marlin_agent.marlin.scan import ChunkRunner, chunks_for, in_video_time, to_video_time
from marlin_agent.media import probe_video
from marlin_agent.media.clips import cut_clip
from marlin_agent.tools.results import (
    ClipFile,
    GroundedSpan,
    Grounding,
    SearchHits,
    SpanCaption,
    TranscriptLines,
    Verification,
    VideoEntry,
    VideoList,
)
from marlin_agent.tools.run_context import Meter, RunContext
from marlin_agent.tools.timing import caption_timing, cut_at_chunk_edge, cut_by_window
from marlin_agent.tools.trace_order import branches
from marlin_agent.verification.claims import Claim, Source
from marlin_agent.verification.confidence import JUDGE_KIND
from marlin_agent.verification.signals import SpanTexts, regrounding_evidence
from marlin_agent.verification.spans import tighter_window
from marlin_agent.verification.verifier import Judge, Verifier

WINDOW_SECONDS = 60.0
# A span to verify longer than this and than half its video is not one moment: every event of the video lies in
# it, so whatever the video shows somewhere would read as happening there (a real 1.5B planner verified 0-54 s).
MOMENT_SECONDS = 30.0
# A grounded span this close to an edge of its window (where the video goes on) may be cut by it.
EDGE_SECONDS = 1.0
# Search hits a planner may ask for at once: more costs its context and finds nothing better.
_MOST_HITS = 50
# The tools a planner model is handed: their signatures and docstrings are what it sees.
MODEL_TOOLS = ("list_videos", "search", "find", "verify", "caption", "transcript")
# Seconds of context either side of a span when it is captioned afresh (for entailment and the judge).
_FRESH_PAD = 1.0


class UnknownVideo(InputError):
    code = "unknown_video"
    default_hint = "Use an id from list_videos or search."


async def _side_by_side(*steps: Awaitable) -> list:
    """Await the steps together; when one fails, the others are stopped before the failure is raised."""
    tasks = [asyncio.ensure_future(step) for step in branches(steps)]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _overlapping(rows: list[Segment], start: float, end: float, slack: float = 0.0) -> list[Segment]:
    return [r for r in rows if r.end > start - slack and r.start < end + slack]


def centred_window(start: float, end: float, duration: float) -> tuple[float, float]:
    """A window of at most ~60 s (Marlin's timeline) centred on ``[start, end]``, inside the video."""
    length = min(WINDOW_SECONDS, duration)
    centre = (start + end) / 2
    lo = max(0.0, min(centre - length / 2, duration - length))
    return round(lo, 3), round(lo + length, 3)


class Toolbox:
    """The tools over one library, Marlin client and verifier; a question's state is its ``RunContext``, passed
    to every call (see ``run_context``)."""

    def __init__(self, settings: Settings, library: Library, client: MarlinClient | None, *,
                 judge: Judge | None = None) -> None:
        self.settings = settings
        self.library = library
        self.client = client
        # The embedder is the library's, reached when a signal first needs it.
        self.verifier = Verifier(settings, lambda: self.library.embedder, judge)

    # --- reads ----------------------------------------------------------------------------

    async def _read_segments(self, run: RunContext, video_id: str, kind: str) -> list[Segment]:
        """The video's segments of ``kind`` in time order, as the index held them when first read this question."""
        return await run.segments((video_id, kind), lambda: self.library.segments(video_id, kind))

    async def _ref(self, run: RunContext, video_id: str) -> VideoRef:
        async def read() -> VideoRef:
            if not run.covers(video_id):
                raise UnknownVideo(f"video {video_id!r} is not among the videos this question is about")
            record = await asyncio.to_thread(self.library.get_video, video_id)
            if record is None:
                raise UnknownVideo(f"no video with id {video_id!r} in the library")
            return VideoRef(id=record.id, path=record.path, title=record.title)

        return await run.ref(video_id, read)

    async def video_info(self, run: RunContext, video_id: str) -> VideoInfo:
        async def read() -> VideoInfo:
            ref = await self._ref(run, video_id)
            return await asyncio.to_thread(probe_video, text_path(ref.path), self.settings.cache_dir)

        return await run.info(video_id, read)

    async def _run_chunks(self, run: RunContext, video: VideoInfo, chunks: list[Chunk],
                          ask: Callable[[StagedClip], Awaitable], meter: Meter):
        """Ask about each chunk (side by side, staged like indexing does); answers and failure reasons."""
        if self.client is None:
            raise ServerNotConfigured("this step needs Marlin, and no server is configured")

        async def metered(clip: StagedClip):
            run.spend(meter)
            async with meter.waiting():
                return await ask(clip)

        try:
            answers, failures = await ChunkRunner(video, self.settings, self.client).run(chunks, metered)
        except ChunkFailed as exc:
            if isinstance(exc.__cause__, BudgetExhausted):
                raise exc.__cause__ from None
            run.failed_calls.append(exc.message)
            return [], [exc.message]
        budget = next((f for f in failures if f.code == BudgetExhausted.code), None)
        if budget is not None and not answers:
            raise BudgetExhausted(budget.message)
        reasons = [f"{clock(f.start)}–{clock(f.end)}: {f.message}" for f in failures]
        run.failed_calls += [reason for f, reason in zip(failures, reasons, strict=True)
                             if f.code != BudgetExhausted.code]
        return answers, reasons

    async def _ground(self, run: RunContext, video: VideoInfo, event: str, start: float, end: float,
                      meter: Meter) -> tuple[float, float] | None:
        answers, failures = await self._run_chunks(run, video, [Chunk(index=0, start=start, end=end)],
                                                   lambda clip: self.client.ground(clip, event), meter)
        if failures:
            raise ChunkFailed(failures[0])
        if answers[0][1] is None:
            return None
        span = answers[0][1]
        return round(start + span.start, 3), round(min(end, start + span.end), 3)

    # --- the tools ----------------------------------------------------------------------

    async def list_videos(self, run: RunContext) -> VideoList:
        """The videos this question covers: ids, titles, durations (seconds), whether they have speech,
        and how much of each is indexed. Free (no Marlin call)."""
        meter = Meter()
        records = await asyncio.to_thread(self.library.list_videos)
        if run.scope is not None:
            records = [r for r in records if r.id in run.scope]
        done = await asyncio.to_thread(self.library.done_chunk_counts)  # one read, however many videos
        entries = []
        for record in records:
            entries.append(VideoEntry(video=VideoRef(id=record.id, path=record.path, title=record.title),
                                      url=record.url, duration=record.duration, chunks_indexed=done.get(record.id, 0),
                                      has_audio=record.has_audio,
                                      has_transcript=record.transcribed))
        return VideoList(videos=entries, cost=run.done("list_videos", f"{len(entries)} videos", meter))

    async def search(self, run: RunContext, query: str, k: int = 10, video_ids: list[str] | None = None) -> SearchHits:
        """Search the indexed captions, scene descriptions and speech of the videos, by words and by
        meaning. Free (no Marlin call). Hits give the video id, the span in seconds and the matched
        text; they are leads, not answers.

        Args:
            query: What to look for, in words.
            k: How many hits to return (1 to 50).
            video_ids: Only these videos (default: every video the question covers).
        """
        meter = Meter()
        k = min(max(k, 1), _MOST_HITS)
        scope = run.scope if video_ids is None else [v for v in video_ids if run.scope is None or v in run.scope]
        hits = await asyncio.to_thread(self.library.search, query, k, scope)
        return SearchHits(query=query, hits=hits, cost=run.done("search", f'"{query}": {len(hits)} hits', meter))

    async def caption(self, run: RunContext, video_id: str, start: float, end: float,
                      fresh: bool = False) -> SpanCaption:
        """What happens between `start` and `end` seconds: scene paragraphs and timed events, from the
        index when it covers the span, else from Marlin now (one Marlin call per 60 s).

        Args:
            video_id: A video id from list_videos or search.
            start: Seconds from the start of the video.
            end: Seconds from the start of the video.
            fresh: Ask Marlin now even when the index covers the span (a second, differently worded reading).
        """
        return await self._caption(run, video_id, start, end, fresh)

    async def _caption(self, run: RunContext, video_id: str, start: float, end: float, fresh: bool = False,
                       inside: Meter | None = None) -> SpanCaption:
        """``caption``; ``inside``: the step this caption is taken for, which waits for Marlin with it."""
        meter = Meter(parent=inside)
        ref = await self._ref(run, video_id)
        if not fresh:
            scenes = _overlapping(await self._read_segments(run, video_id, "scene"), start, end)
            if scenes and scenes[0].start <= start + 1e-3 and scenes[-1].end >= end - 1e-3:
                events = _overlapping(await self._read_segments(run, video_id, "event"), start, end)
                return SpanCaption(video=ref, start=start, end=end, scenes=[r.text for r in scenes],
                                   events=[Event(start=r.start, end=r.end, text=r.text) for r in events],
                                   fresh=False,
                                   cost=run.done("caption", f"{ref.title} {clock(start)}–{clock(end)} (index)",
                                                  meter))
        video = await self.video_info(run, video_id)
        answers, failures = await self._run_chunks(run, video, chunks_for(video, self.settings, start, end),
                                                   self.client.caption, meter)
        if not answers:
            raise ChunkFailed(f"captioning {ref.title} {clock(start)}–{clock(end)} failed: {'; '.join(failures)}")
        captions = [in_video_time(chunk, caption) for chunk, caption in sorted(answers, key=lambda p: p[0].start)]
        return SpanCaption(video=ref, start=start, end=end, scenes=[c.scene for c in captions],
                           events=[e for c in captions for e in c.events], fresh=True,
                           cost=run.done("caption", f"{ref.title} {clock(start)}–{clock(end)} (Marlin)", meter))

    async def find(self, run: RunContext, video_id: str, event: str, start: float | None = None,
                   end: float | None = None) -> Grounding:
        """Ask Marlin where `event` happens: one span per ~60 s window between `start` and `end`
        (one Marlin call each). The spans are UNVERIFIED: Marlin answers even for events that never
        happen, so check a span with verify before reporting it.

        Args:
            video_id: A video id from list_videos or search.
            event: The event as a short plain sentence, e.g. "a player kicks the ball into the goal".
            start: Seconds; the start of the video if omitted.
            end: Seconds; the end of the video if omitted.
        """
        checked_event(event)
        meter = Meter()
        ref = await self._ref(run, video_id)
        video = await self.video_info(run, video_id)
        chunks = chunks_for(video, self.settings, start, end)
        answers, failures = await self._run_chunks(run, video, chunks, lambda clip: self.client.ground(clip, event),
                                                   meter)
        spans = []
        for chunk, span in sorted(answers, key=lambda p: p[0].start):
            if span is None:
                failures.append(f"{clock(chunk.start)}–{clock(chunk.end)}: Marlin's answer held no time range")
                continue
            at, until = to_video_time(chunk, span.start, span.end)
            spans.append(GroundedSpan(start=at, end=until, window_start=chunk.start, window_end=chunk.end))
        where = f"{ref.title} {clock(chunks[0].start)}–{clock(chunks[-1].end)}"
        return Grounding(video=ref, event=event, spans=spans, failures=failures,
                         cost=run.done("find", f'"{event}" in {where}: {len(spans)} span(s)', meter))

    async def whole_span(self, run: RunContext, video_id: str, event: str, found: GroundedSpan) -> GroundedSpan:
        """``found``, or the whole event when the window it came from cut it.

        A span that touches an edge of its window (where the video goes on) may be the part of a
        longer event that the window held; Marlin answers that part truthfully. It is grounded
        again in a window centred on it, which holds the event whole, and the new span is taken
        when it covers the cut one. One Marlin call, only for spans at an edge.
        """
        return (await self._whole(run, video_id, event, found))[0]

    async def _whole(self, run: RunContext, video_id: str, event: str,
                     found: GroundedSpan) -> tuple[GroundedSpan, Evidence | None]:
        """``whole_span``, and when Marlin was asked and its span does not cover ``found``, what that says
        about ``found`` as re-grounding evidence (a second grounding around it would ask the same)."""
        video = await self.video_info(run, video_id)
        if not cut_by_window((found.start, found.end), (found.window_start, found.window_end), video.duration,
                             EDGE_SECONDS):
            return found, None
        window = centred_window(found.start, found.end, video.duration)
        if abs(window[0] - found.window_start) < 1.0 and abs(window[1] - found.window_end) < 1.0:
            return found, None
        meter = Meter()
        again = await self._ground(run, video, event, *window, meter)
        ref = await self._ref(run, video_id)
        covers = again is not None and again[0] <= found.start + EDGE_SECONDS and again[1] >= found.end - EDGE_SECONDS
        whole = (GroundedSpan(start=again[0], end=again[1], window_start=window[0], window_end=window[1])
                 if covers and again is not None else found)
        run.done("find", f'"{event}" at {ref.title} {clock(found.start)}–{clock(found.end)} touched the edge of '
                 f"{clock(found.window_start)}–{clock(found.window_end)}; grounded again on "
                 f"{clock(window[0])}–{clock(window[1])}: "
                   + (f"the whole event is {clock(whole.start)}–{clock(whole.end)}" if covers else "kept as it was"),
                   meter)
        return whole, (None if covers else regrounding_evidence((found.start, found.end), again, window))

    async def whole_caption_event(self, run: RunContext, video_id: str, event: str,
                                  row: Segment) -> tuple[GroundedSpan | None, Evidence | None]:
        """Where Marlin grounds ``event`` when shown the whole of a caption event the index cut.

        The index tells an event that runs over a chunk's edge as two pieces, one per chunk; a piece at
        the edge is grounded again in a window around it (``whole_span``, one Marlin call). (the whole
        event, None) when Marlin's span there covers the piece: proposed by Marlin's find like any other
        candidate, it needs no second grounding to verify. (None, what that grounding says about the
        piece) when it does not; (None, None) when the piece is not at an edge (no call)."""
        lo, hi = chunk_window(row.chunk_id)
        piece = GroundedSpan(start=row.start, end=row.end, window_start=lo, window_end=hi)
        whole, regrounded = await self._whole(run, video_id, event, piece)
        return (None if whole is piece else whole), regrounded

    async def verify_caption_event(self, run: RunContext, video_id: str, event: str, row: Segment,
                                   whole: GroundedSpan | None, regrounded: Evidence | None,
                                   speech: bool | None = None) -> Verification:
        """Verify ``event`` at a caption event of the index, as ``whole_caption_event`` left it: the whole
        event where Marlin's find placed it, or the row's own span grounded again around it. ``speech``: the
        claim's mode, when not the event's own."""
        if whole is not None:
            return await self.check(run, Claim(video_id, event, whole.start, whole.end,
                                               window=(whole.window_start, whole.window_end), speech=speech))
        return await self.check(run, Claim(video_id, event, row.start, row.end, Source.CAPTION, speech=speech),
                                reground=True, regrounded=regrounded)

    async def caption_event_at(self, run: RunContext, video_id: str, start: float, end: float,
                               text: str) -> Segment | None:
        """The index's caption event with this span and words (a search hit's own row)."""
        return next((r for r in await self._read_segments(run, video_id, "event")
                     if r.start == start and r.end == end and r.text == text), None)

    async def transcript(self, run: RunContext, video_id: str, start: float, end: float) -> TranscriptLines:
        """What is said between `start` and `end` seconds, line by line with times. Free (no Marlin call).

        Args:
            video_id: A video id from list_videos or search.
            start: Seconds from the start of the video.
            end: Seconds from the start of the video.
        """
        meter = Meter()
        ref = await self._ref(run, video_id)
        record = await asyncio.to_thread(self.library.get_video, video_id)
        rows = _overlapping(await self._read_segments(run, video_id, "transcript"), start, end)
        note = "" if record.transcribed else ("the video has no audio" if not record.has_audio else
                                              "nothing was heard in its audio" if record.transcript_source else
                                              "the video was indexed without a transcript")
        return TranscriptLines(video=ref, start=start, end=end, note=note,
                               lines=[Event(start=r.start, end=r.end, text=r.text) for r in rows],
                               cost=run.done("transcript", f"{ref.title} {clock(start)}–{clock(end)}: "
                                              f"{len(rows)} lines", meter))

    async def verify(self, run: RunContext, video_id: str, event: str, start: float, end: float) -> Verification:
        """Check whether `event` really happens at `start`–`end` (a span from find or search): an
        entailment model reads the captions and speech there and a fresh caption of the span, and
        `passed` says whether the moment may be reported. About one Marlin call.

        Args:
            video_id: The video the span is in.
            event: The event asked about, as a short plain sentence.
            start: The span's start, in seconds, as find or search gave it.
            end: The span's end, in seconds.
        """
        return await self.check_moment(run, Claim(video_id, event, start, end))

    async def check_moment(self, run: RunContext, claim: Claim) -> Verification:
        """``check`` for a span a planner chose: one that covers most of its video (``MOMENT_SECONDS``) is refused,
        saying what to do instead."""
        start, end = claim.span
        duration = (await self.video_info(run, claim.video_id)).duration
        if end - start > MOMENT_SECONDS and end - start > duration / 2:
            raise InvalidTimeRange(f"{start:.1f}–{end:.1f} s covers most of the video ({duration:.1f} s), so it is not "
                                   "one moment: everything the video shows lies in it",
                                   hint="call find with that window to place the event, then verify the span find "
                                        "returns")
        return await self.check(run, claim)

    async def check(self, run: RunContext, claim: Claim, reground: bool | None = None,
                    regrounded: Evidence | None = None) -> Verification:
        """Evidence for or against ``claim``'s event happening over its span, combined into a confidence.

        Reads what the index says happens over the span (caption events, transcript lines) and
        has the entailment model judge whether it means the event; captions the tight span
        afresh (one Marlin call) for a second reading; compares the span with the video's
        other events; and, when a judge is configured, has it read the fresh caption too.
        ``reground`` (default: the setting) also grounds the event again around the span, unless that was
        done already (``regrounded``: its evidence). A line said is read as it is: Marlin cannot add to it.
        """
        meter = Meter()
        if (claim.source is Source.SPEECH and not claim.speech
                and await asyncio.to_thread(self.verifier.answered_by_line, claim.event, claim.said)):
            claim = dataclasses.replace(claim, speech=True)  # a topic the line words in full is answered as said
        ref = await self._ref(run, claim.video_id)
        video = await self.video_info(run, claim.video_id)
        start, end = claim.span
        shown = claim.window or centred_window(start, end, video.duration)
        evidence = [self._proposal(claim, shown)]
        if regrounded is not None:
            evidence.append(regrounded)
        marlin = claim.source is not Source.SPEECH
        again = marlin and (self.settings.verify.reground if reground is None else reground) and regrounded is None
        afresh = (marlin and (self.settings.verify.fresh_caption or self.verifier.judge is not None)
                  # Marlin does not hear: for a question about what is said, a fresh caption adds nothing.
                  and not claim.speech)
        fresh = await self._ask_marlin_again(run, video, claim, shown, meter, evidence, again, afresh)
        if not again and claim.source is Source.GROUNDING:
            # Where Marlin's own find put it is where its grounding lands: agreement by construction,
            # stated so that candidates proposed by find and by captions are weighed alike.
            evidence.append(Evidence(kind="regrounding", text="Marlin's find placed it here", start=start, end=end,
                                     score=1.0))
        texts = await self.span_texts(run, claim, fresh)
        evidence += await asyncio.to_thread(self.verifier.read, texts)
        if self.verifier.judge is not None and fresh is not None:
            score, reason = await self.verifier.judge(claim.event, fresh)
            evidence.append(Evidence(kind=JUDGE_KIND, text=reason, start=fresh.start, end=fresh.end,
                                     score=round(min(1.0, max(0.0, score)), 3)))
        timed = (caption_timing(claim.span, evidence, texts.events,
                                lambda row: cut_at_chunk_edge(row, video.duration, EDGE_SECONDS))
                 if claim.source is Source.GROUNDING and not claim.speech else None)
        if timed is not None:
            (start, end), note = timed
            evidence.append(note)
        moment = Moment(video=ref, start=start, end=end, evidence=evidence, spoken=claim.speech,
                        confidence=self.verifier.confidence(evidence, claim.speech))
        run.keep(moment, claim.event)
        threshold = self.verifier.threshold
        return Verification(moment=moment, passed=self.verifier.passes(moment.confidence), threshold=threshold,
                            cost=run.done("verify", f'"{claim.event}" at {ref.title} {clock(start)}–{clock(end)}: '
                                           f"confidence {moment.confidence:.2f}", meter))

    @staticmethod
    def _proposal(claim: Claim, shown: tuple[float, float]) -> Evidence:
        """Where the span came from (``shown``: the window Marlin saw), as the first piece of its evidence."""
        start, end = claim.span
        text = {Source.GROUNDING: f"Marlin placed it at {clock(start)}–{clock(end)} when shown "
                                  f"{clock(shown[0])}–{clock(shown[1])}",
                Source.CAPTION: f"Marlin's caption has an event at {clock(start)}–{clock(end)}",
                Source.PLANNER: f"the planner reported {clock(start)}–{clock(end)} after verifying another event "
                                "there; verified again for the event asked",
                Source.SPEECH: f'said at {clock(start)}–{clock(end)}: "{claim.said}"'}[claim.source]
        return Evidence(kind="grounding", text=text, start=start, end=end, score=1.0)

    async def _ask_marlin_again(self, run: RunContext, video: VideoInfo, claim: Claim, shown: tuple[float, float],
                                meter: Meter, evidence: list[Evidence], again: bool,
                                afresh: bool) -> SpanCaption | None:
        """Ground ``event`` again around the span (``again``, its evidence added) and caption the span afresh
        (``afresh``, returned); None when there is no fresh caption."""
        # What the index says about the span is read while Marlin works: the signals remember what they
        # scored, so the reading that follows the fresh caption only adds the new wording's share.
        ahead = asyncio.create_task(self._read_ahead(run, claim)) if again or afresh else None
        try:
            if again and afresh and run.room_for(2):
                # Two Marlin calls that need nothing of each other: side by side, a step waits for one.
                _, fresh = await _side_by_side(
                    self._reground(run, video, claim, shown, meter, evidence),
                    self._fresh_caption(run, claim.video_id, claim.span, video.duration, meter))
                return fresh
            # Out of budget, verification still reads the free signals and keeps the moment: a
            # run cut short must not lose what it found. The next Marlin call stops the run.
            budget_spent = again and await self._reground(run, video, claim, shown, meter, evidence)
            return (await self._fresh_caption(run, claim.video_id, claim.span, video.duration, meter)
                    if afresh and not budget_spent else None)
        finally:
            if ahead is not None:
                await ahead

    async def _read_ahead(self, run: RunContext, claim: Claim) -> None:
        """Read the index's texts about the claim's span (remembered by the signals); a failure here is met again,
        and reported, by the reading that counts."""
        try:
            await asyncio.to_thread(self.verifier.read, await self.span_texts(run, claim))
        except MarlinAgentError:
            pass

    async def span_texts(self, run: RunContext, claim: Claim, fresh: SpanCaption | None = None) -> SpanTexts:
        """What the index (and a fresh caption) says about the claim's span, as the verifier reads it.

        For an event that is seen: the video's caption events, the fresh caption's, and the lines said
        around the span. For an event that is said: the video's spoken lines take the place of its
        caption events (what is seen does not answer it)."""
        lines = await self._read_segments(run, claim.video_id, "transcript")
        if claim.speech:
            return SpanTexts(event=claim.event, span=claim.span, events=lines, about_speech=True)
        events = await self._read_segments(run, claim.video_id, "event")
        described = list(fresh.events) if fresh else []
        return SpanTexts(event=claim.event, span=claim.span, events=events, fresh=described,
                         lines=_overlapping(lines, claim.start, claim.end, 1.0))

    async def _reground(self, run: RunContext, video: VideoInfo, claim: Claim, shown: tuple[float, float],
                        meter: Meter, evidence: list[Evidence]) -> bool:
        """Ground again on a tighter window; True when the budget ran out doing it."""
        retry = tighter_window(claim.span, shown, video.duration)
        try:
            again = await self._ground(run, video, claim.event, *retry, meter) if retry != shown else claim.span
            evidence.append(regrounding_evidence(claim.span, again, retry))
        except MarlinAgentError as exc:
            if exc.stops_run:
                raise
            evidence.append(Evidence(kind="regrounding", text=f"not re-grounded: {exc.message}",
                                     start=retry[0], end=retry[1], score=0.0))
            return isinstance(exc, BudgetExhausted)
        return False

    async def _fresh_caption(self, run: RunContext, video_id: str, span: tuple[float, float], duration: float,
                             meter: Meter) -> SpanCaption | None:
        """Marlin's caption of the span alone (a second reading, worded anew); None when it cannot be had."""
        lo, hi = max(0.0, span[0] - _FRESH_PAD), min(duration, span[1] + _FRESH_PAD)
        try:
            described = await self._caption(run, video_id, lo, hi, fresh=True, inside=meter)
        except MarlinAgentError as exc:  # a spent budget included: the free evidence is still read
            if exc.stops_run:
                raise
            run.note("verify", f"not captioned afresh: {exc.message}")
            return None
        meter.calls += described.cost.marlin_calls
        return described

    async def clip(self, run: RunContext, video_id: str, start: float, end: float, folder: Path) -> ClipFile:
        """Cut ``[start, end]`` (with a little context) into an MP4 in ``folder``; picture and sound."""
        meter = Meter()
        ref = await self._ref(run, video_id)
        video = await self.video_info(run, video_id)
        path = await asyncio.to_thread(cut_clip, video, start, end, folder)
        return ClipFile(video=ref, start=start, end=end, path=str(path.resolve()),
                        cost=run.done("clip", f"{ref.title} {clock(start)}–{clock(end)} → {path.name}", meter))
