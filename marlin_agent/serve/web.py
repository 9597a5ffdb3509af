"""The web app: pages people look at, on the same calls as the REST API.

The library (a thumbnail, length, what was indexed and whether there is a transcript per
video), search results as thumbnails that open the video at the moment, an answer with its
evidence and the timeline of found and rejected moments (the ``ask --html`` page's, with the
videos streamed from here), a job's live progress, and the standing questions of ``watch``
with their alerts as they arrive. Pages are rendered here; a small script follows jobs and
seeks players. Everything a page shows is escaped: titles, captions and transcripts are
footage's words, not markup.
"""

from __future__ import annotations

import asyncio
import functools
import json
import mimetypes
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from markupsafe import Markup

from marlin_agent.app.capabilities import BY_NAME
from marlin_agent.clock import clock
from marlin_agent.domain import Answer, VideoRef
from marlin_agent.errors import InputError, MarlinAgentError
from marlin_agent.file_names import text_path
from marlin_agent.mcp_server.calls import MarlinTools
from marlin_agent.serve.rest import start_call


@functools.cache
def _templates():
    """The page templates, loaded with the first page (the API alone never needs Jinja)."""
    from jinja2 import Environment, PackageLoader, select_autoescape
    
    templates = Environment(loader=PackageLoader("marlin_agent.serve", "templates"),
                            autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)
    templates.globals["clock"] = clock
    return templates

# The longest a form's body may be: a question or a path, never a file.
_FORM_BYTES = 64 * 1024


