"""`marlin-agent doctor`: check everything a run needs, and say how to fix what fails.

Each check is independent: a broken config does not hide a missing ffmpeg codec, and an
unreachable server does not hide a full disk. Nothing here prints or stores a key.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.errors import GATED_MODEL_URL, ConfigError, MarlinAgentError

Status = Literal["ok", "warn", "fail", "skip"]
_GB = 1024**3


class Check(BaseModel):
    name: str
    status: Status
    detail: str
    fix: str | None = None


class DoctorReport(BaseModel):
    ok: bool
    checks: list[Check]


def _python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info >= (3, 11):
        return Check(name="python", status="ok", detail=f"Python {version}")
    return Check(name="python", status="fail", detail=f"Python {version}", fix="Install Python 3.11 or newer.")


def _media() -> Check:
    try:
        import av

        av.codec.Codec("libx264", "w")
        av.codec.Codec("h264", "r")
    except ImportError:
        return Check(name="media", status="fail", detail="PyAV is not installed", fix="pip install av")
    except Exception as exc:  # an FFmpeg build without the codec
        return Check(name="media", status="fail", detail=f"PyAV cannot encode H.264: {exc}",
                     fix="Reinstall PyAV from its wheels (pip install --force-reinstall av); "
                     "they bundle FFmpeg with libx264.")
    return Check(name="media", status="ok", detail=f"PyAV {av.__version__} with FFmpeg, H.264 encode and decode")


def _extras() -> list[Check]:
    wanted = [("library", "lancedb", "search and the index"), ("library", "onnxruntime", "search and verification"),
              ("transcripts", "faster_whisper", "speech transcripts"), ("youtube", "yt_dlp", "URLs"),
              ("planner", "pydantic_ai", "--planner and extract"), ("watch", "paho", "watch's MQTT alerts")]
    checks = []
    for extra, module, needed_for in wanted:
        present = importlib.util.find_spec(module) is not None
        checks.append(Check(name=f"extra:{module}", status="ok" if present else "warn",
                            detail=f"{module} {'installed' if present else 'missing'} (needed for {needed_for})",
                            fix=None if present else f"pip install 'marlin-agent[{extra}]'"))
    return checks


def _credentials(settings: Settings) -> Check | None:
    path = settings.credentials_path
    if not path.is_file():
        return None
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        return Check(name="credentials", status="warn", detail=f"{path} is readable by others (mode {mode:o})",
                     fix=f"chmod 600 {path}")
    return Check(name="credentials", status="ok", detail=f"keys stored in {path} (user-only)")


def _disk(settings: Settings) -> Check:
    folder = settings.home if settings.home.exists() else next(p for p in settings.home.parents if p.exists())
    free = shutil.disk_usage(folder).free
    detail = f"{free / _GB:.1f} GB free at {folder}"
    if free >= 10 * _GB:
        return Check(name="disk", status="ok", detail=detail)
    fix = ("Free space, or set MARLIN_HOME to a larger disk (engines take ~10 GB, weights ~5 GB, "
           "staged clips grow with footage).")
    return Check(name="disk", status="warn" if free >= 2 * _GB else "fail", detail=detail, fix=fix)


def _index(settings: Settings) -> Check:
    uri = settings.db_path
    if "://" not in uri and not Path(uri).exists():
        return Check(name="index", status="ok", detail=f"no index yet at {uri} (the first index run creates it)")
    try:
        from marlin_agent.library.access import open_library
        from marlin_agent.library.health import check

        library = open_library(settings)
        health = check(library)
        if not health.ok:
            return Check(name="index", status="fail",
                         detail=f"the index at {uri} is damaged: " + "; ".join(health.problems),
                         fix="marlin-agent index --repair (rebuilds what is missing, returns damaged tables to "
                             "their last good version, and captions again what that loses)")
        videos = library.list_videos()
        counts = library.counts()
    except MarlinAgentError as exc:
        return Check(name="index", status="fail" if exc.code != "missing_dependency" else "warn",
                     detail=exc.message, fix=exc.hint)
    except Exception as exc:
        return Check(name="index", status="fail", detail=f"the index at {uri} cannot be read: {exc}",
                     fix="marlin-agent index --repair; if that fails too, move the folder aside and index again.")
    summary = _index_summary(len(videos), counts, uri)
    store = settings.library.store
    return Check(name="index", status="ok", detail=summary if store == "lance" else f"{summary} (store: {store})")


def _index_summary(videos: int, counts: dict[str, int], uri: str) -> str:
    """"3 videos (12 chunks; 40 events, 12 scenes, 85 transcript lines) at URI"."""
    parts = [f"{counts[k]} {label}" for k, label in (("event", "events"), ("scene", "scenes"),
                                                     ("transcript", "transcript lines")) if counts.get(k)]
    inside = f"{counts.get('chunks', 0)} chunks" + (f"; {', '.join(parts)}" if parts else "")
    return f"{videos} video{'' if videos == 1 else 's'} ({inside}) at {uri}"


def _platform() -> Check:
    from marlin_agent.engines import detect_platform

    machine = detect_platform()
    return Check(name="platform", status="ok", detail=f"{machine.describe()}; local engine: {machine.default_engine}")


def _engine(settings: Settings, start: bool) -> tuple[Check | None, Settings]:
    """The local engine's state; returns the settings pointed at it when it is (or was just) started."""
    if settings.server.base_url:
        return None, settings
    from marlin_agent.engines import EngineManager, with_server

    manager = EngineManager(settings)
    name = manager.default_engine()
    status = manager.status(name)
    if status.installed and not status.running and start and settings.engine.auto_start:
        try:
            manager.start(name)
        except MarlinAgentError as exc:
            return Check(name="engine", status="fail", detail=f"{name} does not start: {exc.message}",
                         fix=exc.hint), settings
        status = manager.status(name)
    if not status.installed:
        return Check(name="engine", status="fail",
                     detail=f"no server configured and the {name} engine is not installed "
                     f"({manager.platform.describe()})",
                     fix=f"marlin-agent setup --local {name} --yes, or marlin-agent setup --hosted --base-url URL "
                     "--api-key KEY --yes"), settings
    if not status.running:
        return Check(name="engine", status="ok", detail=f"{name} installed, not running: it starts on demand "
                     "(doctor without --no-start starts it to check it)"), settings
    served = with_server(settings, status.base_url, status.model, name)
    return Check(name="engine", status="ok", detail=f"{name} running at {status.base_url} (pid {status.pid})"), served


