"""The `marlin-agent` entry point: a library command goes to the resident process when one is up
for this environment; otherwise the command runs here, and a resident is started as it ends."""

from __future__ import annotations

import sys

from marlin_agent.resident import client, exit_now


def main() -> None:
    argv = sys.argv[1:]
    resident = client.enabled() and client.wants(argv)
    if resident:
        code = client.forward(argv)
        if code is not None:
            sys.exit(code)
    from marlin_agent.cli.main import app

    try:
        app()
    except SystemExit as done:
        if resident:
            client.start_in_background()
        exit_now(done.code)
    if resident:
        client.start_in_background()
