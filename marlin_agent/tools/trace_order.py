"""The order an answer's trace is told in: the order its work was started in, not the order it finished in.

Candidates are checked side by side, and which check finishes first depends on the server and the machine:
a trace kept in finishing order differs between two runs that decided the same things. Each step is stamped
with its place in the tree of work instead (its rank in its branch, after its branch's place in the one it
was started from), and the trace is told in that order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")
Place = tuple[int, ...]

# (this branch's place, the next rank in it): each task started through ``branches`` gets its own.
_BRANCH: ContextVar[tuple[Place, list[int]] | None] = ContextVar("trace_branch", default=None)


def stamp() -> Place:
    """The place of a step recorded now: after every step recorded before it in the same branch."""
    branch = _BRANCH.get()
    if branch is None:
        branch = ((), [0])
        _BRANCH.set(branch)
    place, rank = branch
    rank[0] += 1
    return (*place, rank[0])


def branches(steps: Iterable[Awaitable[T]]) -> list[Awaitable[T]]:
    """``steps`` each in a branch of its own, to be run side by side (``asyncio.gather``): the steps each one
    records are told after what came before the fork, in the order the branches were given."""
    fork = stamp()
    return [_in_branch((*fork, number), step) for number, step in enumerate(steps)]


async def _in_branch(place: Place, step: Awaitable[T]) -> T:
    token = _BRANCH.set((place, [0]))
    try:
        return await step
    finally:
        _BRANCH.reset(token)
