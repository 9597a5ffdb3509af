"""`marlin-agent engine ...`: install, start, stop and inspect local engines."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from marlin_agent.cli.options import CommandApp, JsonOpt
from marlin_agent.cli.output import emit_json, run_blocking, say
from marlin_agent.config import load_settings

engine_app = CommandApp(help="Local engines (vLLM, SGLang, MLX, CPU), each in its own environment under $MARLIN_HOME.",
                         no_args_is_help=True)

EngineArg = Annotated[Optional[str], typer.Argument(
    help="vllm, sglang, mlx or cpu (default: what setup chose, else what this machine suits).", show_default=False)]
RoleOpt = Annotated[str, typer.Option(
    "--role", help="marlin, or planner: a chat LLM for --planner served beside Marlin.")]


def _manager():
    from marlin_agent.engines import EngineManager

    return EngineManager(load_settings())


def _role(role: str) -> str:
    if role not in ("marlin", "planner"):
        raise typer.BadParameter("--role is marlin or planner")
    return role


@engine_app.command("install")
def install_command(engine: EngineArg = None, as_json: JsonOpt = False) -> None:
    """Install an engine into its own virtual environment (never into yours)."""
    manager = _manager()
    name = engine or manager.default_engine()
    venv = run_blocking(as_json, lambda: manager.install(name, say))
    if as_json:
        emit_json({"engine": name, "installed": True, "venv": str(venv)})
    else:
        Console().print(f"{name} installed in {venv}. Start it with: marlin-agent engine start {name}")


@engine_app.command("uninstall")
def uninstall_command(engine: Annotated[str, typer.Argument(
    metavar="ENGINE", help="vllm, sglang, mlx or cpu.", show_default=False)],
                      as_json: JsonOpt = False) -> None:
    """Stop an engine and delete its environment (several GB); downloaded weights stay in the Hugging Face cache."""
    manager = _manager()
    removed = run_blocking(as_json, lambda: manager.uninstall(engine))
    if as_json:
        emit_json({"engine": engine, "removed": removed})
    else:
        Console().print(f"{engine} removed from {manager.folder(engine)}" if removed else f"{engine} was not installed")


@engine_app.command("start")
def start_command(
    engine: EngineArg = None, role: RoleOpt = "marlin",
    model: Annotated[Optional[str], typer.Option(
        "--model", help="The planner model to serve (with --role planner).")] = None,
    port: Annotated[Optional[int], typer.Option(
        "--port", help="Port (default [engine] port, +1 for a planner).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Start an engine in the background and wait until it answers (the first start downloads the weights)."""
    manager = _manager()
    name = engine or manager.default_engine()
    state = run_blocking(as_json, lambda: manager.start(name, _role(role), model, port, progress=say))
    if as_json:
        emit_json(manager.status(name, state.role).model_dump(mode="json"))
    else:
        Console().print(f"{name} ({state.role}) serving {state.model} at {state.base_url} (pid {state.pid}); "
                        f"log: {state.log}")


@engine_app.command("stop")
def stop_command(engine: EngineArg = None, role: RoleOpt = "marlin", as_json: JsonOpt = False) -> None:
    """Stop a running engine."""
    manager = _manager()
    name = engine or manager.default_engine()
    stopped = run_blocking(as_json, lambda: manager.stop(name, _role(role)))
    if as_json:
        emit_json({"engine": name, "role": role, "stopped": stopped})
    else:
        Console().print(f"{name} ({role}) stopped" if stopped else f"{name} ({role}) was not running")


@engine_app.command("status")
def status_command(engine: EngineArg = None, as_json: JsonOpt = False) -> None:
    """Which engines are installed and running, where, and whether they answer."""
    from marlin_agent.engines import recipes

    manager = _manager()
    names = [engine] if engine else list(recipes())
    statuses = run_blocking(as_json, lambda: [manager.status(n, r) for n in names for r in ("marlin", "planner")
                                       if r == "marlin" or manager.state(n, r) is not None])
    if as_json:
        emit_json({"platform": manager.platform.model_dump(), "default": manager.default_engine(),
                    "engines": [s.model_dump(mode="json") for s in statuses]})
        return
    table = Table(title=f"Engines ({manager.platform.describe()}; default {manager.default_engine()})")
    for column in ("engine", "role", "installed", "running", "healthy", "url", "model"):
        table.add_column(column)
    for s in statuses:
        table.add_row(s.engine, s.role, "yes" if s.installed else "no", "yes" if s.running else "no",
                      "yes" if s.healthy else "no", s.base_url or "", s.model or "")
    Console().print(table)


@engine_app.command("logs")
def logs_command(
    engine: EngineArg = None, role: RoleOpt = "marlin",
    lines: Annotated[int, typer.Option("-n", "--lines", min=1, help="How many lines from the end.")] = 50,
    install: Annotated[bool, typer.Option("--install", help="The install log instead of the server log.")] = False,
) -> None:
    """The end of an engine's server (or install) log."""
    manager = _manager()
    name = engine or manager.default_engine()
    print(run_blocking(False, lambda: manager.logs(name, _role(role), lines, install)))
