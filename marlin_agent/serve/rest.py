"""The REST API: one route per capability of ``app.capabilities``, made from its declaration.

``POST /api/v1/<capability>`` takes the capability's parameters as a JSON object (the names the
Python API uses; footage confined to the roots as over MCP) and answers with the document the
CLI prints with ``--json``. Every call runs as a job: when it ends within ``?wait=`` seconds (by
default the MCP call bound; 0 for indexing and extraction) the answer is the document itself,
otherwise ``202`` with the job and its ``Location``. ``GET /api/v1/jobs/<id>/events`` follows a
job's progress as server-sent events. A new capability in the table is a new route here, with
its request schema in the OpenAPI document, and no route code.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import warnings
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from marlin_agent.app.capabilities import CAPABILITIES
from marlin_agent.app.capability import Capability
from marlin_agent.errors import InputError
from marlin_agent.mcp_server.calls import MarlinTools
from marlin_agent.mcp_server.confined import (
    confined_run,
    confined_value,
    footage_defaults_to_roots,
    remote_default,
    remote_type,
)
from marlin_agent.mcp_server.jobs import Job
from marlin_agent.serve.statuses import error_response, response_for
from marlin_agent.version import __version__
from marlin_agent.watch.records import WatchStatusList

API = "/api/v1"
# How often a job's event stream looks at the job, and how long it stays quiet before a keep-alive.
_EVENT_POLL_SECONDS = 0.25
_KEEP_ALIVE_SECONDS = 15.0


class ErrorBody(BaseModel):
    code: str
    message: str
    hint: str


class ErrorDocument(BaseModel):
    """Every failure, as the CLI's --json and MCP give it."""

    error: ErrorBody


class About(BaseModel):
    version: str
    roots: list[str]
    capabilities: list[str]


_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorDocument, "description": text} for status, text in (
        (400, "Bad input (the code says which)"), (401, "The token is missing or wrong"),
        (403, "A path outside the roots, or a request from another site's page"), (404, "No such video or job"),
        (409, "An output that is not this tool's, or busy"), (422, "The request does not match its schema"),
        (502, "A model server behind this one failed"), (503, "No model server configured, or the engine starting"),
        (504, "A model server timed out"))}


def request_model(capability: Capability) -> type[BaseModel]:
    """The JSON body of a capability's route: its parameters, typed and bounded as declared; unknown keys refused."""
    fields = {p.name: (remote_type(p), ... if p.required and not footage_defaults_to_roots(p) else remote_default(p))
              for p in capability.params()}
    name = "".join(part.title() for part in capability.name.split("_")) + "Request"
    with warnings.catch_warnings():  # extract's "schema" shadows a deprecated BaseModel method, unused here
        warnings.simplefilter("ignore", UserWarning)
        return create_model(name, __config__=ConfigDict(extra="forbid"),
                            __doc__=f"The parameters of {capability.name}.", **fields)


def _document_type(capability: Capability) -> type[BaseModel]:
    result = capability.result_type()
    return Described if result is str else result


def answered(tools: MarlinTools, job: Job) -> JSONResponse:
    """A job as an HTTP answer: its document when done, its error when failed, else 202 and where to look."""
    if job.state == "done":
        return JSONResponse(job.result)
    if job.state == "failed":
        failure = tools.jobs.failure(job.id)
        if failure is not None:
            return response_for(failure)
        error = job.error or {}
        return error_response(error.get("code", "internal_error"), error.get("message", ""), error.get("hint", ""),
                              status=500)
    return JSONResponse(job.model_dump(mode="json"), status_code=202, headers={"Location": f"{API}/jobs/{job.id}"})


async def start_call(tools: MarlinTools, capability: Capability, values: dict[str, Any]) -> Job:
    """Start ``capability`` as a job over a remote caller's ``values``: checked against its declaration, held to
    the roots, refused before any work when it cannot run (a bad value, no server)."""
    await tools.startup.ready()
    try:
        given = request_model(capability).model_validate(values).model_dump()
    except ValidationError as exc:
        raise InputError(_first_problem(exc)) from None
    run = confined_run(capability, tools.settings, tools.served, tools.guard)
    arguments = {p.name: confined_value(p, given[p.name], tools.guard, run) for p in capability.params()}
    arguments = capability.checked(arguments, run)
    if capability.wants_server(arguments):
        await run.served()  # a server that is not there is this request's error, not a failed job's

    def work(reporter):
        return capability.function(**arguments, run=dataclasses.replace(run, on_index=reporter,
                                                                        on_chunks=reporter.chunks))

    return tools.start(capability.name, work)


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"] if part != "body")
    return f"{where}: {error['msg']}" if where else error["msg"]


def _route(capability: Capability, tools: MarlinTools):
    """The endpoint of one capability, with a signature FastAPI reads its request schema from."""
    async def call(body: BaseModel, wait: float | None) -> JSONResponse:
        job = await start_call(tools, capability, body.model_dump())
        seconds = wait if wait is not None else (0.0 if capability.job else tools.settings.mcp.call_seconds)
        return answered(tools, await tools.jobs.wait(job.id, seconds))

    wait_param = inspect.Parameter("wait", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        float | None, Query(ge=0, description="Seconds to wait for the answer before getting the job instead (202). "
                                              "Default: the server's call bound; 0 for index and extract.")])
    call.__signature__ = inspect.Signature([
        inspect.Parameter("body", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=request_model(capability)),
        wait_param])
    call.__name__ = capability.name
    return call


