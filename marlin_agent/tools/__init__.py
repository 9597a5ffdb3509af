"""The agent's tools (see ``toolbox``) and the records they return (see ``results``)."""

from marlin_agent.tools.results import (
    ClipFile,
    Cost,
    GroundedSpan,
    Grounding,
    SearchHits,
    SpanCaption,
    TranscriptLines,
    Verification,
    VideoEntry,
    VideoList,
)
from marlin_agent.tools.toolbox import Judge, Toolbox, UnknownVideo, centred_window

__all__ = [
    "ClipFile", "Cost", "GroundedSpan", "Grounding", "Judge", "SearchHits", "SpanCaption", "Toolbox",
    "TranscriptLines", "UnknownVideo", "Verification", "VideoEntry", "VideoList", "centred_window",
]
