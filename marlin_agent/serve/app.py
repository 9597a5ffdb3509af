"""One ASGI app: the REST API, MCP over streamable HTTP at ``/mcp``, and the web app, over one shared state.

The three share the roots, the jobs and the engine start of ``mcp_server.remote_tools``: a job
started from a page can be followed over REST, and an MCP client sees the same footage. Access
(``serve.access``) is checked before any of them. The MCP SDK is loaded when the first MCP request
comes, so the pages and the API answer sooner after start.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from marlin_agent.app.capabilities import CAPABILITIES
from marlin_agent.app.capability import Capability
from marlin_agent.config import Settings
from marlin_agent.errors import MarlinAgentError
from marlin_agent.mcp_server import build_server, remote_tools
from marlin_agent.mcp_server.startup import BEGIN_AFTER_SECONDS
from marlin_agent.redaction import redact
from marlin_agent.serve.access import Access, AccessMiddleware
from marlin_agent.serve.rest import API, api_router, with_documents
from marlin_agent.serve.statuses import error_response, response_for, status_of
from marlin_agent.serve.web import STATIC, error_page, render, web_router
from marlin_agent.version import __version__

# What answers JSON (an error included); the rest of the site answers pages.
_MACHINE_PATHS = (API, "/mcp")


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith(_MACHINE_PATHS) or request.url.path.startswith("/media/")


class LazyMcp:
    """``/mcp``: the stdio server's tools over streamable HTTP, built (and its session manager started in the
    app's task group) when the first MCP request comes."""

    def __init__(self, tools, verbose: bool) -> None:
        self.tools, self.verbose = tools, verbose
        self.group: anyio.abc.TaskGroup | None = None
        self._app = None
        self._lock = asyncio.Lock()

    def _build(self):
        from mcp.server.transport_security import TransportSecuritySettings

        # The app checks hosts and origins itself (serve.access), for every route alike.
        unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        return build_server(self.tools.settings, verbose=self.verbose, tools=self.tools).streamable_http_app(
            streamable_http_path="/mcp", transport_security=unchecked)

    async def _keep(self, app, *, task_status=anyio.TASK_STATUS_IGNORED) -> None:
        async with app.router.lifespan_context(app):
            task_status.started()
            await anyio.sleep_forever()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with self._lock:
            if self._app is None:
                app = await asyncio.to_thread(self._build)
                await self.group.start(self._keep, app)
                self._app = app
        await self._app(scope, receive, send)


def _answer_failures(app: FastAPI) -> None:
    """Every failure as the error document (JSON for the API, media and MCP; a page for the pages)."""
    @app.exception_handler(MarlinAgentError)
    async def failed(request: Request, exc: MarlinAgentError):
        return response_for(exc) if _wants_json(request) else error_page(exc, status_of(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        problem = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(part) for part in problem["loc"][1:])  # the first names where: body, query, path
        return error_response("bad_input", f"{where}: {problem['msg']}" if where else problem["msg"],
                              "The OpenAPI document at /api/v1/openapi.json describes every request.", status=422)

    @app.exception_handler(StarletteHTTPException)
    async def unrouted(request: Request, exc: StarletteHTTPException):
        """No such route (404), a method it does not take (405): the same error document as every failure."""
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        error = {"code": code, "message": f"{request.method} {request.url.path}: {exc.detail}",
                 "hint": "The OpenAPI document at /api/v1/openapi.json lists every route."}
        if _wants_json(request):
            return error_response(**error, status=exc.status_code, headers=getattr(exc, "headers", None))
        return render("error.html", exc.status_code, error=error)

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception):
        logging.getLogger("marlin_agent.serve").error("%s %s failed: %s", request.method, request.url.path,
                                                      redact(repr(exc)))
        return error_response("internal_error", "the server failed on this request",
                              "Run `marlin-agent serve -v` to see why in its log.", status=500)


def build_app(settings: Settings, roots: list[str | Path] | None = None, token: str | None = None,
              capabilities: tuple[Capability, ...] = CAPABILITIES, verbose: bool = False) -> FastAPI:
    """The app over ``settings``; ``roots`` bound the footage (else ``[mcp] roots``, else the cwd); ``token``
    None answers loopback callers only, else every request must carry it."""
    tools = remote_tools(settings, roots)
    mcp = LazyMcp(tools, verbose)

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        tools.startup.begin(delay=BEGIN_AFTER_SECONDS)
        async with anyio.create_task_group() as group:
            mcp.group = group
            yield
            group.cancel_scope.cancel()
        await tools.jobs.close()

    app = FastAPI(title="marlin-agent", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=f"{API}/openapi.json",
                  description="Ask questions of footage with Marlin-2B: verified moments or an honest \"not found\". "
                              "The same capabilities as the CLI, MCP and the Python API.")
    app.state.tools = tools
    app.include_router(api_router(tools, capabilities))
    made = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            app.openapi_schema = with_documents(made(), capabilities)
        return app.openapi_schema

    app.openapi = openapi
    app.include_router(web_router(tools))
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.router.routes.append(Route("/mcp", endpoint=mcp))

    _answer_failures(app)
    app.add_middleware(AccessMiddleware, access=Access(token))
    return app
