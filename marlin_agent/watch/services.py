"""Alerts where people already are: Slack, Discord, Telegram, ntfy, e-mail and the rest, through Apprise.

Those services refuse the raw alert JSON a webhook gets, and a person wants a sentence, not a
document: the message here says what was asked, what was seen, in which video and when, how
sure the verification is, with the thumbnail attached where the service takes pictures and a
link that opens the moment in `marlin-agent serve` when it runs on this machine. A target is any
URL Apprise knows (``slack://…``, ``discord://…``, ``tgram://…``, ``ntfy://…``, ``mailto://…``, its
other forms, and the services' own ``https://`` webhook addresses); secrets in it are written as
``${NAME}`` like every target's.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from marlin_agent.clock import clock
from marlin_agent.config import Settings, expand_secrets
from marlin_agent.errors import ConfigError, MissingDependency
from marlin_agent.watch.target import DeliveryFailed

# Written by a running `marlin-agent serve` (its address and process), removed when it stops.
SERVE_FILE = "serve.json"


def _apprise():
    try:
        import apprise
    except ImportError as exc:
        raise MissingDependency("notification services (Slack, Discord, Telegram, ntfy, e-mail…)", "watch") from exc
    return apprise


def known_service(text: str, settings: Settings) -> bool:
    """Whether ``text`` is the address of a service Apprise writes to (a plain web address is not)."""
    try:
        apprise = _apprise()
    except MissingDependency:
        if text.startswith(("http://", "https://")):
            return False
        raise
    return apprise.Apprise.instantiate(expand_secrets(text, settings), suppress_exceptions=True) is not None


def serve_address(home: Path) -> str | None:
    """Where the `serve` running over this ``$MARLIN_HOME`` answers, if one does."""
    try:
        running = json.loads((home / SERVE_FILE).read_text())
        os.kill(int(running["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return str(running["address"]).rstrip("/")


def message(alert: dict[str, Any], link_base: str | None) -> tuple[str, str]:
    """(title, Markdown body) of an alert, for a person."""
    video = alert.get("video", {})
    when = f"{clock(alert['start'])}–{clock(alert['end'])}"
    wall = f" ({alert['wall_start'].replace('T', ' ')[:19]})" if alert.get("wall_start") else ""
    lines = [alert.get("answer", ""), f"{video.get('title', '')} at {when}{wall} · confidence "
             f"{alert.get('confidence', 0):.2f}"]
    if link_base and video.get("id"):
        lines.append(f"[Watch the moment]({link_base}/videos/{video['id']}?t={alert['start']:.1f})")
    return f"marlin-agent: {alert.get('question', '')}", "\n\n".join(lines)


@dataclass
class Service:
    """A notification service Apprise writes to."""

    example: ClassVar[str] = ("a notification service's Apprise URL (slack://…, discord://…, tgram://…, ntfy://…, "
                              "mailto://…)")
    text: str
    settings: Settings

    @classmethod
    def accepts(cls, text: str, settings: Settings) -> bool:
        return known_service(text, settings)

    @classmethod
    def parse(cls, text: str, settings: Settings) -> Service:
        if not known_service(text, settings):
            raise ConfigError(f"not an address Apprise knows: {text}",
                              hint="See https://github.com/caronc/apprise/wiki for each service's URL form; write "
                                   "tokens and passwords as ${NAME}.")
        return cls(text, settings)

    def send(self, document: dict) -> None:
        apprise = _apprise()
        notifier = apprise.Apprise()
        notifier.add(expand_secrets(self.text, self.settings))
        title, body = message(document, serve_address(self.settings.home))
        thumbnail = document.get("thumbnail")
        attach = [thumbnail] if thumbnail and Path(thumbnail).is_file() else None
        said: list[str] = []
        result = notifier.notify(body=body, title=title, body_format=apprise.NotifyFormat.MARKDOWN, attach=attach,
                                 timeout=self.settings.watch.notify_timeout,
                                 log_callback=lambda entry, _: said.append(entry.message)
                                 if entry.level in ("WARNING", "ERROR") else None)
        if not result:
            raise DeliveryFailed(said[-1] if said else "the service did not take the notification")
