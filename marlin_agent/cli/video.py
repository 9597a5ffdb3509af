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
    """With --verify, find is `find-verified` (the capability): the video indexed, each chunk's span verified."""
    if not verify:
        return
    from marlin_agent.app.capabilities import BY_NAME
    from marlin_agent.cli.render import show_answer

    call.values |= {"library.db": db, "library.transcribe": False if no_transcribe else None}
    call.progress, call.show = "index", show_answer
    verified = BY_NAME["find_verified"]
    call.needs_server = True

    async def as_verified(run, arguments):
        return await verified.function(**arguments, run=run)

    call.work = as_verified
