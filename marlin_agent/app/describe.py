"""A plain-text summary of one video within a character budget, for hosts that want prose.

OpenClaw's video hook (and anything like it) hands a video to a command and pastes what
it prints into the conversation. The budget is spent in order of use to a reader: what
the video is, what the opening scene shows, the timeline of events, what is said, and
then the later scenes; the text keeps the video's own order.
"""

from __future__ import annotations

from marlin_agent.clock import clock
from marlin_agent.domain import VideoCaption
from marlin_agent.library.transcripts import TranscriptLine


def _fit(text: str, budget: int) -> str:
    if len(text) <= budget:
        return text
    if budget <= 1:
        return ""
    cut = text[: budget - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[budget // 2:] else cut) + "…"


class _Page:
    """Lines placed by section and position, within a character budget."""

    def __init__(self, budget: int) -> None:
        self.budget, self.used = budget, 0
        self.lines: dict[tuple[int, int], str] = {}

    def room(self) -> int:
        return self.budget - self.used - (1 if self.lines else 0)  # a newline before the next line

    def add(self, key: tuple[int, int], text: str) -> bool:
        if not text or len(text) > self.room():
            return False
        self.used += len(text) + (1 if self.lines else 0)
        self.lines[key] = text
        return True

    def add_run(self, section: int, title: str, items: list[str], leave: int = 0) -> None:
        """A titled list, as many items as fit (keeping ``leave`` characters), and what was left out."""
        if not items or not self.add((section, -1), title):
            return
        for index, item in enumerate(items):
            rest = len(items) - index - 1
            note = f"… ({rest} more)" if rest else ""
            if len(item) + 1 + (len(note) + 1 if note else 0) > self.room() - leave:
                self.add((section, index), f"… ({len(items) - index} more)")
                return
            self.add((section, index), item)

    def text(self) -> str:
        return "\n".join(self.lines[key] for key in sorted(self.lines))


def describe_text(result: VideoCaption, max_chars: int = 2000, speech: list[TranscriptLine] | None = None) -> str:
    """``result`` (and what is said in it) as prose of at most ``max_chars`` characters."""
    video = result.video
    audio = "with audio" if video.has_audio else "no audio"
    header = f"Video: {video.path.name}, {clock(video.duration)}, {video.width}x{video.height}, {audio}."
    chunks = [c for c in result.chunks if c.scene.strip()]
    scenes = [f"Scene: {c.scene.strip()}" if len(chunks) == 1 else
              f"Scene {clock(c.start)}-{clock(c.end)}: {c.scene.strip()}" for c in chunks]
    events = [f"{clock(e.start)}-{clock(e.end)} {e.text}" for e in result.events]
    said = [f"{clock(line.start)} {line.text}" for line in speech or []]
    failed = (f"({len(result.failures)} of {len(result.failures) + len(result.chunks)} chunks could not be described.)"
              if result.failures else "")

    page = _Page(max_chars)
    page.add((0, 0), _fit(header, max_chars))
    if scenes:
        page.add((1, 0), _fit(scenes[0], max(0, min(page.room(), max(160, max_chars // 3)))))
    # Events first, but keep a share of what is left for speech when there is any.
    page.add_run(3, "Events:", events, leave=page.room() // 3 if said else 0)
    page.add_run(4, "Speech:", said)
    for index, scene in enumerate(scenes[1:], 1):
        page.add((1, index), scene)
    page.add((5, 0), failed)
    return page.text()
