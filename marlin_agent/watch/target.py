"""What a notify target is to the watch: something an alert is sent to, and why a send did not land; and the
kinds of target other packages add.

A package adds a kind of target with an entry point in the group ``marlin_agent.alert_targets`` that names
a class with ``example`` (a target as a user writes it, shown where the kinds are listed) and the class
methods ``accepts(text, settings)`` and ``parse(text, settings)``, which returns the target (anything with
``text`` and ``send(document)``; ``send`` raises ``DeliveryFailed`` when the alert did not land, and the
watch retries it). The built-in kinds have the same shape (``watch.notify``).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, ClassVar, Protocol

from marlin_agent.plugins import added
from marlin_agent.redaction import redact

ENTRY_POINT_GROUP = "marlin_agent.alert_targets"


class DeliveryFailed(Exception):
    """Why a delivery did not land; its text never holds a secret of the target (it is stored and shown)."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class Target(Protocol):
    text: str  # as the user wrote it, secrets as ${NAME}

    def send(self, document: dict) -> None: ...


class TargetKind(Protocol):
    example: ClassVar[str]

    @classmethod
    def accepts(cls, text: str, settings: Any) -> bool: ...

    @classmethod
    def parse(cls, text: str, settings: Any) -> Target: ...


@functools.cache
def added_kinds() -> tuple[TargetKind, ...]:
    """The kinds of target installed packages add, by entry point name (one without ``example``, ``accepts`` and
    ``parse`` is left out with a warning)."""
    kinds = []
    for name, kind in added(ENTRY_POINT_GROUP, "alert target kind").items():
        if all(hasattr(kind, part) for part in ("example", "accepts", "parse")):
            kinds.append(kind)
        else:
            warnings.warn(f"the alert target kind {name!r} is left out: it needs example, accepts and parse",
                          stacklevel=2)
    return tuple(kinds)
