"""The pipeline planner (no LLM, the default): question → event → candidates → ground → verify.

Retrieval narrows the library to a few windows of at most ~60 s (Marlin's timeline);
Marlin grounds the event in each; every span is then verified, because find answers even
for things that never happen. When nothing passes, the answer says so and shows what was
checked and why each candidate was rejected.
"""

from __future__ import annotations

import asyncio
import re
import time
from contextlib import asynccontextmanager
from pathlib import Path

from marlin_agent.clock import clock
from marlin_agent.config import Settings
from marlin_agent.domain import Answer, Chunk, Evidence, Moment, TraceStep, Usage, VideoInfo, VideoRef
from marlin_agent.errors import MarlinAgentError, ServerNotConfigured
from marlin_agent.library import Library, SearchHit
from marlin_agent.marlin.client import MarlinClient
from marlin_agent.media import probe_video, stage_clip
from marlin_agent.media.clips import cut_clip
from marlin_agent.planners.verify import combine, iou, regrounding_evidence, text_evidence, tighter_window

_WINDOW_SECONDS = 60.0
_SEARCH_DEPTH = 20

_LEADING = re.compile(
    r"^\s*(?:please\s+)?(?:"
    r"(?:when|where|at what (?:time|point)|what time)\s+(?:(?:does|do|did|is|are|was|were|will|can)\s+)?"
    r"|(?:find|show(?:\s+me)?|locate|get|give me)\s+(?:(?:all\s+)?(?:the\s+)?(?:moments?|parts?|times?|clips?|scenes?)\s+"
    r"(?:when|where|that|in which|with|of)\s+)?"
    r"|(?:is|are)\s+there\s+|(?:does|do)\s+(?=\w+\s))",
    re.IGNORECASE,
)
_TRAILING = re.compile(
    r"\s*(?:\b(?:happens?|happened|occurs?|occurred|takes? place|appears?|shows? up|in (?:the|this) (?:video|footage|clip)))*"
    r"\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def event_description(question: str) -> str:
    """The event to ground, in the plain phrasing Marlin grounds best: question words removed."""
    event = _TRAILING.sub("", _LEADING.sub("", question.strip()))
    return event.strip() or question.strip()


def candidate_windows(hits: list[SearchHit], durations: dict[str, float], limit: int) -> list[tuple[SearchHit, float, float]]:
    """Windows of at most ~60 s centred on the best hits; a hit inside a chosen window adds nothing."""
    windows: list[tuple[SearchHit, float, float]] = []
    for hit in hits:
        duration = durations.get(hit.video.id)
        if duration is None:
            continue
        if any(w[0].video.id == hit.video.id and w[1] <= hit.start and hit.end <= w[2] for w in windows):
            continue
        length = min(_WINDOW_SECONDS, duration)
        centre = (hit.start + hit.end) / 2
        start = max(0.0, min(centre - length / 2, duration - length))
        windows.append((hit, round(start, 3), round(start + length, 3)))
        if len(windows) == limit:
            break
    return windows


class PipelinePlanner:
    def __init__(self, settings: Settings, library: Library, client: MarlinClient | None) -> None:
        self.settings = settings
        self.library = library
        self.client = client
        self.trace: list[TraceStep] = []
        self._videos: dict[str, VideoInfo] = {}

    def _step(self, step: str, detail: str, calls: int = 0, started: float | None = None) -> None:
        seconds = round(time.monotonic() - started, 3) if started is not None else 0.0
        self.trace.append(TraceStep(step=step, detail=detail, marlin_calls=calls, seconds=seconds))

    async def _video(self, video_id: str) -> VideoInfo:
        if video_id not in self._videos:
            record = await asyncio.to_thread(self.library.get_video, video_id)
            self._videos[video_id] = await asyncio.to_thread(probe_video, record.path, self.settings.cache_dir)
        return self._videos[video_id]

    async def _ground(self, video: VideoInfo, event: str, start: float, end: float) -> tuple[float, float] | None:
        clip = await asyncio.to_thread(stage_clip, video, Chunk(index=0, start=start, end=end), self.settings.cache_dir,
                                       self.settings.media.stage_fps, self.settings.server.max_pixels)
        span = await self.client.ground(clip, event)
        if span is None:
            return None
        return round(start + span.start, 3), round(start + span.end, 3)

    async def _check(self, event: str, ref: VideoRef, start: float, end: float, query_vector) -> Moment | None:
        """Ground the event in one window and gather the evidence for what Marlin found."""
        video = await self._video(ref.id)
        span = await self._ground(video, event, start, end)
        if span is None:
            return None
        evidence = [Evidence(kind="grounding", text=f"Marlin placed it at {clock(span[0])}–{clock(span[1])} "
                             f"when shown {clock(start)}–{clock(end)}", start=span[0], end=span[1], score=1.0)]
        retry = tighter_window(span, (start, end), video.duration)
        again = await self._ground(video, event, *retry) if retry != (start, end) else span
        evidence.append(regrounding_evidence(span, again, retry))
        for kind, segment_kind in (("caption_event", "event"), ("transcript", "transcript")):
            rows = await asyncio.to_thread(self.library.segments, ref.id, segment_kind)
            rows = [r for r in rows if r["end"] > span[0] - 1 and r["start"] < span[1] + 1]
            if rows:
                vectors = await asyncio.to_thread(self.library.embedder.embed, [r["text"] for r in rows])
                found = text_evidence(kind, span, rows, list(vectors @ query_vector))
                if found:
                    evidence.append(found)
        return Moment(video=ref, start=span[0], end=span[1], confidence=combine(evidence), evidence=evidence)

    async def answer(self, question: str, video_ids: list[str]) -> Answer:
        started = time.monotonic()
        calls_before = self.client.usage.calls if self.client else 0
        event = event_description(question)
        self._step("understand", f'grounding the event "{event}"')
        t = time.monotonic()
        hits = await asyncio.to_thread(self.library.search, event, _SEARCH_DEPTH, video_ids)
        records = {v: await asyncio.to_thread(self.library.get_video, v) for v in video_ids}
        durations = {v: r.duration for v, r in records.items() if r}
        windows = candidate_windows(hits, durations, self.settings.agent.max_windows)
        self._step("search", f"{len(hits)} indexed segments matched; {len(windows)} candidate windows", started=t)
        if windows and self.client is None:
            raise ServerNotConfigured("answering needs Marlin to ground the event, and no server is configured")
        t = time.monotonic()
        query_vector = (await asyncio.to_thread(self.library.embedder.embed, [event]))[0]
        moments = await self._spoken(event, hits, query_vector)
        moments += await self._check_windows(event, [(hit.video, s, e) for hit, s, e in windows], query_vector)
        return self._conclude(question, event, moments, video_ids, calls_before, started, t)

    async def _check_windows(self, event: str, windows: list[tuple[VideoRef, float, float]], query_vector) -> list[Moment]:
        checked = await asyncio.gather(*(self._check(event, ref, s, e, query_vector) for ref, s, e in windows),
                                       return_exceptions=True)
        moments: list[Moment] = []
        for (ref, s, e), outcome in zip(windows, checked):
            if isinstance(outcome, MarlinAgentError):
                if getattr(outcome, "stops_run", False):
                    raise outcome
                self._step("ground", f"{ref.title} {clock(s)}–{clock(e)} failed: {outcome.message}")
            elif isinstance(outcome, BaseException):
                raise outcome
            elif outcome is not None:
                moments.append(outcome)
        return moments

    def _conclude(self, question: str, event: str, moments: list[Moment], video_ids: list[str], calls_before: int,
                  started: float, grounding_started: float) -> Answer:
        calls = (self.client.usage.calls if self.client else 0) - calls_before
        self._step("ground+verify", f"{len(moments)} spans grounded and checked", calls=calls, started=grounding_started)
        accepted, rejected = self._decide(moments)
        return Answer(question=question, found=bool(accepted), answer=self._summary(event, accepted, rejected, video_ids),
                      moments=accepted, rejected=rejected, trace=self.trace,
                      usage=Usage(marlin_calls=calls, seconds=round(time.monotonic() - started, 3)))

    async def verify_in_video(self, event: str, video_id: str, start: float | None, end: float | None) -> Answer:
        """``find --verify``: ground ``event`` in every chunk of one video and keep what the evidence backs."""
        from marlin_agent.marlin.prompts import find_prompt
        from marlin_agent.scan import chunks_for

        find_prompt(event)  # refuse an unusable event before any work
        started = time.monotonic()
        calls_before = self.client.usage.calls if self.client else 0
        if self.client is None:
            raise ServerNotConfigured("grounding needs a Marlin server, and none is configured")
        video = await self._video(video_id)
        record = await asyncio.to_thread(self.library.get_video, video_id)
        ref = VideoRef(id=video_id, path=record.path, title=record.title)
        windows = [(ref, c.start, c.end) for c in chunks_for(video, self.settings, start, end)]
        query_vector = (await asyncio.to_thread(self.library.embedder.embed, [event]))[0]
        moments = await self._check_windows(event, windows, query_vector)
        return self._conclude(event, event, moments, [video_id], calls_before, started, started)

    async def _spoken(self, event: str, hits: list[SearchHit], query_vector) -> list[Moment]:
        """Moments that are said rather than shown: transcript lines among the best hits.

        Marlin grounds what it sees, so an event that exists only in speech would otherwise
        never be confirmed; the line's own span is the candidate and its meaning the evidence.
        """
        lines = [hit for hit in hits[: self.settings.agent.max_windows * 2] if hit.source == "transcript"]
        if not lines:
            return []
        vectors = await asyncio.to_thread(self.library.embedder.embed, [hit.text for hit in lines])
        moments = []
        for hit, similarity in zip(lines, vectors @ query_vector):
            found = text_evidence("transcript", (hit.start, hit.end), [hit.model_dump()], [float(similarity)])
            if found is not None and found.score > 0:
                moments.append(Moment(video=hit.video, start=hit.start, end=hit.end, confidence=combine([found]),
                                      evidence=[found]))
        return moments

    async def cut_clips(self, answer: Answer, folder: Path) -> Answer:
        """The answer with each moment's ``clip`` set to the absolute path of its cut."""
        t = time.monotonic()
        moments = []
        for moment in answer.moments:
            video = await self._video(moment.video.id)
            path = await asyncio.to_thread(cut_clip, video, moment.start, moment.end, folder)
            moments.append(moment.model_copy(update={"clip": str(path.resolve())}))
        self._step("clips", f"{len(moments)} clip(s) written to {folder}", started=t)
        return answer.model_copy(update={"moments": moments, "trace": self.trace})

    async def draw_sheet(self, answer: Answer, target: Path) -> Path:
        from marlin_agent.media.sheet import write_sheet

        shown = answer.moments or answer.rejected
        rows = [(moment, await self._video(moment.video.id)) for moment in shown]
        return await asyncio.to_thread(write_sheet, rows, target)

    def _decide(self, moments: list[Moment]) -> tuple[list[Moment], list[Moment]]:
        threshold = self.settings.agent.threshold
        ranked = sorted(moments, key=lambda m: m.confidence, reverse=True)
        accepted: list[Moment] = []
        rejected: list[Moment] = []
        for moment in ranked:
            duplicate = any(m.video.id == moment.video.id and iou((m.start, m.end), (moment.start, moment.end)) > 0.5
                            for m in accepted + rejected)
            if duplicate:
                continue
            (accepted if moment.confidence >= threshold else rejected).append(moment)
        return accepted, rejected

    def _summary(self, event: str, accepted: list[Moment], rejected: list[Moment], video_ids: list[str]) -> str:
        where = f"{len(video_ids)} video{'s' if len(video_ids) != 1 else ''}"
        if accepted:
            best = accepted[0]
            more = f" and {len(accepted) - 1} more moment(s)" if len(accepted) > 1 else ""
            return (f'"{event}": {best.video.title} at {clock(best.start)}–{clock(best.end)} '
                    f"(confidence {best.confidence:.2f}){more}.")
        if not rejected:
            return f'Not found: nothing in the {where} searched resembles "{event}".'
        reasons = "; ".join(f"{m.video.title} {clock(m.start)}–{clock(m.end)} (confidence {m.confidence:.2f}: "
                            f"{_weakest(m)})" for m in rejected[:3])
        return (f'Not found: "{event}" was not confirmed in the {where} searched. Marlin proposed {len(rejected)} '
                f"span(s), none backed by the evidence: {reasons}.")


def _weakest(moment: Moment) -> str:
    signals = {e.kind: e.score for e in moment.evidence if e.kind != "grounding"}
    parts = [f"re-grounding agreed {signals.get('regrounding', 0):.0%}"]
    parts.append("no matching caption event" if signals.get("caption_event", 0) < 0.3 else "a caption event matched")
    if "transcript" in signals:
        parts.append(f"speech match {signals['transcript']:.0%}")
    return ", ".join(parts)


@asynccontextmanager
async def _planner_over(inputs: list[str], settings: Settings, on_progress=None):
    """Index what is new among ``inputs``, then yield a planner over the library and the index report.

    The Marlin client lives exactly as long as the planner needs it.
    """
    from marlin_agent.indexer import index_inputs, open_library

    library = await asyncio.to_thread(open_library, settings)
    report = await index_inputs(inputs, settings, library, on_progress)
    client = MarlinClient(settings.server) if settings.server.base_url else None
    try:
        yield PipelinePlanner(settings, library, client), report
    finally:
        if client is not None:
            await client.close()


def _with_index_calls(answer: Answer, report, **usage) -> Answer:
    """The answer with the indexing run's Marlin calls counted in its usage."""
    calls = answer.usage.marlin_calls + report.marlin_calls
    return answer.model_copy(update={"usage": answer.usage.model_copy(update={"marlin_calls": calls, **usage})})


async def verify_find(event: str, video: Path, settings: Settings, start: float | None = None,
                      end: float | None = None, on_progress=None) -> Answer:
    """Index one video if needed, then ground ``event`` in each of its chunks and verify every span."""
    async with _planner_over([str(video)], settings, on_progress) as (planner, report):
        answer = await planner.verify_in_video(event, report.videos[0].id, start, end)
    return _with_index_calls(answer, report)


async def ask(question: str, inputs: list[str], settings: Settings, on_progress=None,
              clips_dir: Path | None = None, sheet: Path | None = None) -> Answer:
    """Index what is not indexed yet among ``inputs``, then answer ``question`` over them;
    with ``clips_dir``, cut each moment found into a file there; with ``sheet``, draw a
    contact sheet of the moments (or, when nothing was found, of the rejected candidates)."""
    t = time.monotonic()
    async with _planner_over(inputs, settings, on_progress) as (planner, report):
        planner._step("index", f"{len(report.videos)} videos ready ({report.videos_new} new, "
                      f"{report.videos_unchanged} unchanged); {len(report.failed)} skipped",
                      calls=report.marlin_calls, started=t)
        answer = await planner.answer(question, [v.id for v in report.videos])
        if clips_dir is not None and answer.moments:
            answer = await planner.cut_clips(answer, clips_dir)
        if sheet is not None and (answer.moments or answer.rejected):
            await planner.draw_sheet(answer, sheet)
    return _with_index_calls(answer, report, seconds=round(time.monotonic() - t, 3))
