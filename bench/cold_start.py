"""Start-up: how long short commands take, as ratios to `marlin-agent --help` in the same run.

An indexed folder of three short clips; the simulator answers at once, and `ask` has the time the
simulator spent answering taken off, so each figure is the agent's own time: imports, models,
index checks, verification. Measured three ways:

- cold: a fresh process per command with the resident off (what the first command in a shell costs);
- resident: the same commands once the resident process is up (from the second command on);
- MCP: starting `marlin-agent mcp` and listing its tools (cold, and in the resident as a host's
  later sessions get it), and a second `ask` on a warm server.

Each figure is the median of three runs. Targets (issue #27): search <= 2x, ask <= 4x, MCP start and
list <= 2x, a second MCP ask <= 1x.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video
from evals.synthetic.offline_models import minilm_dir, nli_dir
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.resident.client import listening

RUNS = 3
QUESTION = "when does the red circle appear"


def _clips(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for n, (colour, shape) in enumerate([("red", "circle"), ("blue", "square"), ("yellow", "triangle")]):
        make_video(folder / f"clip{n}.mp4", FootageSpec(duration=20, width=160, height=120, fps=4, events=[
            SyntheticEvent(colour=colour, shape=shape, start=4, end=9)]))
    return folder


def _cli(args: list[str], env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "marlin_agent", *args], env=env, check=True, capture_output=True, cwd="/")


def _median_seconds(args: list[str], env: dict[str, str], simulator: MarlinSimulator | None = None) -> float:
    times = []
    for _ in range(RUNS):
        busy_before = simulator.state.busy_seconds if simulator else 0.0
        started = time.perf_counter()
        _cli(args, env)
        elapsed = time.perf_counter() - started
        if simulator is not None:
            elapsed -= simulator.state.busy_seconds - busy_before
        times.append(elapsed)
    return round(statistics.median(times), 3)


def _wait_for_resident(runtime: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(listening(path) for path in (runtime / "marlin-agent").glob("*.sock")):
            time.sleep(3)  # its first waiting child loads the models
            return
        time.sleep(0.5)
    raise RuntimeError("the resident did not come up")


def _mcp_params(env: dict[str, str], root: Path):
    from mcp import StdioServerParameters

    # Started from one folder, as the CLI runs above: `python -m` puts the folder first on the import path,
    # and a resident is for one import path.
    return StdioServerParameters(command=sys.executable, args=["-m", "marlin_agent", "mcp", "--root", str(root)],
                                 env=env, cwd="/")


def _mcp_listing(env: dict[str, str], root: Path) -> float:
    """Seconds from starting `marlin-agent mcp` to its list of tools, median of the runs."""
    from mcp import Client

    async def listing() -> float:
        started = time.perf_counter()
        async with Client(_mcp_params(env, root), read_timeout_seconds=240) as client:
            await client.list_tools()
            return time.perf_counter() - started

    return round(statistics.median(asyncio.run(listing()) for _ in range(RUNS)), 3)


def _mcp(env: dict[str, str], root: Path, simulator: MarlinSimulator) -> dict:
    from mcp import Client

    params = _mcp_params(env, root)

    async def listing() -> float:
        started = time.perf_counter()
        async with Client(params, read_timeout_seconds=240) as client:
            await client.list_tools()
            return time.perf_counter() - started

    async def asking() -> list[float]:
        times = []
        async with Client(params, read_timeout_seconds=240) as client:
            for _ in range(RUNS + 1):
                busy_before = simulator.state.busy_seconds
                started = time.perf_counter()
                await client.call_tool("ask", {"question": QUESTION, "paths": ["."]})
                times.append(time.perf_counter() - started - (simulator.state.busy_seconds - busy_before))
        return times[1:]  # the first ask loads the models; the figure is the ones after it

    return {"mcp_start_list_s": _mcp_listing(env, root),
            "mcp_second_ask_s": round(statistics.median(asyncio.run(asking())), 3)}


def run() -> dict:
    with tempfile.TemporaryDirectory() as scratch, MarlinSimulator(think="none") as simulator:
        root = Path(scratch)
        clips = _clips(root / "clips")
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        # Modules run from their compiled bytecode, as an installed package's do (pip compiles them at install): a
        # machine that sets PYTHONDONTWRITEBYTECODE would have every run compile the project's modules again.
        environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base = {**environment, "MARLIN_HOME": f"{scratch}/home", "MARLIN_BASE_URL": simulator.base_url,
                "MARLIN_EMBED_MODEL": str(minilm_dir()), "MARLIN_VERIFY_MODEL": str(nli_dir(root)),
                "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(runtime)}
        cold = {**base, "MARLIN_RESIDENT": "off"}
        resident = {**base, "MARLIN_RESIDENT": "auto"}
        search = ["search", "a red circle", "--json"]
        ask = ["ask", QUESTION, "--in", str(clips), "--no-transcribe", "--json"]
        _cli(["index", str(clips), "--no-transcribe", "--json"], cold)
        _cli(search, cold)  # the optimised graphs are written once, before anything is timed
        _cli(ask, cold)
        help_s = _median_seconds(["--help"], cold)
        figures = {"runs": RUNS, "help_s": help_s,
                   "cold_search_s": _median_seconds(search, cold),
                   "cold_ask_overhead_s": _median_seconds(ask, cold, simulator)}
        _cli(search, resident)
        _cli(search, resident)  # the second library command starts the resident
        _wait_for_resident(runtime)
        figures["resident_search_s"] = _median_seconds(search, resident)
        figures["resident_ask_overhead_s"] = _median_seconds(ask, resident, simulator)
        figures["resident_mcp_start_list_s"] = _mcp_listing(resident, clips)
        figures.update(_mcp(cold, clips, simulator))
        for name in ("cold_search_s", "cold_ask_overhead_s", "resident_search_s", "resident_ask_overhead_s",
                     "resident_mcp_start_list_s", "mcp_start_list_s", "mcp_second_ask_s"):
            figures[name.removesuffix("_s") + "_x_help"] = round(figures[name] / help_s, 2)
        for log in (runtime / "marlin-agent").glob("*.log"):
            for line in log.read_text().splitlines():
                if " ready in " in line:  # stop the resident: the figures are taken
                    os.kill(int(line.split("resident ")[1].split()[0]), 15)
    return figures


if __name__ == "__main__":
    print(run())
