"""A capability called by a remote caller: its run and each of its values held to the roots.

MCP and the REST API of ``serve`` take a capability's values from a caller on the other side of a
protocol, so both confine them the same way, by what each parameter names (its ``Role``): footage
and files must lie inside the roots; an output folder is one made under ``$MARLIN_HOME`` (the
caller only says yes); footage left out means every root. Refusals are ``MarlinAgentError``\\s,
which each front door reports in its own form.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from marlin_agent.app.capability import Capability, Param, Role, Run, optional_of
from marlin_agent.config import Settings
from marlin_agent.mcp_server.roots import PathGuard


def confined_run(capability: Capability, settings: Settings, serve: Callable[[], Awaitable[Settings]],
                 guard: PathGuard) -> Run:
    """The run of one remote call: what it may see is what lies inside the roots; a file it does not name
    goes under ``$MARLIN_HOME/<capability>s``."""
    def output_for(stem: str, suffix: str) -> Path:
        return settings.home / f"{capability.name}s" / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}{suffix}"

    return Run(settings, serve=serve, visible=guard.visible, roots=[str(root) for root in guard.roots],
               output_for=output_for)


def footage_defaults_to_roots(param: Param) -> bool:
    """Required footage is optional for a remote caller: the roots are what there is to look at."""
    return param.role is Role.SOURCES and param.required


def remote_type(param: Param) -> Any:
    """The parameter's type as a remote caller gives it: paths as strings (JSON Schema has no path format), an
    output folder as a yes or no, required footage as optional."""
    if param.role is Role.OUTPUT_FOLDER:
        return Annotated[bool, Field(description=f"{param.description} (a new folder under $MARLIN_HOME/{param.name}; "
                                                 "the result holds each file's absolute path)")]
    if footage_defaults_to_roots(param):
        return Annotated[param.annotation | None, Field(description=f"{param.field.description} Default: every "
                                                                    "root of this server.")]
    annotation = param.annotation
    if optional_of(annotation) is Path:
        annotation = str if annotation is Path else str | None
    return Annotated[annotation, param.field]


def remote_default(param: Param) -> Any:
    if param.role is Role.OUTPUT_FOLDER:
        return False
    return None if footage_defaults_to_roots(param) else param.default


def confined_value(param: Param, value: Any, guard: PathGuard, run: Run) -> Any:
    """A caller's value, held to the roots by what it names (``PathNotAllowed`` when it leads outside)."""
    if footage_defaults_to_roots(param) and value is None:
        return [str(root) for root in guard.roots]
    if value is None:
        return None
    if param.role is Role.SOURCES:
        return guard.sources(value)
    if param.role in (Role.VIDEO, Role.OUTPUT):
        return guard.path(value)
    if param.role is Role.SCHEMA and isinstance(value, str) and value != "marlin":
        return str(guard.path(value))
    if param.role is Role.OUTPUT_FOLDER:
        return run.settings.home / param.name / time.strftime("%Y%m%d-%H%M%S") if value else None
    return value
