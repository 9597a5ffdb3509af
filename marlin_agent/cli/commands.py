"""The commands built from the capability table (``app.capabilities``).

Each capability becomes a command: its required text and its video are arguments, the rest are
options named after the parameters (``--max-chars``; a yes that is on by default is turned off by
``--no-speech``), footage is ``--in SOURCE`` (repeatable), help comes from the declaration. Every
command over the library takes ``--db``; one that indexes takes ``--no-transcribe``; all take
``--json`` and the server flags. What is the command line's own is an extension: a function whose
options join the command and which may change what runs (``index --finalize``, ``extract --ray``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, get_origin

import typer
from rich.console import Console
from rich.markup import escape

from marlin_agent.app.capability import Capability, Param, Role, Run, bounds, optional_of
from marlin_agent.cli.options import DbOpt, JsonOpt, NoTranscribeOpt, ServerFlags, served, takes_server_flags
from marlin_agent.cli.output import chunk_progress, emit_json, fail, flag, index_progress, run, say
from marlin_agent.errors import MarlinAgentError


@dataclass(frozen=True)
class Spelling:
    """How the command line writes one parameter, where the rule above does not say it."""

    flags: tuple[str, ...] | None = None  # an option's names; () an argument; None: as the rule says
    metavar: str | None = None
    required: bool | None = None  # an argument the command may go without (index --finalize)
    help: str | None = None  # where the declaration's words do not fit the flag (an inverted one)
    # The command's extension takes it with options of its own (``index --recaption --failed-only``) and sets it.
    by_extension: bool = False


@dataclass
class Invocation:
    """One command line about to run: what an extension may read and change."""

    capability: Capability
    arguments: dict[str, Any]  # the capability's parameters, and options only the command line has
    values: dict[str, Any] = field(default_factory=dict)  # dotted settings the flags give
    # Instead of the capability's own function: called with the run and the checked arguments.
    work: Callable[[Run, dict[str, Any]], Awaitable[Any]] | None = None
    needs_server: bool | None = None  # None: as the capability says
    progress: Literal["index", "chunks"] | None = None  # None: index when it takes footage
    show: Callable[[Console, Any], None] | None = None
    exit_code: Callable[[Any], int] | None = None


def _cli_type(param: Param, default: Any) -> Any:
    """The parameter's type as Typer reads it: a schema given inline is a file name or "marlin" here."""
    inner = str if param.role is Role.SCHEMA else optional_of(param.annotation)
    return Optional[inner] if default is None else inner  # noqa: UP045 - Typer reads Optional


def _help(param: Param, option: bool, spelling: Spelling | None = None) -> str:
    if spelling and spelling.help:
        return escape(spelling.help)
    repeatable = option and get_origin(optional_of(param.annotation)) is list
    # Typer reads help as rich markup: a setting named "[planner] model" must keep its brackets.
    return escape(param.description + (" Repeatable." if repeatable else ""))


def _declaration(param: Param, spelling: Spelling | None) -> tuple[str, Any, Any]:
    """(name, annotation, default) of the command's parameter for ``param``."""
    default = None if spelling and spelling.required is False else param.default
    if param.annotation is bool and param.default is True:  # on by default: the option turns it off
        off = typer.Option(flag(f"no_{param.name}"), help=_help(param, True, spelling))
        return f"no_{param.name}", Annotated[bool, off], False
    spelled = spelling if spelling and spelling.flags is not None else None
    argument = not spelled.flags if spelled else (param.required and param.role in (None, Role.VIDEO)
                                                  and param.annotation in (str, Path))
    metavar = spelling.metavar if spelling else None
    if argument:
        info = typer.Argument(metavar=metavar or param.name.upper(), help=_help(param, False, spelling),
                              show_default=False)
    else:
        flags = spelled.flags if spelled else ("--in",) if param.role is Role.SOURCES else (flag(param.name),)
        limits = bounds(param.field)
        info = typer.Option(*flags, metavar=metavar or ("SOURCE" if param.role is Role.SOURCES else None),
                            min=limits.get("ge"), max=limits.get("le"), help=_help(param, True, spelling))
    return param.name, Annotated[_cli_type(param, default), info], default


