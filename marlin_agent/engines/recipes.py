"""How each engine is installed and launched: the command lines Marlin's model card gives, in one place.

Every Marlin-specific flag is here for a documented reason:
- the architecture override makes the engine serve Marlin with its native Qwen3.5 code
  (the checkpoint names a custom class);
- vLLM's ``--allowed-local-media-path`` lets it read the staged clips as ``file://`` URLs;
- ``--mm-processor-cache-gb 0`` stops vLLM's multimodal cache growing without bound on
  distinct videos (it OOM-killed 15 GB nodes);
- SGLang (and the MLX port of it) take the training-time frame budget server-side.
A planner model (a small chat LLM served beside Marlin) gets none of them; it gets tool
calling (the planner and the judge answer through tool calls: vLLM's ``hermes`` parser and
SGLang's ``qwen25`` read the Qwen family's format) and, on a GPU, a share of its memory
that leaves room for Marlin, which then takes a share too.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from marlin_agent.errors import EngineUnknown
from marlin_agent.resources import data_path

MARLIN_MODEL = "NemoStation/Marlin-2B"
MARLIN_MLX_MODEL = "NemoStation/Marlin-2B-MLX-8bit"
ARCHITECTURE = "Qwen3_5ForConditionalGeneration"
VLLM_OVERRIDE = json.dumps({"architectures": [ARCHITECTURE]})  # '{"architectures": ["..."]}'
SGLANG_OVERRIDE = json.dumps({"architectures": [ARCHITECTURE]}, separators=(",", ":"))
SGLANG_VIDEO_CONFIG = json.dumps(
    {"video": {"fps": 2.0, "min_frames": 4, "max_frames": 240, "max_pixels": 200704}}, separators=(",", ":"))
MLX_REPOSITORY = "https://github.com/Itssshikhar/sglang.git#codex/marlin-mlx-mm-support"


@dataclass(frozen=True)
class Launch:
    """Where and how one server runs."""

    venv: Path
    host: str
    port: int
    media_dir: Path
    model: str | None = None  # None: Marlin (the engine's own weights); else a planner model
    max_model_len: int = 65536
    extra_args: tuple[str, ...] = ()
    gpu_share: float | None = None  # the fraction of GPU memory to take; None: the engine's own default

    @property
    def python(self) -> Path:
        return self.venv / ("Scripts" if sys.platform == "win32" else "bin") / "python"

    def bin(self, name: str) -> Path:
        return self.python.parent / name


@dataclass(frozen=True)
class Source:
    """An engine built from a git branch rather than PyPI.

    SGLang's Apple-Silicon build is made from source: its ``python/`` folder carries a
    second project file for non-CUDA platforms that replaces the default one before the
    install, with the ``all_mps`` extra.
    """

    repository: str  # "URL#branch"
    subdir: str = "python"
    extras: str = "all_mps"
    swap: tuple[str, str] | None = ("pyproject_other.toml", "pyproject.toml")

    @property
    def url(self) -> str:
        return self.repository.partition("#")[0]

    @property
    def branch(self) -> str | None:
        return self.repository.partition("#")[2] or None


@dataclass(frozen=True)
class Recipe:
    """One engine: what its environment installs, what it needs of the machine and how it serves.

    ``serve(launch)``: its server's command line up to the address (``--host``/``--port`` and the user's extra
    arguments are added to it): Marlin when ``launch.model`` is None, else that chat model as a planner."""

    name: str
    title: str
    requirements: tuple[str, ...]  # pip arguments for the engine's own environment (after the source build)
    needs: str  # "nvidia" | "apple_silicon" | "any"
    serve: Callable[[Launch], list[str]]
    marlin_model: str = MARLIN_MODEL
    env: dict[str, str] = field(default_factory=dict)
    source: Source | None = None

    def served_model(self, launch: Launch) -> str:
        return launch.model or self.marlin_model

    def command(self, launch: Launch) -> list[str]:
        return [*self.serve(launch), "--host", launch.host, "--port", str(launch.port), *launch.extra_args]


def _share(flag: str, launch: Launch) -> list[str]:
    return [flag, f"{launch.gpu_share:g}"] if launch.gpu_share else []


def _vllm(launch: Launch) -> list[str]:
    if launch.model:
        return [str(launch.bin("vllm")), "serve", launch.model, "--max-model-len", str(launch.max_model_len),
                "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
                *_share("--gpu-memory-utilization", launch)]
    return [str(launch.bin("vllm")), "serve", MARLIN_MODEL,
            "--hf-overrides", VLLM_OVERRIDE,
            "--allowed-local-media-path", str(launch.media_dir),
            "--max-model-len", str(launch.max_model_len),
            "--mm-processor-cache-gb", "0",
            "--limit-mm-per-prompt", '{"video":1}',
            *_share("--gpu-memory-utilization", launch)]


def _sglang(launch: Launch) -> list[str]:
    head = [str(launch.python), "-m", "sglang.launch_server"]
    if launch.model:
        return [*head, "--model-path", launch.model, "--context-length", str(launch.max_model_len),
                "--tool-call-parser", "qwen25", *_share("--mem-fraction-static", launch)]
    return [*head, "--model-path", MARLIN_MODEL,
            "--json-model-override-args", SGLANG_OVERRIDE,
            "--enable-multimodal",
            "--mm-process-config", SGLANG_VIDEO_CONFIG,
            *_share("--mem-fraction-static", launch)]


def _mlx(launch: Launch) -> list[str]:
    head = [str(launch.python), "-m", "sglang.launch_server"]
    if launch.model:  # unified memory: no share to set
        return [*head, "--model-path", launch.model, "--disable-cuda-graph", "--tool-call-parser", "qwen25"]
    return [*head, "--model-path", MARLIN_MLX_MODEL, "--tokenizer-path", MARLIN_MODEL,
            "--disable-cuda-graph", "--disable-radix-cache", "--disable-overlap-schedule",
            "--trust-remote-code", "--enable-multimodal",
            "--mm-process-config", SGLANG_VIDEO_CONFIG]


def cpu_server_script() -> Path:
    """The CPU engine's server: a script its own environment runs (it needs torch, which ours does not)."""
    return data_path("servers/cpu_server.py")


