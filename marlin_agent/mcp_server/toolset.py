"""The MCP tools: one per capability of ``app.capabilities``, built from its declaration, and the
server's own tools over its jobs and the standing questions.

What MCP adds to a capability is confinement and time: every path is checked against the roots
before anything reads it (footage by ``Role``: sources, a video, a schema file, an output), an
output folder is one the server makes under ``$MARLIN_HOME`` (the caller only says yes), a call
is bounded and outlasting work becomes a job to poll, and long capabilities run as jobs at once.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from marlin_agent.app.capabilities import CAPABILITIES
from marlin_agent.app.capability import Capability, Param, Role
from marlin_agent.errors import MarlinAgentError
from marlin_agent.mcp_server.calls import MarlinTools, checked, tool_error
from marlin_agent.mcp_server.confined import confined_run, confined_value, remote_default, remote_type
from marlin_agent.mcp_server.jobs import Job
from marlin_agent.mcp_server.roots import PathGuard
from marlin_agent.watch.records import WatchStatusList

# MCP's spelling of footage: hosts and skills know the sources as "paths".
_SOURCES_NAME = "paths"
_WAIT = Annotated[float, Field(ge=0, description="Seconds to wait for the job to finish before returning it (poll "
                                                 "job_status with its id after that).")]


def _name(param: Param) -> str:
    return _SOURCES_NAME if param.role is Role.SOURCES else param.name


def _hints(capability: Capability) -> ToolAnnotations:
    """What a host may tell its user before a call: reading changes nothing; indexing adds to the local index only
    (never deletes) and running it again adds nothing; a file written may be one the caller named."""
    if capability.writes is None:
        return ToolAnnotations(read_only_hint=True, open_world_hint=capability.fetches)
    return ToolAnnotations(read_only_hint=False, destructive_hint=capability.writes == "files", idempotent_hint=True,
                           open_world_hint=capability.fetches)


class Toolset:
    """The tools over one server's state (``tools``) and its roots (``guard``)."""

    def __init__(self, tools: MarlinTools, guard: PathGuard) -> None:
        self.tools, self.guard = tools, guard

    def tool(self, capability: Capability):
        """The MCP tool for ``capability``: its parameters (in MCP's spelling), a context, and for a job its wait."""
        params = capability.params()
        given = [inspect.Parameter(_name(p), inspect.Parameter.KEYWORD_ONLY, annotation=remote_type(p),
                                   default=remote_default(p)) for p in params]
        if capability.job:
            given.append(inspect.Parameter("wait_seconds", inspect.Parameter.KEYWORD_ONLY, annotation=_WAIT,
                                           default=30.0))
        given.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))
        returns = Job if capability.job else capability.result_type()

        async def call(ctx: Context, **values: Any):
            return await self.call(capability, values, ctx)

        call.__name__ = call.__qualname__ = capability.name
        call.__doc__ = capability.description
        call.__signature__ = inspect.Signature(given, return_annotation=returns)
        call.__annotations__ = {p.name: p.annotation for p in given} | {"return": returns}
        return call

    async def call(self, capability: Capability, values: dict[str, Any], ctx: Context) -> Any:
        await self.tools.startup.ready()
        wait = values.pop("wait_seconds", None)
        run = confined_run(capability, self.tools.settings, self.tools.served, self.guard)
        try:
            arguments = {p.name: confined_value(p, values.get(_name(p), remote_default(p)), self.guard, run)
                         for p in capability.params()}
            arguments = capability.checked(arguments, run)
            if capability.wants_server(arguments):
                await run.served()  # a server that is not there is this call's error, not a failed job's
        except MarlinAgentError as exc:
            raise tool_error(exc) from None

        def work(reporter):
            return capability.function(**arguments, run=dataclasses.replace(run, on_index=reporter,
                                                                            on_chunks=reporter.chunks))

        if capability.job:
            job = self.tools.start(capability.name, work)
            return await self.tools.wait(job.id, wait, ctx)
        return await self.tools.as_job(capability.name, work, ctx)

    async def job_status(self, job_id: str, ctx: Context, wait_seconds: float = 10.0) -> Job:
        """The state of a job (index, extract, or a call that outlasted its bound); waits up to wait_seconds for it
        to finish. When done, result holds the tool's document."""
        await self.tools.startup.ready()
        checked(self.tools.jobs.get, job_id)
        return await self.tools.wait(job_id, wait_seconds, ctx)

    async def watch_status(self, recent: Annotated[int, Field(ge=0, le=100)] = 10) -> WatchStatusList:
        """The standing questions (`marlin-agent watch`) over footage inside the roots: sources, questions,
        footage judged/pending/failed, the latest alerts (verified moments with clip and thumbnail
        paths) and the gaps in recorded streams. Read-only: watches are started from the command line."""
        await self.tools.startup.ready()
        return WatchStatusList(watches=await self.tools.bounded(self.tools.watch_statuses(recent), "watch_status"))

    async def watch_alerts(self) -> str:
        await self.tools.startup.ready()
        statuses = await self.tools.bounded(self.tools.watch_statuses(50), "the alerts")
        alerts = sorted((a for s in statuses for a in s.recent_alerts),
                        key=lambda a: a.raised_at)[-50:]
        return WatchStatusList.alerts_json(alerts)

    def served_tools(self):
        """(function, hints) for every tool, in the order a host lists them: the capabilities, then the server's own."""
        reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
        return ([(self.tool(capability), _hints(capability)) for capability in CAPABILITIES]
                + [(self.job_status, reads), (self.watch_status, reads)])


ALERTS_RESOURCE = "marlin://watch/alerts"
