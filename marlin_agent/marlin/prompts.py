"""Marlin's two prompts, byte for byte as the model was trained on them.

Marlin answers exactly these two questions; any change in wording, spacing or a trailing
newline silently degrades its answers. This module is their only definition.
"""

from __future__ import annotations

import re

from marlin_agent.errors import EmptyQuery

CAPTION_PROMPT = (
    "Provide a spatial description of this clip followed by time-ranged events.\n"
    "For each event, give the time range as <start - end> and a short description."
)

FIND_TEMPLATE = (
    'Identify the timestamps during which "{event}" takes place. '
    'Output the time range as "From <start> to <end>." (numbers in seconds).'
)

# Bumped whenever a prompt changes, so stored results can say which prompt made them.
PROMPT_VERSION = 1


def checked_event(event: str) -> str:
    """The event as the grounding prompt carries it; ``EmptyQuery`` when nothing is left of it.

    The event sits inside double quotes in the prompt, so inner double quotes become single
    quotes and whitespace is collapsed to keep the sentence well formed. Callers use it to refuse
    an unusable event before any footage is staged."""
    cleaned = re.sub(r"\s+", " ", event.replace('"', "'")).strip()
    if not cleaned:
        raise EmptyQuery("the event to find is empty")
    return cleaned


def find_prompt(event: str) -> str:
    """The grounding prompt for ``event`` (see ``checked_event``)."""
    return FIND_TEMPLATE.replace("{event}", checked_event(event))
