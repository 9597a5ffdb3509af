"""Flags shared by several commands, declared once, and the settings they build."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

from marlin_agent.config import FLAG_SETTINGS, Settings, load_settings


def _untyped_flags(params: list) -> list:
    # Typer labels every option with its type; an on/off flag takes no value, and "--json <bool>"
    # reads as if it wanted one. (Typer carries its own copy of click: its classes, not click's.)
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list:
        return _untyped_flags(super().get_params(ctx))

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        """With ``--json``, arguments that do not parse are a JSON error document too (exit 2), not usage text."""
        try:  # Typer 0.2x carries its own copy of click
            from typer._click.exceptions import UsageError
        except ImportError:  # pragma: no cover - older Typer, on click itself
            from click.exceptions import UsageError

        wants_json = "--json" in args
        try:
            return super().make_context(info_name, list(args), parent=parent, **extra)
        except UsageError as exc:
            if not wants_json:
                raise
            from marlin_agent.cli.output import emit_json

            command = " ".join(part for part in (parent.command_path if parent else "marlin-agent", info_name) if part)
            emit_json({"error": {"code": "bad_input", "message": exc.format_message(),
                                 "hint": f"See `{command} --help`."}})
            raise SystemExit(2) from exc


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list:
        return _untyped_flags(super().get_params(ctx))


class CommandApp(typer.Typer):
    """A Typer app whose help lists flags as flags: ``--json``, not ``--json <bool>``."""

    def __init__(self, **options: Any) -> None:
        super().__init__(cls=_Group, **options)

    def command(self, *args: Any, cls: type[TyperCommand] | None = None, **options: Any):
        return super().command(*args, cls=cls or _Command, **options)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout; logs go to stderr.")]
BaseUrlOpt = Annotated[Optional[str], typer.Option("--base-url", help="Marlin server API root (env MARLIN_BASE_URL).")]
ApiKeyOpt = Annotated[Optional[str], typer.Option("--api-key", help="API key for the server (env MARLIN_API_KEY).")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", help="Model name the server serves (env MARLIN_MODEL).")]
MediaOpt = Annotated[Optional[str], typer.Option(
    "--media", help="How clips reach the server: auto, file or base64 (env MARLIN_MEDIA).")]
ConcurrencyOpt = Annotated[Optional[int], typer.Option("--concurrency", help="Requests in flight at once.")]
TimeoutOpt = Annotated[Optional[float], typer.Option(
    "--timeout", help="Seconds a request may take (env MARLIN_TIMEOUT); default scales with the clip, 2 min per 60 s.")]
ChunkOpt = Annotated[Optional[float], typer.Option(
    "--chunk-seconds", help="Chunk length; Marlin reads ~60 s at a time.")]
StartOpt = Annotated[Optional[float], typer.Option("--start", help="Only look from this second on.")]
EndOpt = Annotated[Optional[float], typer.Option("--end", help="Only look up to this second.")]
VideoArg = Annotated[Path, typer.Argument(metavar="VIDEO", help="A video file.", show_default=False)]
DbOpt = Annotated[Optional[str], typer.Option("--db", help="The index database (default $MARLIN_HOME/index).")]
NoTranscribeOpt = Annotated[bool, typer.Option("--no-transcribe", help="Skip speech transcription this run.")]
ShardOpt = Annotated[Optional[str], typer.Option(
    "--shard", metavar="I/N", help="Do shard I of N (0-based) of this job: N processes, e.g. a scheduler's array, "
                                   "split the work without overlap. See docs/scale.md.")]
RayOpt = Annotated[Optional[str], typer.Option(
    "--ray", metavar="ADDRESS", help="Run as a Ray job, a shard per worker: local (a cluster on this machine for this "
                                     "run), auto (the running cluster), or an address such as ray://head:10001. "
                                     "Needs the ray extra.")]
WorkersOpt = Annotated[Optional[int], typer.Option(
    "--workers", min=1, help="With --ray: how many shards (default: the cluster's CPUs).")]
EndpointsOpt = Annotated[Optional[str], typer.Option(
    "--endpoints", metavar="URL,URL", help="With --ray: Marlin servers the workers share, comma-separated (shard i "
                                           "uses server i mod M; default the one server).")]


def ray_endpoints(ray: str | None, workers: int | None, endpoints: str | None,
                  shard: str | None = None) -> list[str] | None:
    """The servers a Ray job's workers share; --workers and --endpoints mean nothing without --ray,
    and a Ray job cuts its own shards."""
    if ray is None and (workers is not None or endpoints is not None):
        raise typer.BadParameter("--workers and --endpoints go with --ray")
    if ray is not None and shard is not None:
        raise typer.BadParameter("--ray makes its own shards, and takes no --shard")
    return [url.strip() for url in (endpoints or "").split(",") if url.strip()] or None


# The flags of every command that talks to Marlin: name -> (option, the setting it overrides, as
# config.FLAG_SETTINGS maps it for every front door).
_SERVER_FLAGS = {name: (option, FLAG_SETTINGS[name]) for name, option in (
    ("base_url", BaseUrlOpt), ("api_key", ApiKeyOpt), ("model", ModelOpt), ("media", MediaOpt),
    ("concurrency", ConcurrencyOpt), ("timeout", TimeoutOpt), ("chunk_seconds", ChunkOpt))}


@dataclass(frozen=True)
class ServerFlags:
    """The server flags one command was given (``None``: not given)."""

    values: dict[str, Any] = field(default_factory=dict)

    def settings(self, **more: Any) -> Settings:
        """The settings with these flags (and any dotted ``more``) laid over env, user file and defaults."""
        return load_settings({_SERVER_FLAGS[name][1]: value for name, value in self.values.items()} | more)


def takes_server_flags(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with the server flags added to its options; it receives them as ``server``.

    Declared here once instead of in every command's signature; Typer reads the combined
    signature, so `--help` lists them as before."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for name, p in signature.parameters.items() if name != "server"]
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=option)
             for name, (option, _) in _SERVER_FLAGS.items()]

    @functools.wraps(command)
    def with_server_flags(*args: Any, **kwargs: Any) -> None:
        server = ServerFlags({name: kwargs.pop(name, None) for name in _SERVER_FLAGS})
        return command(*args, server=server, **kwargs)

    with_server_flags.__signature__ = signature.replace(parameters=own + added)
    return with_server_flags


async def served(settings: Settings, say) -> Settings:
    """``settings`` with a server: as configured, else the local engine, started if need be."""
    from marlin_agent.engines import ensure_server

    return await asyncio.to_thread(ensure_server, settings, say)
