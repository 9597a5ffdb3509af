"""`setup` then `doctor`: a hosted endpoint with a key, the key kept out of every output and log."""

from __future__ import annotations

import re
import stat
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.cli.main import app
from tests.cli_runner import document, invoke

SECRET = "sk-marlin-test-5e3c1f0a9b"


@pytest.fixture
def keyed_simulator():
    with MarlinSimulator(api_key=SECRET) as sim:
        yield sim


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def _clean_env(home) -> dict:
    return {"MARLIN_HOME": str(home), "MARLIN_BASE_URL": None, "MARLIN_API_KEY": None}


def test_doctor_fails_when_verification_cannot_run_and_says_when_weights_do_not_fit_the_model(home, tmp_path,
                                                                                            offline_models):
    missing = invoke(["doctor", "--json"], {**_clean_env(home), "MARLIN_VERIFY_MODEL": "some-org/unknown-nli"})
    checks = {c["name"]: c for c in document(missing)["checks"]}
    assert missing.exit_code != 0 and checks["verification"]["status"] == "fail"
    assert "models pull" in checks["verification"]["fix"]

    other = tmp_path / "another-nli"  # a model the shipped calibrations do not know
    other.mkdir()
    source = Path(offline_models["MARLIN_VERIFY_MODEL"])
    for name in ("config.json", "tokenizer.json"):
        (other / name).write_bytes((source / name).read_bytes())
    (other / "model.onnx").write_bytes(b"not the same model")
    unknown = invoke(["doctor", "--json"], {**_clean_env(home), **offline_models, "MARLIN_VERIFY_MODEL": str(other)})
    checks = {c["name"]: c for c in document(unknown)["checks"]}
    assert checks["verification"]["status"] == "warn"
    assert "uncalibrated" in checks["verification"]["detail"]
    assert "models pull" in checks["verification"]["fix"] and "eval presence --fit" in checks["verification"]["fix"]


