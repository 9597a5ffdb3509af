"""What is checked: a claim that an event happens over a span of one video.

A claim carries everything its check depends on, so nothing about the question it came from has to
be remembered anywhere else: the event, the span, where the span came from, and whether the event
is something said (read from the transcript) or something seen (read from the captions). That mode
is the event's own by default; a caller that knows better (the LLM planner, whose model words the
event its own way, checks in the mode of the question it was asked) says so. A line said whose words
are a topic's in full (``Verifier.answered_by_line``) is checked as said: ``Toolbox.check`` decides that,
for every planner alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from marlin_agent.verification.verifier import about_speech


class Source(Enum):
    """Where a claim's span came from, which decides what its check may take as given."""

    GROUNDING = "grounding"  # Marlin's find placed the event there when shown a window
    CAPTION = "caption"  # a caption event of the index: Marlin never grounded this event there
    PLANNER = "planner"  # the LLM planner reported it after verifying another event there
    SPEECH = "speech"  # a line said there: no Marlin call can add to it (Marlin sees, it does not hear)


@dataclass(frozen=True)
class Claim:
    video_id: str
    event: str
    start: float
    end: float
    source: Source = Source.GROUNDING
    window: tuple[float, float] | None = None  # what Marlin was shown when it grounded the event
    said: str = ""  # for a line said: its words
    speech: bool | None = None  # None: the event's own mode (set from it, so never None once made)

    def __post_init__(self) -> None:
        if self.speech is None:
            object.__setattr__(self, "speech", about_speech(self.event))

    @property
    def span(self) -> tuple[float, float]:
        return self.start, self.end
