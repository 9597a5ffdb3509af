"""What this machine can run: an NVIDIA GPU, Apple Silicon, or neither."""

from __future__ import annotations

import platform
import shutil
from pathlib import Path

from pydantic import BaseModel


class Platform(BaseModel):
    system: str  # Linux, Darwin, Windows
    machine: str  # x86_64, arm64, aarch64
    nvidia: bool
    apple_silicon: bool

    @property
    def default_engine(self) -> str:
        """vLLM where there is an NVIDIA GPU, the MLX engine on Apple Silicon, the CPU engine otherwise."""
        if self.nvidia:
            return "vllm"
        if self.apple_silicon:
            return "mlx"
        return "cpu"

    def describe(self) -> str:
        accel = "NVIDIA GPU" if self.nvidia else "Apple Silicon" if self.apple_silicon else "no GPU engine"
        return f"{self.system} {self.machine}, {accel}"


def detect_platform() -> Platform:
    system, machine = platform.system(), platform.machine().lower()
    nvidia = shutil.which("nvidia-smi") is not None or Path("/proc/driver/nvidia/version").exists()
    return Platform(system=system, machine=machine, nvidia=nvidia,
                    apple_silicon=system == "Darwin" and machine in ("arm64", "aarch64"))
