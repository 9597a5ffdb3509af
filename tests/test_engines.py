"""Local engines: exact launch commands, and the whole lifecycle against a stand-in engine.

The stand-in (evals/synthetic/standin_engine.py) is installed with pip into a real isolated
environment, parses the real vLLM / SGLang flags and serves the simulator, so everything
from `engine install` to on-demand start runs for real without a GPU.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from evals.synthetic.live import free_port
from evals.synthetic.standin_engine import build_wheel, make_source_repository
from marlin_agent.config import load_settings
from marlin_agent.engines import EngineManager, Launch, Platform, ensure_server, recipe
from marlin_agent.errors import EngineFailed, EngineNotInstalled, EngineUnsupported
from tests.cli_runner import document, invoke

VENV = Path("/home/u/.marlin/engines/x/venv")
MEDIA = Path("/home/u/.marlin/cache")


def _launch(**more) -> Launch:
    return Launch(**{"venv": VENV, "host": "127.0.0.1", "port": 8000, "media_dir": MEDIA, **more})


# --- the command lines, pinned to MARLIN.md's serving section ------------------------------


def test_vllm_is_launched_with_the_published_batch_recipe_flags():
    assert recipe("vllm").command(_launch()) == [
        str(VENV / "bin/vllm"), "serve", "NemoStation/Marlin-2B",
        "--hf-overrides", '{"architectures": ["Qwen3_5ForConditionalGeneration"]}',
        "--allowed-local-media-path", str(MEDIA),
        "--max-model-len", "65536",
        "--mm-processor-cache-gb", "0",
        "--limit-mm-per-prompt", '{"video":1}',
        "--host", "127.0.0.1", "--port", "8000"]


def test_sglang_takes_the_override_and_the_frame_budget_server_side():
    assert recipe("sglang").command(_launch()) == [
        str(VENV / "bin/python"), "-m", "sglang.launch_server", "--model-path", "NemoStation/Marlin-2B",
        "--json-model-override-args", '{"architectures":["Qwen3_5ForConditionalGeneration"]}',
        "--enable-multimodal",
        "--mm-process-config", '{"video":{"fps":2.0,"min_frames":4,"max_frames":240,"max_pixels":200704}}',
        "--host", "127.0.0.1", "--port", "8000"]


def test_the_mlx_engine_serves_the_mlx_weights_with_the_original_tokenizer():
    mlx = recipe("mlx")
    assert mlx.env == {"SGLANG_USE_MLX": "1"}
    assert mlx.command(_launch()) == [
        str(VENV / "bin/python"), "-m", "sglang.launch_server",
        "--model-path", "NemoStation/Marlin-2B-MLX-8bit", "--tokenizer-path", "NemoStation/Marlin-2B",
        "--disable-cuda-graph", "--disable-radix-cache", "--disable-overlap-schedule", "--trust-remote-code",
        "--enable-multimodal",
        "--mm-process-config", '{"video":{"fps":2.0,"min_frames":4,"max_frames":240,"max_pixels":200704}}',
        "--host", "127.0.0.1", "--port", "8000"]
    assert mlx.source.url == "https://github.com/Itssshikhar/sglang.git"
    assert mlx.source.branch == "codex/marlin-mlx-mm-support"
    assert (mlx.source.subdir, mlx.source.extras, mlx.source.swap) == (
        "python", "all_mps", ("pyproject_other.toml", "pyproject.toml"))
    assert mlx.requirements == ("--upgrade", "mlx", "mlx-lm")
    assert mlx.served_model(_launch()) == "NemoStation/Marlin-2B-MLX-8bit"


def test_a_planner_model_is_served_without_any_of_marlins_flags():
    command = recipe("vllm").command(_launch(model="Qwen/Qwen3-4B", port=8001))
    assert command[:3] == [str(VENV / "bin/vllm"), "serve", "Qwen/Qwen3-4B"]
    assert "--hf-overrides" not in command and "--allowed-local-media-path" not in command


def test_a_planner_beside_marlin_gets_tool_calling_and_the_gpu_is_split_between_them():
    vllm, sglang = recipe("vllm"), recipe("sglang")
    planner = vllm.command(_launch(model="Qwen/Qwen2.5-3B-Instruct", port=8001, gpu_share=0.3))
    assert planner[planner.index("--tool-call-parser") + 1] == "hermes" and "--enable-auto-tool-choice" in planner
    assert planner[planner.index("--gpu-memory-utilization") + 1] == "0.3"
    marlin = vllm.command(_launch(gpu_share=0.6))
    assert marlin[marlin.index("--gpu-memory-utilization") + 1] == "0.6"
    planner = sglang.command(_launch(model="Qwen/Qwen2.5-3B-Instruct", gpu_share=0.3))
    assert planner[planner.index("--tool-call-parser") + 1] == "qwen25"
    assert planner[planner.index("--mem-fraction-static") + 1] == "0.3"
    manager = EngineManager(load_settings({"engine.planner_model": "Qwen/Qwen2.5-3B-Instruct"},
                                          env={"MARLIN_HOME": "/nonexistent-home"}))
    assert manager.launch("vllm").gpu_share == 0.6 and manager.launch("vllm", "planner").gpu_share == 0.3
    assert manager.launch("mlx", "planner").gpu_share is None  # unified memory: nothing to split
    alone = EngineManager(load_settings(env={"MARLIN_HOME": "/nonexistent-home"}))
    assert alone.launch("vllm").gpu_share is None  # Marlin alone keeps the engine's own default


def test_the_platform_picks_the_default_engine():
    def machine(**kw):
        return Platform(system=kw.get("system", "Linux"), machine="x86_64", nvidia=kw.get("nvidia", False),
                        apple_silicon=kw.get("apple", False))

    assert machine(nvidia=True).default_engine == "vllm"
    assert machine(system="Darwin", apple=True).default_engine == "mlx"
    assert machine().default_engine == "cpu"


def test_an_engine_this_machine_cannot_run_is_refused_with_the_alternative(tmp_path):
    settings = load_settings(env={"MARLIN_HOME": str(tmp_path)})
    manager = EngineManager(settings, Platform(system="Linux", machine="x86_64", nvidia=False, apple_silicon=False))
    with pytest.raises(EngineUnsupported) as vllm:
        manager.install("vllm")
    assert "NVIDIA" in vllm.value.message and "cpu engine" in vllm.value.hint
    with pytest.raises(EngineUnsupported, match="Apple Silicon"):
        manager.start("mlx")
    with pytest.raises(EngineNotInstalled) as missing:
        manager.start("cpu")
    assert missing.value.hint == "marlin-agent engine install cpu"


# --- the lifecycle against the stand-in ------------------------------------------------------




def _write_config(home: Path, wheel: Path, mlx_source: str, **engine) -> None:
    lines = ["[engine]", "check_platform = false", "start_timeout = 60.0",
             *(f"{k} = {json.dumps(v)}" for k, v in engine.items()),
             "[engine.requirements]",
             *(f'{name} = ["--no-index", {json.dumps(str(wheel))}]' for name in ("vllm", "sglang")),
             "mlx = []",  # built from its source branch alone
             "[engine.sources]", f"mlx = {json.dumps(mlx_source)}"]
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def engine_home(tmp_path_factory) -> Path:
    """A MARLIN_HOME whose vllm, sglang and mlx engines are the stand-in, installed by `engine install`."""
    home = tmp_path_factory.mktemp("engine-home")
    wheel = build_wheel(tmp_path_factory.mktemp("wheel"))
    source = make_source_repository(tmp_path_factory.mktemp("sglang-source"), wheel)
    _write_config(home, wheel, source, default="vllm", port=free_port(), planner_port=free_port())
    for name in ("vllm", "sglang", "mlx"):
        result = invoke(["engine", "install", name, "--json"], {"MARLIN_HOME": str(home)})
        assert result.exit_code == 0, result.stdout + result.stderr
        assert document(result)["venv"] == str(home / "engines" / name / "venv")
    return home


@pytest.fixture
def home_env(engine_home, offline_models):
    env = {"MARLIN_HOME": str(engine_home), "MARLIN_BASE_URL": None, **offline_models}
    yield env
    for name in ("vllm", "sglang", "mlx"):
        invoke(["engine", "stop", name], env)


def test_the_mlx_engine_is_built_from_its_branch_with_the_apple_project_file(engine_home):
    checkout = engine_home / "engines" / "mlx" / "src" / "python"
    assert "standin_backend" in (checkout / "pyproject.toml").read_text()  # pyproject_other.toml took its place
    assert not (checkout / "pyproject_other.toml").exists()
    assert (engine_home / "engines" / "mlx" / "venv" / "lib").is_dir()
    log = (engine_home / "engines" / "mlx" / "install.log").read_text()
    assert "git clone --depth 1 --branch marlin-mlx" in log and "python[all_mps]" in log
    # A second install updates the checkout in place and builds again.
    result = invoke(["engine", "install", "mlx", "--json"], {"MARLIN_HOME": str(engine_home)})
    assert result.exit_code == 0, result.stdout
    assert "fetch --depth 1 origin marlin-mlx" in (engine_home / "engines" / "mlx" / "install.log").read_text()


def test_install_puts_the_engine_in_its_own_environment(engine_home):
    python = engine_home / "engines" / "vllm" / "venv" / "bin" / "python"
    assert python.is_file() and (python.parent / "vllm").is_file()
    assert "standin_engines" in (engine_home / "engines" / "vllm" / "install.log").read_text()
    assert json.loads((engine_home / "engines" / "vllm" / "installed.json").read_text())["requirements"][0] == "--no-index"


def test_start_status_caption_logs_stop(home_env, footage):
    started = invoke(["engine", "start", "vllm", "--json"], home_env)
    assert started.exit_code == 0, started.stdout + started.stderr
    status = document(started)
    assert status["running"] and status["healthy"] and status["model"] == "NemoStation/Marlin-2B"

    # The staged clips are read through --allowed-local-media-path (file://), as on a real local vLLM.
    caption = invoke(["caption", str(footage["short_field"]), "--json", "--base-url", status["base_url"]], home_env)
    assert caption.exit_code == 0, caption.stdout
    assert document(caption)["events"][0]["text"] == "a red circle appears"

    listed = document(invoke(["engine", "status", "--json"], home_env))
    assert [e["engine"] for e in listed["engines"] if e["running"]] == ["vllm"]
    log = invoke(["engine", "logs", "vllm", "-n", "200"], home_env).stdout
    assert "--mm-processor-cache-gb 0" in log and "Uvicorn running" in log

    stopped = document(invoke(["engine", "stop", "vllm", "--json"], home_env))
    assert stopped["stopped"] is True
    with pytest.raises(httpx.HTTPError):
        httpx.get(status["base_url"] + "/models", timeout=2)
    assert document(invoke(["engine", "stop", "vllm", "--json"], home_env))["stopped"] is False


def test_commands_start_the_local_engine_on_demand_when_no_server_is_configured(home_env, footage):
    result = invoke(["caption", str(footage["short_field"]), "--json"], home_env)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert document(result)["chunks"][0]["format_ok"]
    status = document(invoke(["engine", "status", "vllm", "--json"], home_env))["engines"][0]
    assert status["running"] and status["healthy"]  # left running for the next command
    again = invoke(["find", "the red circle", str(footage["short_field"]), "--json"], home_env)
    assert again.exit_code == 0 and document(again)["candidates"]


def test_sglang_and_the_mlx_port_start_and_answer_under_their_served_names(home_env, footage):
    settings = load_settings(env=home_env)
    manager = EngineManager(settings)
    for name, served in (("sglang", "NemoStation/Marlin-2B"), ("mlx", "NemoStation/Marlin-2B-MLX-8bit")):
        state = manager.start(name, port=free_port())
        models = httpx.get(state.base_url + "/models", timeout=5).json()["data"]
        assert [m["id"] for m in models] == [served] and state.model == served
        manager.stop(name)


def test_a_gated_download_becomes_the_access_link(home_env, monkeypatch):
    monkeypatch.setenv("STANDIN_GATED", "1")
    result = invoke(["engine", "start", "vllm", "--json"], home_env)
    assert result.exit_code == 4
    error = document(result)["error"]
    assert error["code"] == "model_access_denied"
    assert "https://huggingface.co/NemoStation/Marlin-2B" in error["hint"]
    assert "Traceback" not in result.stdout


def test_an_engine_that_dies_while_starting_reports_its_log(engine_home, tmp_path, offline_models):
    settings = load_settings({"engine.extra_args": ["--no-such-flag"]}, env={"MARLIN_HOME": str(engine_home)})
    with pytest.raises(EngineFailed) as failed:
        EngineManager(settings).start("vllm", port=free_port())
    assert "unrecognized arguments: --no-such-flag" in failed.value.message
    assert failed.value.hint.endswith("marlin.log.")


def test_a_taken_port_is_named(engine_home):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(EngineFailed, match=f"port {port}"):
            EngineManager(load_settings(env={"MARLIN_HOME": str(engine_home)})).start("vllm", port=port)


def test_a_configured_server_is_used_as_is(engine_home, simulator):
    settings = load_settings(env={"MARLIN_HOME": str(engine_home), "MARLIN_BASE_URL": simulator.base_url})
    assert ensure_server(settings) is settings


def test_local_setup_installs_starts_tests_and_makes_the_engine_the_default(home_env, engine_home):
    config = engine_home / "config.toml"
    config.write_text('[server]\nbase_url = "http://127.0.0.1:9/v1"\n'
                      + config.read_text().replace('default = "vllm"', 'default = "sglang"'))
    result = invoke(["setup", "--local", "vllm", "--yes", "--json"], home_env)
    assert result.exit_code == 0, result.stdout + result.stderr
    done = document(result)
    assert done["mode"] == "local" and done["engine"] == "vllm" and done["check"]["format_ok"]
    stored = (engine_home / "config.toml").read_text()
    assert 'default = "vllm"' in stored and "base_url" not in stored  # a stored URL would shadow the engine
    report = document(invoke(["doctor", "--json"], home_env))
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["engine"]["detail"].startswith("vllm running at http://127.0.0.1:")
    assert checks["video_request"]["status"] == "ok"


def test_a_second_server_for_a_local_planner_runs_beside_marlin(home_env):
    manager = EngineManager(load_settings(env=home_env))
    marlin = manager.start("vllm", port=free_port())
    planner = manager.start("vllm", role="planner", model="Qwen/Qwen3-4B", port=free_port())
    try:
        assert "--hf-overrides" not in planner.command and planner.command[1:3] == ["serve", "Qwen/Qwen3-4B"]
        assert [m["id"] for m in httpx.get(planner.base_url + "/models", timeout=5).json()["data"]] == ["Qwen/Qwen3-4B"]
        assert manager.status("vllm").healthy and manager.status("vllm", "planner").healthy
    finally:
        assert manager.stop("vllm", "planner") and manager.stop("vllm")
    assert marlin.port != planner.port


def test_a_server_stays_known_when_the_system_clock_is_stepped(home_env, monkeypatch):
    """NTP (or a user) stepping the clock moves every process's wall-clock start time; the server is still ours."""
    import psutil

    if not hasattr(psutil, "_pslinux"):
        pytest.skip("the clock-derived start time is a Linux matter")
    manager = EngineManager(load_settings(env=home_env))
    started = manager.start("vllm", port=free_port())
    stepped = psutil._pslinux.boot_time() + 2.0
    monkeypatch.setattr(psutil._pslinux, "boot_time", lambda: stepped)
    assert abs(psutil.Process(started.pid).create_time() - started.created) > 1  # the step is visible
    try:
        status = manager.status("vllm")
        assert status.running and status.healthy and status.pid == started.pid
    finally:
        assert manager.stop("vllm"), "the running server was forgotten, so it cannot be stopped"
    assert not psutil.pid_exists(started.pid) or psutil.Process(started.pid).status() == psutil.STATUS_ZOMBIE


