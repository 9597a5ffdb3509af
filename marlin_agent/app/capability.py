"""What a capability is, and what a front door hands one when it runs.

A capability is an async function. Its parameters before the ``*`` are the caller's: typed,
described with ``Field`` (constraints included) and, when they name footage or files, marked
with a ``Role`` so that each front door knows how to take them (MCP confines them to its roots,
the Python API accepts ``Path`` or ``str``). After the ``*`` come ``run`` (the ``Run`` below)
and any options only some front door offers (the CLI's ``--html`` page, the API's model
objects). Its docstring is what every front door shows; its result is a pydantic document.

The table of capabilities is ``app.capabilities``; the CLI, the MCP server and ``VideoAgent``
are built from it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

from pydantic.fields import FieldInfo

from marlin_agent.app.warm import load_ahead
from marlin_agent.config import Settings
from marlin_agent.domain import ChunkProgress, Say


class Role(Enum):
    """What a parameter names, so a front door can take it its own way."""

    SOURCES = "sources"  # files, folders (recursive) or URLs, read and indexed
    VIDEO = "video"  # one video file, read
    SCHEMA = "schema"  # a JSON Schema given inline, or a file that holds one
    OUTPUT = "output"  # a file the capability writes
    OUTPUT_FOLDER = "output_folder"  # a folder the capability writes files into


@dataclass
class Run:
    """What a front door hands a capability: the settings, how to reach a server, progress and the
    caller's confinement. The CLI and the API confine nothing; the MCP server confines its callers
    to its roots."""

    settings: Settings
    serve: Callable[[], Awaitable[Settings]]  # the settings with a server (a local engine started if need be)
    on_index: Callable[[Any], None] | None = None  # an indexing run's progress (indexing.reports.IndexProgress)
    on_chunks: ChunkProgress | None = None  # one video's chunks, as caption and find go
    say: Say | None = None  # a line for the person waiting (not for a JSON document)
    visible: Callable[[str, str], bool] | None = None  # (path, url) -> may the caller see it? None: all
    roots: list[str] | None = None  # the folders a confined caller is held to
    output_for: Callable[[str, str], Path] = lambda stem, suffix: Path(f"{stem}{suffix}")
    _served: Settings | None = field(default=None, repr=False)

    @property
    def confined(self) -> bool:
        return self.visible is not None

    async def served(self) -> Settings:
        """The settings with a server, reached once per run."""
        if self._served is None:
            self._served = await self.serve()
            self.settings = self._served
        return self._served


@dataclass(frozen=True)
class Param:
    """One of a capability's parameters, as every front door reads it."""

    name: str
    annotation: Any  # the type without its Annotated metadata
    default: Any  # inspect.Parameter.empty when required
    description: str
    role: Role | None
    field: FieldInfo

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty

    def declared(self) -> Any:
        """The type as the capability declares it, metadata included (for a front door's own signature)."""
        metadata = [m for m in (self.role, self.field) if m is not None]
        return self.annotation if not metadata else Annotated[(self.annotation, *metadata)]


@dataclass(frozen=True)
class Capability:
    """One thing the agent can do, declared once.

    ``result`` names the result model as ``module:Name`` (imported only when a front door needs the
    type: the CLI's start must not load what the work needs). ``writes``: ``None`` (reads only),
    ``"index"`` (adds to the local index, never deletes) or ``"files"`` (writes a file the caller
    may name). ``fetches``: may reach out to URLs. ``needs_server``: whether a server must be up
    before the work starts (a function of the arguments when it depends on them). ``check`` takes
    the arguments (surface options included) and the run, refuses bad input before any work or job
    starts, and returns the arguments the function is then called with. ``doing`` labels progress.
    ``loads``: the local models the work reads (``app.warm``'s names), loaded beside a call's start."""

    function: Callable[..., Awaitable[Any]]
    result: str
    doing: str
    writes: str | None = None
    fetches: bool = False
    library: bool = True
    job: bool = False
    needs_server: bool | Callable[[dict[str, Any]], bool] = True
    check: Callable[[dict[str, Any], Run], dict[str, Any]] | None = None
    loads: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.function.__name__

    @property
    def description(self) -> str:
        """The docstring, each paragraph on one line (front doors wrap it to their own width)."""
        paragraphs = inspect.cleandoc(self.function.__doc__ or "").split("\n\n")
        return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)

    def result_type(self) -> type:
        module, name = self.result.split(":")
        return getattr(importlib.import_module(module), name)

    def params(self) -> list[Param]:
        """The caller's parameters, in order."""
        found = []
        for parameter in inspect.signature(self.function).parameters.values():
            if parameter.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
                continue
            annotation, role, info = _unwrap(self._evaluated(parameter.annotation))
            found.append(Param(parameter.name, annotation, parameter.default, info.description or "", role, info))
        return found

    def _evaluated(self, annotation: Any) -> Any:
        """A parameter's annotation as an object, also from a module that postpones annotations (the result's
        is left as written: it names a type that is not imported)."""
        return eval(annotation, self.function.__globals__) if isinstance(annotation, str) else annotation  # noqa: S307

    def surface_options(self) -> list[inspect.Parameter]:
        """The keyword-only options some front door offers (``run`` left out)."""
        return [p.replace(annotation=self._evaluated(p.annotation))
                for p in inspect.signature(self.function).parameters.values()
                if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "run"]

    def wants_server(self, arguments: dict[str, Any]) -> bool:
        return self.needs_server(arguments) if callable(self.needs_server) else self.needs_server

    def checked(self, arguments: dict[str, Any], run: Run) -> dict[str, Any]:
        return self.check(arguments, run) if self.check else arguments

    def load_ahead(self, settings: Settings) -> None:
        """Start loading the models the work will read, so that they load while the work's modules import."""
        if self.loads:
            load_ahead(settings, self.loads)

    async def __call__(self, arguments: dict[str, Any], run: Run) -> Any:
        """Check the arguments, reach a server if the work needs one first, and do the work."""
        self.load_ahead(run.settings)
        arguments = self.checked(arguments, run)
        if self.wants_server(arguments):
            await run.served()
        return await self.function(**arguments, run=run)


def _unwrap(annotation: Any) -> tuple[Any, Role | None, FieldInfo]:
    """``Annotated[T, Role, Field(...)]`` → (T, the role, the field)."""
    role, info = None, FieldInfo()
    if get_origin(annotation) is not None and hasattr(annotation, "__metadata__"):
        for meta in annotation.__metadata__:
            if isinstance(meta, Role):
                role = meta
            elif isinstance(meta, FieldInfo):
                info = meta
        annotation = get_args(annotation)[0]
    return annotation, role, info


def optional_of(annotation: Any) -> Any:
    """``T`` for ``T | None``; the annotation itself otherwise."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    return args[0] if len(args) == 1 and type(None) in get_args(annotation) else annotation


def bounds(info: FieldInfo) -> dict[str, Any]:
    """A field's numeric bounds (``ge``/``le``/``gt``/``lt``) by name."""
    found = {}
    for meta in info.metadata:
        for name in ("ge", "le", "gt", "lt"):
            value = getattr(meta, name, None)
            if value is not None:
                found[name] = value
    return found