def test_doctor_names_every_missing_model_at_once_and_models_pull_says_what_it_could_not_fetch(home, tmp_path):
    empty = tmp_path / "no-wordnet"
    empty.mkdir()
    env = {**_clean_env(home), "MARLIN_EMBED_MODEL": "some-org/unknown-embedder",
           "MARLIN_VERIFY_MODEL": "some-org/unknown-nli", "MARLIN_WHISPER_MODEL": "some-org/unknown-whisper",
           "MARLIN_WORDNET": str(empty), "HF_HUB_OFFLINE": "1"}
    doctor = invoke(["doctor", "--json"], env)
    checks = {c["name"]: c for c in document(doctor)["checks"]}
    assert doctor.exit_code != 0
    for role in ("embeddings", "verification", "wordnet", "speech"):
        assert checks[role]["status"] == "fail", checks[role]
        assert "marlin-agent models pull" in checks[role]["fix"]

    pull = invoke(["models", "pull", "--json"], env)
    error = document(pull)["error"]
    assert pull.exit_code != 0 and error["code"] == "model_unavailable"
    assert "4 of 4 models could not be fetched" in error["message"]
    for name in ("unknown-embedder", "unknown-nli", "unknown-whisper", "WordNet"):
        assert name in error["message"]
    assert "cannot be reached" in error["message"]
    assert not re.search(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+(?:Error|Exception)\b", error["message"] + error["hint"])
    assert "models pull" not in error["hint"]  # it is the command that just ran


def test_setup_says_what_is_still_missing_before_any_next_step(keyed_simulator, home, tmp_path):
    empty = tmp_path / "no-wordnet"
    empty.mkdir()
    env = {**_clean_env(home), "MARLIN_EMBED_MODEL": "some-org/unknown-embedder", "MARLIN_WORDNET": str(empty),
           "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    setup = invoke(["setup", "--hosted", "--base-url", keyed_simulator.base_url, "--api-key", SECRET, "--yes"], env)
    assert setup.exit_code == 0, setup.stdout + setup.stderr
    assert "Not ready yet" in setup.stdout and "Next:" not in setup.stdout
    assert "embeddings" in setup.stdout and "wordnet" in setup.stdout and "models pull" in setup.stdout
    missing = document(invoke(["setup", "--hosted", "--base-url", keyed_simulator.base_url, "--api-key", SECRET,
                               "--yes", "--json"], env))["missing"]
    assert {"embeddings", "wordnet"} <= {check["name"] for check in missing}


def _assert_secret_nowhere(result, home):
    assert SECRET not in result.stdout + result.stderr
    for path in home.rglob("*"):
        if path.is_file() and path.name != "credentials.toml":
            assert SECRET.encode() not in path.read_bytes(), path


def test_hosted_setup_then_doctor_works_and_never_shows_the_key(keyed_simulator, home, offline_models):
    env = {**_clean_env(home), **offline_models}
    setup = invoke(["setup", "--hosted", "--base-url", keyed_simulator.base_url, "--api-key", SECRET, "--yes",
                    "--json"], env)
    assert setup.exit_code == 0, setup.stdout + setup.stderr
    stored = document(setup)
    assert stored["mode"] == "hosted" and stored["api_key_stored"] is True
    assert stored["check"]["format_ok"] and stored["check"]["models"] == ["NemoStation/Marlin-2B"]
    assert stored["missing"] == []
    _assert_secret_nowhere(setup, home)

    credentials = home / "credentials.toml"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert tomllib.loads(credentials.read_text()) == {"server": {"api_key": SECRET}}
    assert tomllib.loads((home / "config.toml").read_text())["server"] == {
        "base_url": keyed_simulator.base_url, "model": "NemoStation/Marlin-2B"}

    doctor = invoke(["doctor", "--json"], env)
    report = document(doctor)
    checks = {c["name"]: c for c in report["checks"]}
    assert doctor.exit_code == 0 and report["ok"], report
    assert checks["server"]["detail"].endswith("answers with the stored key")
    assert checks["video_request"]["status"] == "ok"
    assert checks["credentials"]["status"] == "ok"
    assert checks["verification"]["status"] == "ok" and "shipped fit for" in checks["verification"]["detail"]
    _assert_secret_nowhere(doctor, home)

    human = invoke(["doctor"], env)  # the table too
    assert human.exit_code == 0 and SECRET not in human.stdout + human.stderr

    # And the stored choice is what every command now uses.
    assert keyed_simulator.state.calls  # the setup and doctor test captions


def test_a_wrong_key_fails_setup_and_stores_nothing(keyed_simulator, home):
    result = invoke(["setup", "--hosted", "--base-url", keyed_simulator.base_url, "--api-key", "sk-wrong-1234",
                     "--yes", "--json"], _clean_env(home))
    assert result.exit_code == 4
    assert document(result)["error"]["code"] == "auth_failed"
    assert "sk-wrong-1234" not in result.stdout + result.stderr
    assert not (home / "config.toml").exists() and not (home / "credentials.toml").exists()


def test_the_key_can_come_from_stdin_out_of_the_process_list(keyed_simulator, home):
    result = CliRunner().invoke(app, ["setup", "--hosted", "--base-url", keyed_simulator.base_url, "--api-key", "-",
                                      "--yes", "--json"], input=SECRET + "\n", env=_clean_env(home))
    assert result.exit_code == 0, result.stdout
    assert SECRET not in result.stdout
    assert tomllib.loads((home / "credentials.toml").read_text())["server"]["api_key"] == SECRET


def test_setup_that_cannot_ask_says_what_to_pass(home):
    result = invoke(["setup", "--json"], _clean_env(home))
    assert result.exit_code == 2
    assert "--hosted --base-url URL --api-key KEY --yes" in document(result)["error"]["hint"]


def test_doctor_turns_a_gated_model_into_the_access_link(simulator, home, offline_models):
    simulator.state.fault = "deny_model"
    result = invoke(["doctor", "--json"], {**_clean_env(home), **offline_models, "MARLIN_BASE_URL": simulator.base_url})
    assert result.exit_code == 1
    failed = [c for c in document(result)["checks"] if c["status"] == "fail"]
    assert [c["name"] for c in failed] == ["model_access"]
    assert "https://huggingface.co/NemoStation/Marlin-2B" in failed[0]["fix"]


def test_doctor_keeps_checking_past_a_broken_config_and_an_unreachable_server(home):
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[server\nbase_url = ")
    broken = document(invoke(["doctor", "--json"], _clean_env(home)))
    names = {c["name"]: c["status"] for c in broken["checks"]}
    assert names["config"] == "fail" and names["media"] == "ok" and "extra:lancedb" in names

    (home / "config.toml").write_text('[server]\nbase_url = "http://127.0.0.1:9/v1"\n')
    down = document(invoke(["doctor", "--json"], _clean_env(home)))
    server = next(c for c in down["checks"] if c["name"] == "server")
    assert server["status"] == "fail" and "server_unavailable" in server["detail"] and server["fix"]
    assert {c["name"] for c in down["checks"]} >= {"disk", "index"}
    # One complete document even when things fail: every check says what it found, failures how to fix them.
    assert down["ok"] is False and down["schema_version"]
    assert all(c["status"] in {"ok", "warn", "fail", "skip"} and c["detail"] for c in down["checks"])
    assert all(c["fix"] for c in down["checks"] if c["status"] == "fail")


def _converse(command: list[str], env: dict, script: list[tuple[str, str]], timeout: float = 120) -> str:
    """Run ``command`` on a terminal, answering each prompt (a substring) as it appears."""
    import os
    import select
    import subprocess
    import termios
    import time

    master, slave = os.openpty()
    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    seen, pending, deadline = "", list(script), time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096).decode(errors="replace")
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            if pending and pending[0][0] in seen:
                # A hidden prompt turns echo off (flushing typed-ahead input): answer only once it has.
                if "hidden" not in pending[0][0] or not termios.tcgetattr(master)[3] & termios.ECHO:
                    os.write(master, (pending.pop(0)[1] + "\n").encode())
            if process.poll() is not None and not ready:
                break
        process.wait(timeout=10)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    assert not pending, f"never asked {pending[0][0]!r}; the terminal showed:\n{seen}"
    return seen


def test_interactive_setup_asks_on_a_terminal_and_hides_the_key(keyed_simulator, home):
    import os
    import sys
    from pathlib import Path

    env = {**os.environ, "MARLIN_HOME": str(home), "COLUMNS": "200",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for name in ("MARLIN_BASE_URL", "MARLIN_API_KEY"):
        env.pop(name, None)
    screen = _converse([sys.executable, "-m", "marlin_agent", "setup"], env, [
        ("a hosted endpoint, or [2] a local engine", "1"),
        ("Base URL", keyed_simulator.base_url),
        ("API key (hidden", SECRET),
    ])
    assert "This machine: " in screen
    assert "captioned in" in screen and SECRET not in screen
    assert tomllib.loads((home / "credentials.toml").read_text())["server"]["api_key"] == SECRET


def test_doctor_checks_a_configured_planner(simulator, home):
    env = {**_clean_env(home), "MARLIN_BASE_URL": simulator.base_url, "MARLIN_PLANNER": "Qwen/Qwen3-4B"}
    up = document(invoke(["doctor", "--json"], {**env, "MARLIN_PLANNER_BASE_URL": simulator.base_url}))
    assert next(c for c in up["checks"] if c["name"] == "planner")["status"] == "ok"
    down = document(invoke(["doctor", "--json"], {**env, "MARLIN_PLANNER_BASE_URL": "http://127.0.0.1:9/v1"}))
    planner = next(c for c in down["checks"] if c["name"] == "planner")
    assert planner["status"] == "fail" and "engine start --role planner" in planner["fix"]
    unnamed = document(invoke(["doctor", "--json"], env))  # a bare name with no server
    assert next(c for c in unnamed["checks"] if c["name"] == "planner")["status"] == "fail"


def test_setup_warns_when_the_environment_would_override_the_stored_choice(keyed_simulator, simulator, home):
    env = {**_clean_env(home), "MARLIN_BASE_URL": simulator.base_url}
    result = invoke(["setup", "--hosted", "--base-url", keyed_simulator.base_url, "--api-key", SECRET, "--yes",
                     "--json"], env)
    assert result.exit_code == 0, result.stdout
    assert "MARLIN_BASE_URL" in document(result)["warnings"][0]


def test_setup_changes_only_its_keys_and_keeps_the_users_comments(keyed_simulator, home):
    home.mkdir(parents=True, exist_ok=True)
    mine = ('# my footage settings, tuned by hand\n[library]\n# the big disk\ndb = "/mnt/big/index"\n\n'
            '[server]\nconcurrency = 2  # the GPU is shared\n')
    (home / "config.toml").write_text(mine)
    setup = invoke(["setup", "--hosted", "--base-url", keyed_simulator.base_url, "--api-key", SECRET, "--yes",
                    "--skip-check"], _clean_env(home))
    assert setup.exit_code == 0, setup.stdout + setup.stderr
    text = (home / "config.toml").read_text()
    for kept in ("# my footage settings, tuned by hand", "# the big disk", "# the GPU is shared"):
        assert kept in text
    stored = tomllib.loads(text)
    assert stored["library"] == {"db": "/mnt/big/index"}
    assert stored["server"] == {"concurrency": 2, "base_url": keyed_simulator.base_url, "model": "NemoStation/Marlin-2B"}