def test_setup_serves_a_planner_beside_marlin_doctor_shows_both_and_ask_verifies_with_its_judge(
        home_env, engine_home, tmp_path, footage, monkeypatch):
    import shutil

    # Real requests, but only to the stand-in engine's scripted planner on a loopback port.
    monkeypatch.setattr("pydantic_ai.models.ALLOW_MODEL_REQUESTS", True)
    config = engine_home / "config.toml"
    saved = config.read_text()
    invoke(["engine", "stop", "vllm"], home_env)
    model = "Qwen/Qwen2.5-3B-Instruct"
    try:
        result = invoke(["setup", "--local", "vllm", "--planner", model, "--yes", "--json"], home_env)
        assert result.exit_code == 0, result.stdout + result.stderr
        done = document(result)
        assert done["planner"] == model and done["planner_check"]["verdict"] is not None
        stored = config.read_text()
        assert f'planner_model = "{model}"' in stored and f'model = "{model}"' in stored
        manager = EngineManager(load_settings(env=home_env))
        marlin, planner = manager.state("vllm"), manager.state("vllm", "planner")
        assert marlin.command[marlin.command.index("--gpu-memory-utilization") + 1] == "0.6"
        assert planner.command[planner.command.index("--gpu-memory-utilization") + 1] == "0.3"

        checks = {c["name"]: c for c in document(invoke(["doctor", "--json"], home_env))["checks"]}
        assert checks["engine"]["detail"].startswith("vllm running at ")
        assert checks["planner_engine"]["status"] == "ok"
        assert checks["planner_engine"]["detail"].startswith(f"vllm serving {model} at http://127.0.0.1:")
        assert checks["planner"]["status"] == "ok" and model in checks["planner"]["detail"]

        invoke(["engine", "stop", "vllm", "--role", "planner"], home_env)  # ask starts it again on demand
        folder = tmp_path / "footage"
        folder.mkdir()
        shutil.copy(footage["short_field"], folder / "field.mp4")
        answer = document(invoke(["ask", "when does the red circle appear", "--in", str(folder), "--json"], home_env))
        assert any(step["step"] == "plan" and model in step["detail"] for step in answer["trace"])
        assert answer["found"] and any(e["kind"] == "judge" for e in answer["moments"][0]["evidence"])
    finally:
        invoke(["engine", "stop", "vllm", "--role", "planner"], home_env)
        config.write_text(saved)


