"""How the simulated Marlin answers, given what it saw.

The contract prompts are copied here from Marlin's model card on purpose rather than imported from
the client: the simulator checks the client, so it must not share the client's copy.
Quirks reproduced: the ~60 s timeline, an answer for every find (even for events that
never happen), optional ``<think>`` preambles, and prose for any off-contract prompt.
"""

from __future__ import annotations

import hashlib
import random
import re

from evals.synthetic.palette import BACKDROPS, OBJECT_COLOURS, SHAPE_WORDS, describe
from evals.synthetic.vision import Observation, Track

CAPTION_PROMPT = (
    "Provide a spatial description of this clip followed by time-ranged events.\n"
    "For each event, give the time range as <start - end> and a short description."
)
FIND_PROMPT = re.compile(
    r'^Identify the timestamps during which "(?P<event>.+)" takes place\. '
    r'Output the time range as "From <start> to <end>\." \(numbers in seconds\)\.$',
    re.DOTALL,
)

# Marlin reads every clip on a ~60 s timeline. Where the real model starts to squeeze is not
# published, so the simulator takes the harshest reading: any clip longer than 60 s has all
# its times squeezed into 60 s.
TIMELINE_SECONDS = 60.0

THINK_MODES = ("none", "empty", "mixed")


def classify(prompt: str) -> tuple[str, str | None]:
    """("caption", None), ("find", event) or ("off_contract", None)."""
    if prompt == CAPTION_PROMPT:
        return "caption", None
    match = FIND_PROMPT.match(prompt)
    if match:
        return "find", match.group("event")
    return "off_contract", None


def timeline_scale(observation: Observation) -> float:
    if observation.duration <= TIMELINE_SECONDS:
        return 1.0
    return TIMELINE_SECONDS / observation.duration


def _fmt(seconds: float) -> str:
    return f"{seconds:.1f}"


def _worded(track: Track, observation: Observation, varied: bool) -> str:
    """The track's event line. Varied, each clip gets its own verb for it (picked by what the clip shows, so
    the same clip is worded the same on every request and machine), as captioners say "glides" in one clip
    and "moves" in the next."""
    if not varied:
        return track.text
    pick = hashlib.sha256(f"{observation.key}|{track.colour}|{track.shape}".encode()).digest()[0]
    return describe(track.colour, track.shape, track.motion, way=pick)


def caption_text(observation: Observation, varied: bool = False) -> str:
    scale = timeline_scale(observation)
    _, setting = BACKDROPS[observation.backdrop]
    things = sorted({f"a {t.colour} {t.shape}" for t in observation.tracks})
    if things:
        listed = ", ".join(things[:-1]) + (" and " if len(things) > 1 else "") + things[-1]
        scene = f"The clip shows {setting}. Over its course {listed} can be seen against it."
    else:
        scene = f"The clip shows {setting}. Nothing moves and no objects enter the frame."
    lines = [f"Scene: {scene}", "Events:"]
    if observation.tracks:
        for track in observation.tracks:
            lines.append(f"<{_fmt(track.start * scale)} - {_fmt(track.end * scale)}> "
                         f"{_worded(track, observation, varied)}")
    else:
        lines.append(f"<0.0 - {_fmt(observation.duration * scale)}> the empty scene stays unchanged")
    return "\n".join(lines)


def _words(event: str) -> tuple[str | None, str | None]:
    lowered = event.lower()
    colour = next((c for c in OBJECT_COLOURS if re.search(rf"\b{c}\b", lowered)), None)
    shape = next(
        (s for s, words in SHAPE_WORDS.items() if any(re.search(rf"\b{w}s?\b", lowered) for w in words)),
        None,
    )
    return colour, shape


def _match(observation: Observation, event: str) -> Track | None:
    colour, shape = _words(event)
    if colour is None:
        return None
    same_colour = [t for t in observation.tracks if t.colour == colour]
    exact = [t for t in same_colour if shape is None or t.shape == shape]
    # Like a real grounding model, a wrong shape word still pulls toward the right colour.
    pool = exact or same_colour
    return max(pool, key=lambda t: t.end - t.start) if pool else None


def find_text(observation: Observation, event: str) -> str:
    """Always a span: the seen track when there is one, else a plausible invented one."""
    scale = timeline_scale(observation)
    track = _match(observation, event)
    if track is not None:
        start, end = track.start, track.end
    else:
        # Invented spans are placed relative to the clip, so grounding again on a shifted
        # window moves them in absolute time: the drift verification looks for.
        seed = int.from_bytes(hashlib.sha256(event.encode()).digest()[:8], "big")
        rng = random.Random(seed)
        length = observation.duration * rng.uniform(0.08, 0.25)
        start = rng.uniform(0, observation.duration - length)
        end = start + length
    return f"From {_fmt(start * scale)} to {_fmt(end * scale)}."


def off_contract_text(observation: Observation) -> str:
    _, setting = BACKDROPS[observation.backdrop]
    if observation.tracks:
        seen = "; ".join(t.text for t in observation.tracks[:3])
        return f"This video shows {setting}, where {seen}."
    return f"This video shows {setting}."


def think_preamble(mode: str, request_key: str) -> str:
    if mode == "none":
        return ""
    if mode == "empty":
        return "<think>\n\n</think>\n\n"
    choice = int(hashlib.sha256(request_key.encode()).hexdigest(), 16) % 4
    return ("", "<think>\n\n</think>\n\n", "<think>\nThe clip is short.\n</think>\n", "<think>\n")[choice]


def with_injection(caption: str, text: str) -> str:
    """The caption with ``text`` read off a sign in view, in every event line and the scene paragraph."""
    lines = []
    for line in caption.splitlines():
        if line.startswith("<") or line.startswith("Scene:"):
            line = f'{line.rstrip(".")}. A sign in view reads: "{text}"'
        lines.append(line)
    return "\n".join(lines)
