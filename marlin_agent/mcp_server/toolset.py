"""The MCP tools: one method each, whose signature and docstring are the tool's schema and
description, and the table that says which are served and what a host may tell its user first."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from marlin_agent.app.search import SearchResult
from marlin_agent.domain import Answer, FindResult, VideoCaption
from marlin_agent.errors import MarlinAgentError
from marlin_agent.marlin import with_client
from marlin_agent.mcp_server.calls import MarlinTools, checked, tool_error
from marlin_agent.mcp_server.jobs import Job
from marlin_agent.mcp_server.roots import PathGuard
from marlin_agent.tools.results import VideoList
from marlin_agent.watch.records import WatchStatus


class WatchStatusList(BaseModel):
    watches: list[WatchStatus]

    @staticmethod
    def alerts_json(alerts) -> str:
        return json.dumps({"alerts": [a.model_dump(mode="json") for a in alerts]})


class Toolset:
    """The tools over one server's state (``tools``) and its roots (``guard``)."""

    def __init__(self, tools: MarlinTools, guard: PathGuard) -> None:
        self.tools, self.guard = tools, guard

    async def ask(self, question: str, paths: list[str], ctx: Context,
                  threshold: Annotated[float, Field(ge=0, le=1)] | None = None, clips: bool = False) -> Answer:
        """Answer a question about footage with verified moments, or found=false.

        paths: video files, folders (recursive) or URLs; unindexed ones are indexed first.
        threshold: confidence a moment needs (default from config, calibrated). clips: cut each
        moment into an mp4 under $MARLIN_HOME/clips and return its absolute path."""
        await self.tools.startup.ready()
        from marlin_agent.app.ask import ask as run_ask

        sources = checked(self.guard.sources, paths)
        settings = self.tools.with_overrides(await self.tools.served(), **{"agent.threshold": threshold})
        clips_dir = settings.home / "clips" / time.strftime("%Y%m%d-%H%M%S") if clips else None
        return await self.tools.as_job(
            "ask", lambda reporter: run_ask(question, sources, settings, reporter, clips_dir), ctx)

    async def search(self, query: str, ctx: Context, paths: list[str] | None = None,
                     k: Annotated[int, Field(ge=1, le=200)] = 10) -> SearchResult:
        """Rank indexed moments (events, scenes, speech) for a query, by words and meaning.

        paths: limit to these files, folders or URLs (indexed first if needed); default: all
        indexed footage inside the roots. Hits are unverified: use ask to verify."""
        await self.tools.startup.ready()
        from marlin_agent.app.search import search_footage

        sources = checked(self.guard.sources, paths) if paths else None
        settings = await self.tools.served() if sources else self.tools.settings

        async def run(reporter) -> SearchResult:
            # The top k among the videos this server may show, not the top k of a shared index cut afterwards.
            # Named paths were checked against the roots and are indexed first: their videos are the ones shown
            # (a list of visible videos taken before that indexing would miss them).
            visible = None if sources else {video.id for video in await self.tools.visible_videos()}
            return await search_footage(query, settings, sources, k, reporter, among=visible)

        return await self.tools.as_job("search", run, ctx)

    async def find(self, event: str, video: str, ctx: Context, start: float | None = None,
                   end: float | None = None) -> FindResult:
        """Marlin's raw candidate span per ~60 s chunk for an event in one video, best first.

        Unverified: Marlin proposes a span even for events that never happen. Use ask for answers."""
        await self.tools.startup.ready()
        from marlin_agent.marlin.scan import find_in_video

        path = checked(self.guard.path, video)
        settings = await self.tools.served()
        return await self.tools.as_job("find", lambda reporter: with_client(
            settings.server, lambda c: find_in_video(event, path, settings, c, start, end, reporter.chunks)), ctx)

    async def caption(self, video: str, ctx: Context, start: float | None = None,
                      end: float | None = None) -> VideoCaption:
        """Marlin's dense captions for one video: a scene paragraph per chunk and time-ranged events."""
        await self.tools.startup.ready()
        from marlin_agent.marlin.scan import caption_video

        path = checked(self.guard.path, video)
        settings = await self.tools.served()
        return await self.tools.as_job("caption", lambda reporter: with_client(
            settings.server, lambda c: caption_video(path, settings, c, start, end, reporter.chunks)), ctx)

    async def index(self, paths: list[str], ctx: Context, wait_seconds: float = 30.0) -> Job:
        """Index footage (captions, transcripts, search index) as a job; resumable.

        Waits up to wait_seconds for it to finish, then returns the job: poll job_status with its id."""
        await self.tools.startup.ready()
        sources = checked(self.guard.sources, paths)
        await self.tools.served()
        job = self.tools.start_index(sources)
        return await self.tools.wait(job.id, wait_seconds, ctx)

    async def extract(self, schema: dict[str, Any] | str, paths: list[str], ctx: Context, output: str | None = None,
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
        await self.tools.startup.ready()
        from marlin_agent.extraction.job import extract as run_extract

        sources = checked(self.guard.sources, paths)
        loaded, target = self._extraction(schema, output, overwrite)
        settings = self.tools.with_overrides(await self.tools.served(), **{"planner.model": planner})
        if not loaded.builtin:  # no LLM to fill the rows: an error now, not a job that fails later
            _require_planner(settings)
        job = self.tools.start("extract", lambda reporter: run_extract(
            loaded, sources, settings, target, per=per, instructions=instructions, on_progress=reporter,
            force=overwrite))
        return await self.tools.wait(job.id, wait_seconds, ctx)

    def _extraction(self, schema: dict[str, Any] | str, output: str | None, overwrite: bool):
        """The schema, loaded with nothing outside the roots, and the output it may write."""
        from marlin_agent.extraction.job import check_output, claim
        from marlin_agent.extraction.schema import load_schema
        from marlin_agent.file_names import safe_stem

        if isinstance(schema, str) and schema != "marlin":
            schema = str(checked(self.guard.path, schema))
        # A schema title is the caller's text, never a path: it only names a file in the server's own folder.
        try:
            loaded = load_schema(schema, files_beside=False)
            target = (checked(self.guard.path, output) if output
                      else self.tools.settings.home / "extracts" / f"{safe_stem(loaded.name, 'rows')}-"
                                                             f"{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
            check_output(target)
            if not overwrite:
                claim(target, loaded)
        except MarlinAgentError as exc:
            raise tool_error(exc) from None
        return loaded, target

    async def job_status(self, job_id: str, ctx: Context, wait_seconds: float = 10.0) -> Job:
        """The state of a job (index, extract, or an ask/search/find/caption that outlasted its call);
        waits up to wait_seconds for it to finish. When done, result holds the tool's document."""
        await self.tools.startup.ready()
        checked(self.tools.jobs.get, job_id)
        return await self.tools.wait(job_id, wait_seconds, ctx)

    async def watch_status(self, recent: Annotated[int, Field(ge=0, le=100)] = 10) -> WatchStatusList:
        """The standing questions (`marlin-agent watch`) over footage inside the roots: sources, questions,
        footage judged/pending/failed, the latest alerts (verified moments with clip and thumbnail
        paths) and the gaps in recorded streams. Read-only: watches are started from the command line."""
        await self.tools.startup.ready()
        return WatchStatusList(watches=await self.tools.watch_statuses(recent))

    async def watch_alerts(self) -> str:
        await self.tools.startup.ready()
        alerts = sorted((a for s in await self.tools.watch_statuses(50) for a in s.recent_alerts),
                        key=lambda a: a.raised_at)[-50:]
        return WatchStatusList.alerts_json(alerts)

    async def list_videos(self) -> VideoList:
        """The indexed videos inside the roots (and those fetched from URLs): path, duration, chunks."""
        await self.tools.startup.ready()
        return await self.tools.listed_videos()


def _require_planner(settings) -> None:
    from marlin_agent.chat_model import planner_model

    try:
        planner_model(settings.planner)
    except MarlinAgentError as exc:
        exc.hint = ('Pass planner, e.g. "openai/gpt-4.1-mini" or a model served at the configured '
                    'planner base URL, or set [planner] model in the server\'s config; or use schema "marlin".')
        raise tool_error(exc) from None


# What a host may tell its user before a call. Reading tools change nothing; the tools that index
# write to the local index only (never delete) and may fetch URLs; running one again adds nothing.
_READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_READS_OPEN = ToolAnnotations(read_only_hint=True, open_world_hint=True)
_ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True)
# extract writes a file in the roots: never over one that is not its own, unless the caller passes overwrite.
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True)

# The tools served, in the order a host lists them: a new tool is a method above and a line here.
TOOLS: tuple[tuple[str, ToolAnnotations], ...] = (
    ("ask", _ADDS), ("search", _READS_OPEN), ("find", _READS), ("caption", _READS), ("index", _ADDS),
    ("extract", _WRITES), ("job_status", _READS), ("watch_status", _READS), ("list_videos", _READS),
)
ALERTS_RESOURCE = "marlin://watch/alerts"