def test_the_python_api_also_starts_the_local_engine_on_demand(home_env, footage):
    from marlin_agent import VideoAgent

    agent = VideoAgent(env={k: v for k, v in home_env.items() if v is not None})
    result = agent.find("a red circle appears", footage["short_field"])
    assert result.candidates and agent.settings.server.base_url.startswith("http://127.0.0.1:")


def test_doctor_starts_an_installed_engine_to_check_it_unless_told_not_to(home_env):
    invoke(["engine", "stop", "vllm"], home_env)
    quick = document(invoke(["doctor", "--json", "--no-start"], home_env))
    engine = next(c for c in quick["checks"] if c["name"] == "engine")
    assert "not running" in engine["detail"] and not any(c["name"] == "video_request" for c in quick["checks"])
    full = document(invoke(["doctor", "--json"], home_env))
    checks = {c["name"]: c["status"] for c in full["checks"]}
    assert checks["engine"] == "ok" and checks["video_request"] == "ok" and checks["platform"] == "ok"


def test_the_mcp_server_starts_the_engine_in_the_background_and_answers_once_it_is_up(home_env, engine_home,
                                                                                     tmp_path, footage, monkeypatch):
    import shutil

    from tests.mcp_client import session as _session

    invoke(["engine", "stop", "vllm"], home_env)
    config = engine_home / "config.toml"
    saved = config.read_text()
    config.write_text(saved + "\n[mcp]\ncall_seconds = 2.0\n")
    monkeypatch.setenv("STANDIN_WARMUP", "5")  # loading weights outlasts one call
    shutil.copy(footage["short_field"], tmp_path / "clip.mp4")
    try:
        async def work(client):
            first = await client.call_tool("caption", {"video": "clip.mp4"})
            for _ in range(20):
                later = await client.call_tool("caption", {"video": "clip.mp4"})
                if not later.is_error:
                    break
            return first, later

        first, later = _session({k: v for k, v in home_env.items() if v is not None}, tmp_path, work)
    finally:
        config.write_text(saved)
    assert first.is_error and "engine_starting" in first.content[0].text
    assert not later.is_error, later.content
    assert later.structured_content["events"][0]["text"] == "a red circle appears"