def _server(settings: Settings) -> list[Check]:
    """Reachable, serving the model, and answering a video request."""
    from marlin_agent.setup.server_check import probe_server

    where = settings.server.base_url
    try:
        result = asyncio.run(probe_server(settings))
    except MarlinAgentError as exc:
        name = {"model_access_denied": "model_access", "auth_failed": "server", "model_not_served": "model",
                "server_unavailable": "server", "server_timeout": "server"}.get(exc.code, "video_request")
        hint = exc.hint
        if exc.code == "model_access_denied":
            hint = f"Request access at {GATED_MODEL_URL}, then use a key or token of the account that was granted it."
        return [Check(name=name, status="fail", detail=f"{exc.code}: {exc.message}", fix=hint)]
    key = "with the stored key" if settings.server.api_key else "without a key"
    return [Check(name="server", status="ok", detail=f"{where} answers {key}"),
            Check(name="model", status="ok", detail=f"{result.model} is served"),
            Check(name="video_request", status="ok" if result.format_ok else "warn",
                  detail=f"a 4 s test video was captioned in {result.seconds:.1f} s",
                  fix=None if result.format_ok else "The caption did not keep Marlin's format: check that the "
                  "server runs Marlin-2B with the architecture override (see README, Running Marlin).")]


def _planner_engine(settings: Settings, start: bool) -> tuple[Check | None, Settings]:
    """The planner server the local engine runs beside Marlin, when one was chosen; returns the
    settings pointed at it when it is (or was just) started."""
    wanted, planner = settings.engine.planner_model, settings.planner
    if not wanted or planner.model != wanted or planner.base_url:
        return None, settings
    from marlin_agent.engines import EngineManager, planner_engine, with_local_planner

    manager = EngineManager(settings)
    try:
        name = planner_engine(settings, manager)
        if start and settings.engine.auto_start:
            settings = with_local_planner(settings)
    except MarlinAgentError as exc:
        return Check(name="planner_engine", status="fail", detail=f"the planner {wanted} does not start: "
                     f"{exc.message}", fix=exc.hint), settings
    status = manager.status(name, "planner")
    if not status.running:
        return Check(name="planner_engine", status="ok", detail=f"{name} serves {wanted} beside Marlin; not running: "
                     "it starts on demand (doctor without --no-start starts it to check it)"), settings
    return Check(name="planner_engine", status="ok" if status.healthy else "warn",
                 detail=f"{name} serving {wanted} at {status.base_url} (pid {status.pid})"), settings