def _job_routes(router: APIRouter, tools: MarlinTools) -> None:
    @router.get("/jobs", tags=["jobs"], response_model=list[Job], summary="Every job of this server, newest first")
    async def jobs() -> list[Job]:
        return tools.jobs.listed()

    @router.get("/jobs/{job_id}", tags=["jobs"], summary="A job: its state, progress, and when done its document",
                responses={200: {"model": Job}, 404: _ERRORS[404]})
    async def job(job_id: str, wait: Annotated[float, Query(ge=0, le=600, description=(
            "Seconds to wait for the job to end first."))] = 0.0) -> JSONResponse:
        tools.jobs.get(job_id)
        return JSONResponse((await tools.jobs.wait(job_id, wait)).model_dump(mode="json"))

    @router.delete("/jobs/{job_id}", tags=["jobs"], response_model=Job, summary="Stop a running job",
                   responses={404: _ERRORS[404]})
    async def cancel(job_id: str) -> Job:
        return await tools.jobs.cancel(job_id)

    @router.get("/jobs/{job_id}/events", tags=["jobs"], summary="A job's progress as server-sent events",
                description="`progress` events carry the job as it stands; the last event is `done` or `failed` "
                            "with the job (its result or error). Comments keep an idle stream open.",
                response_class=StreamingResponse, responses={200: {"content": {"text/event-stream": {}}},
                                                             404: _ERRORS[404]})
    async def events(job_id: str, request: Request) -> StreamingResponse:
        tools.jobs.get(job_id)
        return StreamingResponse(_job_events(tools, job_id, request), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def _job_events(tools: MarlinTools, job_id: str, request: Request) -> AsyncIterator[str]:
    last, quiet = None, 0.0
    while True:
        job = tools.jobs.get(job_id)
        shown = job.model_dump(mode="json", exclude={"seconds"})
        if shown != last:
            last, quiet = shown, 0.0
            kind = job.state if job.state != "running" else "progress"
            yield f"event: {kind}\ndata: {json.dumps(job.model_dump(mode='json'))}\n\n"
            if job.state != "running":
                return
        elif quiet >= _KEEP_ALIVE_SECONDS:
            quiet = 0.0
            yield ": still running\n\n"
        if await request.is_disconnected():
            return
        await asyncio.sleep(_EVENT_POLL_SECONDS)
        quiet += _EVENT_POLL_SECONDS


def api_router(tools: MarlinTools, capabilities: tuple[Capability, ...] = CAPABILITIES) -> APIRouter:
    """Every route of the REST API under ``/api/v1``."""
    router = APIRouter(prefix=API)
    for capability in capabilities:
        summary, _, _ = capability.description.partition("\n")
        router.add_api_route(
            f"/{capability.name}", _route(capability, tools), methods=["POST"], name=capability.name,
            operation_id=capability.name, summary=summary, description=capability.description, tags=["capabilities"],
            response_class=JSONResponse,
            # The document's schema is added when the OpenAPI document is made (``with_documents``): naming
            # the result types here would import every capability's work at start.
            responses={200: {"description": "The capability's document, as `--json` prints it"},
                       202: {"model": Job, "description": "Still running: the job to follow (Location)"},
                       **_ERRORS})
    _job_routes(router, tools)

    @router.get("/watch", tags=["watch"], response_model=WatchStatusList,
                summary="The standing questions over footage inside the roots, with their latest alerts")
    async def watch(recent: Annotated[int, Query(ge=0, le=100)] = 10) -> WatchStatusList:
        return WatchStatusList(watches=await tools.watch_statuses(recent))

    @router.get("/about", tags=["server"], response_model=About, summary="This server: version, roots, capabilities")
    async def about() -> About:
        return About(version=__version__, roots=[str(root) for root in tools.guard.roots],
                     capabilities=[capability.name for capability in capabilities])

    return router


def with_documents(spec: dict[str, Any], capabilities: tuple[Capability, ...]) -> dict[str, Any]:
    """The OpenAPI document with each capability's result schema as its 200 answer."""
    from pydantic.json_schema import models_json_schema

    types = {capability.name: _document_type(capability) for capability in capabilities}
    refs, definitions = models_json_schema([(kind, "serialization") for kind in dict.fromkeys(types.values())],
                                           ref_template="#/components/schemas/{model}")
    spec.setdefault("components", {}).setdefault("schemas", {}).update(definitions.get("$defs", {}))
    for name, kind in types.items():
        answer = spec["paths"][f"{API}/{name}"]["post"]["responses"]["200"]
        answer["content"] = {"application/json": {"schema": refs[(kind, "serialization")]}}
    return spec


class Described(BaseModel):
    """A plain-text result (``describe``), as the CLI's --json and a job give it."""

    result: str = Field(description="The text.")
