"""The resident process: later library commands run in a warm fork, exactly as they would alone."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.resident import client

pytestmark = pytest.mark.skipif(not client.supported(), reason="needs fork and descriptor passing")


@pytest.fixture(scope="module")
def clips(make_footage, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("resident-clips")
    for n, (colour, shape) in enumerate([("red", "circle"), ("blue", "square")]):
        make_footage(f"resident{n}", duration=16, width=160, height=120, fps=4,
                     events=[{"colour": colour, "shape": shape, "start": 3, "end": 8}]).rename(folder / f"clip{n}.mp4")
    return folder


@pytest.fixture
def resident_env(tmp_path, offline_models, simulator):
    """An environment with the resident on, in a socket folder of the test's own (short: a socket's
    path has a length limit); its resident is stopped afterwards."""
    runtime = Path(tempfile.mkdtemp(prefix="mr-", dir="/tmp"))
    env = {**os.environ, "MARLIN_RESIDENT": "auto", "XDG_RUNTIME_DIR": str(runtime),
           "MARLIN_HOME": str(tmp_path / "home"), "MARLIN_BASE_URL": simulator.base_url, **offline_models}
    yield env
    for log in (runtime / "marlin-agent").glob("*.log"):
        for pid in re.findall(r"(?:resident|child) (\d+)", log.read_text()):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    shutil.rmtree(runtime, ignore_errors=True)


def _cli(env, *args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "marlin_agent", *args], env=env, capture_output=True, text=True,
                          cwd="/", timeout=240, **kwargs)


def _folder(env) -> Path:
    return Path(env["XDG_RUNTIME_DIR"]) / "marlin-agent"


def _log(env) -> str:
    return "".join(p.read_text() for p in _folder(env).glob("*.log"))


def _logged(env, pattern: str, seconds: float = 20) -> bool:
    """Whether the resident's log comes to hold ``pattern``: the command tells its caller its status
    itself, a moment before the resident notes its end."""
    deadline = time.monotonic() + seconds
    while not re.search(pattern, _log(env)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _sockets(env) -> set[Path]:
    return set(_folder(env).glob("*.sock"))


def _wait_for_resident(env, before: set[Path], seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(client.listening(path) for path in _sockets(env) - before):
            return
        time.sleep(0.3)
    pytest.fail(f"no resident came up; its log: {_log(env)!r}")


def _started_resident(env, clips) -> None:
    before = _sockets(env) if _folder(env).is_dir() else set()
    assert _cli(env, "index", str(clips), "--no-transcribe", "--json").returncode == 0
    assert _sockets(env) == before, "a single command must leave nothing running"
    assert _cli(env, "search", "a red circle", "--json").returncode == 0
    _wait_for_resident(env, before)


def test_from_the_second_command_on_a_resident_runs_commands_with_the_same_output(resident_env, clips):
    _started_resident(resident_env, clips)
    alone = _cli({**resident_env, "MARLIN_RESIDENT": "off"}, "search", "a red circle", "--json")
    served = _cli(resident_env, "search", "a red circle", "--json")
    assert served.returncode == alone.returncode == 0
    assert json.loads(served.stdout) == json.loads(alone.stdout)
    assert _logged(resident_env, r"search \(child \d+\) exited 0"), _log(resident_env)


def test_a_failing_command_keeps_its_exit_status_and_error_in_the_resident(resident_env, clips):
    _started_resident(resident_env, clips)
    alone = _cli({**resident_env, "MARLIN_RESIDENT": "off"}, "ask", "when", "--in", "/no/such/folder", "--json")
    served = _cli(resident_env, "ask", "when", "--in", "/no/such/folder", "--json")
    assert served.returncode == alone.returncode != 0
    assert json.loads(served.stdout)["error"] == json.loads(alone.stdout)["error"]
    assert _logged(resident_env, r"ask \(child \d+\) exited [1-9]"), _log(resident_env)


def test_footage_indexed_between_two_commands_is_seen_by_the_next(resident_env, clips, make_footage, tmp_path):
    _started_resident(resident_env, clips)
    later = tmp_path / "later"
    later.mkdir()
    make_footage("resident-late", duration=16, width=160, height=120, fps=4,
                 events=[{"colour": "yellow", "shape": "triangle", "start": 3, "end": 8}]).rename(later / "late.mp4")
    assert _cli(resident_env, "index", str(later), "--no-transcribe", "--json").returncode == 0
    hits = json.loads(_cli(resident_env, "search", "a yellow triangle", "--json").stdout)["results"]
    assert hits and hits[0]["video"]["title"] == "late"


def test_ctrl_c_reaches_the_command_and_a_killed_caller_ends_it(resident_env, clips):
    _started_resident(resident_env, clips)
    with MarlinSimulator(latency=60) as slow:
        env = {**resident_env, "MARLIN_BASE_URL": slow.base_url}
        _started_resident(env, clips)  # another server is another environment: its own resident
        for stop, expected in ((signal.SIGINT, 130), (signal.SIGKILL, None)):
            asked = slow.state.received
            caller = subprocess.Popen([sys.executable, "-m", "marlin_agent", "caption", str(clips / "clip0.mp4"),
                                       "--json"], env=env, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 60
            while slow.state.received == asked and time.monotonic() < deadline:  # the command is waiting on Marlin
                time.sleep(0.1)
            assert caller.poll() is None and slow.state.received > asked
            caller.send_signal(stop)
            assert caller.wait(timeout=30) == (expected if expected is not None else -signal.SIGKILL)
            caller.communicate()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(re.findall(r"caption \(child \d+\) exited", _log(env))) < 2:
            time.sleep(0.5)
        ended = re.findall(r"caption \(child \d+\) exited (\d+)", _log(env))
        assert len(ended) == 2, _log(env)  # both commands stopped, neither waited out the server


def test_an_mcp_server_started_by_a_host_runs_in_the_resident_on_the_hosts_stdio(resident_env, clips):
    import asyncio

    from mcp import Client, StdioServerParameters

    _started_resident(resident_env, clips)
    params = StdioServerParameters(command=sys.executable, args=["-m", "marlin_agent", "mcp", "--root", str(clips)],
                                   env=resident_env, cwd="/")

    async def session():
        async with Client(params, read_timeout_seconds=120) as host:
            tools = {tool.name for tool in (await host.list_tools()).tools}
            found = await host.call_tool("search", {"query": "a blue square", "k": 2})
            return tools, found.structured_content

    tools, found = asyncio.run(session())
    assert {"ask", "search", "job_status"} <= tools
    assert found["results"][0]["video"]["title"] == "clip1"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not re.search(r"mcp \(child \d+\) exited 0", _log(resident_env)):
        time.sleep(0.5)
    assert re.search(r"mcp \(child \d+\) exited 0", _log(resident_env))  # it ran there, and ended with the host


def _resident_pid(env) -> int:
    return int(re.findall(r"resident (\d+) ready", _log(env))[-1])


def _raw_request(env, payload: bytes, send_fds: bool = True) -> tuple[int, bytes]:
    """Send ``payload`` to the resident as a caller would, with a pipe's write end as every standard stream;
    the pipe's read end, and what the resident answered."""
    import socket

    [path] = [p for p in _sockets(env) if client.listening(p)]
    reader, writer = os.pipe()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(15)
    conn.connect(str(path))
    assert conn.recv(1) == b"?"  # awake: the streams may go
    socket.send_fds(conn, [payload], [writer, writer, writer] if send_fds else [])
    os.close(writer)  # ours: from here only the resident (or a child) may hold the write end
    try:
        answer = conn.recv(64)
    except OSError:
        answer = b""
    conn.close()
    return reader, answer