def _planner(settings: Settings) -> Check:
    planner = settings.planner
    if not planner.enabled:
        return Check(name="planner", status="ok", detail="the pipeline planner (no LLM); --planner MODEL adds one")
    if planner.model == settings.engine.planner_model and not planner.base_url:
        return Check(name="planner", status="ok", detail=f"{planner.model}, served by the local engine once it starts "
                     "(the planner, and the judge in verification)")
    try:
        from marlin_agent.llm.models import planner_model

        planner_model(planner)
    except MarlinAgentError as exc:
        return Check(name="planner", status="fail", detail=f"{planner.model}: {exc.message}", fix=exc.hint)
    if not planner.base_url:
        return Check(name="planner", status="ok", detail=f"{planner.model} (its provider's own endpoint)")
    import httpx

    key = planner.api_key.get_secret_value() if planner.api_key else "not-needed"
    try:
        response = httpx.get(planner.base_url.rstrip("/") + "/models", headers={"Authorization": f"Bearer {key}"},
                             timeout=10)
    except httpx.HTTPError as exc:
        return Check(name="planner", status="fail", detail=f"cannot reach {planner.base_url}: {exc or 'no answer'}",
                     fix="Start the planner's server (marlin-agent engine start --role planner --model NAME) or "
                     "fix MARLIN_PLANNER_BASE_URL.")
    if response.status_code in (401, 403):
        return Check(name="planner", status="fail",
                     detail=f"{planner.base_url} refused the key ({response.status_code})",
                     fix="Set MARLIN_PLANNER_API_KEY to a key that server accepts.")
    return Check(name="planner", status="ok" if response.status_code == 200 else "warn",
                 detail=f"{planner.model} at {planner.base_url} (HTTP {response.status_code})")


def _models(settings: Settings) -> list[Check]:
    """Every small model the configured commands load (Whisper when transcripts are on), found without
    downloading; all missing ones fail at once, with the one command that fetches them. For the
    entailment model, whether the weights in force were fitted for it."""
    from marlin_agent.setup.models import needed_models
    from marlin_agent.verification.calibration import FIT_COMMAND, calibration_for

    pull = "marlin-agent models pull" + ("" if settings.library.transcribe else " --no-transcribe")
    checks = []
    for model in needed_models(settings, speech=settings.library.transcribe):
        folder = model.local()
        if folder is None:
            checks.append(Check(name=model.role, status="fail", detail=f"{model.name} is not on this machine yet",
                                fix=f"{pull} (while connected fetches every missing model), or set {model.env_var} "
                                    "to a local copy"))
        elif model.role == "verification":
            try:
                calibration = calibration_for(settings, folder)
            except ConfigError as exc:  # weights of the user's own that leave a kind of evidence out
                checks.append(Check(name=model.role, status="fail", detail=exc.message, fix=exc.hint))
                continue
            fitted = calibration.source != "priors"
            checks.append(Check(name=model.role, status="ok" if fitted else "warn",
                                detail=f"{model.name}: {calibration.describe()}",
                                fix=None if fitted else f"{pull} fits its weights here in under a minute (the first "
                                                        f"answer does too); {FIT_COMMAND} fits them on footage of "
                                                        "your own (evals/README.md)"))
        else:
            checks.append(Check(name=model.role, status="ok", detail=f"{model.name} in {folder}"))
    return checks


def run_doctor(settings: Settings | None, config_error: MarlinAgentError | None = None,
               start_engine: bool = True) -> DoctorReport:
    """Every check; with ``start_engine``, an installed local engine is started (as any command would) to test it."""
    checks = [_python(), _platform(), _media()]
    if config_error is not None:
        checks.append(Check(name="config", status="fail", detail=config_error.message, fix=config_error.hint))
    else:
        checks.append(Check(name="config", status="ok", detail="settings load (flags, environment, config files)"))
    if settings is not None:
        credentials = _credentials(settings)
        if credentials:
            checks.append(credentials)
        engine, served = _engine(settings, start_engine)
        if engine:
            checks.append(engine)
        if served.server.base_url:
            checks += _server(served)
        elif engine is None or engine.status == "ok":
            checks.append(Check(name="server", status="skip", detail="the local engine is not running"))
        planner_engine, settings = _planner_engine(settings, start_engine)
        if planner_engine:
            checks.append(planner_engine)
        checks += [_planner(settings), *_models(settings), _disk(settings), _index(settings)]
    checks += _extras()
    return DoctorReport(ok=all(c.status != "fail" for c in checks), checks=checks)
