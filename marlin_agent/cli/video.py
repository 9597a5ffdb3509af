"""What the command line adds to the commands over one video: `find --verify`."""

from __future__ import annotations

from typing import Annotated

import typer

from marlin_agent.cli.commands import Invocation
from marlin_agent.cli.options import DbOpt, NoTranscribeOpt


def verify_option(
    call: Invocation,
    verify: Annotated[bool, typer.Option(
        "--verify", help="Index the video and return verified moments with evidence (the `ask` document) instead of "
        "raw candidates.")] = False,
    db: DbOpt = None, no_transcribe: NoTranscribeOpt = False,
) -> None:
    """With --verify, find answers as `ask` does: the video indexed, each chunk's span verified."""
    if not verify:
        return
    from marlin_agent.app.ask import verify_find
    from marlin_agent.cli.render import show_answer

    call.values |= {"library.db": db, "library.transcribe": False if no_transcribe else None}
    call.progress, call.show = "index", show_answer

    async def verified(run, arguments):
        return await verify_find(arguments["event"], arguments["video"], await run.served(), arguments["start"],
                                 arguments["end"], run.on_index)

    call.work = verified
