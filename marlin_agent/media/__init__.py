"""Footage handling: probing, chunk planning, clip staging and the content-addressed cache.

The three entry points below load on first use: importing any module of this package (the address
guard, the disk-space check) must not load FFmpeg and NumPy for a command that never decodes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from marlin_agent.media.chunks import plan_chunks
    from marlin_agent.media.probe import probe_video
    from marlin_agent.media.stage import stage_clip

__all__ = ["plan_chunks", "probe_video", "stage_clip"]
_HOMES = {"plan_chunks": "chunks", "probe_video": "probe", "stage_clip": "stage"}


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
