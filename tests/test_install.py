"""The README's install command, run for real in a fresh venv: it pulls no torch and no CUDA."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "nvidia-", "sentence-transformers", "transformers", "triton")


def readme_install_command() -> str:
    """The pip part of the README's first set-up command."""
    block = re.search(r"```bash\n(pip install [^\n]*?)(?: && |\n)", (ROOT / "README.md").read_text())
    assert block, "the README's first bash block is its install command"
    return block.group(1)


@pytest.mark.timeout(1200)
def test_the_readme_install_brings_no_torch_and_no_nvidia_packages(tmp_path):
    command = readme_install_command()
    assert command.startswith("pip install -e '.[") and re.search(r"\b(all|library)\b", command)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The README's exact command; only pip's byte-compiling of the ~15,000 installed files is
    # left out (a third of the time), which changes nothing about what gets installed.
    quick = {**os.environ, "PIP_NO_COMPILE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    installed = subprocess.run(f"{venv}/bin/{command}", shell=True, cwd=ROOT, capture_output=True, text=True,
                               timeout=1200, env=quick)
    assert installed.returncode == 0, installed.stderr[-2000:]
    listed = subprocess.run([f"{venv}/bin/pip", "list", "--format=freeze"], capture_output=True, text=True, check=True)
    names = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert {"lancedb", "onnxruntime", "tokenizers", "faster-whisper", "marlin-agent"} <= names
    assert sorted(n for n in names if n.startswith(HEAVY)) == []
    # And what it installed runs: the command answers, and search's model code imports without torch.
    probe = subprocess.run([f"{venv}/bin/python", "-c", "import sys, marlin_agent.library.embeddings, "
                            "marlin_agent.library.store; print('torch' in sys.modules)"],
                           capture_output=True, text=True, timeout=120)
    assert probe.stdout.strip() == "False", probe.stderr
    assert subprocess.run([f"{venv}/bin/marlin-agent", "--version"], capture_output=True).returncode == 0