def test_uninstall_stops_the_engine_and_removes_its_environment(tmp_path, engine_home):
    import shutil

    home = tmp_path / "home"
    shutil.copytree(engine_home / "engines" / "sglang", home / "engines" / "sglang", symlinks=True)
    shutil.copy(engine_home / "config.toml", home / "config.toml")
    env = {"MARLIN_HOME": str(home)}
    manager = EngineManager(load_settings(env=env))
    state = manager.start("sglang", port=free_port())
    removed = document(invoke(["engine", "uninstall", "sglang", "--json"], env))
    assert removed == {"schema_version": "1", "engine": "sglang", "removed": True}
    assert not (home / "engines" / "sglang").exists()
    with pytest.raises(httpx.HTTPError):
        httpx.get(state.base_url + "/models", timeout=2)
    assert document(invoke(["engine", "uninstall", "sglang", "--json"], env))["removed"] is False


def test_a_chosen_engine_that_is_gone_is_named_instead_of_no_server(tmp_path, footage):
    env = {"MARLIN_HOME": str(tmp_path), "MARLIN_BASE_URL": None, "MARLIN_ENGINE": "cpu"}
    result = invoke(["caption", str(footage["short_field"]), "--json"], env)
    assert result.exit_code == 2
    error = document(result)["error"]
    assert error["code"] == "engine_not_installed" and "engine install cpu" in error["hint"]