@pytest.mark.parametrize("payload", [
    client._HEADER.pack(2) + b"[]",  # valid JSON, not an object
    client._HEADER.pack(13) + b'{"cwd": "/x"}',  # no argv
    client._HEADER.pack(64 * 1024 * 1024),  # too large
    client._HEADER.pack(500) + b'{"argv": ["m", "search"',  # cut short
], ids=["a-list", "no-argv", "oversized", "cut-short"])
def test_a_request_that_is_no_command_is_refused_keeps_no_descriptor_and_the_resident_goes_on(
        resident_env, clips, payload):
    import select

    _started_resident(resident_env, clips)
    reader, answer = _raw_request(resident_env, payload)
    assert answer == b""  # refused: nothing taken, nothing run
    # Every copy of the caller's pipe is closed: a `| tail` reading it ends.
    assert select.select([reader], [], [], 10)[0] and os.read(reader, 10) == b""
    os.close(reader)
    served = _cli(resident_env, "search", "a red circle", "--json")
    assert served.returncode == 0 and json.loads(served.stdout)["results"]
    assert _logged(resident_env, r"search \(child \d+\) exited 0"), _log(resident_env)


def test_callers_that_connect_and_send_nothing_delay_no_other_command(resident_env, clips):
    import socket

    _started_resident(resident_env, clips)
    [path] = [p for p in _sockets(resident_env) if client.listening(p)]
    silent = []
    for _ in range(3):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(path))
        silent.append(conn)
    try:
        started = time.monotonic()
        served = _cli(resident_env, "search", "a red circle", "--json")
        took = time.monotonic() - started
    finally:
        for conn in silent:
            conn.close()
    assert served.returncode == 0
    assert took < 9, f"waited {took:.1f} s behind callers that sent nothing (each held the resident 10 s)"
    assert _logged(resident_env, r"search \(child \d+\) exited 0"), _log(resident_env)  # and it ran there


