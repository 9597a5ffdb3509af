"""Where alerts go: webhooks, MQTT, a command, notification services, and always a JSON Lines log.

A target is written as the user typed it (``--notify``); secrets appear in it only as ``${NAME}``,
filled at the moment of sending from credentials.toml's ``[watch.secrets]`` or the environment
(``config.expand_secrets``), so they never sit in a shell's history, a log or the watch's state.

- ``https://…`` / ``http://…``: the alert as a JSON POST. ``#inline`` at the end adds the thumbnail
  and the clip as base64 (``thumbnail_base64``, ``clip_base64``) for receivers that cannot read
  this machine's files.
- ``mqtt://[USER[:${SECRET}]@]HOST[:PORT]/TOPIC`` (``mqtts://`` for TLS): the alert as a JSON
  payload, QoS 1, not retained: what home-automation setups subscribe to. ``?discovery=homeassistant``
  also makes each question a Home Assistant entity that fires on its alerts (``home_assistant``).
- ``cmd:PROGRAM ARGS…``: the program run with the alert as JSON on its standard input.
- a notification service's Apprise URL (``slack://…``, ``discord://…``, ``tgram://…``, ``ntfy://…``,
  ``mailto://…``, or the service's own webhook address): a message written for people (``services``).
"""

from __future__ import annotations

import base64
import json
import shlex
import subprocess
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from marlin_agent.config import Settings, expand_secrets, refuse_written_password, secret_names
from marlin_agent.errors import ConfigError, MissingDependency
from marlin_agent.redaction import redact
from marlin_agent.watch.home_assistant import DEFAULT_PREFIX, announcements, fired
from marlin_agent.watch.services import Service
from marlin_agent.watch.target import DeliveryFailed, Target, TargetKind, added_kinds

_INLINE_LIMIT = 25 * 1024 * 1024  # a clip bigger than this goes by path only


def _inline(document: dict) -> dict:
    """The alert with its thumbnail and clip carried in it, for receivers on other machines."""
    document = dict(document)
    for key, mime in (("thumbnail", "image/jpeg"), ("clip", "video/mp4")):
        path = document.get(key)
        if path and Path(path).is_file() and Path(path).stat().st_size <= _INLINE_LIMIT:
            document[f"{key}_base64"] = base64.b64encode(Path(path).read_bytes()).decode("ascii")
            document[f"{key}_type"] = mime
    return document


@dataclass
class Webhook:
    """Any other web address: the alert as a JSON POST (``#inline`` adds the thumbnail)."""

    example: ClassVar[str] = "https://… (a JSON POST)"
    text: str
    settings: Settings

    @classmethod
    def accepts(cls, text: str, settings: Settings) -> bool:
        return text.startswith(("http://", "https://"))

    @classmethod
    def parse(cls, text: str, settings: Settings) -> Webhook:
        return cls(text, settings)

    def send(self, document: dict) -> None:
        import httpx

        address, _, fragment = self.text.partition("#")
        if fragment == "inline":
            document = _inline(document)
        try:
            response = httpx.post(expand_secrets(address, self.settings), json=document,
                                  timeout=self.settings.watch.notify_timeout,
                                  headers={"User-Agent": "marlin-agent-watch"})
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"{type(exc).__name__}: {exc}") from None
        if response.status_code >= 300:
            raise DeliveryFailed(f"HTTP {response.status_code}")


