"""Chunk planning: cover a time range with pieces Marlin reads on its ~60 s timeline."""

from __future__ import annotations

import math

from marlin_agent.domain import Chunk

_EPSILON = 1e-6


def plan_chunks(
    start: float,
    end: float,
    chunk_seconds: float = 60.0,
    tail_merge_seconds: float = 15.0,
) -> list[Chunk]:
    """Split ``[start, end]`` into consecutive chunks of ``chunk_seconds``.

    Marlin maps any input onto a ~60 s timeline, so longer footage must be cut and its
    times offset back. Nothing is dropped: a remainder shorter than ``tail_merge_seconds``
    joins the last chunk, so no chunk is ever longer than
    ``chunk_seconds + tail_merge_seconds``.
    """
    if end - start <= _EPSILON:
        return []
    length = end - start
    count = max(1, math.floor(length / chunk_seconds + _EPSILON))
    remainder = length - count * chunk_seconds
    bounds = [start + i * chunk_seconds for i in range(count)]
    if remainder >= tail_merge_seconds - _EPSILON and remainder > _EPSILON:
        bounds.append(start + count * chunk_seconds)
    bounds.append(end)
    return [
        Chunk(index=i, start=round(bounds[i], 6), end=round(bounds[i + 1], 6))
        for i in range(len(bounds) - 1)
    ]
