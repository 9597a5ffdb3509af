"""The `marlin-agent` entry point: a library command goes to the resident process when one is up
for this environment; otherwise the command runs here, and a resident is started as it ends."""

from __future__ import annotations

import sys
import time

from marlin_agent.resident import client, exit_now


def main() -> None:
    began = time.time()
    argv = sys.argv[1:]
    resident = client.enabled() and client.wants(argv)
    if resident:
        code = _guarded(client.forward, argv)
        if code is not None:
            sys.exit(code)
    from marlin_agent.cli.main import app

    try:
        app()
    except SystemExit as done:
        if resident:
            _guarded(client.start_in_background, began)
        exit_now(done.code)
    if resident:
        _guarded(client.start_in_background, began)


def _guarded(step, *args):
    """The resident only ever saves time: whatever goes wrong with it, the command runs here as usual."""
    try:
        return step(*args)
    except Exception:  # noqa: BLE001
        return None
