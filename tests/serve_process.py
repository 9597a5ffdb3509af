"""`marlin-agent serve` as a user starts it: a process on a free port, and what it printed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def serve_process(env: dict[str, str], root: Path, *flags: str) -> tuple[subprocess.Popen, str, list[str]]:
    """`marlin-agent serve --port 0`, and the address and lines it printed."""
    full = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "marlin_agent", "serve", "--port", "0", "--root", str(root),
                                *flags], env=full, cwd=str(root), stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        lines.append(line)
        if line.startswith("footage inside"):
            if "0.0.0.0" in lines[0]:
                lines.append(process.stderr.readline())  # the token line
            address = re.search(r"(http://\S+/) ", lines[0]).group(1)
            return process, address, lines
    process.kill()
    raise AssertionError("".join(lines))