@dataclass
class Mqtt:
    example: ClassVar[str] = "mqtt://HOST/TOPIC"
    text: str
    settings: Settings
    host: str
    port: int
    topic: str
    username: str | None
    password: str | None
    tls: bool

    discovery: str | None = None  # Home Assistant's discovery prefix, when its entities are announced

    @classmethod
    def accepts(cls, text: str, settings: Settings) -> bool:
        return text.startswith(("mqtt://", "mqtts://"))

    @classmethod
    def parse(cls, text: str, settings: Settings) -> Mqtt:
        parts = urllib.parse.urlsplit(text)
        topic = urllib.parse.unquote(parts.path.lstrip("/"))
        if not parts.hostname or not topic:
            raise ConfigError(f"an MQTT target needs a host and a topic: {text}",
                              hint="Write it as mqtt://HOST[:PORT]/TOPIC, e.g. mqtt://127.0.0.1/marlin/alerts.")
        if "#" in text or any(wild in topic for wild in "+#"):
            raise ConfigError(f"an alert is published to one topic, without wildcards: {topic}")
        options = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
        if set(options) - {"discovery"} or len(options.get("discovery", [])) > 1:
            raise ConfigError(f"unknown option in an MQTT target: {parts.query}",
                              hint="The one option is ?discovery=homeassistant (Home Assistant's MQTT discovery).")
        discovery = options["discovery"][0] or DEFAULT_PREFIX if "discovery" in options else None
        refuse_written_password(text, "an MQTT", "mqtt://USER:${NAME}@HOST/TOPIC")
        raw_password = parts.password
        tls = parts.scheme == "mqtts"
        return cls(text=text, settings=settings, host=parts.hostname, port=parts.port or (8883 if tls else 1883),
                   topic=topic, username=urllib.parse.unquote(parts.username) if parts.username else None,
                   password=urllib.parse.unquote(raw_password) if raw_password else None, tls=tls,
                   discovery=discovery)

    def send(self, document: dict) -> None:
        messages = [(self.topic, json.dumps(document), False)]
        if self.discovery:  # the entity announced again (a broker restarted since keeps it), then fired
            messages[:0] = [(topic, config, True) for topic, config in announcements(
                self.discovery, self.topic, document.get("watch", ""), [document.get("question", "")],
                [document.get("source", "")])]
            messages.append((*fired(self.topic, document), False))
        self._publish(messages, f"marlin-agent-{document.get('id', '')}")

    def announce(self, watch: str, questions: list[str], sources: list[str]) -> None:
        """Home Assistant's entities for a watch's questions, as it starts (nothing without discovery)."""
        if self.discovery:
            self._publish([(topic, config, True) for topic, config in announcements(
                self.discovery, self.topic, watch, questions, sources)], f"marlin-agent-{watch}")

    def _publish(self, messages: list[tuple[str, str, bool]], client_id: str) -> None:
        """Each (topic, payload, retained) at QoS 1 over one connection, every one acknowledged."""
        try:
            import paho.mqtt.client as mqtt
        except ImportError as exc:
            raise MissingDependency("MQTT alerts", "watch") from exc
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
        if self.username:
            password = expand_secrets(self.password, self.settings) if self.password else None
            client.username_pw_set(self.username, password)
        if self.tls:
            client.tls_set()
        client.connect_timeout = self.settings.watch.notify_timeout
        try:
            client.connect(self.host, self.port, keepalive=30)
        except OSError as exc:
            raise DeliveryFailed(f"could not reach the broker {self.host}:{self.port}: {exc}") from None
        client.loop_start()
        try:
            for topic, payload, retain in messages:
                sent = client.publish(topic, payload, qos=1, retain=retain)
                sent.wait_for_publish(self.settings.watch.notify_timeout)
                if not sent.is_published():
                    raise DeliveryFailed(f"the broker {self.host}:{self.port} did not acknowledge the alert")
        except (RuntimeError, ValueError) as exc:
            raise DeliveryFailed(str(exc)) from None
        finally:
            client.disconnect()
            client.loop_stop()


@dataclass
class Command:
    example: ClassVar[str] = "cmd:PROGRAM"
    text: str
    settings: Settings
    argv: list[str]

    @classmethod
    def accepts(cls, text: str, settings: Settings) -> bool:
        return text.startswith("cmd:")

    @classmethod
    def parse(cls, text: str, settings: Settings) -> Command:
        argv = shlex.split(text[4:])
        if not argv:
            raise ConfigError("cmd: names no program", hint="Write it as cmd:PROGRAM ARGS, e.g. cmd:./on-alert.sh")
        return cls(text, settings, argv)

    def send(self, document: dict) -> None:
        argv = [expand_secrets(arg, self.settings) for arg in self.argv]
        try:
            done = subprocess.run(argv, input=json.dumps(document).encode(), capture_output=True,
                                  timeout=self.settings.watch.notify_timeout * 3)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DeliveryFailed(str(exc)) from None
        if done.returncode != 0:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise DeliveryFailed(f"exit status {done.returncode}: {tail[0][:200]}")


def target_kinds() -> tuple[TargetKind, ...]:
    """Every kind of target, in the order a target's text is offered to them: MQTT and commands, the kinds
    installed packages add (``target.ENTRY_POINT_GROUP``), the services Apprise knows, then any other web
    address as a webhook (so an added kind may claim a scheme Apprise knows too)."""
    return (Mqtt, Command, *added_kinds(), Service, Webhook)


def parse_target(text: str, settings: Settings) -> Target:
    """A notify target from its text; every ``${NAME}`` in it must have a value already (checked at
    start, so a watch never runs for hours to fail on its first alert)."""
    for name in secret_names(text):
        expand_secrets("${" + name + "}", settings)
    kinds = target_kinds()
    for kind in kinds:
        if kind.accepts(text, settings):  # Slack's or Discord's own https:// webhook address goes to Apprise
            return kind.parse(text, settings)
    raise ConfigError(f"unknown notify target: {text}", hint=f"Use {', '.join(kind.example for kind in kinds)}.")


class JsonLines:
    """A JSON Lines file appended to: every alert (whatever else is notified), and every gap."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, document: dict) -> None:
        line = redact(json.dumps(document)) + "\n"
        with self.path.open("a+b") as log:
            if log.tell() > 0:  # a kill mid-line left a piece: the new line starts on a line of its own
                log.seek(-1, 2)
                if log.read(1) != b"\n":
                    line = "\n" + line
            log.write(line.encode("utf-8"))
