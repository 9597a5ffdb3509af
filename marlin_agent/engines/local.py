"""Start the local engine on demand when no server is configured, and the local planner beside it
when one was chosen."""

from __future__ import annotations

from marlin_agent.config import Settings
from marlin_agent.domain import Say
from marlin_agent.engines.manager import EngineManager
from marlin_agent.engines.recipes import recipes
from marlin_agent.errors import EngineNotInstalled

# The CPU engine answers one request at a time, each taking minutes: more in flight would only
# queue up and run into the request timeout.
CPU_CONCURRENCY = 1
CPU_REQUEST_TIMEOUT = 3600.0


def with_server(settings: Settings, base_url: str, model: str, engine: str | None = None) -> Settings:
    update: dict = {"base_url": base_url, "model": model}
    if engine == "cpu":
        update |= {"concurrency": CPU_CONCURRENCY,
                   "request_timeout": max(settings.server.request_timeout or 0.0, CPU_REQUEST_TIMEOUT)}
    return settings.model_copy(update={"server": settings.server.model_copy(update=update)})


def ensure_server(settings: Settings, progress: Say | None = None) -> Settings:
    """``settings`` pointing at a server: the configured one, else a local engine (started if need be);
    and at the local planner, when `setup --local … --planner` chose one.

    Returns ``settings`` unchanged when no server is configured and no engine is installed;
    the first request then fails with the usual "no server" error and its hint.
    """
    return with_local_planner(_with_marlin(settings, progress), progress)


def with_local_planner(settings: Settings, progress: Say | None = None) -> Settings:
    """``settings`` with the planner pointed at the local planner server (started if need be), when
    the configured planner is the one the engine serves and nothing else points it elsewhere."""
    wanted, planner = settings.engine.planner_model, settings.planner
    if not wanted or planner.model != wanted or planner.base_url or not settings.engine.auto_start:
        return settings
    manager = EngineManager(settings)
    engine = planner_engine(settings, manager)
    if progress and manager.state(engine, "planner") is None:
        progress(f"starting the local planner {wanted} on the {engine} engine")
    state = manager.start(engine, role="planner", model=wanted, progress=progress)
    return settings.model_copy(update={"planner": planner.model_copy(update={"base_url": state.base_url})})


def planner_engine(settings: Settings, manager: EngineManager) -> str:
    """The engine that serves the local planner: the chosen one, else the first installed."""
    if settings.engine.default:
        return settings.engine.default
    for engine in recipes():
        if manager.installed(engine):
            return engine
    raise EngineNotInstalled("a local planner is configured but no engine is installed to serve it",
                             hint="marlin-agent setup --local auto --planner MODEL --yes")


def _with_marlin(settings: Settings, progress: Say | None) -> Settings:
    if settings.server.base_url or not settings.engine.auto_start:
        return settings
    manager = EngineManager(settings)
    engines = [settings.engine.default] if settings.engine.default else list(recipes())
    for engine in engines:  # one already running wins, then the first installed
        state = manager.state(engine)
        if state is not None:
            manager.start(engine, progress=progress)  # waits until it answers
            return with_server(settings, state.base_url, state.model, engine)
    for engine in engines:
        if manager.installed(engine):
            if progress:
                progress(f"no server configured: starting the local {engine} engine")
            state = manager.start(engine, progress=progress)
            return with_server(settings, state.base_url, state.model, engine)
    if settings.engine.default:  # chosen, then removed: say so rather than "no server"
        raise EngineNotInstalled(f"no server is configured and the chosen {settings.engine.default} engine is "
                                 "not installed", hint=f"marlin-agent engine install {settings.engine.default}, "
                                 "or marlin-agent setup to choose again")
    return settings
