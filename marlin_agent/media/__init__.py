"""Footage handling: probing, chunk planning, clip staging and the content-addressed cache."""

from marlin_agent.media.chunks import plan_chunks
from marlin_agent.media.probe import probe_video
from marlin_agent.media.stage import stage_clip

__all__ = ["plan_chunks", "probe_video", "stage_clip"]
