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
    """The kinds of target installed packages add, by entry point name; one that cannot be loaded is said and
    left out (a broken plugin must not stop a watch that does not use it)."""
    from importlib.metadata import entry_points

    kinds = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            kind = point.load()
            if not all(hasattr(kind, name) for name in ("example", "accepts", "parse")):
                raise TypeError("it needs example, accepts and parse")
            kinds.append(kind)
        except Exception as exc:  # noqa: BLE001 - a plugin's own failure, reported and passed over
            package = point.dist.name if point.dist is not None else "an installed package"
            warnings.warn(f"the alert target kind {point.name!r} of {package} is left out: {exc}", stacklevel=2)
    return tuple(kinds)