def test_requests_to_the_cpu_engine_go_one_at_a_time_with_a_long_timeout(tmp_path, simulator):
    import os

    import psutil

    from marlin_agent.engines import EngineState

    settings = load_settings(env={"MARLIN_HOME": str(tmp_path), "MARLIN_ENGINE": "cpu"})
    folder = tmp_path / "engines" / "cpu"
    folder.mkdir(parents=True)
    port = int(simulator.base_url.rsplit(":", 1)[1].split("/")[0])
    (folder / "marlin.json").write_text(EngineState(  # a CPU engine already running (here: the simulator)
        engine="cpu", role="marlin", pid=os.getpid(), host="127.0.0.1", port=port, model="NemoStation/Marlin-2B",
        command=["cpu_server.py"], log=str(folder / "marlin.log"), started_at="now",
        created=psutil.Process().create_time()).model_dump_json())
    served = ensure_server(settings)
    assert served.server.base_url == simulator.base_url
    assert served.server.concurrency == 1 and served.server.request_timeout >= 3600


def test_stop_never_signals_a_process_that_merely_reuses_the_recorded_pid(tmp_path):
    """After a crash or reboot the PID in a state file can belong to someone else's program."""
    import subprocess

    import psutil

    from marlin_agent.engines import EngineState

    stranger = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        manager = EngineManager(load_settings(env={"MARLIN_HOME": str(tmp_path)}))
        folder = manager.folder("vllm")
        folder.mkdir(parents=True, exist_ok=True)
        state_file = folder / "marlin.json"
        state_file.write_text(EngineState(
            engine="vllm", role="marlin", pid=stranger.pid, host="127.0.0.1", port=1, model="m", command=["vllm"],
            log=str(folder / "marlin.log"), started_at="then",
            created=psutil.Process(stranger.pid).create_time() - 3600).model_dump_json())

        assert manager.stop("vllm") is False
        assert stranger.poll() is None, "a process that is not the engine was signalled"
        assert not state_file.exists(), "the stale state file stays behind"
        assert manager.status("vllm").running is False
    finally:
        stranger.kill()
        stranger.wait()


