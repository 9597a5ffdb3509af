"""What one row is extracted from: a whole video or one chunk, read from the index.

Scenes, events and transcript lines come in time order with the video's own seconds, so
the times a model copies into a row are already the video's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from marlin_agent.domain import Event, VideoRef
from marlin_agent.library.records import Segment
from marlin_agent.library.store import Library

Per = Literal["video", "chunk"]


class Unit(BaseModel):
    video: VideoRef
    start: float
    end: float
    scenes: list[Event]  # each chunk's scene paragraph, with the chunk's span
    events: list[Event]
    transcript: list[Event]

    @property
    def key(self) -> str:
        return f"{self.video.id}:{self.start:.3f}-{self.end:.3f}"

    def text(self) -> str:
        """The unit as the LLM reads it."""
        lines = [f"Video: {self.video.title or self.video.path}", f"Span: {self.start:.1f}–{self.end:.1f} s", "",
                 "Scenes (seconds in the video):"]
        # With its span: "nothing moves" in the first chunk's paragraph says nothing of the second's.
        lines += [f"<{s.start:.1f} - {s.end:.1f}> {s.text}" for s in self.scenes] or ["(none)"]
        lines += ["", "Events (seconds in the video):"]
        lines += [f"<{e.start:.1f} - {e.end:.1f}> {e.text}" for e in self.events] or ["(none)"]
        lines += ["", "Transcript (seconds in the video):"]
        lines += [f"<{e.start:.1f} - {e.end:.1f}> {e.text}" for e in self.transcript] or ["(no speech)"]
        return "\n".join(lines)


def units_of(library: Library, video: VideoRef, per: Per) -> list[Unit]:
    rows = library.segments(video.id)
    scenes = [r for r in rows if r.kind == "scene"]
    events = [r for r in rows if r.kind == "event"]
    speech = [r for r in rows if r.kind == "transcript"]
    spans = [(r.start, r.end) for r in scenes]
    if per == "video" and spans:
        spans = [(spans[0][0], spans[-1][1])]

    def inside(items: list[Segment], start: float, end: float) -> list[Event]:
        return [Event(start=r.start, end=r.end, text=r.text) for r in items
                if r.start < end and r.end > start and (per == "video" or start <= r.start < end)]

    return [Unit(video=video, start=start, end=end,
                 scenes=inside(scenes, start, end),
                 events=inside(events, start, end), transcript=inside(speech, start, end))
            for start, end in spans]
