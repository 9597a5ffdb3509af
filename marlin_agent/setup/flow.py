"""`marlin-agent setup`: choose where Marlin runs, prove it answers, then store the choice.

Nothing is stored until one real video request has succeeded (unless the caller skips
the check), so a typo in a URL or key never leaves a broken configuration behind.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel, SecretStr

from marlin_agent.config import Settings
from marlin_agent.domain import Say
from marlin_agent.engines import EngineManager, with_server
from marlin_agent.errors import InputError
from marlin_agent.setup import user_config
from marlin_agent.setup.doctor import Check, run_doctor
from marlin_agent.setup.models import record_model_folders
from marlin_agent.setup.server_check import PlannerProbe, ProbeResult, probe_planner, probe_server

# What `--planner` takes to mean "no planner LLM".
NO_PLANNER = ("none", "pipeline")


class SetupResult(BaseModel):
    mode: Literal["hosted", "local"]
    base_url: str
    model: str
    engine: str | None = None
    config: str
    api_key_stored: bool = False
    credentials: str | None = None
    check: ProbeResult | None = None
    planner: str | None = None  # the planner LLM the engine serves beside Marlin
    planner_base_url: str | None = None
    planner_check: PlannerProbe | None = None
    warnings: list[str] = []
    missing: list[Check] = []  # what doctor still finds wrong: to fix before the first question
    # Model folders the environment named, now in the config file for front doors started without it.
    recorded_models: dict[str, str] = {}


def still_missing(now: Settings) -> list[Check]:
    """The checks a first question would still fail (doctor's, without starting an engine)."""
    return [check for check in run_doctor(now, start_engine=False).checks if check.status == "fail"]


def shadowed(result: SetupResult, now: Settings) -> list[str]:
    """Why the stored choice would not take effect: settings from a higher layer (the environment) win."""
    if result.mode == "local" and now.server.base_url:
        return [f"a server URL ({now.server.base_url}) is still set, most likely by MARLIN_BASE_URL in the "
                "environment; it wins over the local engine until it is unset"]
    if result.mode == "hosted" and now.server.base_url != result.base_url:
        return [f"another server URL ({now.server.base_url}) is set, most likely by MARLIN_BASE_URL in the "
                "environment; it wins over the stored one until it is unset"]
    return []


def _check(settings: Settings, skip: bool) -> ProbeResult | None:
    return None if skip else asyncio.run(probe_server(settings))


def setup_hosted(settings: Settings, base_url: str, api_key: str | None, model: str | None = None,
                 skip_check: bool = False, progress: Say | None = None) -> SetupResult:
    """Use an OpenAI-compatible endpoint: test it with the key, then store URL, model and key."""
    if not base_url.startswith(("http://", "https://")):
        raise InputError(f"--base-url must be an http(s) URL, not {base_url!r}",
                         hint="For example https://host/v1 (the API root, usually ending in /v1).")
    server = settings.server.model_copy(update={
        "base_url": base_url.rstrip("/"), "model": model or settings.server.model,
        "api_key": SecretStr(api_key) if api_key else None})
    trial = settings.model_copy(update={"server": server})
    if progress:
        progress(f"testing {server.base_url} with one short video")
    check = _check(trial, skip_check)
    user_config.update(settings.user_config_path, {
        "server": {"base_url": server.base_url, "model": server.model},
        "engine": {"default": None}})
    if api_key:
        user_config.update(settings.credentials_path, {"server": {"api_key": api_key}}, private=True)
    return SetupResult(mode="hosted", base_url=server.base_url, model=server.model,
                       config=str(settings.user_config_path), recorded_models=record_model_folders(settings),
                       api_key_stored=bool(api_key), credentials=str(settings.credentials_path) if api_key else None,
                       check=check)


def setup_local(settings: Settings, engine: str | None = None, skip_check: bool = False,
                progress: Say | None = None, planner: str | None = None) -> SetupResult:
    """Install the engine (if needed), start it, test it, and make it the on-demand default; with
    ``planner``, also serve that chat LLM beside Marlin (the planner and verification's judge),
    test it with one judge request, and make it the planner ("none" removes a chosen one)."""
    manager = EngineManager(settings)
    name = engine or manager.default_engine()
    manager.check_supported(name)
    serve_planner = planner is not None and planner.strip().lower() not in NO_PLANNER
    if serve_planner:  # the share of GPU memory each server takes depends on whether there are two
        settings = settings.model_copy(update={"engine": settings.engine.model_copy(
            update={"planner_model": planner, "default": name})})
        manager = EngineManager(settings)
    if not manager.installed(name):
        manager.install(name, progress)
    running = manager.state(name)
    if serve_planner and running is not None and running.command != manager.check_supported(name).command(
            manager.launch(name)):
        if progress:
            progress("restarting Marlin's server so that it leaves GPU memory for the planner")
        manager.stop(name)
    state = manager.start(name, progress=progress)
    check = _check(with_server(settings, state.base_url, state.model, name), skip_check)
    planner_state = planner_check = None
    if serve_planner:
        if progress:
            progress(f"starting the planner {planner} beside Marlin")
        planner_state = manager.start(name, role="planner", model=planner, progress=progress)
        trial = settings.model_copy(update={"planner": settings.planner.model_copy(
            update={"model": planner, "base_url": planner_state.base_url})})
        planner_check = None if skip_check else asyncio.run(probe_planner(trial))
    # A stored base_url would win over the engine, so setting up a local engine removes it.
    stored: dict = {"server": {"base_url": None, "model": None}, "engine": {"default": name, "auto_start": True}}
    if planner is not None:
        chosen = planner if serve_planner else None
        stored["engine"]["planner_model"] = chosen
        stored["planner"] = {"model": chosen or "pipeline", "base_url": None}
    user_config.update(settings.user_config_path, stored)
    return SetupResult(mode="local", base_url=state.base_url, model=state.model, engine=name,
                       config=str(settings.user_config_path), check=check,
                       recorded_models=record_model_folders(settings),
                       planner=planner if serve_planner else None,
                       planner_base_url=planner_state.base_url if planner_state else None, planner_check=planner_check)
