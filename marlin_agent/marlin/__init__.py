"""The Marlin client (canonical prompts, requests, media transport, lenient parsing) and `scan`, which runs it over a whole video.

The client needs the OpenAI SDK, which takes about a second to import; it is loaded when first
asked for, so commands that only read the index (``search``) never pay for it.
"""

from marlin_agent.marlin.parse import parse_caption, parse_span, strip_think
from marlin_agent.marlin.prompts import CAPTION_PROMPT, find_prompt

__all__ = ["CAPTION_PROMPT", "MarlinClient", "find_prompt", "parse_caption", "parse_span", "strip_think", "with_client"]


def __getattr__(name: str):
    if name in ("MarlinClient", "with_client"):
        from marlin_agent.marlin import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
