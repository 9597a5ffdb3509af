"""marlin-agent: a video research agent around Marlin-2B."""

from __future__ import annotations

from typing import TYPE_CHECKING

from marlin_agent.version import __version__

__all__ = ["VideoAgent", "__version__"]

if TYPE_CHECKING:
    from marlin_agent.api import VideoAgent


def __getattr__(name: str):
    # Imported on first use so `marlin-agent --help` and `import marlin_agent` stay light.
    if name == "VideoAgent":
        from marlin_agent.api import VideoAgent

        return VideoAgent
    raise AttributeError(name)
