"""Home Assistant's MQTT discovery: each standing question an event entity, with no YAML to write.

With ``--notify 'mqtt://HOST/TOPIC?discovery=homeassistant'`` a watch announces, retained under the
discovery prefix, one MQTT ``event`` entity per question (all of one watch grouped as a device),
and each alert fires the entity of its question: a payload with ``event_type`` "alert" and the
alert's question, answer, video, times, confidence, clip and thumbnail as the event's attributes.
Automations trigger on the entity's state changing. The full alert still goes to TOPIC.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from marlin_agent.version import __version__

DEFAULT_PREFIX = "homeassistant"
# What an alert's event carries as attributes (the evidence stays in the full alert on TOPIC).
_ATTRIBUTES = ("id", "question", "answer", "start", "end", "wall_start", "wall_end", "confidence", "clip",
               "thumbnail", "raised_at")


def _key(question: str) -> str:
    return hashlib.blake2b(question.encode(), digest_size=5).hexdigest()


def entity_id(watch: str, question: str) -> str:
    return f"marlin_{watch}_{_key(question)}"


def state_topic(topic: str, question: str) -> str:
    return f"{topic}/{_key(question)}"


def announcements(prefix: str, topic: str, watch: str, questions: list[str],
                  sources: list[str]) -> list[tuple[str, str]]:
    """(config topic, payload) per question: published retained, so Home Assistant finds them after a restart."""
    device = {"identifiers": [f"marlin_agent_{watch}"], "name": f"marlin-agent watch {watch}",
              "manufacturer": "marlin-agent", "model": ", ".join(sources)[:120], "sw_version": __version__}
    found = []
    for question in questions:
        config = {"name": question, "unique_id": entity_id(watch, question), "event_types": ["alert"],
                  "state_topic": state_topic(topic, question), "device": device, "icon": "mdi:cctv"}
        found.append((f"{prefix}/event/{entity_id(watch, question)}/config", json.dumps(config)))
    return found


def fired(topic: str, alert: dict[str, Any]) -> tuple[str, str]:
    """(state topic, payload) that fires the question's entity for ``alert``."""
    event = {"event_type": "alert", "video": alert.get("video", {}).get("title", "")}
    event.update({key: alert[key] for key in _ATTRIBUTES if alert.get(key) is not None})
    return state_topic(topic, alert.get("question", "")), json.dumps(event)