def _given(params: list[Param], values: dict[str, Any], spellings: dict[str, Spelling]) -> dict[str, Any]:
    """The capability's arguments from the command's values (an inverted flag turned back; one the extension takes
    at its default until the extension sets it)."""
    found = {}
    for param in params:
        if param.name in spellings and spellings[param.name].by_extension:
            found[param.name] = param.default
        elif param.annotation is bool and param.default is True:
            found[param.name] = not values.pop(f"no_{param.name}")
        else:
            found[param.name] = values.pop(param.name)
    return found


def _indexes(capability: Capability) -> bool:
    """Whether the capability indexes footage first (it takes sources, or writes the index): it transcribes, and its
    progress is an indexing run's."""
    return any(p.role is Role.SOURCES for p in capability.params()) or capability.writes == "index"


def _common(capability: Capability) -> list[inspect.Parameter]:
    keyword = inspect.Parameter.KEYWORD_ONLY
    common = []
    if capability.library:
        common.append(inspect.Parameter("db", keyword, annotation=DbOpt, default=None))
    if _indexes(capability):
        common.append(inspect.Parameter("no_transcribe", keyword, annotation=NoTranscribeOpt, default=False))
    common.append(inspect.Parameter("as_json", keyword, annotation=JsonOpt, default=False))
    common.append(inspect.Parameter("server", keyword, annotation=ServerFlags))
    return common


def command(capability: Capability, show: Callable[[Console, Any], None] | None = None,
            spellings: dict[str, Spelling] | None = None, extension: Callable[..., None] | None = None):
    """The command for ``capability``: rendered by ``show`` (JSON when there is none), ``spellings`` by parameter
    name, and ``extension`` called with the ``Invocation`` and its own options before anything runs."""
    params, spellings = capability.params(), spellings or {}
    declared = [_declaration(p, spellings.get(p.name)) for p in params
                if not (p.name in spellings and spellings[p.name].by_extension)]
    own = list(inspect.signature(extension, eval_str=True).parameters.values())[1:] if extension else []
    signature = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation,
                                   default=default) for name, annotation, default in declared]
    common = {p.name: p for p in _common(capability)}
    signature = _ordered(signature) + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] \
        + list(common.values())

    def body(**values: Any) -> None:
        as_json, server = values.pop("as_json"), values.pop("server")
        call = Invocation(capability, _given(params, values, spellings))
        if "db" in common:
            call.values["library.db"] = values.pop("db")
        if "no_transcribe" in common:
            call.values["library.transcribe"] = False if values.pop("no_transcribe") else None
        if extension:
            try:
                extension(call, **values)
            except MarlinAgentError as exc:  # (a shard that does not exist): reported as any input error
                fail(exc, as_json)
        _run(call, server, as_json, show)

    body.__name__ = capability.name
    body.__doc__ = escape(capability.description)
    body.__signature__ = inspect.Signature(signature)
    return takes_server_flags(body)


def _ordered(parameters: list[inspect.Parameter]) -> list[inspect.Parameter]:
    """Arguments first, in their order, then the options (Python wants the parameters without defaults first)."""
    required = [p for p in parameters if p.default is inspect.Parameter.empty]
    return required + [p for p in parameters if p.default is not inspect.Parameter.empty]


def _run(call: Invocation, server: ServerFlags, as_json: bool, show) -> None:
    capability = call.capability

    async def work():
        settings = server.settings(**call.values)
        capability.load_ahead(settings)
        context = Run(settings, serve=lambda: served(settings, say), say=say)
        arguments = capability.checked(call.arguments, context)
        wants = call.needs_server if call.needs_server is not None else capability.wants_server(arguments)
        if wants:
            await context.served()

        async def go():
            return await (call.work(context, arguments) if call.work
                          else capability.function(**arguments, run=context))

        if (call.progress or ("index" if _indexes(capability) else "chunks")) == "index":
            with index_progress(not as_json) as context.on_index:
                return await go()
        with chunk_progress(capability.doing, not as_json) as context.on_chunks:
            return await go()

    result = run(as_json, work)
    _print(result, as_json, call.show or show)
    code = call.exit_code(result) if call.exit_code else 0
    if code:
        raise typer.Exit(code)


def _print(result: Any, as_json: bool, show) -> None:
    document = result.model_dump(mode="json") if hasattr(result, "model_dump") else {"result": result}
    if as_json:
        emit_json(document)
    elif show is not None:
        show(Console(), result)
    elif isinstance(result, str):
        print(result)
    else:
        Console().print_json(data=document)


