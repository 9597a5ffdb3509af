"""The visual vocabulary shared by the footage generator and the simulator's eyes."""

from __future__ import annotations

OBJECT_COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (225, 35, 35),
    "blue": (40, 90, 235),
    "yellow": (240, 215, 30),
    "white": (250, 250, 250),
    "purple": (160, 50, 200),
}

SHAPES = ("circle", "square", "triangle")

# Words a query may use for each shape.
SHAPE_WORDS: dict[str, tuple[str, ...]] = {
    "circle": ("circle", "ball", "disc", "disk", "dot"),
    "square": ("square", "box", "block", "cube"),
    "triangle": ("triangle", "cone", "arrow"),
}

BACKDROPS: dict[str, tuple[tuple[int, int, int], str]] = {
    "field": ((40, 125, 55), "a green grass field seen from a fixed camera under even light"),
    "street": ((95, 95, 100), "a grey concrete yard seen from a fixed camera on an overcast day"),
    "night": ((12, 18, 48), "a dark blue night sky filling the frame"),
}

MOTIONS = ("still", "left_to_right", "right_to_left")


# How captioners word the same thing on different clips: one act, several verbs. ``describe(..., way=n)``
# picks the n-th (cycling); way 0 is the plain wording every test of exact text relies on.
_APPEARS = ("appears", "shows up", "comes into view", "pops up")
_MOVES = ("moves", "slides", "glides", "drifts", "travels")


def describe(colour: str, shape: str, motion: str, way: int = 0) -> str:
    """The caption-style description of an object event."""
    if motion == "left_to_right":
        return f"a {colour} {shape} {_MOVES[way % len(_MOVES)]} from left to right"
    if motion == "right_to_left":
        return f"a {colour} {shape} {_MOVES[way % len(_MOVES)]} from right to left"
    return f"a {colour} {shape} {_APPEARS[way % len(_APPEARS)]}"
