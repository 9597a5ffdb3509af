"""A standing question over footage that keeps coming: notice it, index it, judge it, alert once.

``Watcher.run`` is an async generator of what happens (alerts and gaps). Inside it:

- each source announces new footage: a folder's settled files (``folder``), a stream's closed
  segments (``stream``, recorded in a thread); every piece is written to the library's watch state
  the moment it is noticed, with the questions standing then;
- one worker takes the pieces in order, indexes each (``indexing.run``) and asks every standing
  question over it exactly as ``ask`` does (same planner, same verification, same threshold);
- found moments become occurrences (``occurrences``: joined across segments, quiet in a cooldown);
  a new occurrence is an alert, stored with the piece's judgement in one write, appended to the
  alert log and delivered to each target in the background (``notify``).

A server or store that fails is waited out (the piece stays pending and is tried again); footage
that cannot be read is marked failed with why. Recordings past their retention are deleted once
judged, and leave the index. Stopping finishes the piece in hand; the rest waits for the next start.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from marlin_agent.clock import clock
from marlin_agent.config import Settings, expand_secrets, refuse_written_password
from marlin_agent.errors import (
    ConfigError,
    IndexBusy,
    InputError,
    MarlinAgentError,
    NoVideosFound,
    ServerError,
    VideoUnreadable,
)
from marlin_agent.library.transcripts import transcriber_for
from marlin_agent.redaction import redact
from marlin_agent.watch.delivery import (
    Outcome,
    Persistence,
    deliver_until_landed,
    delivery_line,
    logged,
    raised_epoch,
)
from marlin_agent.watch.folder import FolderSource, recording_timeline
from marlin_agent.watch.notify import JsonLines, Target, parse_target
from marlin_agent.watch.occurrences import decide, extended, opened
from marlin_agent.watch.records import Alert, Footage, Gap, Occurrence, WatchSpec, short_hash, stamp
from marlin_agent.watch.state import WatchState
from marlin_agent.watch.stream import (
    Outage,
    Segment,
    StreamRecorder,
    is_stream,
    readable_seconds,
    stream_origin,
    wall_start_of,
)
from marlin_agent.watch.target import DeliveryFailed

Event = Alert | Gap
_RETRY_MAX = 60.0  # the longest wait before a piece is tried again after a server or store failure
_OPTIMIZE_EVERY = 50  # judged pieces between compactions of the library (each piece adds table versions)
_TRIES = 3  # judgements of a piece whose Marlin calls failed before it is judged on what worked


def _transient(exc: MarlinAgentError) -> bool:
    """Whether trying the same footage later can succeed: a server or store problem, not the footage's."""
    return not isinstance(exc, InputError)


# A standing question asks whether an event happens in each new piece; these forms are answered per
# piece as they would be by `ask` (every occurrence in it is an alert). Relations, spans between two
# events and durations need the whole footage at once: they stay with `ask`.
_STANDING_FORMS = ("when", "every", "count", "first", "last")


def _check_question(question: str) -> None:
    from marlin_agent.planners.question_forms import read_question

    form = read_question(question).form
    if form not in _STANDING_FORMS:
        raise ConfigError(f"a standing question asks whether something happens; this one asks for {form}: "
                          f"{question!r}", hint='Ask for the event itself ("when is a parcel delivered", "every '
                          'time the gate opens"); ask about what happens before or after it with `marlin-agent ask`.')


def _check_stream_address(url: str, settings: Settings) -> None:
    """A camera's password goes in as ${NAME} (credentials.toml or the environment), never written out."""
    refuse_written_password(url, "a stream's", "rtsp://USER:${NAME}@HOST/PATH")
    expand_secrets(url, settings)  # every ${NAME} must have a value before the watch starts


