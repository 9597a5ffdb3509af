"""A stand-in for vLLM and SGLang: takes their real command lines and serves the simulator.

A test instrument (no GPU here). It parses exactly the flags marlin-agent's engine recipes
pass (an unknown flag fails like the real CLI would), checks the JSON-valued ones parse,
honours the ones it can (host, port, served model, vLLM's allowed local media path) and
then serves the Marlin simulator, or, when started for a planner model (no Marlin override,
no video input), the scripted planner (``planner_server.py``), which like vLLM refuses tool
calls unless tool calling was switched on. Fault switches come from the environment:
``STANDIN_GATED=1`` fails like a refused gated download, ``STANDIN_WARMUP=S`` delays
readiness by S seconds, as loading weights does.

``build_wheel`` packs launchers (a ``vllm`` console script and a ``sglang.launch_server``
module) into a wheel, so tests install the stand-in into a real engine environment with
pip exactly as ``marlin-agent engine install`` installs the real engines.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import signal
import sys
import time
import zipfile
from pathlib import Path

from evals.synthetic.simulator import MarlinSimulator

GATED_LOG = (
    "huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url "
    "https://huggingface.co/NemoStation/Marlin-2B/resolve/main/config.json.\n"
    "Access to model NemoStation/Marlin-2B is restricted. You must have access to it and be authenticated."
)


def _json(text: str) -> dict:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def _vllm_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vllm", exit_on_error=True)
    parser.add_argument("subcommand", choices=["serve"])
    parser.add_argument("model")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--hf-overrides", type=_json)
    parser.add_argument("--allowed-local-media-path")
    parser.add_argument("--max-model-len", type=int)
    parser.add_argument("--mm-processor-cache-gb", type=float)
    parser.add_argument("--limit-mm-per-prompt", type=_json)
    parser.add_argument("--served-model-name")
    parser.add_argument("--api-key")
    parser.add_argument("--gpu-memory-utilization", type=_fraction)
    parser.add_argument("--enable-auto-tool-choice", action="store_true")
    parser.add_argument("--tool-call-parser", choices=["hermes", "llama3_json", "mistral", "pythonic"])
    return parser


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"a fraction of GPU memory is in (0, 1], not {text}")
    return value


def _sglang_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sglang.launch_server", exit_on_error=True)
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--tokenizer-path")
    parser.add_argument("--json-model-override-args", type=_json)
    parser.add_argument("--mm-process-config", type=_json)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--served-model-name")
    parser.add_argument("--api-key")
    parser.add_argument("--mem-fraction-static", type=_fraction)
    parser.add_argument("--context-length", type=int)
    parser.add_argument("--tool-call-parser", choices=["qwen25", "qwen", "llama3", "mistral", "pythonic"])
    for flag in ("--enable-multimodal", "--disable-cuda-graph", "--disable-radix-cache",
                 "--disable-overlap-schedule", "--trust-remote-code"):
        parser.add_argument(flag, action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    engine, rest = argv[0], argv[1:]
    args = (_vllm_parser() if engine == "vllm" else _sglang_parser()).parse_args(rest)
    model = args.served_model_name or (args.model if engine == "vllm" else args.model_path)
    print(f"INFO stand-in {engine} (synthetic, for tests): {' '.join(rest)}", flush=True)
    if engine == "sglang" and "MLX" in model and os.environ.get("SGLANG_USE_MLX") != "1":
        sys.exit("the MLX backend needs SGLANG_USE_MLX=1")
    print(f"INFO Loading weights for {model} ...", flush=True)
    if os.environ.get("STANDIN_GATED") == "1":
        print(GATED_LOG, flush=True)
        sys.exit(1)
    time.sleep(float(os.environ.get("STANDIN_WARMUP", "0")))
    planner = args.hf_overrides is None if engine == "vllm" else not args.enable_multimodal
    if planner:
        _serve_planner(engine, args, model)
        return
    simulator = MarlinSimulator(args.host, args.port, served_model=model, api_key=args.api_key,
                                allowed_media_dir=getattr(args, "allowed_local_media_path", None))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"INFO Uvicorn running on http://{args.host}:{args.port}", flush=True)
    try:
        simulator._server.serve_forever()
    finally:
        print("INFO Shutting down", flush=True)


def _serve_planner(engine: str, args: argparse.Namespace, model: str) -> None:
    from evals.synthetic.planner_server import PlannerServer

    tool_calling = (args.enable_auto_tool_choice and bool(args.tool_call_parser) if engine == "vllm"
                    else bool(args.tool_call_parser))
    server = PlannerServer(args.host, args.port, model, tool_calling)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"INFO Uvicorn running on http://{args.host}:{args.port} (planner, tool calling "
          f"{'on' if tool_calling else 'off'})", flush=True)
    try:
        server.serve_forever()
    finally:
        print("INFO Shutting down", flush=True)


# --- the installable launchers ---------------------------------------------------------


def _launcher(engine: str, python: str, repo: str) -> str:
    return (
        "import os, sys\n\n\n"
        "def main():\n"
        f"    os.environ['PYTHONPATH'] = {repo!r} + os.pathsep + os.environ.get('PYTHONPATH', '')\n"
        f"    os.execv({python!r}, [{python!r}, '-m', 'evals.synthetic.standin_engine', {engine!r}, *sys.argv[1:]])\n"
    )


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(folder: Path, python: str = sys.executable,
                repo: str = str(Path(__file__).resolve().parents[2])) -> Path:
    """A wheel whose ``vllm`` command and ``sglang.launch_server`` module start this stand-in."""
    dist = "standin_engines-0.1.dist-info"
    files = {
        "vllm_standin.py": _launcher("vllm", python, repo),
        "sglang/__init__.py": "",
        "sglang/launch_server.py": _launcher("sglang", python, repo) + "\n\nif __name__ == '__main__':\n    main()\n",
        f"{dist}/METADATA": "Metadata-Version: 2.1\nName: standin-engines\nVersion: 0.1\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: marlin-agent-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/entry_points.txt": "[console_scripts]\nvllm = vllm_standin:main\n",
    }
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "standin_engines-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        records = []
        for name, text in files.items():
            archive.writestr(name, text)
            records.append(_record_line(name, text.encode()))
        archive.writestr(f"{dist}/RECORD", "\n".join([*records, f"{dist}/RECORD,,"]) + "\n")
    return wheel


if __name__ == "__main__":
    main()


_BACKEND = '''"""An in-tree build backend: the "build" hands over the stand-in wheel kept beside it."""
import os
import shutil

_WHEEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist", {name!r})


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    shutil.copy(_WHEEL, wheel_directory)
    return {name!r}
'''


def make_source_repository(folder: Path, wheel: Path, branch: str = "marlin-mlx") -> str:
    """A git repository laid out like SGLang's: ``python/pyproject.toml`` cannot build here, and
    ``python/pyproject_other.toml`` (the Apple-Silicon project file) builds the stand-in.
    Returns ``"file://…#branch"`` for ``[engine.sources]``."""
    import shutil
    import subprocess

    project = folder / "python"
    (project / "dist").mkdir(parents=True)
    shutil.copy(wheel, project / "dist" / wheel.name)
    (project / "standin_backend.py").write_text(_BACKEND.format(name=wheel.name))
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["cuda-only-requirement-that-does-not-exist"]\nbuild-backend = "nowhere"\n')
    (project / "pyproject_other.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "standin_backend"\nbackend-path = ["."]\n\n'
        '[project]\nname = "standin-engines"\nversion = "0.1"\n\n[project.optional-dependencies]\nall_mps = []\n')
    git = ["git", "-c", "user.name=marlin-tests", "-c", "user.email=tests@invalid", "-C", str(folder)]
    subprocess.run(["git", "init", "-q", "-b", branch, str(folder)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "stand-in engine source"], check=True)
    return f"{folder.resolve().as_uri()}#{branch}"
