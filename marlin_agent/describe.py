"""A plain-text summary of one video within a character budget, for hosts that want prose.

OpenClaw's video hook (and anything like it) hands a video to a command and pastes what
it prints into the conversation. The budget is spent in order of use to a reader: what
the video is, what the first scene shows, the timeline of events, then later scenes.
"""

from __future__ import annotations

from marlin_agent.clock import clock
from marlin_agent.domain import VideoCaption

_MORE = "… ({n} more events)"


def _header(result: VideoCaption) -> str:
    video = result.video
    audio = "with audio" if video.has_audio else "no audio"
    return f"Video: {video.path.name}, {clock(video.duration)}, {video.width}x{video.height}, {audio}."


def _fit(text: str, budget: int) -> str:
    if len(text) <= budget:
        return text
    if budget <= 1:
        return ""
    cut = text[: budget - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[budget // 2:] else cut) + "…"


def describe_text(result: VideoCaption, max_chars: int = 2000) -> str:
    """``result`` as prose of at most ``max_chars`` characters (events cut before the header)."""
    chunks = [c for c in result.chunks if c.scene.strip()]
    header = _header(result)
    scenes = [(f"Scene: {c.scene.strip()}" if len(chunks) == 1 else f"Scene {clock(c.start)}-{clock(c.end)}: {c.scene.strip()}")
              for c in chunks]
    events = [f"{clock(e.start)}-{clock(e.end)} {e.text}" for e in result.events]
    failed = (f"({len(result.failures)} of {len(result.failures) + len(result.chunks)} chunks could not be described.)"
              if result.failures else "")

    full = "\n".join(filter(None, [header, *scenes, "Events:" if events else "", *events, failed]))
    if len(full) <= max_chars:
        return full

    # Over budget: header, the opening scene, then as many events as fit; later scenes go first.
    lines = [_fit(header, max_chars)]
    used = len(lines[0])
    if scenes and used + 1 < max_chars:
        opening = _fit(scenes[0], min(max_chars - used - 1, max(120, (max_chars - used) // 3)))
        lines.append(opening)
        used += len(opening) + 1
    if events and used + len("\nEvents:") < max_chars:
        lines.append("Events:")
        used += len("Events:") + 1
        for shown, line in enumerate(events):
            rest = len(events) - shown - 1
            tail = len(_MORE.format(n=rest)) + 1 if rest else 0
            if used + len(line) + 1 + tail > max_chars:
                more = _MORE.format(n=len(events) - shown)
                if used + len(more) + 1 <= max_chars:
                    lines.append(more)
                break
            lines.append(line)
            used += len(line) + 1
    return "\n".join(lines)[:max_chars]
