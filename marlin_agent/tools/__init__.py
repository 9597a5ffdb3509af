"""The agent's tools (see ``toolbox``) and the records they return (see ``results``).

The records load with the package; the toolbox on first use: a front door that only names a result type (the
MCP server's tool list) must not load Marlin's client and the media code with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from marlin_agent.tools.toolbox import Judge, Toolbox, UnknownVideo, centred_window

__all__ = [
    "ClipFile", "Cost", "GroundedSpan", "Grounding", "Judge", "SearchHits", "SpanCaption", "Toolbox",
    "TranscriptLines", "UnknownVideo", "Verification", "VideoEntry", "VideoList", "centred_window",
]
_IN_TOOLBOX = {"Judge", "Toolbox", "UnknownVideo", "centred_window"}


def __getattr__(name: str):
    if name not in _IN_TOOLBOX:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.toolbox"), name)
