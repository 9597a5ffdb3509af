"""What a notify target is to the watch: something an alert is sent to, and why a send did not land."""

from __future__ import annotations

from typing import Protocol

from marlin_agent.redaction import redact


class DeliveryFailed(Exception):
    """Why a delivery did not land; its text never holds a secret of the target (it is stored and shown)."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class Target(Protocol):
    text: str  # as the user wrote it, secrets as ${NAME}

    def send(self, document: dict) -> None: ...
