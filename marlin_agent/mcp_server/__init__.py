"""`marlin-agent mcp`: the agent's tools over the Model Context Protocol (stdio).

A thin front door like the CLI: each tool checks its paths against the allowed roots,
calls the same library function the CLI calls, and returns the same pydantic document
(sent as structured content). Calls are bounded in time; indexing and extraction run as
jobs the client polls. The stdio transport points fd 1 at stderr while it serves, so a
stray print from any library cannot corrupt the protocol.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from marlin_agent.app.search import SearchResult
from marlin_agent.config import Settings
from marlin_agent.domain import Answer, FindResult, VideoCaption
from marlin_agent.errors import MarlinAgentError
from marlin_agent.library.store import VideoRecord
from marlin_agent.marlin import with_client
from marlin_agent.mcp_server.jobs import Job, Jobs
from marlin_agent.mcp_server.roots import PathGuard
from marlin_agent.mcp_server.startup import BEGIN_AFTER_SECONDS, Startup
from marlin_agent.tools.results import VideoList
from marlin_agent.version import __version__
from marlin_agent.watch.records import WatchStatus

T = TypeVar("T")

INSTRUCTIONS = """\
Video research over local footage and URLs with Marlin-2B. `ask` answers a question with
verified moments (video, start, end in seconds, confidence, evidence) or found=false: trust
found=false, Marlin proposes a span for anything so only verified moments are reported. Beyond
"when": "every time X", "how many times X" (count), "what happens after/before X" (relation, with
the anchor's moment), "the first/last time X", "between X and Y", "how long does X last" (duration).
`search` ranks indexed moments by words and meaning; `find` and `caption` give Marlin's raw
output for one video. Unindexed footage is indexed first; for big folders call `index`
and poll `job_status` until state is done. A call that fails with still_running goes on as
the job it names: poll `job_status`, whose result is then the call's document. Paths must
lie inside the server's roots. `watch_status` (and the resource marlin://watch/alerts) shows the
standing questions a user runs with `marlin-agent watch`: their latest alerts and any gaps."""


# MCP hosts start this server with an environment of their own (an allow-list, or only the
# entry's env block), so "export MARLIN_BASE_URL" in a shell never reaches it.
_NO_SERVER_OVER_MCP = ("This MCP server sees only the environment its host gives it, not your shell's: put "
                       "MARLIN_BASE_URL (and MARLIN_API_KEY for a hosted endpoint) in the env block of its entry "
                       "in the host's MCP config, or run `marlin-agent setup` once, whose stored choice the "
                       "server reads.")


def _hint_over_mcp(code: str, hint: str | None) -> str | None:
    return _NO_SERVER_OVER_MCP if code in ("server_not_configured", "server_unavailable") else hint


def _tool_error(exc: MarlinAgentError) -> ToolError:
    hint = _hint_over_mcp(exc.code, exc.hint)
    return ToolError(f"{exc.code}: {exc.message}." + (f" Hint: {hint}" if hint else ""))


class Reporter:
    """Turns the indexer's progress callbacks (any thread) into MCP progress notifications."""

    def __init__(self, ctx: Context | None, job: Job | None = None) -> None:
        # ``ctx`` is the call currently waiting (None between calls); ``job`` records progress for polling.
        self.ctx, self.job = ctx, job
        self.loop = asyncio.get_running_loop()
        self._pending: set[asyncio.Task] = set()

    def __call__(self, event) -> None:
        """An indexing run's progress (chunks of one video, and of the run)."""
        looking = f" (looking at {event.looking} more videos)" if event.looking else ""
        where = (f"{event.video}: chunk {event.video_done}/{event.video_total}" if event.video
                 else "looking at the footage")
        self._report(event.overall_done, event.overall_total, where + looking)

    def chunks(self, done: int, total: int) -> None:
        """One video's chunks, as caption and find report them."""
        self._report(done, total, f"chunk {done}/{total}")

    def _report(self, done: int, total: int, message: str) -> None:
        if self.job is not None:
            self.job.done, self.job.total, self.job.message = done, total, message
        if self.ctx is not None:
            self.loop.call_soon_threadsafe(self._send, done, total, message)

    def _send(self, done: int, total: int, message: str) -> None:
        if self.ctx is None:
            return
        task = self.loop.create_task(self.ctx.report_progress(done, total, message))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)


