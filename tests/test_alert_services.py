"""Alerts where people are: notification services through Apprise with a message written for people, and Home
Assistant's MQTT discovery making each standing question an entity that fires on its alerts."""

from __future__ import annotations

import json
import os
import time

import pytest

from evals.synthetic.live import Mosquitto, WebhookReceiver, free_port, mosquitto_binary
from marlin_agent.config import load_settings
from marlin_agent.errors import ConfigError
from marlin_agent.watch.notify import Mqtt, Webhook, parse_target
from marlin_agent.watch.services import SERVE_FILE, Service
from marlin_agent.watch.target import DeliveryFailed
from tests.machine import needs


def _settings(tmp_path, **secrets):
    if secrets:
        lines = "\n".join(f'{k} = "{v}"' for k, v in secrets.items())
        (tmp_path / "credentials.toml").write_text(f"[watch.secrets]\n{lines}\n")
    return load_settings(env={"MARLIN_HOME": str(tmp_path)})


def _alert(tmp_path, **more) -> dict:
    thumbnail = tmp_path / "thumb.jpg"
    thumbnail.write_bytes(b"\xff\xd8\xff\xe0 a picture \xff\xd9")
    return {"type": "alert", "id": "a1b2", "watch": "w0123456789a", "question": "when is a parcel delivered",
            "source": "/cams/door", "video": {"id": "v42", "path": "/cams/door/0900.mp4", "title": "0900"},
            "start": 12.0, "end": 18.5, "wall_start": "2026-12-05T09:00:12+00:00", "confidence": 0.91,
            "evidence": [], "answer": '"a parcel is delivered": 0900 at 0:12.0–0:18.5 (confidence 0.91).',
            "clip": None, "thumbnail": str(thumbnail), **more}


def test_a_services_own_address_goes_to_apprise_and_any_other_web_address_is_a_webhook(tmp_path):
    settings = _settings(tmp_path, SLACK="T0/B0/abc")
    for text in ("slack://${SLACK}", "https://hooks.slack.com/services/T0/B0/abc",
                 "https://discord.com/api/webhooks/123/abc", "ntfy://127.0.0.1/marlin", "tgram://123456:abc/789"):
        assert isinstance(parse_target(text, settings), Service), text
    assert isinstance(parse_target("https://ha.local:8123/api/webhook/abc", settings), Webhook)
    with pytest.raises(ConfigError, match="unknown notify target"):
        parse_target("nosuchservice://x", settings)
    with pytest.raises(ConfigError, match=r"\$\{NTFY_PW\}"):  # a secret with no value: refused at start
        parse_target("ntfy://me:${NTFY_PW}@127.0.0.1/marlin", settings)
    assert parse_target("mqtt://127.0.0.1/home/marlin?discovery=homeassistant", settings).discovery == "homeassistant"
    assert parse_target("mqtt://127.0.0.1/home/marlin?discovery=", settings).discovery == "homeassistant"
    assert parse_target("mqtt://127.0.0.1/home/marlin", settings).discovery is None
    with pytest.raises(ConfigError, match="unknown option"):
        parse_target("mqtt://127.0.0.1/home/marlin?retain=1", settings)


def test_a_service_gets_a_message_for_people_with_the_thumbnail_and_a_link_to_the_moment(tmp_path):
    settings = _settings(tmp_path)
    (tmp_path / SERVE_FILE).write_text(json.dumps({"address": "http://nas.local:8765/", "pid": os.getpid()}))
    with WebhookReceiver() as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        parse_target(f"json://127.0.0.1:{port}/alerts", settings).send(_alert(tmp_path))
    sent = receiver.bodies[0]
    assert sent["title"] == "marlin-agent: when is a parcel delivered"
    assert "0900 at 0:12.0–0:18.5 (2026-12-05 09:00:12) · confidence 0.91" in sent["message"]
    assert "[Watch the moment](http://nas.local:8765/videos/v42?t=12.0)" in sent["message"]
    assert [a["filename"] for a in sent["attachments"]] == ["thumb.jpg"]
    # Without a serve running over this home, no link: it would lead nowhere.
    (tmp_path / SERVE_FILE).write_text(json.dumps({"address": "http://nas.local:8765/", "pid": 2 ** 22 + 7}))
    with WebhookReceiver() as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        parse_target(f"json://127.0.0.1:{port}/alerts", settings).send(_alert(tmp_path, thumbnail=None))
    assert "Watch the moment" not in receiver.bodies[0]["message"] and receiver.bodies[0]["attachments"] == []


def test_a_service_that_cannot_be_reached_fails_the_delivery_saying_why_and_never_the_secret(tmp_path):
    settings = _settings(tmp_path, NTFY_PW="hunter2-secret")
    target = parse_target(f"ntfy://me:${{NTFY_PW}}@127.0.0.1:{free_port()}/marlin", settings)
    with pytest.raises(DeliveryFailed) as failed:
        target.send(_alert(tmp_path))
    assert "hunter2-secret" not in str(failed.value) and str(failed.value)
    assert target.text == f"ntfy://me:${{NTFY_PW}}@127.0.0.1:{target.text.split(':')[3].split('/')[0]}/marlin"


@needs(mosquitto_binary() is not None, "mosquitto (an MQTT broker)", "apt-get install mosquitto")
def test_home_assistant_discovery_makes_each_question_an_entity_that_fires_on_its_alerts(tmp_path):
    with Mosquitto(tmp_path, topic="#") as broker:
        target = parse_target(f"mqtt://127.0.0.1:{broker.port}/home/marlin?discovery=homeassistant",
                              _settings(tmp_path))
        assert isinstance(target, Mqtt)
        questions = ["when is a parcel delivered", "when does a fox cross the lawn"]
        target.announce("w0123456789a", questions, ["/cams/door"])
        target.send(_alert(tmp_path))
        deadline = time.monotonic() + 10
        while len(broker.messages) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
    configs = {topic: payload for topic, payload, _, _ in broker.messages if topic.startswith("homeassistant/")}
    assert len(configs) == 2 and all(topic.startswith("homeassistant/event/marlin_w0123456789a_")
                                     and topic.endswith("/config") for topic in configs)
    by_name = {payload["name"]: payload for payload in configs.values()}
    assert set(by_name) == set(questions)
    parcel = by_name["when is a parcel delivered"]
    assert parcel["event_types"] == ["alert"] and parcel["unique_id"] in next(t for t in configs if parcel["unique_id"] in t)
    assert parcel["device"]["identifiers"] == by_name["when does a fox cross the lawn"]["device"]["identifiers"]
    fired = [payload for topic, payload, _, _ in broker.messages if topic == parcel["state_topic"]]
    assert len(fired) == 1 and fired[0]["event_type"] == "alert" and fired[0]["confidence"] == 0.91
    assert fired[0]["video"] == "0900" and fired[0]["wall_start"] == "2026-12-05T09:00:12+00:00"
    whole = [payload for topic, payload, _, _ in broker.messages if topic == "home/marlin"]
    assert len(whole) == 1 and whole[0]["id"] == "a1b2"  # the full alert still goes to the topic
