"""`marlin-agent serve`: how soon it answers after start, and how long the library page of 1,000 videos takes.

- start: from launching `marlin-agent serve --port 0` to its first answer (GET /api/v1/about over a
  plain socket, so no client library's own start is counted), as a ratio to `marlin-agent --help` in the
  same run; median of five. Target (issue #46): <= 2x.
- a page of 1,000 videos: the library page (`GET /`) over a library of 1,000 indexed videos, each
  with a chunk captioned, rendered by the running server; median of ten after one warm-up. Target:
  < 300 ms.
"""

from __future__ import annotations

import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 5


def _get(port: int, path: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _started(env: dict[str, str], root: Path) -> tuple[subprocess.Popen, int, float]:
    """A server, its port, and the seconds from launch to its first answer."""
    began = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "marlin_agent", "serve", "--port", "0", "--root", str(root)],
                               env=env, stderr=subprocess.PIPE, text=True, cwd="/")
    port = int(re.search(r":(\d+)/ ", process.stderr.readline()).group(1))
    while True:
        try:
            if _get(port, "/api/v1/about").startswith(b"HTTP/1.1 200"):
                return process, port, time.perf_counter() - began
        except OSError:
            time.sleep(0.002)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(30)


def _library(env: dict[str, str], root: Path, videos: int) -> None:
    from marlin_agent.config import load_settings
    from marlin_agent.domain import ChunkCaption
    from marlin_agent.library.access import open_library
    from marlin_agent.library.records import ChunkWrite, VideoRecord, Writes

    library = open_library(load_settings(env=env))
    records = [VideoRecord(id=f"{n:032x}", path=str(root / f"camera-{n:04d}.mp4"), title=f"camera-{n:04d}",
                           duration=61.0, fps=25, width=1280, height=720, has_audio=n % 2 == 0, chunk_seconds=60,
                           chunks_planned=2) for n in range(videos)]
    caption = ChunkCaption(start=0, end=60, scene="A driveway.", events=[], raw="A driveway.", format_ok=True)
    chunks = [ChunkWrite(video_id=r.id, index=0, caption=caption, model="bench", prompt_version=1) for r in records]
    library.write(Writes(videos=records, chunks=chunks))


def run(videos: int = 1000) -> dict:
    from evals.synthetic.offline_models import minilm_dir

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "footage"
        root.mkdir()
        env = {**os.environ, "MARLIN_HOME": f"{scratch}/home", "MARLIN_EMBED_MODEL": str(minilm_dir()),
               "HF_HUB_OFFLINE": "1", "MARLIN_RESIDENT": "off"}
        helps = []
        for _ in range(RUNS):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-m", "marlin_agent", "--help"], env=env, capture_output=True, cwd="/",
                           check=True)
            helps.append(time.perf_counter() - began)
        starts = []
        for _ in range(RUNS):
            process, _, seconds = _started(env, root)
            starts.append(seconds)
            _stop(process)
        _library(env, root, videos)
        process, port, _ = _started(env, root)
        try:
            page = _get(port, "/")
            assert page.startswith(b"HTTP/1.1 200") and page.count(b'class="card"') == videos, page[:300]
            renders = []
            for _ in range(10):
                began = time.perf_counter()
                _get(port, "/")
                renders.append(time.perf_counter() - began)
        finally:
            _stop(process)
    help_s, start_s = statistics.median(helps), statistics.median(starts)
    return {"runs": RUNS, "help_s": round(help_s, 3), "start_s": round(start_s, 3),
            "start_x_help": round(start_s / help_s, 2), "videos": videos,
            "library_page_ms": round(1000 * statistics.median(renders), 1)}


if __name__ == "__main__":
    print(run())
