"""marlin-agent: a video research agent around Marlin-2B."""

__version__ = "0.1.0"
