"""The Marlin client (canonical prompts, requests, media transport, lenient parsing) and `scan`, which runs it over a whole video."""

from marlin_agent.marlin.client import MarlinClient, with_client
from marlin_agent.marlin.parse import parse_caption, parse_span, strip_think
from marlin_agent.marlin.prompts import CAPTION_PROMPT, find_prompt

__all__ = ["CAPTION_PROMPT", "MarlinClient", "find_prompt", "parse_caption", "parse_span", "strip_think", "with_client"]
