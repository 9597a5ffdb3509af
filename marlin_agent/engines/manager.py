"""Install, start, watch and stop local engines, each in its own environment under $MARLIN_HOME.

Engines pin their own torch, CUDA and transformers versions, which fight with whatever the
user has installed; so each gets a private virtual environment at
``$MARLIN_HOME/engines/<engine>/venv``. A running server is described by a state file
beside it, so any later command (or another process) can find, check and stop it.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.domain import Say
from marlin_agent.engines.machine import Platform, detect_platform
from marlin_agent.engines.recipes import Launch, Recipe, Source, recipe
from marlin_agent.errors import (
    GATED_MODEL_URL,
    EngineFailed,
    EngineInstallFailed,
    EngineNotInstalled,
    EngineTimeout,
    EngineUnsupported,
    ModelAccessDenied,
)

Role = Literal["marlin", "planner"]
# Engines that take a fixed share of GPU memory up front, and how much they take when alone.
GPU_SHARING = ("vllm", "sglang")
ENGINE_GPU_SHARE = 0.9

# What the Hugging Face hub client logs when a gated download is refused.
_GATED = re.compile(r"GatedRepoError|Cannot access gated repo|401 Client Error|403 Client Error|"
                    r"awaiting a review|is restricted|Access to model .* is restricted", re.I)


class EngineState(BaseModel):
    """A started server, as written to its state file."""

    engine: str
    role: Role
    pid: int
    host: str
    port: int
    model: str
    command: list[str]
    log: str
    started_at: str
    # The process's start time as the OS reports it: a PID alone can be reused by another
    # program after the server exits, and signalling that would stop someone else's work.
    created: float | None = None
    # On Linux, the start in clock ticks since boot. The wall-clock ``created`` is derived from
    # the boot time, which moves whenever NTP or a user steps the clock; the ticks never do.
    boot_ticks: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


class EngineStatus(BaseModel):
    engine: str
    role: Role
    installed: bool
    running: bool
    healthy: bool
    base_url: str | None = None
    model: str | None = None
    pid: int | None = None
    log: str
    venv: str


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _created(pid: int) -> float | None:
    """When process ``pid`` started (OS clock), or None if there is no such process."""
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def _boot_ticks(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (Linux), or None where that is not known."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses; the fields after its closing one do not.
    fields = stat[stat.rfind(")") + 2:].split()
    try:
        return int(fields[19])  # field 22, starttime
    except (IndexError, ValueError):
        return None


def _same_process(state: EngineState, created: float) -> bool:
    if state.boot_ticks is not None:
        ticks = _boot_ticks(state.pid)
        if ticks is not None:
            return ticks == state.boot_ticks
    # A state file without a start time (older versions) cannot prove the PID is still ours.
    return state.created is not None and abs(created - state.created) < 0.05


def _alive(state: EngineState) -> bool:
    """Whether the server ``state`` recorded still runs: the same PID *and* the same process."""
    import psutil

    try:
        finished, _ = os.waitpid(state.pid, os.WNOHANG)  # reap our own exited child, if it is one
        if finished == state.pid:
            return False
    except ChildProcessError:
        pass
    try:
        process = psutil.Process(state.pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        created = process.create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return False  # not ours to signal in any case
    return _same_process(state, created)


def _tail(path: Path, lines: int = 20, since: int = 0) -> str:
    """The last ``lines`` lines of a log, only from byte ``since`` on (this start's output)."""
    if not path.is_file():
        return ""
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(since, handle.tell() - 64_000))
        return "\n".join(handle.read().decode("utf-8", "replace").splitlines()[-lines:])


def _healthy(base_url: str, timeout: float = 2.0) -> bool:
    # The standard library's client, not a proxy's route: every library command may ask, and the engine is here.
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with direct.open(base_url + "/models", timeout=timeout) as response:
            return response.status == 200
    except (OSError, ValueError, http.client.HTTPException):
        return False


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


