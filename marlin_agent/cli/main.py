"""The `marlin-agent` command: the app, its version flag, and which module serves which command."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from marlin_agent.app.capabilities import CAPABILITIES
from marlin_agent.cli import engine, evaluate, footage, models, render, serving, setup, video, watching
from marlin_agent.cli.commands import Spelling, command
from marlin_agent.cli.options import (
    CommandApp,
)
from marlin_agent.config import default_home
from marlin_agent.version import __version__

app = CommandApp(
    name="marlin-agent",
    help="Ask questions of your footage with Marlin-2B: captions, grounded moments, evidence.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"marlin-agent {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Show the version.")] = False,
) -> None:
    """Ask questions of your footage with Marlin-2B."""
    from marlin_agent.private_files import keep_private

    keep_private(default_home(os.environ))


# What the command line adds to a capability: how it shows the result, how it spells a parameter
# where the rule does not, and its own options (an extension). A capability with no entry is still a
# command: its result is printed as JSON.
_SHOWN = {"ask": render.show_answer, "search": render.show_search, "find": render.show_find,
          "find_verified": render.show_answer, "finalize": render.show_finalize_report,
          "caption": render.show_caption, "index": render.show_index_report, "extract": render.show_extract,
          "list_videos": render.show_videos}
_SPELLED = {
    "index": {"sources": Spelling((), metavar="SOURCES...", required=False),
              **dict.fromkeys(("recaption", "shard", "repair"), Spelling(by_extension=True))},
    "search": {"k": Spelling(("-k", "--limit"))},
    "describe": {"speech": Spelling(help="Leave out what is said (no transcription).")},
    "extract": {"schema": Spelling(("--schema",)), "output": Spelling(("-o", "--output")),
                "overwrite": Spelling(("--force",)), "shard": Spelling(by_extension=True)},
    "ask": {"overwrite": Spelling(("--force",))},
}
_EXTENDED = {"find": video.verify_option, "ask": footage.ask_page, "index": footage.index_modes,
             "extract": footage.extract_modes}

# The order here is the order `--help` lists them in.
for capability in CAPABILITIES:
    app.command(capability.name.replace("_", "-"))(command(
        capability, _SHOWN.get(capability.name), _SPELLED.get(capability.name), _EXTENDED.get(capability.name)))
for name, function in (("watch", watching.watch_command), ("mcp", serving.mcp_command),
                       ("serve", serving.serve_command), ("setup", setup.setup_command),
                       ("doctor", setup.doctor_command)):
    app.command(name)(function)
app.add_typer(evaluate.eval_app, name="eval")
app.add_typer(engine.engine_app, name="engine")
app.add_typer(models.models_app, name="models")
app.add_typer(models.cache_app, name="cache")
