"""Errors over HTTP: the CLI's and MCP's JSON error document, with the status that fits its cause.

The document is the one every front door uses, ``{"error": {"code", "message", "hint"}}``;
the status tells an HTTP client what kind of failure it is without reading the code: the
caller's input (400, 404, 403, 409), a server behind this one (502, 503, 504), the machine
(507), or this program (500).
"""

from __future__ import annotations

from fastapi.responses import JSONResponse

from marlin_agent import errors
from marlin_agent.errors import MarlinAgentError
from marlin_agent.redaction import redact

# Codes defined beside the modules that raise them, where a class check cannot reach.
_BY_CODE = {
    "video_not_found": 404, "unknown_video": 404, "unknown_job": 404, "no_videos_found": 404,
    "path_not_allowed": 403,
    "output_exists": 409, "output_busy": 409, "index_busy": 409,
    "engine_starting": 503,
    "server_timeout": 504, "engine_timeout": 504, "time_limit": 504,
    "disk_full": 507,
}
# The first class an error is an instance of decides, in this order.
_BY_CLASS: tuple[tuple[type[MarlinAgentError], int], ...] = (
    (errors.ServerNotConfigured, 503), (errors.PlannerNotConfigured, 503), (errors.MissingDependency, 503),
    (errors.ModelUnavailable, 503), (errors.DbUnavailable, 503),
    (errors.InputError, 400), (errors.ConfigError, 400), (errors.IndexMismatch, 409), (errors.DbReadOnly, 409),
    (errors.ServerError, 502), (errors.PlannerError, 502), (errors.EngineError, 502), (errors.ChunkFailed, 502),
)


def status_of(error: MarlinAgentError) -> int:
    if error.code in _BY_CODE:
        return _BY_CODE[error.code]
    return next((status for kind, status in _BY_CLASS if isinstance(error, kind)), 500)


def error_response(code: str, message: str, hint: str = "", status: int = 400,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    document = {"error": {"code": code, "message": redact(message), "hint": redact(hint)}}
    return JSONResponse(document, status_code=status, headers=headers)


def response_for(error: MarlinAgentError) -> JSONResponse:
    status = status_of(error)
    headers = {"Retry-After": "30"} if status == 503 and error.code == "engine_starting" else None
    return JSONResponse({"error": error.to_dict()}, status_code=status, headers=headers)
