"""A strip of black and white cells across the top of each realistic-world frame.

It stands for what a camera would show: which scene this is and which of its events is on
screen. The footage generator paints it; the simulator's eyes read it back from decoded
(and re-encoded, scaled) pixels, so nothing but the pixels carries it to the simulator.
"""

from __future__ import annotations

import numpy as np

_GUARD = (1, 0, 1, 0)
_SCENE_BITS = 5
_EVENT_BITS = 4
CELLS = len(_GUARD) + _SCENE_BITS + _EVENT_BITS
_STRIP_SHARE = 0.2  # of the frame's height


def paint(picture: np.ndarray, scene: int, event: int) -> np.ndarray:
    """Paint the strip for ``scene`` (1..31) and ``event`` (0 = none, 1..15) onto ``picture`` in place."""
    bits = list(_GUARD) + [(scene >> i) & 1 for i in range(_SCENE_BITS)] + [(event >> i) & 1 for i in range(_EVENT_BITS)]
    height, width = picture.shape[:2]
    strip = max(4, int(height * _STRIP_SHARE))
    for n, bit in enumerate(bits):
        x0, x1 = n * width // CELLS, (n + 1) * width // CELLS
        picture[:strip, x0:x1] = 250 if bit else 8
    return picture


def read(picture: np.ndarray) -> tuple[int, int] | None:
    """(scene, event) from a frame, or None when the frame carries no strip."""
    height, width = picture.shape[:2]
    strip = max(4, int(height * _STRIP_SHARE))
    grey = picture[: strip, :].mean(axis=2)
    bits = []
    for n in range(CELLS):
        x0, x1 = n * width // CELLS, (n + 1) * width // CELLS
        cell = grey[strip // 4: 3 * strip // 4, x0 + (x1 - x0) // 4: x1 - (x1 - x0) // 4]
        level = float(cell.mean())
        if 60 < level < 190:  # neither black nor white: not a strip
            return None
        bits.append(1 if level >= 128 else 0)
    if tuple(bits[: len(_GUARD)]) != _GUARD:
        return None
    data = bits[len(_GUARD):]
    scene = sum(bit << i for i, bit in enumerate(data[:_SCENE_BITS]))
    event = sum(bit << i for i, bit in enumerate(data[_SCENE_BITS:]))
    return (scene, event) if scene else None
