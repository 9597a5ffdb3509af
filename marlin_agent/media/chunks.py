"""Chunk planning: cover a time range with pieces Marlin reads on its ~60 s timeline."""

from __future__ import annotations

import math

from marlin_agent.domain import Chunk

_EPSILON = 1e-6


def plan_chunks(start: float, end: float, chunk_seconds: float = 60.0) -> list[Chunk]:
    """Cover ``[start, end]`` with ⌈length / ``chunk_seconds``⌉ chunks of equal length.

    Marlin maps any input onto a ~60 s timeline and where that compression begins is not
    published, so no chunk is ever longer than ``chunk_seconds``: a 185 s video becomes four
    46.25 s chunks, not 60 + 60 + 65 s. Nothing is dropped: the chunks meet end to start and
    span the whole range.
    """
    length = end - start
    if length <= _EPSILON:
        return []
    count = max(1, math.ceil(length / chunk_seconds))
    step = length / count
    bounds = [start + i * step for i in range(count)] + [end]
    return [
        Chunk(index=i, start=round(bounds[i], 6), end=round(bounds[i + 1], 6))
        for i in range(count)
    ]