class EngineManager:
    def __init__(self, settings: Settings, platform: Platform | None = None) -> None:
        self.settings = settings
        self.platform = platform or detect_platform()
        self.root = settings.home / "engines"

    # --- where things live ---------------------------------------------------------------

    def folder(self, engine: str) -> Path:
        return self.root / recipe(engine).name

    def venv(self, engine: str) -> Path:
        return self.folder(engine) / "venv"

    def _state_file(self, engine: str, role: Role) -> Path:
        return self.folder(engine) / f"{role}.json"

    def log_file(self, engine: str, role: Role = "marlin") -> Path:
        return self.folder(engine) / f"{role}.log"

    def install_log(self, engine: str) -> Path:
        return self.folder(engine) / "install.log"

    def default_engine(self) -> str:
        return self.settings.engine.default or self.platform.default_engine

    # --- install ---------------------------------------------------------------------------

    def check_supported(self, engine: str) -> Recipe:
        found = recipe(engine)
        if not self.settings.engine.check_platform or found.needs == "any":
            return found
        if found.needs == "nvidia" and not self.platform.nvidia:
            raise EngineUnsupported(f"{found.title} needs an NVIDIA GPU and this machine has none "
                                    f"({self.platform.describe()})",
                                    hint=f"Use the {self.platform.default_engine} engine here, or a hosted endpoint "
                                    "(marlin-agent setup --hosted).")
        if found.needs == "apple_silicon" and not self.platform.apple_silicon:
            raise EngineUnsupported(f"the MLX engine needs Apple Silicon; this is {self.platform.describe()}",
                                    hint=f"Use the {self.platform.default_engine} engine here.")
        return found

    def requirements(self, engine: str) -> list[str]:
        return list(self.settings.engine.requirements.get(engine, recipe(engine).requirements))

    def source(self, engine: str) -> Source | None:
        found = recipe(engine).source
        override = self.settings.engine.sources.get(engine)
        return replace(found, repository=override) if found and override else found

    def installed(self, engine: str) -> bool:
        return (self.folder(engine) / "installed.json").is_file()

    def install(self, engine: str, progress: Say | None = None) -> Path:
        """Create the engine's environment and install it there; all output goes to install.log."""
        self.check_supported(engine)
        folder, env_dir, log = self.folder(engine), self.venv(engine), self.install_log(engine)
        folder.mkdir(parents=True, exist_ok=True)
        say = progress or (lambda _: None)
        python = Launch(env_dir, "", 0, folder).python
        if not python.exists():
            say(f"creating an isolated environment in {env_dir}")
            venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
        steps: list[list[str]] = []
        source = self.source(engine)
        if source is not None:
            checkout = self._checkout(source, folder / "src", log, say)
            project = checkout / source.subdir
            steps.append([f"{project}[{source.extras}]" if source.extras else str(project)])
        requirements = self.requirements(engine)
        if requirements:
            steps.append(["--upgrade", *requirements])  # a second install upgrades
        for arguments in steps:
            say(f"installing {' '.join(arguments)} (the output goes to {log})")
            self._run_logged([str(python), "-m", "pip", "install", "--disable-pip-version-check", *arguments], log, say,
                             f"installing {engine}")
        (folder / "installed.json").write_text(json.dumps({"requirements": requirements, "at": _now(),
                                                           "source": source.repository if source else None,
                                                           "python": sys.version.split()[0]}))
        return env_dir

    def _checkout(self, source: Source, target: Path, log: Path, say: Say) -> Path:
        """A fresh checkout of the source branch (updated in place on a re-install), project file swapped."""
        if shutil.which("git") is None:
            raise EngineInstallFailed("git is needed to build this engine from its source branch",
                                      hint="Install git (Xcode command line tools: xcode-select --install).")
        branch = ["--branch", source.branch] if source.branch else []
        if (target / ".git").is_dir():
            say(f"updating {source.repository}")
            self._run_logged(["git", "-C", str(target), "fetch", "--depth", "1", "origin", source.branch or "HEAD"],
                             log, say, "fetching the engine's source")
            self._run_logged(["git", "-C", str(target), "reset", "--hard", "FETCH_HEAD"], log, say,
                             "updating the engine's source")
        else:
            say(f"fetching {source.repository}")
            shutil.rmtree(target, ignore_errors=True)
            self._run_logged(["git", "clone", "--depth", "1", *branch, source.url, str(target)], log, say,
                             "fetching the engine's source")
        if source.swap:
            project = target / source.subdir
            other, default = project / source.swap[0], project / source.swap[1]
            if not other.is_file():
                raise EngineInstallFailed(f"{source.repository} has no {source.subdir}/{source.swap[0]}",
                                          hint="The branch changed layout; set [engine.sources] to one that works.")
            other.replace(default)
        return target

    @staticmethod
    def _run_logged(command: list[str], log: Path, say: Say, what: str) -> None:
        with log.open("a") as out:
            out.write(f"\n=== {_now()} {' '.join(command)}\n")
            out.flush()
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       stdin=subprocess.DEVNULL)
            for line in process.stdout:
                out.write(line)
                if line.startswith(("Collecting", "Downloading", "Building", "Successfully")):
                    say(line.strip())
            code = process.wait()
        if code != 0:
            raise EngineInstallFailed(f"{what} failed (exit code {code}): {_tail(log, 5)}",
                                      hint=f"The whole output is in {log}.")

    def uninstall(self, engine: str) -> bool:
        """Stop the engine's servers and delete its environment, source and logs; False if there was none."""
        recipe(engine)
        folder = self.folder(engine)
        if not folder.exists():
            return False
        for role in ("marlin", "planner"):
            self.stop(engine, role)
        shutil.rmtree(folder)
        return True

    # --- run -------------------------------------------------------------------------------

    def state(self, engine: str, role: Role = "marlin") -> EngineState | None:
        """The running server's state, or None (a stale state file is removed)."""
        path = self._state_file(engine, role)
        if not path.is_file():
            return None
        state = EngineState.model_validate_json(path.read_text())
        if _alive(state):
            return state
        path.unlink(missing_ok=True)
        return None

    def launch(self, engine: str, role: Role = "marlin", model: str | None = None, port: int | None = None) -> Launch:
        engine_settings = self.settings.engine
        planner = role == "planner"
        default_port = (engine_settings.planner_port or engine_settings.port + 1) if planner else engine_settings.port
        return Launch(venv=self.venv(engine), host=engine_settings.host, port=port or default_port,
                      media_dir=self.settings.cache_dir, model=model if planner else None,
                      max_model_len=engine_settings.planner_max_model_len if planner else engine_settings.max_model_len,
                      extra_args=tuple(engine_settings.planner_extra_args if planner else engine_settings.extra_args),
                      gpu_share=self._gpu_share(engine, role))

    def _gpu_share(self, engine: str, role: Role) -> float | None:
        """Two servers on one GPU must split its memory, or the second finds none left (each engine
        takes ~90% by default). Marlin keeps its share even while the planner is down, so a planner
        started later still fits."""
        engine_settings = self.settings.engine
        if engine not in GPU_SHARING or not engine_settings.planner_model:
            return None
        share = engine_settings.planner_gpu_share
        return share if role == "planner" else round(ENGINE_GPU_SHARE - share, 2)

    def start(self, engine: str, role: Role = "marlin", model: str | None = None, port: int | None = None,
              progress: Say | None = None, wait: bool = True) -> EngineState:
        """Start the engine in the background (or find it running) and wait until it answers."""
        found = self.check_supported(engine)
        if role == "planner" and not model:
            raise EngineFailed("a planner server needs --model (the planner LLM to serve)")
        running = self.state(engine, role)
        if running is not None:
            if wait:
                self._wait(running, None, progress)
            return running
        if not self.installed(engine):
            raise EngineNotInstalled(f"the {engine} engine is not installed",
                                     hint=f"marlin-agent engine install {engine}")
        launch = self.launch(engine, role, model, port)
        if engine == "cpu" and progress:
            progress("the CPU engine is slow (minutes per minute of footage); a GPU engine or a hosted endpoint "
                     "is much faster")
        if not _port_free(launch.host, launch.port):
            raise EngineFailed(f"port {launch.port} on {launch.host} is taken by another program",
                               hint="Stop it, or choose another port: --port N (or [engine] port in the config).")
        launch.media_dir.mkdir(parents=True, exist_ok=True)
        command = found.command(launch)
        log = self.log_file(engine, role)
        with log.open("a") as out:
            out.write(f"\n=== {_now()} {' '.join(command)}\n")
            out.flush()
            since = out.tell()
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       cwd=self.folder(engine), env={**os.environ, **found.env},
                                       start_new_session=True)
        state = EngineState(engine=engine, role=role, pid=process.pid, host=launch.host, port=launch.port,
                            model=found.served_model(launch), command=command, log=str(log), started_at=_now(),
                            created=_created(process.pid), boot_ticks=_boot_ticks(process.pid))
        self._state_file(engine, role).write_text(state.model_dump_json(indent=1))
        if wait:
            self._wait(state, process, progress, since)
        return state

    def _wait(self, state: EngineState, process: subprocess.Popen | None, progress: Say | None,
              since: int = 0) -> None:
        """Until the server lists its models; an exit or the timeout becomes a specific error."""
        log = Path(state.log)
        deadline = time.monotonic() + self.settings.engine.start_timeout
        started, said = time.monotonic(), 0.0
        while True:
            if _healthy(state.base_url):
                return
            exited = process.poll() is not None if process is not None else not _alive(state)
            if exited:
                self._state_file(state.engine, state.role).unlink(missing_ok=True)
                tail = _tail(log, since=since)
                if _GATED.search(tail):
                    raise ModelAccessDenied(f"the weights of {state.model} could not be downloaded: access denied",
                                            hint=f"Request access at {GATED_MODEL_URL}, then log in with "
                                            "`hf auth login` (or set HF_TOKEN) and start again.")
                raise EngineFailed(f"the {state.engine} engine exited while starting:\n{tail}",
                                   hint=f"The whole log is in {log}.")
            if time.monotonic() > deadline:
                self.stop(state.engine, state.role)
                raise EngineTimeout(f"the {state.engine} engine did not answer within "
                                    f"{self.settings.engine.start_timeout:.0f} s",
                                    hint=f"The first start downloads the weights (a few GB); see {log}, and raise "
                                    "[engine] start_timeout if the download is just slow.")
            if progress and time.monotonic() - said >= 5:
                said = time.monotonic()
                last = _tail(log, 1, since).strip()[:120]
                waited = f"waiting for {state.engine} ({time.monotonic() - started:.0f} s)"
                progress(f"{waited}: {last}" if last else waited)
            time.sleep(0.5)

    def stop(self, engine: str, role: Role = "marlin", grace: float = 30.0) -> bool:
        """Stop a running server (SIGTERM to its process group, SIGKILL after ``grace``); False if none ran."""
        state = self.state(engine, role)
        if state is None:
            return False
        try:
            os.killpg(state.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + grace
        while _alive(state) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(state):
            try:
                os.killpg(state.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._state_file(engine, role).unlink(missing_ok=True)
        return True

    def status(self, engine: str, role: Role = "marlin") -> EngineStatus:
        state = self.state(engine, role)
        return EngineStatus(engine=engine, role=role, installed=self.installed(engine), running=state is not None,
                            healthy=state is not None and _healthy(state.base_url),
                            base_url=state.base_url if state else None, model=state.model if state else None,
                            pid=state.pid if state else None, log=str(self.log_file(engine, role)),
                            venv=str(self.venv(engine)))

    def logs(self, engine: str, role: Role = "marlin", lines: int = 50, install: bool = False) -> str:
        return _tail(self.install_log(engine) if install else self.log_file(engine, role), lines)
