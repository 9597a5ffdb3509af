"""`marlin-agent models ...`: the small models marlin-agent runs itself, fetched ahead of time."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from marlin_agent.cli.options import CommandApp, JsonOpt, NoTranscribeOpt
from marlin_agent.cli.output import chunk_progress, emit_json, run_blocking
from marlin_agent.config import load_settings

models_app = CommandApp(help="The embedding, verification and speech models: fetched once into the cache.",
                        no_args_is_help=True)


@models_app.command("pull")
def pull_command(no_transcribe: NoTranscribeOpt = False, as_json: JsonOpt = False,
                 quiet: Annotated[bool, typer.Option("--quiet", help="No download progress bars.")] = False) -> None:
    """Download every model search, verification and transcription use, so later runs work offline."""
    from marlin_agent.setup.models import pull_models, record_model_folders

    if quiet:
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    settings = load_settings()
    with chunk_progress("fitting verification to the model", not as_json and not quiet) as on_fit:
        copies = run_blocking(as_json, lambda: pull_models(settings, speech=not no_transcribe, on_fit=on_fit))
    recorded = run_blocking(as_json, lambda: record_model_folders(settings))
    if as_json:
        emit_json({"models": [copy.model_dump() for copy in copies], "recorded": recorded})
        return
    table = Table("role", "model", "folder", "MB")
    for copy in copies:
        table.add_row(copy.role, copy.name, copy.folder, f"{copy.megabytes:g}")
    Console().print(table)
    for copy in copies:
        if copy.calibration:
            Console().print(f"verification weights: {copy.calibration}")
    for setting, folder in recorded.items():
        Console().print(f"recorded in {settings.user_config_path}: {setting} = {folder}")


cache_app = CommandApp(help="The cache of staged clips (and other reusable work) under $MARLIN_HOME/cache.",
                       no_args_is_help=True)


@cache_app.command("prune")
def prune_command(
    max_gb: Annotated[Optional[float], typer.Option(
        "--max-gb", min=0, help="Keep at most this many GB of staged clips (default: media.clip_cache_gb in the "
        "config; 0 removes every clip not in use).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove the least recently used staged clips until the cache fits its limit (clips in use stay)."""
    from marlin_agent.media.clip_cache import prune

    settings = load_settings()
    limit = (settings.media.clip_cache_gb or None) if max_gb is None else max_gb
    report = run_blocking(as_json, lambda: prune(settings.cache_dir, limit))
    if as_json:
        emit_json(report.model_dump(mode="json", exclude={"schema_version"}))
        return
    limit_text = "no limit" if report.limit_gb is None else f"limit {report.limit_gb:g} GB"
    Console().print(f"Removed {report.clips_removed} clips ({report.freed_mb:.1f} MB); kept {report.kept_clips} "
                    f"({report.kept_mb:.1f} MB, {limit_text}) in {report.folder}")
