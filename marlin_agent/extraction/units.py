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
from marlin_agent.marlin.wording import idle, without_idle_sentences

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
        """The unit as the LLM reads it: the events first (the timed facts a row is made of), then each
        chunk's scene paragraph with its span, then what was said. An event, or a scene's sentence,
        that only says nothing happens is left out when something does: a small model read "the empty
        scene stays unchanged" beside a circle's crossing as "no objects"."""
        happenings = [e for e in self.events if not idle(e.text)]
        lines = [f"Video: {self.video.title or self.video.path}", f"Span: {self.start:.1f}–{self.end:.1f} s", "",
                 "Events (seconds in the video):"]
        lines += [f"<{e.start:.1f} - {e.end:.1f}> {e.text}" for e in happenings] or ["(none)"]
        lines += ["", "Scenes (seconds in the video):"]
        # Beside events, a quiet chunk's "Nothing moves and no objects enter the frame." read as the whole
        # video's: the same model then wrote no objects at all.
        scenes = [(s, without_idle_sentences(s.text) if happenings else s.text) for s in self.scenes]
        lines += [f"<{s.start:.1f} - {s.end:.1f}> {text}" for s, text in scenes if text] or ["(none)"]
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