# A package that adds an engine: its own install requirements and its own server command (here the stand-in's
# vLLM command line, as a third-party engine would ship a launcher of its own).
TOY_ENGINE = '''
from marlin_agent.engines.recipes import MARLIN_MODEL, VLLM_OVERRIDE, Recipe


def serve(launch):
    if launch.model:  # a planner beside Marlin
        return [str(launch.bin("vllm")), "serve", launch.model, "--enable-auto-tool-choice"]
    return [str(launch.bin("vllm")), "serve", MARLIN_MODEL, "--hf-overrides", VLLM_OVERRIDE,
            "--allowed-local-media-path", str(launch.media_dir)]


TOY = Recipe("toy", "Toy engine", ("toy-engine",), "any", serve)
'''


def test_an_engine_another_package_adds_is_installed_started_listed_and_stopped_like_the_built_in_ones(
        tmp_path, monkeypatch, footage):
    import importlib

    from marlin_agent.engines import recipes
    from tests.plugins import installed_plugin

    site = installed_plugin(tmp_path, "marlin_toy_engine", TOY_ENGINE,
                            {"marlin_agent.engines": {"toy": "marlin_toy_engine:TOY"}})
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    recipes.cache_clear()
    home = tmp_path / "home"
    home.mkdir()
    wheel = build_wheel(tmp_path / "wheel")
    (home / "config.toml").write_text(
        f'[engine]\ncheck_platform = false\nstart_timeout = 60.0\ndefault = "toy"\nport = {free_port()}\n'
        f'[engine.requirements]\ntoy = ["--no-index", {json.dumps(str(wheel))}]\n')
    env = {"MARLIN_HOME": str(home), "MARLIN_BASE_URL": None}
    try:
        installed = invoke(["engine", "install", "--json"], env)
        assert installed.exit_code == 0, installed.stdout + installed.stderr
        assert document(installed)["venv"] == str(home / "engines" / "toy" / "venv")
        started = document(invoke(["engine", "start", "--json"], env))
        assert started["engine"] == "toy" and started["healthy"] and started["model"] == "NemoStation/Marlin-2B"
        caption = invoke(["caption", str(footage["short_field"]), "--json"], env)  # no server set: the default
        assert caption.exit_code == 0, caption.stdout + caption.stderr
        assert document(caption)["events"][0]["text"] == "a red circle appears"
        listed = document(invoke(["engine", "status", "--json"], env))["engines"]
        assert [e["engine"] for e in listed if e["role"] == "marlin"] == ["vllm", "sglang", "mlx", "cpu", "toy"]
        assert [e["engine"] for e in listed if e["running"]] == ["toy"]
    finally:
        assert document(invoke(["engine", "stop", "--json"], env))["stopped"] is True
        recipes.cache_clear()