class MarlinTools:
    """The state behind the tools: settings, the path guard, running jobs."""

    def __init__(self, settings: Settings, guard: PathGuard) -> None:
        self.settings, self.guard, self.jobs = settings, guard, Jobs()
        self._reporters: dict[str, Reporter] = {}
        self._starting: asyncio.Future | None = None
        self.startup = Startup(settings)

    def start(self, kind: str, run) -> Job:
        """Start ``run(reporter)`` as a job; its progress reaches whichever call is waiting on it."""
        reporter = Reporter(None)
        job = self.jobs.start(kind, lambda job: run(reporter))
        reporter.job = self.jobs.get(job.id)
        self._reporters[job.id] = reporter
        return job

    async def wait(self, job_id: str, seconds: float, ctx: Context | None) -> Job:
        """Wait for a job (within the call bound), sending its progress to this call meanwhile."""
        reporter = self._reporters[job_id]
        reporter.ctx = ctx
        try:
            return await self.jobs.wait(job_id, max(0.0, min(seconds, self.settings.mcp.call_seconds)))
        finally:
            reporter.ctx = None

    async def served(self) -> Settings:
        """The settings with a server: as configured, else the local engine, started on first need.

        A first start can take minutes (it downloads the weights), so it runs in the background
        and a call waits for it only within its bound; later calls pick up the same start.
        """
        if self.settings.server.base_url:
            return self.settings
        from marlin_agent.engines import ensure_server

        if self._starting is None:
            self._starting = asyncio.ensure_future(asyncio.to_thread(ensure_server, self.settings))
        try:
            settings = await asyncio.wait_for(asyncio.shield(self._starting), self.settings.mcp.call_seconds)
        except TimeoutError:
            raise ToolError("engine_starting: the local Marlin engine is still starting (the first start "
                            "downloads the weights). Call again in a minute; `marlin-agent engine logs` shows "
                            "its progress.") from None
        except MarlinAgentError as exc:
            self._starting = None  # the next call tries again
            raise _tool_error(exc) from None
        self._starting = None
        self.settings = settings
        return settings

    @staticmethod
    def with_overrides(settings: Settings, **values: Any) -> Settings:
        """``settings`` with dotted keys replaced (``None`` leaves a key as it is), validated again."""
        for dotted, value in values.items():
            if value is not None:
                section, key = dotted.split(".")
                part = getattr(settings, section).model_copy(update={key: value})
                settings = settings.model_copy(update={section: type(part).model_validate(part.model_dump())})
        return settings

    async def bounded(self, work: Awaitable[T], what: str) -> T:
        """Run a short call within ``[mcp] call_seconds``; errors become tool errors the client can read."""
        seconds = self.settings.mcp.call_seconds
        try:
            return await asyncio.wait_for(work, seconds)
        except MarlinAgentError as exc:
            raise _tool_error(exc) from None
        except TimeoutError:
            raise ToolError(f"timeout: {what} took longer than {seconds:.0f} s (raise [mcp] call_seconds)") from None

    async def as_job(self, kind: str, run, ctx: Context | None) -> T:
        """Run ``run(reporter)`` as a job and return its result if it ends within the call's bound;
        otherwise the work goes on and the error names the job to poll (its result is this call's)."""
        job = self.start(kind, run)
        finished = await self.wait(job.id, self.settings.mcp.call_seconds, ctx)
        if finished.state == "done":
            return self.jobs.result(job.id)
        if finished.state == "failed":
            error = finished.error or {}
            hint = _hint_over_mcp(error.get("code", ""), error.get("hint"))
            hint = f" Hint: {hint}" if hint else ""
            raise ToolError(f"{error.get('code', 'error')}: {error.get('message', '')}.{hint}")
        raise ToolError(f"still_running: {kind} is taking longer than {self.settings.mcp.call_seconds:.0f} s "
                        f"(new footage is indexed first; a slow engine takes minutes per chunk). It goes on as job "
                        f"{job.id}: poll job_status with that id; when its state is done, its result is the {kind} "
                        "document.")

    async def visible_videos(self) -> list[VideoRecord]:
        """Indexed videos this server may show: files inside the roots, and footage fetched from URLs."""
        from marlin_agent.library.access import open_library

        library = await self.bounded(asyncio.to_thread(open_library, self.settings), "list_videos")
        videos = await asyncio.to_thread(library.list_videos)
        return [v for v in videos if self.guard.visible(v.path, v.url)]

    async def listed_videos(self) -> VideoList:
        """The agent's own video list (what the planner's list_videos returns), cut to what this server may show."""
        from marlin_agent.library.access import open_library
        from marlin_agent.tools import Toolbox

        library = await self.bounded(asyncio.to_thread(open_library, self.settings), "list_videos")
        listed = await Toolbox(self.settings, library, None).list_videos()
        shown = [entry for entry in listed.videos if self.guard.visible(entry.video.path, entry.url)]
        return listed.model_copy(update={"videos": shown, "roots": [str(r) for r in self.guard.roots]})

    async def watch_statuses(self, recent: int) -> list[WatchStatus]:
        """The standing questions recorded in the library whose folders lie inside the roots."""
        from marlin_agent.library.access import open_library
        from marlin_agent.watch.state import watch_status
        from marlin_agent.watch.stream import is_stream

        library = await self.bounded(asyncio.to_thread(open_library, self.settings), "watch_status")
        statuses = await self.bounded(asyncio.to_thread(watch_status, library, recent), "watch_status")
        return [s for s in statuses
                if all(self.guard.visible(source, source if is_stream(source) else "") for source in s.sources)]

    def start_index(self, sources: list[str]) -> Job:
        from marlin_agent.indexing.run import index_inputs

        return self.start("index", lambda reporter: index_inputs(sources, self.settings, on_progress=reporter))