class Watcher:
    def __init__(self, sources: list[str], questions: list[str], settings: Settings, notify: list[str] = (),
                 backlog: bool = False, say: Callable[[str], None] = lambda message: None,
                 clock: Callable[[], float] = time.time) -> None:
        questions = list(dict.fromkeys(q.strip() for q in questions if q and q.strip()))
        if not questions:
            raise ConfigError("a watch needs at least one question", hint='Add --ask "when is a parcel delivered".')
        if not sources:
            raise ConfigError("a watch needs a folder or a stream to follow")
        self.settings, self.clock, self.backlog = settings, clock, backlog
        self.say = lambda message: say(redact(message))  # an FFmpeg error may quote a stream's whole address
        for question in questions:
            _check_question(question)
        self.questions = questions
        self.spec = WatchSpec.of([s if is_stream(s) else str(Path(s).expanduser().resolve()) for s in sources])
        for source in self.spec.sources:
            if is_stream(source):
                _check_stream_address(source, settings)
            elif not Path(source).is_dir():
                raise (VideoUnreadable if Path(source).exists() else NoVideosFound)(
                    f"{source} is not a folder", hint="watch follows folders and live streams; "
                    "ask about a single file with `marlin-agent ask`.")
        self.targets: list[Target] = [parse_target(t, settings) for t in dict.fromkeys(notify)]
        self.home = settings.watch_dir / self.spec.id
        self.log = JsonLines(self.home / "alerts.jsonl")
        self.gaps = JsonLines(self.home / "gaps.jsonl")
        self._todo: asyncio.Queue[Footage] = asyncio.Queue()
        self._events: asyncio.Queue[Event | None] = asyncio.Queue()
        self._occurrences: dict[tuple[str, str], Occurrence] = {}
        self._alert_ids: set[str] = set()
        self._recordings: deque[tuple[float, str, str]] = deque()  # (wall end, path, video id), oldest first
        self._deliveries: set[asyncio.Task] = set()
        self._stop = asyncio.Event()
        self._recorders: list[tuple[StreamRecorder, asyncio.Future]] = []
        self._arrivals: list = []  # footage a recorder's thread handed over, still being noted down
        self._marks: dict[str, tuple[float, float | None]] = {}  # per stream: (wall end, stream end) recorded
        self._judged = 0
        self._tries: dict[str, int] = {}  # pieces whose last judgement rested on failed Marlin calls

    # --- start --------------------------------------------------------------------------

    async def _open(self) -> None:
        from marlin_agent.app.warm import warm
        from marlin_agent.library.access import open_library
        from marlin_agent.marlin.client import MarlinClient
        from marlin_agent.verification.entailment import entailment_model
        from marlin_agent.verification.wordnet import open_wordnet

        # The verification models first: without them nothing can be judged, and that should fail now.
        await asyncio.to_thread(entailment_model, self.settings)
        await asyncio.to_thread(open_wordnet, self.settings.verify.wordnet, self.settings.cache_dir)
        self.library = await asyncio.to_thread(open_library, self.settings)
        await asyncio.to_thread(self.library.embedder.folder)
        self.transcriber = transcriber_for(self.settings) if self.settings.library.transcribe else None
        if self.transcriber is not None:
            await asyncio.to_thread(self.transcriber.load)
        # Everything else a first judgement would load (its first alert should come as fast as the rest).
        await asyncio.to_thread(warm, self.settings)
        self.client = MarlinClient(self.settings.server)
        self.state = WatchState(self.library, self.spec, self.home / "deliveries.jsonl")

    async def _resume(self) -> dict[str, set[str]]:
        """Earlier runs' pending footage queued, their undelivered alerts sent; the keys each source knows."""
        loaded = await asyncio.to_thread(self.state.load)
        await asyncio.to_thread(self.state.started, self.questions)
        self._occurrences = {(o.question, o.timeline): o for o in loaded.occurrences}
        self._alert_ids = {a.id for a in loaded.alerts}
        known: dict[str, set[str]] = {source: set(keys) for source, keys in loaded.baselines.items()}
        for footage in sorted(loaded.footage, key=lambda f: f.found_at):
            known.setdefault(footage.source, set()).add(footage.key)
            if footage.kind == "segment":  # where the stream's recording had got to
                end = footage.origin + (footage.duration or 0)
                if end > (self._marks.get(footage.source) or (0.0, None))[0]:
                    self._marks[footage.source] = (end, footage.stream_end)
            if footage.status == "pending":
                self._todo.put_nowait(footage)
            elif footage.kind == "segment" and footage.video_id and Path(footage.path).exists():
                self._recordings.append((footage.origin + (footage.duration or 0), footage.path, footage.video_id))
        await self._complete_log(loaded.alerts)
        for alert in loaded.alerts:
            if alert.pending():
                self._deliver(alert)
        pending = self._todo.qsize()
        if pending:
            self.say(f"resuming: {pending} piece(s) of footage noticed before and not judged yet")
        return known

    # --- sources ------------------------------------------------------------------------

    async def _found(self, footage: Footage) -> None:
        await asyncio.to_thread(self.state.found, footage)
        await self._todo.put(footage)

    async def _folder(self, folder: str, known: set[str], first_run: bool) -> FolderSource:
        """The folder's source, knowing every file an earlier run noted (and on a first run, every file
        there now, unless the backlog is to be judged): those are not new."""
        source = FolderSource(Path(folder), self.settings.watch.settle_seconds, known)
        if first_run:
            baseline = [] if self.backlog else await asyncio.to_thread(source.current_keys)
            source.known.update(baseline)
            await asyncio.to_thread(self.state.set_baseline, folder, baseline)
            if baseline:
                self.say(f"{folder}: {len(baseline)} file(s) already there are not new (--backlog judges them)")
        return source

    async def _follow_folder(self, source: FolderSource) -> None:
        trouble = ""
        while True:
            try:
                for path, key in await asyncio.to_thread(source.scan):
                    try:
                        timeline = await asyncio.to_thread(recording_timeline, path)
                        await self._found(Footage(key=key, source=str(source.folder), path=str(path), kind="file",
                                                  timeline=timeline, origin=0.0, wall_start=None,
                                                  questions=self.questions))
                    except (OSError, MarlinAgentError):
                        source.known.discard(key)  # not noted down: noticed again on a later pass
                        raise
                trouble = ""
            except (OSError, MarlinAgentError) as exc:  # a folder or file gone for a while, a store that failed
                message = exc.message if isinstance(exc, MarlinAgentError) else str(exc)
                if message != trouble:  # said once, not on every pass
                    self.say(f"{source.folder}: {message}; still watching")
                trouble = message
            await asyncio.sleep(self.settings.watch.poll_seconds)

    def _segment_footage(self, url: str, segment: Segment) -> Footage:
        return Footage(key=segment.path.name, source=url, path=str(segment.path), kind="segment", timeline=url,
                       origin=segment.wall_start, wall_start=segment.wall_start, duration=segment.duration,
                       stream_end=segment.stream_end, questions=self.questions)

    async def _follow_stream(self, url: str, known: set[str]) -> None:
        loop = asyncio.get_running_loop()
        recorder = StreamRecorder(
            url, self.home / "recordings" / short_hash(url), self.settings.media.chunk_seconds,
            timeout=self.settings.watch.stream_timeout, reconnect_max=self.settings.watch.reconnect_max_seconds,
            opens=expand_secrets(url, self.settings),
            on_segment=lambda s: self._from_thread(self._found(self._segment_footage(url, s)), loop),
            on_outage=lambda o: self._from_thread(self._gap(url, o), loop),
            on_error=lambda message: loop.call_soon_threadsafe(self.say, message), clock=self.clock)
        # Segments an earlier run closed (or left half-written) and did not get to note down.
        closed = {s.path.name: s for s in await asyncio.to_thread(recorder.recover)}
        for path in await asyncio.to_thread(recorder.segments):
            wall = wall_start_of(path)
            if path.name not in closed and path.name not in known and wall is not None:
                duration = await asyncio.to_thread(readable_seconds, path)
                origin = await asyncio.to_thread(stream_origin, path)
                closed[path.name] = Segment(path, wall, duration, origin + duration if origin is not None else None)
        for segment in sorted(closed.values(), key=lambda s: s.wall_start):
            if segment.path.name not in known:
                await self._found(self._segment_footage(url, segment))
        last_end, stream_end = self._marks.get(url, (None, None))
        ends = [s.wall_start + s.duration for s in closed.values()]
        recorder.last_end = max([e for e in (last_end, *ends) if e is not None], default=None)
        if recorder.last_end is not None and self.clock is time.time:  # files are stamped by the real clock
            # A segment's wall times count from when its session read its first packet, and a live HLS
            # stream opens a few segments behind its edge: they run seconds ahead of when the recording
            # really stopped, and the time the watch was down would shrink by as much (to nothing).
            written = await asyncio.to_thread(recorder.last_written)
            if written is not None:
                recorder.last_end = min(recorder.last_end, written)
        recorder.stream_end = max([e for e in (stream_end, *(s.stream_end for s in closed.values()))
                                   if e is not None], default=None)
        self._recorders.append((recorder, loop.run_in_executor(None, recorder.run)))

    def _from_thread(self, work, loop: asyncio.AbstractEventLoop) -> None:
        """Run ``work`` on the loop from a recorder's thread; kept so a stopping watch waits for it."""
        self._arrivals = [f for f in self._arrivals if not f.done()]
        self._arrivals.append(asyncio.run_coroutine_threadsafe(work, loop))

    async def _gap(self, url: str, outage: Outage) -> None:
        gap = Gap(source=url, start=stamp(outage.since), end=stamp(outage.until),
                  seconds=round(outage.until - outage.since, 3), reason=outage.reason)
        await asyncio.to_thread(self.state.gap, gap)
        await asyncio.to_thread(self.gaps.append, gap.model_dump(mode="json"))
        self.say(f"gap in {url}: {gap.seconds:.1f} s not recorded ({gap.reason})")
        await self._events.put(gap)

    # --- judging ------------------------------------------------------------------------

    async def _judge(self, footage: Footage) -> list[Alert]:
        """Index one piece and ask it every question it stands for; its alerts (already stored)."""
        from marlin_agent.app.ask import make_planner, with_calibration
        from marlin_agent.indexing.run import index_inputs

        started = time.monotonic()
        report = await index_inputs([footage.path], self.settings, self.library, transcriber=self.transcriber)
        if not report.videos:
            reason = report.failed[0].reason if report.failed else "it could not be indexed"
            raise VideoUnreadable(f"{footage.path}: {reason}")
        video = report.videos[0]
        alerts, changed = [], {}
        failed = [f"{clock(f.start)}–{clock(f.end)}: {f.message}" for f in video.failures]
        for question in footage.todo():
            planner, tools = make_planner(self.settings, self.library, self.client)
            run = planner.run_for([video.id])
            answer = with_calibration(await planner.answer(run, question, [video.id]), tools)
            failed += run.failed_calls
            for moment in sorted(answer.moments, key=lambda m: m.start):
                alert = await self._occurrence(footage, question, moment, answer.answer, tools, changed)
                if alert is not None:
                    alerts.append(alert)
        # A judgement resting on failed Marlin calls could miss the event: the piece is tried again (a
        # server under load recovers); after the last try it is judged on what did work, and says so.
        tries = self._tries.get(footage.key, 0) + 1
        if failed and tries < _TRIES:
            self._tries[footage.key] = tries
            raise ServerError(f"{len(failed)} Marlin call(s) failed on {Path(footage.path).name} ({failed[0]})")
        self._tries.pop(footage.key, None)
        note = f"judged with {len(failed)} failed Marlin call(s): {failed[0]}" if failed else ""
        await self._settle(footage, video.id, alerts, changed, note)
        self.say(f"judged {Path(footage.path).name}: {len(footage.todo())} question(s), {len(alerts)} alert(s) "
                 f"({time.monotonic() - started:.1f} s)" + (f"; {note}" if note else ""))
        return alerts

    async def _settle(self, footage: Footage, video_id: str, alerts: list[Alert],
                      changed: dict[tuple[str, str], Occurrence], note: str = "") -> None:
        """Store a piece's judgement with its alerts and occurrences in one write, then hold them here."""
        judged = footage.model_copy(update={"status": "judged", "judged": footage.questions, "video_id": video_id,
                                            "error": note})
        await asyncio.to_thread(self.state.judged, judged, alerts, list(changed.values()))
        self._occurrences.update(changed)
        self._alert_ids.update(a.id for a in alerts)
        if footage.kind == "segment":
            self._recordings.append((footage.origin + (footage.duration or 0), footage.path, video_id))

    async def _occurrence(self, footage: Footage, question: str, moment, answer: str, tools,
                          changed: dict) -> Alert | None:
        watch = self.settings.watch
        where = (question, footage.timeline)
        start, end = footage.origin + moment.start, footage.origin + moment.end
        latest = changed.get(where) or self._occurrences.get(where)
        decision = decide(latest, start, end, watch.join_seconds, watch.cooldown_seconds)
        if decision != "alert":
            changed[where] = extended(latest, end)
            return None
        alert_id = short_hash(self.spec.id, question, footage.timeline, round(start, 1))
        changed[where] = opened(question, footage.timeline, alert_id, end)
        if alert_id in self._alert_ids:  # raised before a crash, and judged again: not a new alert
            return None
        return await self._alert(alert_id, footage, question, moment, answer, tools)

    async def _alert(self, alert_id: str, footage: Footage, question: str, moment, answer: str, tools) -> Alert:
        from marlin_agent.media.still import write_still
        from marlin_agent.tools.run_context import RunContext

        folder = self.home / "alerts"
        clip = thumbnail = None
        run = RunContext(scope=[moment.video.id])  # the pictures are the alert's, not the question's work
        try:
            clip = (await tools.clip(run, moment.video.id, moment.start, moment.end, folder)).path
            info = await tools.video_info(run, moment.video.id)
            still = folder / f"{alert_id}.jpg"
            thumbnail = str(await asyncio.to_thread(write_still, info, (moment.start + moment.end) / 2, still))
        except MarlinAgentError as exc:  # the alert matters more than its pictures
            self.say(f"alert {alert_id}: no clip or thumbnail ({exc.message})")
        wall = footage.wall_start
        return Alert(id=alert_id, watch=self.spec.id, question=question, source=footage.source, video=moment.video,
                     start=moment.start, end=moment.end,
                     wall_start=stamp(wall + moment.start) if wall is not None else None,
                     wall_end=stamp(wall + moment.end) if wall is not None else None,
                     confidence=moment.confidence, evidence=moment.evidence, answer=answer, clip=clip,
                     thumbnail=thumbnail, deliveries={t.text: "pending" for t in self.targets})

    async def _work(self, stop: asyncio.Event) -> None:
        """Judge pieces in the order they came, until ``stop``; a failing server is waited out."""
        wait = 2.0
        while not stop.is_set():
            getting = asyncio.ensure_future(self._todo.get())
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({getting, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not getting.done():
                getting.cancel()
                return
            footage = getting.result()
            while True:
                try:
                    alerts = await self._judge(footage)
                    wait = 2.0
                    break
                except MarlinAgentError as exc:
                    if not _transient(exc):
                        failed = footage.model_copy(update={"status": "failed", "error": f"{exc.code}: {exc.message}"})
                        await asyncio.to_thread(self.state.found, failed)
                        self.say(f"could not judge {Path(footage.path).name}: {exc.message}")
                        alerts = []
                        break
                    self.say(f"{exc.message}; {Path(footage.path).name} waits, tried again in {wait:.0f} s")
                    try:
                        await asyncio.wait_for(stop.wait(), wait)
                        return  # stopping: the piece stays pending for the next start
                    except TimeoutError:
                        wait = min(wait * 2, _RETRY_MAX)
            for alert in alerts:
                document = alert.model_dump(mode="json")
                await asyncio.to_thread(self.log.append, document)
                await self._events.put(alert)
                self._deliver(alert)
            self._judged += 1
            await self._upkeep()

    async def _upkeep(self) -> None:
        """Recordings past retention deleted and forgotten; the library compacted now and then."""
        hours = self.settings.watch.retention_hours
        if hours > 0:
            horizon = self.clock() - hours * 3600
            while self._recordings and self._recordings[0][0] < horizon:
                _, path, video_id = self._recordings.popleft()
                Path(path).unlink(missing_ok=True)
                await asyncio.to_thread(self.library.forget_video, video_id)
                await asyncio.to_thread(self.state.forget, Path(path).name)
        if self._judged % _OPTIMIZE_EVERY == 0:
            await asyncio.to_thread(self.library.optimize)

    # --- delivering ---------------------------------------------------------------------

    async def _announce(self) -> None:
        """Targets that show each question before any alert (Home Assistant's entities) are told them now; one
        that cannot be reached is told again with the first alert it gets."""
        for target in self.targets:
            if hasattr(target, "announce"):
                try:
                    await asyncio.to_thread(target.announce, self.spec.id, self.questions, self.spec.sources)
                except DeliveryFailed as exc:
                    self.say(f"could not announce the questions to {target.text}: {exc} (they go with the first "
                             "alert)")

    def _deliver(self, alert: Alert) -> None:
        task = asyncio.ensure_future(self._send(alert))
        self._deliveries.add(task)
        task.add_done_callback(self._deliveries.discard)

    async def _send(self, alert: Alert) -> None:
        """Deliver to each pending target until it lands (``delivery``); each outcome is stored as it
        lands, so a watch killed meanwhile sends again only what had not arrived."""
        document = alert.model_dump(mode="json")
        targets = {t.text: t for t in self.targets}
        latest, lock = [alert], asyncio.Lock()
        raised = raised_epoch(alert.raised_at)

        async def note(text: str, status: str, error: str) -> None:
            async with lock:
                now = latest[0]
                update = {"deliveries": {**now.deliveries, text: status}}
                if error:
                    update["errors"] = {**now.errors, text: error}
                latest[0] = now.model_copy(update=update)
                await asyncio.to_thread(self.state.delivered, latest[0])

        async def one(text: str) -> None:
            async def failing(error: str, tries: int) -> None:
                self.say(f"alert {alert.id} has not reached {text} after {tries} tries ({error}); still trying")
                await note(text, "pending", error)

            outcome = await deliver_until_landed(targets[text], document, raised,
                                                 Persistence.of(text, self.settings.watch), self._stop, self.clock,
                                                 failing)
            if outcome.status == "pending":
                return  # stopping: the next start goes on trying
            await asyncio.to_thread(self.state.landed, alert.id, text, outcome.status)
            await note(text, outcome.status, outcome.error)
            await asyncio.to_thread(self.log.append, delivery_line(alert.id, text, outcome))
            if outcome.status == "failed":
                self.say(f"alert {alert.id} did not reach {text}: {outcome.error}")

        # A target no longer given stays pending: it is sent when a later run names it again.
        await asyncio.gather(*(one(text) for text in alert.pending() if text in targets))

    async def _complete_log(self, alerts: list[Alert]) -> None:
        """alerts.jsonl made whole from the stored state: an alert or an outcome a kill kept from it is added."""
        written = await asyncio.to_thread(logged, self.log.path)
        for alert in sorted(alerts, key=lambda a: a.raised_at):
            if alert.id not in written:
                await asyncio.to_thread(self.log.append, alert.model_dump(mode="json"))
            for text, status in alert.deliveries.items():
                if status != "pending" and (alert.id, text) not in written:
                    outcome = Outcome(status, alert.errors.get(text, ""))
                    await asyncio.to_thread(self.log.append, delivery_line(alert.id, text, outcome))

    # --- the whole run ------------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> AsyncIterator[Event]:
        """Alerts and gaps as they happen, until ``stop`` is set (or the consumer stops reading)."""
        stop = stop or asyncio.Event()
        self._stop = stop  # deliveries waiting for their next try end with the run
        lock = self._take_lock()
        try:
            async for event in self._run(stop):
                yield event
        finally:
            lock.close()

    def _take_lock(self):
        """One watch per set of sources on this machine: two would judge the same footage twice."""
        import fcntl

        self.home.mkdir(parents=True, exist_ok=True)
        handle = open(self.home / "watch.lock", "a+")  # noqa: SIM115 - held for the whole run
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise IndexBusy(f"another watch over {', '.join(self.spec.sources)} is running on this machine",
                            hint="Stop it first (its state is shared: the next start resumes it), or watch "
                                 "other sources.") from None
        return handle

    async def _run(self, stop: asyncio.Event) -> AsyncIterator[Event]:
        await self._open()
        known = await self._resume()
        await self._announce()
        followers = []
        for source in self.spec.sources:
            if is_stream(source):
                await self._follow_stream(source, known.get(source, set()))
            else:
                folder = await self._folder(source, known.get(source, set()), first_run=source not in known)
                followers.append(asyncio.ensure_future(self._follow_folder(folder)))
        self.say(f"watching {', '.join(self.spec.sources)} for: {'; '.join(self.questions)}")
        self.say(f"alerts are logged to {self.log.path}")
        worker = asyncio.ensure_future(self._work(stop))
        worker.add_done_callback(lambda _: self._events.put_nowait(None))
        try:
            while True:
                event = await self._events.get()
                if event is None:
                    break
                yield event
            worker.result()  # a crash in the worker is the run's error
        finally:
            stop.set()
            for follower in followers:
                follower.cancel()
            for recorder, _ in self._recorders:
                recorder.stop.set()
            await asyncio.gather(*(done for _, done in self._recorders), return_exceptions=True)
            # A recorder's last segment is noted down (pending) before the run ends: the next start judges it.
            await asyncio.gather(*map(asyncio.wrap_future, self._arrivals), return_exceptions=True)
            if not worker.done():
                await asyncio.gather(worker, return_exceptions=True)
            if self._deliveries:
                await asyncio.gather(*self._deliveries, return_exceptions=True)
            await self.client.close()
