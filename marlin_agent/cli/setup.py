"""`marlin-agent setup` and `marlin-agent doctor`: get to a working server, and check it stays so."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from marlin_agent.cli.options import JsonOpt
from marlin_agent.cli.output import emit_json, fail, secrets_of, stderr
from marlin_agent.config import load_settings
from marlin_agent.errors import InputError, MarlinAgentError
from marlin_agent.redaction import redact

_MARKS = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]", "skip": "[dim]skip[/]"}


def _ask_interactively(manager) -> tuple[str, dict]:
    console = Console(stderr=True)
    console.print(f"This machine: {manager.platform.describe()}.")
    choice = typer.prompt("Run Marlin on [1] a hosted endpoint, or [2] a local engine here?", default="2" if
                          manager.platform.nvidia or manager.platform.apple_silicon else "1", err=True)
    if choice.strip() == "1":
        base_url = typer.prompt("Base URL (the API root, e.g. https://host/v1)", err=True)
        api_key = typer.prompt("API key (hidden; empty for none)", default="", hide_input=True, show_default=False,
                               err=True)
        return "hosted", {"base_url": base_url, "api_key": api_key or None}
    engine = typer.prompt("Engine (vllm, sglang, mlx, cpu)", default=manager.default_engine(), err=True)
    if engine == "cpu":
        console.print("The CPU engine runs the model card's transformers code: minutes per minute of footage.")
    typer.confirm(f"Install {engine} into {manager.venv(engine)} (several GB) and start it?", default=True,
                  abort=True, err=True)
    return "local", {"engine": engine}


def setup_command(
    hosted: Annotated[bool, typer.Option("--hosted", help="Use a hosted OpenAI-compatible endpoint.")] = False,
    local: Annotated[Optional[str], typer.Option(
        "--local", help="Install and run a local engine: vllm, sglang, mlx, cpu, or auto (what this machine "
        "suits).")] = None,
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="The hosted endpoint's API root.")] = None,
    api_key: Annotated[Optional[str], typer.Option(
        "--api-key", help='Its API key ("-" reads it from stdin, out of the process list; default env '
        'MARLIN_API_KEY).')] = None,
    model: Annotated[Optional[str], typer.Option("--model", help="The model name the endpoint serves.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask anything (for agents and scripts).")] = False,
    skip_check: Annotated[bool, typer.Option(
        "--skip-check", help="Store the choice without one test request.")] = False,
    planner: Annotated[Optional[str], typer.Option(
        "--planner", help="With --local: a small chat LLM the engine serves beside Marlin as the planner and "
        "verification's judge, e.g. Qwen/Qwen2.5-3B-Instruct (the CPU engine serves one too); "
        "none removes one.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Choose where Marlin runs (hosted or a local engine), test one request, store the choice."""
    from marlin_agent.engines import EngineManager
    from marlin_agent.setup.flow import setup_hosted, setup_local

    if api_key == "-":
        api_key = sys.stdin.readline().strip()
    api_key = api_key or os.environ.get("MARLIN_API_KEY") or None
    secrets = secrets_of(None, api_key)
    # Progress goes to stderr in every mode; stdout keeps to the one JSON document.
    say = lambda message: stderr.print(f"[dim]{escape(redact(message, secrets))}[/]", highlight=False)  # noqa: E731
    try:
        settings = load_settings()
        secrets += secrets_of(settings)
        manager = EngineManager(settings)
        mode, values = _choice(manager, hosted, local, planner, base_url, api_key, yes)
        secrets += secrets_of(None, values.get("api_key"))
        if mode == "hosted":
            result = setup_hosted(settings, values["base_url"], values["api_key"], model, skip_check, say)
        else:
            result = setup_local(settings, values["engine"], skip_check, say, planner)
        from marlin_agent.setup.flow import shadowed, still_missing

        now = load_settings()
        result.warnings = shadowed(result, now)
        result.missing = still_missing(now)
    except MarlinAgentError as exc:
        fail(exc, as_json, secrets)
    except typer.Abort:
        stderr.print("nothing changed")
        raise typer.Exit(1) from None
    if as_json:
        emit_json(result.model_dump(mode="json"), secrets)
        return
    _show(result)


def _choice(manager, hosted: bool, local: str | None, planner: str | None, base_url: str | None,
            api_key: str | None, yes: bool) -> tuple[str, dict]:
    """Hosted or local, from the flags, or asked when a person is at the terminal."""
    if hosted and local:
        raise InputError("choose one: --hosted or --local")
    if planner and not local:
        raise InputError("--planner goes with --local (a hosted planner is set with [planner] model and "
                         "MARLIN_PLANNER_BASE_URL)")
    if hosted:
        if not base_url:
            raise InputError("--hosted needs --base-url", hint="e.g. --base-url https://host/v1 --api-key KEY")
        return "hosted", {"base_url": base_url, "api_key": api_key}
    if local:
        return "local", {"engine": None if local == "auto" else local}
    if not yes and sys.stdin.isatty():
        return _ask_interactively(manager)
    raise InputError("setup needs a choice when it cannot ask",
                     hint="marlin-agent setup --hosted --base-url URL --api-key KEY --yes, "
                     "or marlin-agent setup --local auto --yes")


def _show(result) -> None:
    where = f"the {result.engine} engine at {result.base_url}" if result.mode == "local" else result.base_url
    Console().print(f"Marlin: {result.model} via {where}.")
    if result.check:
        Console().print(f"Test request: a 4 s video captioned in {result.check.seconds:.1f} s.")
    if result.planner:
        Console().print(f"Planner and judge: {result.planner} at {result.planner_base_url}"
                        + (f" (a test verdict in {result.planner_check.seconds:.1f} s)." if result.planner_check
                           else "."), markup=False)
    Console().print(f"Stored in {result.config}" + (f"; the key in {result.credentials} (user-only)."
                                                    if result.api_key_stored else "."))
    for setting, folder in result.recorded_models.items():
        Console().print(f"  {setting} = {folder} (from the environment, so every front door loads the same model)")
    for warning in result.warnings:
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    if result.missing:  # a first question would fail on these: said before any "next"
        Console().print("Not ready yet; `marlin-agent doctor` still finds:")
        for check in result.missing:
            Console().print(f"  {check.name}: {check.detail}" + (f" — fix: {check.fix}" if check.fix else ""),
                            markup=False)
        Console().print("Then: marlin-agent ask \"when does …\" --in ./footage")
        return
    Console().print("Next: marlin-agent ask \"when does …\" --in ./footage")


def doctor_command(
    no_start: Annotated[bool, typer.Option(
        "--no-start", help="Do not start an installed local engine to test it.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check what a run needs and say how to fix each failure.

    Python, media codecs, configuration, engine, server, model access, disk and index."""
    from marlin_agent.setup.doctor import run_doctor

    config_error = None
    try:
        settings = load_settings()
    except MarlinAgentError as exc:
        settings, config_error = None, exc
    report = run_doctor(settings, config_error, start_engine=not no_start)
    secrets = secrets_of(settings, os.environ.get("MARLIN_API_KEY"), os.environ.get("MARLIN_PLANNER_API_KEY"))
    if as_json:
        emit_json(report.model_dump(mode="json"), secrets)
    else:
        table = Table(title="marlin-agent doctor")
        for column in ("check", "status", "detail", "fix"):
            table.add_column(column, overflow="fold")
        for check in report.checks:
            table.add_row(check.name, _MARKS[check.status], redact(check.detail, secrets),
                          redact(check.fix or "", secrets))
        Console().print(table)
    raise typer.Exit(0 if report.ok else 1)