def _cpu(launch: Launch) -> list[str]:
    if launch.model:  # a planner: the same server as a text chat model, with tool calls
        return [str(launch.python), str(cpu_server_script()), "--model", launch.model, "--chat"]
    return [str(launch.python), str(cpu_server_script()), "--model", MARLIN_MODEL,
            "--allowed-local-media-path", str(launch.media_dir)]


GROUP = "marlin_agent.engines"

BUILT_IN: dict[str, Recipe] = {
    "vllm": Recipe("vllm", "vLLM", ("vllm",), "nvidia", _vllm),
    "sglang": Recipe("sglang", "SGLang", ("sglang",), "nvidia", _sglang),
    # The community port of SGLang's MLX backend that serves Marlin's video input on Apple Silicon,
    # built from its branch; SGLang's Metal notes ask for the newest mlx and mlx-lm afterwards.
    "mlx": Recipe("mlx", "SGLang MLX port", ("--upgrade", "mlx", "mlx-lm"), "apple_silicon", _mlx,
                  marlin_model=MARLIN_MLX_MODEL, env={"SGLANG_USE_MLX": "1"}, source=Source(MLX_REPOSITORY)),
    # The model card's reference path, for machines with neither: transformers on the CPU
    # (the CPU build of torch; no torchvision, see servers/cpu_server.py).
    "cpu": Recipe("cpu", "transformers (CPU)",
                  ("--extra-index-url", "https://download.pytorch.org/whl/cpu",
                   "torch", "transformers>=5.5", "av", "pillow", "numpy"), "any", _cpu),
}


@functools.cache
def recipes() -> dict[str, Recipe]:
    """Every engine by name: the built-in four, then those installed packages add (``marlin_agent.engines``
    entry points naming a ``Recipe``)."""
    from marlin_agent.plugins import added

    return {**BUILT_IN, **added(GROUP, "engine", set(BUILT_IN), Recipe)}


def recipe(name: str) -> Recipe:
    try:
        return recipes()[name]
    except KeyError:
        raise EngineUnknown(f"unknown engine {name!r}; the engines are {', '.join(recipes())}") from None
