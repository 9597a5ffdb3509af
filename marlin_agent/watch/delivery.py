"""An alert delivered until it lands: tried again with growing waits, given up only when it is too old.

A receiver that is down (a webhook restarting, a broker being upgraded, a phone without signal) is
the ordinary case for a service that runs for months, so a failed try is never the end: the next
comes after 1, 2, 4 … s, at most ``retry_max_seconds`` apart, for as long as the alert is younger
than its target's ``give_up_hours`` (counted from when the alert was raised, so a restart neither
resets nor loses it). Only then is the delivery ``failed``, with the last error. After
``notify_retries`` failed tries in a row the watch says that a target is failing, once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from marlin_agent.config import WatchSettings
from marlin_agent.watch.records import stamp
from marlin_agent.watch.target import DeliveryFailed, Target


@dataclass(frozen=True)
class Persistence:
    """How long and how often one target is tried."""

    first_wait: float
    longest_wait: float
    give_up_after: float  # seconds after the alert was raised
    report_after: int  # failed tries before the failure is said

    @classmethod
    def of(cls, target: str, watch: WatchSettings) -> Persistence:
        hours = watch.give_up_hours_by_target.get(target, watch.give_up_hours)
        return cls(first_wait=1.0, longest_wait=watch.retry_max_seconds, give_up_after=hours * 3600,
                   report_after=max(1, watch.notify_retries + 1))


@dataclass(frozen=True)
class Outcome:
    status: Literal["delivered", "failed", "pending"]  # pending: the watch stopped first; the next start goes on
    error: str = ""
    tries: int = 0


def raised_epoch(raised_at: str) -> float:
    return datetime.fromisoformat(raised_at).timestamp()


async def deliver_until_landed(target: Target, document: dict, raised: float, persistence: Persistence,
                               stop: asyncio.Event, clock: Callable[[], float],
                               failing: Callable[[str, int], Awaitable[None]]) -> Outcome:
    """Try ``target`` until the alert lands, it is older than the target allows, or ``stop`` is set.

    ``failing(error, tries)`` is awaited once, when the tries in a row reach ``report_after``."""
    wait, tries, error = persistence.first_wait, 0, ""
    while True:
        tries += 1
        try:
            await asyncio.to_thread(target.send, document)
            return Outcome("delivered", tries=tries)
        except DeliveryFailed as exc:
            error = str(exc)
        if tries == persistence.report_after:
            await failing(error, tries)
        left = raised + persistence.give_up_after - clock()
        if left <= 0:
            return Outcome("failed", f"given up after {tries} tries: {error}", tries)
        try:
            await asyncio.wait_for(stop.wait(), min(wait, left))
            return Outcome("pending", error, tries)
        except TimeoutError:
            wait = min(wait * 2, persistence.longest_wait)


def delivery_line(alert_id: str, target: str, outcome: Outcome) -> dict:
    """The line alerts.jsonl gets when a target's outcome is final (the alert's own line says "pending")."""
    return {"type": "delivery", "alert": alert_id, "target": target, "status": outcome.status,
            "error": outcome.error, "tries": outcome.tries, "at": stamp()}


def logged(path: Path) -> set:
    """What alerts.jsonl holds: the ids of its alerts, and (alert id, target) for each final outcome."""
    found: set = set()
    if not path.exists():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
            found.add((entry["alert"], entry["target"]) if entry.get("type") == "delivery" else entry["id"])
        except (ValueError, KeyError, TypeError, AttributeError):  # a line cut short by a kill
            continue
    return found
