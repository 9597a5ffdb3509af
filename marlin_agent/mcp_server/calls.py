"""What every MCP tool shares: path and job checks as tool errors, progress as notifications, and
the state one server keeps between calls (its jobs, its settings with a server, its start-up).

``serve`` shares that state with its REST API and pages, which must start without the MCP SDK
(about 0.4 s of imports): the SDK is imported here only where a tool error is made."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

from marlin_agent.config import Settings
from marlin_agent.errors import MarlinAgentError
from marlin_agent.mcp_server.jobs import Job, Jobs
from marlin_agent.mcp_server.roots import PathGuard
from marlin_agent.mcp_server.startup import Startup
from marlin_agent.redaction import redacted
from marlin_agent.watch.records import WatchStatus

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ToolError

T = TypeVar("T")


# MCP hosts start this server with an environment of their own (an allow-list, or only the
# entry's env block), so "export MARLIN_BASE_URL" in a shell never reaches it.
_NO_SERVER_OVER_MCP = ("This MCP server sees only the environment its host gives it, not your shell's: put "
                       "MARLIN_BASE_URL (and MARLIN_API_KEY for a hosted endpoint) in the env block of its entry "
                       "in the host's MCP config, or run `marlin-agent setup` once, whose stored choice the "
                       "server reads.")


def _hint_over_mcp(code: str, hint: str | None) -> str | None:
    return _NO_SERVER_OVER_MCP if code in ("server_not_configured", "server_unavailable") else hint


def _tool_error(text: str) -> ToolError:
    from mcp.server.mcpserver.exceptions import ToolError

    return ToolError(text)


def tool_error(exc: MarlinAgentError) -> ToolError:
    hint = _hint_over_mcp(exc.code, exc.hint_for())
    return _tool_error(f"{exc.code}: {exc.message}." + (f" Hint: {hint}" if hint else ""))


class EngineStarting(MarlinAgentError):
    """The local engine a call needs is starting in the background; the call is refused, the start goes on."""

    code = "engine_starting"
    exit_code = 3
    default_hint = "Call again in a minute; `marlin-agent engine logs` shows its progress."


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
            raise EngineStarting("the local Marlin engine is still starting (the first start downloads the "
                                 "weights)") from None
        except MarlinAgentError:
            self._starting = None  # the next call tries again
            raise
        self._starting = None
        self.settings = settings
        return settings

    async def bounded(self, work: Awaitable[T], what: str) -> T:
        """Run a short call within ``[mcp] call_seconds``; errors become tool errors the client can read."""
        seconds = self.settings.mcp.call_seconds
        try:
            return await asyncio.wait_for(work, seconds)
        except MarlinAgentError as exc:
            raise tool_error(exc) from None
        except TimeoutError:
            raise _tool_error(f"timeout: {what} took longer than {seconds:.0f} s (raise [mcp] call_seconds)") from None

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
            raise _tool_error(f"{error.get('code', 'error')}: {error.get('message', '')}.{hint}")
        raise _tool_error(f"still_running: {kind} is taking longer than {self.settings.mcp.call_seconds:.0f} s "
                        f"(new footage is indexed first; a slow engine takes minutes per chunk). It goes on as job "
                        f"{job.id}: poll job_status with that id; when its state is done, its result is the {kind} "
                        "document.")

    async def watch_statuses(self, recent: int) -> list[WatchStatus]:
        """The standing questions recorded in the library whose footage lies inside the roots: a folder's
        watch when the folder does, a stream's when its recordings do; of each, only the alerts and
        failures whose file does (a link in a watched folder may point anywhere)."""
        from marlin_agent.library.access import open_library
        from marlin_agent.watch.state import watch_status
        from marlin_agent.watch.stream import is_stream

        library = await asyncio.to_thread(open_library, self.settings)
        statuses = await asyncio.to_thread(watch_status, library, recent)
        recordings = str(self.settings.watch_dir)
        shown = []
        for status in statuses:
            if not all(self.guard.visible(recordings if is_stream(s) else s) for s in status.sources):
                continue
            alerts = [a for a in status.recent_alerts if self.guard.visible(a.video.path)]
            failed = [f for f in status.failed if self.guard.visible(f.path)]
            shown.append(redacted(status.model_copy(update={"recent_alerts": alerts, "failed": failed})))
        return shown


def checked(check, value):
    try:
        return check(value)
    except MarlinAgentError as exc:
        raise tool_error(exc) from None
