"""`marlin-agent watch` driven as a user runs it, for the tests: its own process, alerts read from stdout
as they come (one JSON document each), progress lines from stderr."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

# Quick settings for tests (a watch's config.toml): folders listed five times a second, a file settled
# after a second, a dropped stream retried within two, and no client retries (the watch retries itself).
FAST_WATCH_CONFIG = ("[server]\nmax_retries = 0\n[watch]\npoll_seconds = 0.2\nsettle_seconds = 1.0\n"
                     "reconnect_max_seconds = 2.0\nstream_timeout = 5.0\n")


class WatchProcess:
    """`marlin-agent watch ... --json` in its own process, its output read as it comes."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "marlin_agent", "watch", *args, "--json"],
                                        env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.alerts: list[dict] = []
        self.lines: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(self.process.stdout, True), daemon=True),
                         threading.Thread(target=self._read, args=(self.process.stderr, False), daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read(self, stream, is_stdout: bool) -> None:
        for line in stream:
            if is_stdout:
                self.alerts.append(json.loads(line))
            else:
                self.lines.append(line.rstrip())

    def wait_for(self, condition, timeout: float = 120.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None:
                raise AssertionError(f"watch exited ({self.process.returncode}) waiting for {what}:\n"
                                     + "\n".join(self.lines[-30:]))
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}:\n" + "\n".join(self.lines[-30:]))
            time.sleep(0.1)

    def judged(self, name: str) -> bool:
        return any(line.startswith(f"judged {name}") for line in self.lines)

    @property
    def judged_count(self) -> int:
        return sum(line.startswith("judged ") for line in self.lines)

    def started(self) -> None:
        self.wait_for(lambda: any(line.startswith("watching ") for line in self.lines), what="the watch to start")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        self.process.send_signal(sig)
        code = self.process.wait(timeout)
        for reader in self._readers:
            reader.join(5)
        return code
