"""Lenient parsing of Marlin's answers, strict reporting of how well they kept the format.

Times come back in the clip's own seconds; callers move them into the video's time.
"""

from __future__ import annotations

import re

from marlin_agent.domain import Caption, Event, Span

_NUMBER = r"(\d+(?:\.\d+)?)"
_UNIT = r"\s*(?:s|sec|secs|seconds)?"
_DASH = r"\s*(?:-|–|—|to)\s*"
_EVENT_LINE = re.compile(
    rf"^\s*(?:[-*•]\s*)?[<\[(]\s*{_NUMBER}{_UNIT}{_DASH}{_NUMBER}{_UNIT}\s*[>\])]\s*[:\-–—]?\s*(?P<text>.*?)\s*$"
)
_EVENTS_HEADER = re.compile(r"^\s*\**events\**\s*:?\s*\**\s*$", re.IGNORECASE)
_SCENE_PREFIX = re.compile(r"^\s*\**scene\**\s*:\s*\**\s*", re.IGNORECASE)
_SPAN_STRICT = re.compile(r"^From \d+(?:\.\d+)? to \d+(?:\.\d+)?\.$")
_SPAN_FROM_TO = re.compile(rf"from\s*{_NUMBER}{_UNIT}\s*(?:to|-|–|—)\s*{_NUMBER}", re.IGNORECASE)
_SPAN_ANY = re.compile(rf"{_NUMBER}{_UNIT}{_DASH}{_NUMBER}")


def strip_think(text: str) -> str:
    """Drop a ``<think>`` preamble: closed, empty, or left unclosed."""
    if "</think>" in text:
        return text.rsplit("</think>", 1)[1].lstrip()
    return text.replace("<think>", "", 1).lstrip() if text.lstrip().startswith("<think>") else text


def _clamp(start: float, end: float, duration: float | None) -> tuple[float, float]:
    if start > end:
        start, end = end, start
    if duration is not None:
        start, end = min(max(start, 0.0), duration), min(max(end, 0.0), duration)
    return start, end


def parse_caption(raw: str, duration: float | None = None) -> Caption:
    """Scene paragraph and ``<start - end> text`` events; ``format_ok`` if the layout was exact."""
    body = strip_think(raw).strip()
    scene_lines: list[str] = []
    events: list[Event] = []
    saw_header = False
    stray_lines = 0
    for line in body.splitlines():
        if not line.strip():
            continue
        if _EVENTS_HEADER.match(line):
            saw_header = True
            continue
        match = _EVENT_LINE.match(line)
        if match:
            start, end = _clamp(float(match.group(1)), float(match.group(2)), duration)
            events.append(Event(start=start, end=end, text=match.group("text")))
        elif events or saw_header:
            stray_lines += 1
        else:
            scene_lines.append(line.strip())
    scene_text = " ".join(scene_lines)
    has_scene_prefix = bool(_SCENE_PREFIX.match(scene_text))
    scene = _SCENE_PREFIX.sub("", scene_text).strip()
    # No events is a valid answer for a chunk where nothing happens; a cut-off line is not.
    format_ok = has_scene_prefix and saw_header and stray_lines == 0
    return Caption(scene=scene, events=events, raw=raw, format_ok=format_ok)


def is_caption(caption: Caption) -> bool:
    """Whether an answer is a caption at all (a ``Scene:`` paragraph or timed events), however
    sloppy, as opposed to an empty reply or prose that ignored the prompt."""
    return bool(caption.events) or bool(caption.scene and _SCENE_PREFIX.match(strip_think(caption.raw).strip()))


def parse_span(raw: str, duration: float | None = None) -> Span | None:
    """The ``From a to b.`` span, or ``None`` when no pair of times can be found."""
    body = strip_think(raw).strip()
    match = _SPAN_FROM_TO.search(body) or _SPAN_ANY.search(body)
    if not match:
        return None
    first, second = float(match.group(1)), float(match.group(2))
    start, end = _clamp(first, second, duration)
    return Span(start=start, end=end, raw=raw, format_ok=bool(_SPAN_STRICT.match(body)) and first <= second)