def test_a_stopped_resident_is_passed_by_and_a_terminated_command_ends(resident_env, clips):
    _started_resident(resident_env, clips)
    resident = _resident_pid(resident_env)
    os.kill(resident, signal.SIGSTOP)
    try:
        alone = _cli(resident_env, "search", "a red circle", "--json")
        assert alone.returncode == 0 and json.loads(alone.stdout)["results"]  # ran in its own process
        caller = subprocess.Popen([sys.executable, "-m", "marlin_agent", "search", "a red circle", "--json"],
                                  env=resident_env, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.5)  # while it waits to be taken, or runs on its own
        caller.send_signal(signal.SIGTERM)
        assert caller.wait(timeout=30) != 0
        caller.communicate()
    finally:
        os.kill(resident, signal.SIGCONT)
    served = _cli(resident_env, "search", "a blue square", "--json")
    assert served.returncode == 0 and json.loads(served.stdout)["results"]
    assert _logged(resident_env, r"search \(child \d+\) exited")
    time.sleep(1.0)  # room for a second one, were the command passed by also run there
    assert len(re.findall(r"search \(child \d+\) exited", _log(resident_env))) == 1, _log(resident_env)


def test_the_callers_niceness_is_the_commands(resident_env, clips):
    _started_resident(resident_env, clips)
    host = subprocess.Popen(["nice", "-n", "7", sys.executable, "-m", "marlin_agent", "mcp", "--root", str(clips)],
                            env=resident_env, cwd="/", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not re.search(r"child (\d+) loaded", _log(resident_env)):
            time.sleep(0.2)
        time.sleep(2.0)  # the command taken by the waiting child
        children = [int(p) for p in re.findall(r"child (\d+) loaded", _log(resident_env))]
        niceness = {}
        for pid in children:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                niceness[pid] = int(fields[16])
            except (OSError, IndexError):
                continue
        assert 7 in niceness.values(), niceness  # the mcp server runs at the caller's niceness
    finally:
        host.stdin.close()
        host.wait(timeout=30)


def _left(env, seconds: float = 40) -> bool:
    """Whether the resident started in ``env`` leaves (its socket gone) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and _sockets(env):
        time.sleep(1)
    return not _sockets(env)


def test_a_resident_holding_more_than_its_memory_cap_leaves(resident_env, clips):
    env = {**resident_env, "MARLIN_RESIDENT_MAX_MB": "64"}
    _started_resident(env, clips)
    assert _left(env) and "MARLIN_RESIDENT_MAX_MB" in _log(env)


def test_a_resident_leaves_when_idle(resident_env, clips):
    env = {**resident_env, "MARLIN_RESIDENT_IDLE": "5"}
    _started_resident(env, clips)
    assert _left(env) and "leaving: idle" in _log(env)


def test_a_resident_belongs_to_one_environment():
    base = {"MARLIN_HOME": "/a", "PATH": "/usr/bin"}
    assert client.fingerprint(base) == client.fingerprint({**base, "PWD": "/elsewhere", "SHLVL": "3"})
    assert client.fingerprint(base) != client.fingerprint({**base, "MARLIN_HOME": "/b"})
    assert client.fingerprint(base) != client.fingerprint({**base, "HF_HUB_OFFLINE": "1"})


def test_a_socket_folder_others_can_write_to_is_never_used():
    base = Path(tempfile.mkdtemp(prefix="mr-", dir="/tmp"))
    try:
        shared = base / "marlin-agent"
        shared.mkdir()
        shared.chmod(0o777)
        assert client.runtime_dir({"XDG_RUNTIME_DIR": str(base)}) is None
        shared.chmod(0o700)
        assert client.runtime_dir({"XDG_RUNTIME_DIR": str(base)}) == shared
    finally:
        shutil.rmtree(base)


def test_a_runtime_folder_too_deep_for_a_socket_path_gives_way_to_a_short_private_one(tmp_path):
    deep = tmp_path / ("d" * 90)
    deep.mkdir()
    folder = client.runtime_dir({"XDG_RUNTIME_DIR": str(deep)})
    assert folder == Path("/tmp") / f"marlin-agent-{os.getuid()}"
    assert len(str(client.socket_path(folder, "k" * 20))) < 100


def test_every_library_command_can_go_to_the_resident():
    from marlin_agent.app.capabilities import CAPABILITIES

    assert client.FORWARDED == {c.name.replace("_", "-") for c in CAPABILITIES} | {"mcp"}


@pytest.mark.parametrize("argv, forwarded", [
    (["ask", "when does it rain", "--in", "."], True),
    (["search", "rain"], True),
    (["ask", "--help"], False),
    (["setup"], False),
    (["mcp", "--root", "."], True),
    (["engine", "start", "cpu"], False),
    ([], False),
])
def test_only_library_commands_go_to_the_resident(argv, forwarded):
    assert client.wants(argv) is forwarded


def test_the_resident_can_be_turned_off():
    assert not client.enabled({"MARLIN_RESIDENT": "off"})
    assert client.enabled({}) is client.supported()


@pytest.mark.parametrize(("pause", "starts"), [(1.0, True), (30.0, False)])
def test_the_pause_between_two_commands_decides_a_resident_not_how_long_they_ran(pause, starts, monkeypatch):
    base = Path(tempfile.mkdtemp(prefix="mr-", dir="/tmp"))
    try:
        env = {"XDG_RUNTIME_DIR": str(base), "MARLIN_RESIDENT_IDLE": "5", "PATH": os.environ["PATH"]}
        folder = client.runtime_dir(env)
        seen = folder / f"{client.fingerprint(env)}.seen"
        seen.touch()
        first_ended = time.time() - 60  # the second command then ran for a minute, longer than the idle time
        os.utime(seen, (first_ended, first_ended))
        spawned = []
        monkeypatch.setattr(subprocess, "Popen", lambda *args, **kwargs: spawned.append(args))
        client.start_in_background(first_ended + pause, env)
        assert bool(spawned) is starts
    finally:
        shutil.rmtree(base)
