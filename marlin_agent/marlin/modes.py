"""What Marlin can be asked, one registration per mode: its prompt, how its answer is read, its token budget,
what it returns and what a stand-in answers.

Marlin was trained on two prompts (``prompts``): a dense caption and the grounding of one event. A mode
ties a prompt to the rest of what asking it takes, so the client asks any mode the same way
(``MarlinClient.ask``) and a new one (another checkpoint's skill, say) is one ``Mode`` value: in this
module, or in another package under the ``marlin_agent.marlin_modes`` entry point group. The
simulator answers a mode it was not written for with the mode's own ``stand_in``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from marlin_agent.config import ServerSettings
from marlin_agent.domain import Caption, Span
from marlin_agent.marlin.parse import is_caption, parse_caption, parse_span
from marlin_agent.marlin.prompts import CAPTION_PROMPT, FIND_TEMPLATE, checked_event

GROUP = "marlin_agent.marlin_modes"
_FIELD = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Mode:
    """One thing Marlin is asked.

    ``template``: the prompt byte for byte, ``{name}`` where an argument goes (each argument first passed
    through ``clean``, e.g. an event's inner quotes made single). ``parse(text, clip_seconds)``: the
    answer as the server sent it (a ``<think>`` preamble included: ``parse.strip_think``) read into
    ``result``, times in the clip's own seconds. ``max_tokens``: the budget of an
    answer, from the server's settings. ``usable``: whether a parsed answer is an answer at all (one that
    is not is an error, never stored). ``stand_in(arguments, clip_seconds)``: an answer in the mode's
    trained format, for a simulator that has no scene model of its own for the mode."""

    name: str
    template: str
    parse: Callable[[str, float | None], Any]
    result: type
    max_tokens: Callable[[ServerSettings], int]
    stand_in: Callable[[dict[str, str], float], str]
    usable: Callable[[Any], bool] = lambda answer: True
    clean: Callable[[str], str] = lambda value: value
    fields: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(_FIELD.findall(self.template)))

    def prompt(self, **arguments: str) -> str:
        """The prompt for these arguments (every field of the template, no other)."""
        if set(arguments) != set(self.fields):
            raise TypeError(f"the {self.name} prompt takes {', '.join(self.fields) or 'no arguments'}")
        return _FIELD.sub(lambda m: self.clean(arguments[m.group(1)]), self.template)

    def arguments_of(self, prompt: str) -> dict[str, str] | None:
        """The arguments ``prompt`` carries when it is this mode's prompt; None when it is another's."""
        pattern = "".join(f"(?P<{part}>.+)" if n % 2 else re.escape(part)
                          for n, part in enumerate(_FIELD.split(self.template)))
        match = re.fullmatch(pattern, prompt, re.DOTALL)
        return match.groupdict() if match else None


def _caption_stand_in(arguments: dict[str, str], seconds: float) -> str:
    return f"Scene: A plain backdrop fills the frame.\nEvents:\n<0.0 - {seconds:.1f}> Nothing moves."


def _find_stand_in(arguments: dict[str, str], seconds: float) -> str:
    return f"From 0.0 to {seconds:.1f}."


CAPTION = Mode("caption", CAPTION_PROMPT, parse_caption, Caption, lambda server: server.caption_max_tokens,
               _caption_stand_in, usable=is_caption)
FIND = Mode("find", FIND_TEMPLATE, parse_span, Span, lambda server: server.find_max_tokens, _find_stand_in,
            clean=checked_event)


@functools.cache
def modes() -> dict[str, Mode]:
    """Every mode by name: the two Marlin was trained on, then those installed packages add."""
    from marlin_agent.plugins import added

    built_in = {mode.name: mode for mode in (CAPTION, FIND)}
    return {**built_in, **added(GROUP, "Marlin mode", set(built_in), Mode)}


def mode_of(prompt: str) -> tuple[Mode, dict[str, str]] | None:
    """The registered mode ``prompt`` belongs to, with its arguments; None for a prompt of no mode."""
    for mode in modes().values():
        arguments = mode.arguments_of(prompt)
        if arguments is not None:
            return mode, arguments
    return None
