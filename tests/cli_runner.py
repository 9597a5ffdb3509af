"""Running the command line in-process, as the tests do: one CliRunner, no stray credentials."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from marlin_agent.cli.main import app

runner = CliRunner()


def invoke(args, env):
    """Run ``marlin-agent ARGS`` with ``env`` (and no key, model or media settings of the machine's)."""
    base = {"MARLIN_API_KEY": None, "MARLIN_MODEL": None, "MARLIN_MEDIA": None}
    result = runner.invoke(app, args, env={**base, **env})
    assert "Traceback" not in result.stdout + result.stderr
    return result


def document(result):
    """The one JSON document a --json command prints."""
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    return json.loads(lines[0])
