"""One question's run: what it covers, what it may spend, and what it did and found.

The toolbox is an adapter from the tools to the library, Marlin and the verifier, and keeps
nothing of a question; everything a question accumulates lives here and is handed to every tool
call (as pydantic-ai hands its tools a ``RunContext``). A planner makes one per question, so two
questions over one toolbox (side by side, or one after the other) share no budget, trace,
verified moments or reads, and nothing of one can leak into the other's checks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from marlin_agent.domain import Moment, TraceStep, VideoInfo, VideoRef
from marlin_agent.errors import BudgetExhausted
from marlin_agent.library.records import Segment
from marlin_agent.tools.results import Cost
from marlin_agent.tools.trace_order import Place, stamp

T = TypeVar("T")


@dataclass
class Meter:
    """What one step spent: Marlin calls, and the time any of them was awaited (calls side by side count once)."""

    calls: int = 0
    started: float = field(default_factory=time.monotonic)
    marlin_seconds: float = 0.0
    # The step this one is taken inside (a fresh caption inside a verification): its waits are that step's too.
    parent: Meter | None = None
    _waiting: int = 0
    _since: float = 0.0

    @asynccontextmanager
    async def waiting(self):
        if not self._waiting:
            self._since = time.monotonic()
        self._waiting += 1
        try:
            if self.parent is not None:
                async with self.parent.waiting():
                    yield
            else:
                yield
        finally:
            self._waiting -= 1
            if not self._waiting:
                self.marlin_seconds += time.monotonic() - self._since


@dataclass
class RunContext:
    """A question's state, passed to every tool call made for it.

    ``scope``: the video ids the question is about (None: the whole library). ``marlin_budget``: Marlin
    calls the question may make (None: unbounded); a call past it raises ``BudgetExhausted``, which stops
    the run cleanly instead of letting a model loop spend without end."""

    scope: list[str] | None = None
    marlin_budget: int | None = None
    marlin_calls: int = 0
    # Marlin calls that failed (the server's error, not a budget): an answer that rests on them may be missing
    # moments, and must say so rather than read as an honest "not found".
    failed_calls: list[str] = field(default_factory=list)
    # Every moment that went through verification, so a run cut short still has its evidence.
    verified: list[Moment] = field(default_factory=list)
    _verified_for: dict[int, str] = field(default_factory=dict)  # id(moment) -> the event it was verified for
    _steps: list[tuple[Place, TraceStep]] = field(default_factory=list)
    # What the question read once and reads again: a video's record, probe and segments by kind (every
    # candidate's verification reads them all, as the index held them when first read).
    _refs: dict[str, VideoRef] = field(default_factory=dict)
    _infos: dict[str, VideoInfo] = field(default_factory=dict)
    _segments: dict[tuple[str, str], list[Segment]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.scope is not None:
            self.scope = list(self.scope)

    # --- the trace -----------------------------------------------------------------------

    @property
    def trace(self) -> list[TraceStep]:
        """The steps in the order their work was started (``trace_order``): the same on every run that did the
        same work, whichever side-by-side step finished first."""
        return [step for _, step in sorted(self._steps, key=lambda placed: placed[0])]

    def note(self, step: str, detail: str, calls: int = 0, started: float | None = None) -> None:
        seconds = round(time.monotonic() - started, 3) if started is not None else 0.0
        self._steps.append((stamp(), TraceStep(step=step, detail=detail, marlin_calls=calls, seconds=seconds)))

    def done(self, step: str, detail: str, meter: Meter) -> Cost:
        """Record a finished step with what its meter counted; its cost."""
        cost = Cost(marlin_calls=meter.calls, seconds=round(time.monotonic() - meter.started, 3),
                    marlin_seconds=round(meter.marlin_seconds, 3))
        self._steps.append((stamp(), TraceStep(step=step, detail=detail, marlin_calls=cost.marlin_calls,
                                               seconds=cost.seconds, marlin_seconds=cost.marlin_seconds)))
        return cost

    # --- the budget ----------------------------------------------------------------------

    def room_for(self, calls: int) -> bool:
        """Whether the question's budget has this many Marlin calls left."""
        return self.marlin_budget is None or self.marlin_budget - self.marlin_calls >= calls

    def spend(self, meter: Meter) -> None:
        """Count one Marlin call against the budget (and ``meter``), or raise when it is spent."""
        if self.spent:
            raise BudgetExhausted(f"the budget of {self.marlin_budget} Marlin calls for this question is spent")
        self.marlin_calls += 1
        meter.calls += 1

    @property
    def spent(self) -> bool:
        return self.marlin_budget is not None and self.marlin_calls >= self.marlin_budget

    def unbounded(self) -> None:
        """Lift the budget: a fallback planner's own plan bounds what it spends."""
        self.marlin_budget = None

    # --- what was verified ---------------------------------------------------------------

    def keep(self, moment: Moment, event: str) -> None:
        self.verified.append(moment)
        self._verified_for[id(moment)] = event

    def verified_for(self, moment: Moment) -> str:
        """The event ``moment`` was verified for ("" when it was not verified in this run)."""
        return self._verified_for.get(id(moment), "")

    # --- reads, once per question ----------------------------------------------------------

    def covers(self, video_id: str) -> bool:
        return self.scope is None or video_id in self.scope

    async def once(self, store: dict, key, read: Callable[[], Awaitable[T]]) -> T:
        """``read()``'s value, read the first time this question asks for ``key`` in ``store`` (one of the run's
        read caches)."""
        if key not in store:
            store[key] = await read()
        return store[key]

    async def segments(self, key: tuple[str, str], read: Callable[[], list[Segment]]) -> list[Segment]:
        return await self.once(self._segments, key, lambda: asyncio.to_thread(read))

    async def ref(self, video_id: str, read: Callable[[], Awaitable[VideoRef]]) -> VideoRef:
        return await self.once(self._refs, video_id, read)

    async def info(self, video_id: str, read: Callable[[], Awaitable[VideoInfo]]) -> VideoInfo:
        return await self.once(self._infos, video_id, read)