# What a host may tell its user before a call. Reading tools change nothing; the tools that index
# write to the local index only (never delete) and may fetch URLs; running one again adds nothing.
_READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_READS_OPEN = ToolAnnotations(read_only_hint=True, open_world_hint=True)
_ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True)
# extract writes a file in the roots: never over one that is not its own, unless the caller passes overwrite.
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True)


def build_server(settings: Settings, roots: list[str | Path] | None = None, verbose: bool = False,
                 preload: bool = False) -> MCPServer:
    """The MCP server over ``settings``; ``roots`` (else ``[mcp] roots``, else the cwd) bound every path;
    ``verbose`` logs libraries' debug lines on stderr (warnings only otherwise); ``preload`` loads the
    heavy modules and models shortly after start instead of at the first call."""
    allowed = list(roots or settings.mcp.roots or [Path.cwd()])
    guard = PathGuard(allowed, settings.mcp.allow_urls, settings.mcp.allow_private_urls)
    # Folders walked for the caller are confined too: a link inside a root must not bring in footage from
    # outside; and the caller's URLs stay off this machine's own networks unless the operator allows them.
    settings = settings.model_copy(update={"library": settings.library.model_copy(
        update={"confine_to": [str(root) for root in guard.roots], "internal_urls": settings.mcp.allow_private_urls})})
    tools = MarlinTools(settings, guard)
    if preload:
        tools.startup.begin(delay=BEGIN_AFTER_SECONDS)
    # WARNING, not the SDK's INFO: at INFO every HTTP request (httpx) and every transcription
    # (faster-whisper) writes a line to the host's log of this server's stderr.
    server = MCPServer(name="marlin", version=__version__, instructions=INSTRUCTIONS,
                       log_level="DEBUG" if verbose else "WARNING")

    @server.tool(annotations=_ADDS)
    async def ask(question: str, paths: list[str], ctx: Context,
                  threshold: Annotated[float, Field(ge=0, le=1)] | None = None, clips: bool = False) -> Answer:
        """Answer a question about footage with verified moments, or found=false.

        paths: video files, folders (recursive) or URLs; unindexed ones are indexed first.
        threshold: confidence a moment needs (default from config, calibrated). clips: cut each
        moment into an mp4 under $MARLIN_HOME/clips and return its absolute path."""
        await tools.startup.ready()
        from marlin_agent.app.ask import ask as run_ask

        sources = _checked(guard.sources, paths)
        settings = tools.with_overrides(await tools.served(), **{"agent.threshold": threshold})
        clips_dir = settings.home / "clips" / time.strftime("%Y%m%d-%H%M%S") if clips else None
        return await tools.as_job(
            "ask", lambda reporter: run_ask(question, sources, settings, reporter, clips_dir), ctx)

    @server.tool(annotations=_READS_OPEN)
    async def search(query: str, ctx: Context, paths: list[str] | None = None,
                     k: Annotated[int, Field(ge=1, le=200)] = 10) -> SearchResult:
        """Rank indexed moments (events, scenes, speech) for a query, by words and meaning.

        paths: limit to these files, folders or URLs (indexed first if needed); default: all
        indexed footage inside the roots. Hits are unverified: use ask to verify."""
        await tools.startup.ready()
        from marlin_agent.app.search import search_footage

        sources = _checked(guard.sources, paths) if paths else None
        settings = await tools.served() if sources else tools.settings

        async def run(reporter) -> SearchResult:
            # The top k among the videos this server may show, not the top k of a shared index cut afterwards.
            # Named paths were checked against the roots and are indexed first: their videos are the ones shown
            # (a list of visible videos taken before that indexing would miss them).
            visible = None if sources else {video.id for video in await tools.visible_videos()}
            return await search_footage(query, settings, sources, k, reporter, among=visible)

        return await tools.as_job("search", run, ctx)

    @server.tool(annotations=_READS)
    async def find(event: str, video: str, ctx: Context, start: float | None = None,
                   end: float | None = None) -> FindResult:
        """Marlin's raw candidate span per ~60 s chunk for an event in one video, best first.

        Unverified: Marlin proposes a span even for events that never happen. Use ask for answers."""
        await tools.startup.ready()
        from marlin_agent.marlin.scan import find_in_video

        path = _checked(guard.path, video)
        settings = await tools.served()
        return await tools.as_job("find", lambda reporter: with_client(
            settings.server, lambda c: find_in_video(event, path, settings, c, start, end, reporter.chunks)), ctx)

    @server.tool(annotations=_READS)
    async def caption(video: str, ctx: Context, start: float | None = None,
                      end: float | None = None) -> VideoCaption:
        """Marlin's dense captions for one video: a scene paragraph per chunk and time-ranged events."""
        await tools.startup.ready()
        from marlin_agent.marlin.scan import caption_video

        path = _checked(guard.path, video)
        settings = await tools.served()
        return await tools.as_job("caption", lambda reporter: with_client(
            settings.server, lambda c: caption_video(path, settings, c, start, end, reporter.chunks)), ctx)

    @server.tool(annotations=_ADDS)
    async def index(paths: list[str], ctx: Context, wait_seconds: float = 30.0) -> Job:
        """Index footage (captions, transcripts, search index) as a job; resumable.

        Waits up to wait_seconds for it to finish, then returns the job: poll job_status with its id."""
        await tools.startup.ready()
        sources = _checked(guard.sources, paths)
        await tools.served()
        job = tools.start_index(sources)
        return await tools.wait(job.id, wait_seconds, ctx)

    @server.tool(annotations=_WRITES)
    async def extract(schema: dict[str, Any] | str, paths: list[str], ctx: Context, output: str | None = None,
                      per: Literal["video", "chunk"] = "video", instructions: str | None = None,
                      planner: str | None = None, overwrite: bool = False, wait_seconds: float = 30.0) -> Job:
        """Turn footage into rows matching a JSON Schema (an object, a schema file path, or "marlin"
        for Marlin's own scenes and events without an LLM). Runs as a job; the result names the
        JSONL/Parquet output: output (a .jsonl or .parquet path inside the roots), default a file
        under $MARLIN_HOME/extracts named after the schema's title. An existing output is resumed
        when it holds this schema's rows; any other existing file is refused unless overwrite=true,
        which replaces it. $refs resolve only inside the schema; nothing is fetched.

        planner: the LLM that fills a custom schema ("provider/name", or a model served at the
        configured planner base URL); default: the server's [planner] model. Not needed for "marlin"."""
        await tools.startup.ready()
        from marlin_agent.extraction.job import check_output, claim
        from marlin_agent.extraction.job import extract as run_extract
        from marlin_agent.extraction.schema import load_schema
        from marlin_agent.file_names import safe_stem

        sources = _checked(guard.sources, paths)
        if isinstance(schema, str) and schema != "marlin":
            schema = str(_checked(guard.path, schema))
        # A schema title is the caller's text, never a path: it only names a file in the server's own folder.
        try:
            loaded = load_schema(schema, files_beside=False)
            target = (_checked(guard.path, output) if output
                      else tools.settings.home / "extracts" / f"{safe_stem(loaded.name, 'rows')}-"
                                                             f"{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
            check_output(target)
            if not overwrite:
                claim(target, loaded)
        except MarlinAgentError as exc:
            raise _tool_error(exc) from None
        settings = tools.with_overrides(await tools.served(), **{"planner.model": planner})
        if not loaded.builtin:  # no LLM to fill the rows: an error now, not a job that fails later
            from marlin_agent.chat_model import planner_model

            try:
                planner_model(settings.planner)
            except MarlinAgentError as exc:
                exc.hint = ('Pass planner, e.g. "openai/gpt-4.1-mini" or a model served at the configured '
                            'planner base URL, or set [planner] model in the server\'s config; or use schema "marlin".')
                raise _tool_error(exc) from None

        job = tools.start("extract", lambda reporter: run_extract(
            loaded, sources, settings, target, per=per, instructions=instructions, on_progress=reporter,
            force=overwrite))
        return await tools.wait(job.id, wait_seconds, ctx)

    @server.tool(annotations=_READS)
    async def job_status(job_id: str, ctx: Context, wait_seconds: float = 10.0) -> Job:
        """The state of a job (index, extract, or an ask/search/find/caption that outlasted its call);
        waits up to wait_seconds for it to finish. When done, result holds the tool's document."""
        await tools.startup.ready()
        _checked(tools.jobs.get, job_id)
        return await tools.wait(job_id, wait_seconds, ctx)

    @server.tool(annotations=_READS)
    async def watch_status(recent: Annotated[int, Field(ge=0, le=100)] = 10) -> WatchStatusList:
        """The standing questions (`marlin-agent watch`) over footage inside the roots: sources, questions,
        footage judged/pending/failed, the latest alerts (verified moments with clip and thumbnail
        paths) and the gaps in recorded streams. Read-only: watches are started from the command line."""
        await tools.startup.ready()
        return WatchStatusList(watches=await tools.watch_statuses(recent))

    @server.resource("marlin://watch/alerts", mime_type="application/json",
                     description="The latest alerts of every standing question inside the roots, newest last.")
    async def watch_alerts() -> str:
        await tools.startup.ready()
        alerts = sorted((a for s in await tools.watch_statuses(50) for a in s.recent_alerts),
                        key=lambda a: a.raised_at)[-50:]
        return WatchStatusList.alerts_json(alerts)

    @server.tool(annotations=_READS)
    async def list_videos() -> VideoList:
        """The indexed videos inside the roots (and those fetched from URLs): path, duration, chunks."""
        await tools.startup.ready()
        return await tools.listed_videos()

    return server


class WatchStatusList(BaseModel):
    watches: list[WatchStatus]

    @staticmethod
    def alerts_json(alerts) -> str:
        return json.dumps({"alerts": [a.model_dump(mode="json") for a in alerts]})


def _checked(check, value):
    try:
        return check(value)
    except MarlinAgentError as exc:
        raise _tool_error(exc) from None


def serve_stdio(settings: Settings, roots: list[str | Path] | None = None, verbose: bool = False) -> None:
    build_server(settings, roots, verbose=verbose, preload=True).run("stdio")
