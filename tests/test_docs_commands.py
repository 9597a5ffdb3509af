"""The help and the docs describe the CLI that exists: every command's --help renders, and every
command line the README, docs/ and the skill show is one the parser accepts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer
from typer._click.exceptions import UsageError  # typer carries its own click: its errors are these
from typer.testing import CliRunner

from marlin_agent.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
COMMAND = typer.main.get_command(app)
# Shell words that stand for a value in the docs, and what the parser gets in their place.
PLACEHOLDERS = {"$I/$N": "0/2", "$KEY": "key", '"$KEY"': "key", "$PWD": "/tmp", "…": "x"}


def _commands(group, path: list[str]):
    yield path
    for name, sub in getattr(group, "commands", {}).items():
        yield from _commands(sub, [*path, name])


@pytest.mark.parametrize("path", list(_commands(COMMAND, [])), ids=lambda p: " ".join(p) or "marlin-agent")
def test_every_command_has_help_without_internal_type_names(path):
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert not re.findall(r"\{[a-z_]+\}", result.output)  # a parameter's Python name, not its metavar
    assert not [line for line in result.output.splitlines() if "--" in line and "<list[" in line]


def _documented_lines() -> list[tuple[str, str]]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "skills").rglob("*.md"))]
    found = []
    for file in files:
        for block in re.findall(r"```(?:bash|sh|console)\n(.*?)```", file.read_text(), flags=re.S):
            for line in block.replace("\\\n", " ").splitlines():
                if "marlin-agent " in line and not line.lstrip().startswith("#"):
                    found.append((file.name, line.strip()))
    return found


def _argv(line: str) -> list[str]:
    for shown, value in PLACEHOLDERS.items():
        line = line.replace(shown, value)
    words = shlex.split(line, comments=True)
    words = words[words.index("marlin-agent") + 1:]
    for stop in ("&&", "|", ">", "2>"):
        if stop in words:
            words = words[:words.index(stop)]
    # "[vllm|sglang|mlx|cpu]" and "[ENGINE]" mark an optional argument: the docs' first choice, or none.
    return [w.strip("[]").split("|")[0] for w in words if not (w.startswith("[") and w.isupper())]


def _parse(argv: list[str]) -> None:
    """Parse ``argv`` down the command tree the way a run would, without running anything."""
    command, info, args = COMMAND, "marlin-agent", argv
    while True:
        context = command.make_context(info, list(args), resilient_parsing=False)
        if not hasattr(command, "resolve_command"):  # a command, not a group of them
            return
        rest = [*context._protected_args, *context.args]
        name, command, args = command.resolve_command(context, rest)
        info = name


@pytest.mark.parametrize("where, line", _documented_lines(), ids=lambda v: v if len(v) < 60 else v[:60])
def test_every_documented_command_line_parses(where, line):
    try:
        _parse(_argv(line))
    except UsageError as exc:
        pytest.fail(f"{where}: {line}\n  {exc.format_message()}")


def test_the_docs_show_command_lines_at_all():
    assert len(_documented_lines()) > 40


@pytest.mark.parametrize(("document", "opening"), [
    ("README.md", "`marlin-agent mcp` serves"),
    ("docs/hosts.md", "Tools:"),
    ("skills/marlin-video/SKILL.md", "Over MCP the same tools exist as"),
])
def test_every_list_of_the_mcp_tools_names_every_capability(document, opening):
    """The tools are made from the capability table; a list of them written for people names each one."""
    from marlin_agent.app.capabilities import CAPABILITIES

    text = (ROOT / document).read_text(encoding="utf-8")
    listed = text[text.index(opening):].split("\n\n")[0]
    assert [c.name for c in CAPABILITIES if f"`{c.name}`" not in listed] == []