def render(name: str, status: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(_templates().get_template(name).render(**values), status_code=status)


def error_page(error: MarlinAgentError, status: int) -> HTMLResponse:
    return render("error.html", status, error=error.to_dict())


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > _FORM_BYTES:
        raise InputError("the form is too large")
    return dict(parse_qsl(body.decode("utf-8", "replace")))


def _video_address(video: VideoRef) -> str:
    return f"/media/video/{video.id}"


class Pages:
    """The pages and media of one server, over its shared state (``tools``)."""

    def __init__(self, tools: MarlinTools) -> None:
        self.tools = tools

    async def _library(self):
        from marlin_agent.library.access import open_library

        await self.tools.startup.ready()
        return await asyncio.to_thread(open_library, self.tools.settings)

    async def _videos(self) -> list:
        from marlin_agent.tools import Toolbox
        from marlin_agent.tools.run_context import RunContext

        listed = await Toolbox(self.tools.settings, await self._library(), None).list_videos(RunContext())
        return [entry for entry in listed.videos if self.tools.guard.visible(entry.video.path, entry.url)]

    async def _record(self, video_id: str):
        """A library video this server may show (``UnknownVideo`` for any other id, seen or not)."""
        from marlin_agent.tools.toolbox import UnknownVideo

        library = await self._library()
        record = await asyncio.to_thread(library.get_video, video_id)
        if record is None or not self.tools.guard.visible(record.path, record.url):
            raise UnknownVideo(f"no video {video_id!r} here")
        return library, record

    async def library(self) -> HTMLResponse:
        return render("library.html", here="library", videos=await self._videos(),
                      roots=[str(root) for root in self.tools.guard.roots])

    async def video(self, video_id: str, t: float = 0.0) -> HTMLResponse:
        library, record = await self._record(video_id)
        entry = next((e for e in await self._videos() if e.video.id == video_id), None)
        if entry is None:  # gone since
            from marlin_agent.tools.toolbox import UnknownVideo

            raise UnknownVideo(f"no video {video_id!r} here")
        segments = [s for s in await asyncio.to_thread(library.segments, video_id) if s.kind != "scene"]
        return render("video.html", entry=entry, at=max(0.0, t), segments=sorted(segments, key=lambda s: s.start))

    async def search(self, q: str = "") -> Response:
        if not q.strip():
            return RedirectResponse("/", status_code=303)
        job = await start_call(self.tools, BY_NAME["search"], {"query": q})
        job = await self.tools.jobs.wait(job.id, self.tools.settings.mcp.call_seconds)
        if job.state != "done":
            return RedirectResponse(f"/jobs/{job.id}", status_code=303)
        result = self.tools.jobs.result(job.id)
        return render("search.html", query=q, hits=result.results)

    async def start(self, request: Request, capability: str) -> RedirectResponse:
        """A form that starts work (ask, index): the job's page follows it."""
        form = await _form(request)
        values = ({"question": form.get("question", "")} if capability == "ask"
                  else {"sources": [form.get("path", "")]})
        job = await start_call(self.tools, BY_NAME[capability], values)
        return RedirectResponse(f"/jobs/{job.id}", status_code=303)

    async def job(self, job_id: str) -> HTMLResponse:
        job = self.tools.jobs.get(job_id)
        shown, title, extra = Markup(""), None, {}
        if job.state == "done":
            result = self.tools.jobs.result(job_id)
            if isinstance(result, Answer):
                shown, extra = await self._answer(result), self._answer_assets()
                title = result.question
            else:
                shown = Markup("<pre>{}</pre>").format(json.dumps(job.result, indent=2))
        return render("job.html", here="jobs", job=job, shown=shown, title=title, **extra)

    async def _answer(self, answer: Answer) -> Markup:
        from marlin_agent.app.report_page import answer_html, timelines_of
        from marlin_agent.tools import Toolbox
        from marlin_agent.tools.run_context import RunContext

        timelines = await timelines_of(Toolbox(self.tools.settings, await self._library(), None), RunContext(),
                                       answer)
        clips = [None] * len(answer.moments)  # each moment plays from the source, at the moment
        # answer_html escapes every text of the answer itself.
        return Markup(answer_html(answer, clips, None, timelines, source=_video_address))

    @staticmethod
    def _answer_assets() -> dict[str, str]:
        from marlin_agent.app.report_page import SCRIPT, STYLE

        return {"answer_style": Markup(STYLE), "answer_script": Markup(SCRIPT)}

    async def jobs(self) -> HTMLResponse:
        return render("jobs.html", here="jobs", jobs=self.tools.jobs.listed())

    async def watch(self, part: int = 0) -> HTMLResponse:
        watches = await self.tools.watch_statuses(10)
        return render("watches.html" if part else "watch.html", here="watch", watches=watches)

    async def video_file(self, video_id: str) -> FileResponse:
        """The source video, for a player (range requests let it seek)."""
        _, record = await self._record(video_id)
        path = text_path(record.path)
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return FileResponse(path, media_type=kind, headers={"Cache-Control": "private, max-age=300"})

    async def thumbnail(self, video_id: str, t: float = 0.0) -> FileResponse:
        """One frame of a video at ``t`` seconds, made once and kept in the cache."""
        from marlin_agent.media.probe import probe_video
        from marlin_agent.media.still import write_still

        _, record = await self._record(video_id)
        at = round(max(0.0, min(t, record.duration)), 1)
        target = self.tools.settings.cache_dir / "thumbnails" / f"{video_id}-{at:.1f}.jpg"
        if not target.is_file():
            info = await asyncio.to_thread(probe_video, text_path(record.path), self.tools.settings.cache_dir)
            await asyncio.to_thread(write_still, info, at, target)
        return FileResponse(target, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=86400"})


def web_router(tools: MarlinTools) -> APIRouter:
    """The pages and the media they load; left out of the OpenAPI document (they answer HTML)."""
    pages = Pages(tools)
    router = APIRouter(include_in_schema=False)
    router.add_api_route("/", pages.library, methods=["GET"])
    router.add_api_route("/videos/{video_id}", pages.video, methods=["GET"])
    router.add_api_route("/search", pages.search, methods=["GET"])

    async def ask(request: Request) -> RedirectResponse:
        return await pages.start(request, "ask")

    async def index(request: Request) -> RedirectResponse:
        return await pages.start(request, "index")

    router.add_api_route("/ask", ask, methods=["POST"])
    router.add_api_route("/index", index, methods=["POST"])
    router.add_api_route("/jobs", pages.jobs, methods=["GET"])
    router.add_api_route("/jobs/{job_id}", pages.job, methods=["GET"])
    router.add_api_route("/watch", pages.watch, methods=["GET"])
    router.add_api_route("/media/video/{video_id}", pages.video_file, methods=["GET"])
    router.add_api_route("/media/thumb/{video_id}", pages.thumbnail, methods=["GET"])
    return router


STATIC = Path(__file__).parent / "static"
