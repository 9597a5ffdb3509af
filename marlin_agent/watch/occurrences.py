"""Which verified moments are new occurrences worth an alert.

An event that runs on past a segment's end is found again at the start of the next segment; the
two moments meet on the stream's timeline (within ``join`` seconds) and are one occurrence, so
one alert. After an alert, ``cooldown`` seconds of the same question on the same timeline raise
nothing new (a dog that keeps walking past the door is one notification, not twenty).
"""

from __future__ import annotations

from typing import Literal

from marlin_agent.watch.records import Occurrence

Decision = Literal["alert", "joined", "quiet"]


def decide(latest: Occurrence | None, start: float, end: float, join: float, cooldown: float) -> Decision:
    """What a moment at ``[start, end]`` (timeline seconds) is, given the latest occurrence there."""
    if latest is None:
        return "alert"
    if start <= latest.end + join:
        return "joined"
    if start < latest.alerted_end + cooldown:
        return "quiet"
    return "alert"


def extended(latest: Occurrence, end: float) -> Occurrence:
    """The latest occurrence running on to ``end`` (a joined or quiet moment). While the alerted
    occurrence itself runs on, the cooldown counts from its new end."""
    still_alerted = latest.end == latest.alerted_end
    end = max(latest.end, end)
    return latest.model_copy(update={"end": end, "alerted_end": end if still_alerted else latest.alerted_end})


def opened(question: str, timeline: str, alert_id: str, end: float) -> Occurrence:
    return Occurrence(question=question, timeline=timeline, alert_id=alert_id, end=end, alerted_end=end)
