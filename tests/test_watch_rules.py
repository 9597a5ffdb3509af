"""The rules of a watch, one at a time: what is an occurrence, when a file has arrived, which targets
and addresses are accepted, and where a secret comes from."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from marlin_agent.config import expand_secrets, load_settings
from marlin_agent.errors import ConfigError
from marlin_agent.watch.folder import FolderSource
from marlin_agent.watch.notify import Command, Mqtt, Webhook, _inline, parse_target
from marlin_agent.watch.occurrences import decide, extended, opened
from marlin_agent.watch.records import WatchSpec


def settings(tmp_path, secrets: dict[str, str] | None = None, **env):
    if secrets:
        lines = "\n".join(f'{k} = "{v}"' for k, v in secrets.items())
        (tmp_path / "credentials.toml").write_text(f"[watch.secrets]\n{lines}\n")
    return load_settings(env={"MARLIN_HOME": str(tmp_path), **env})


# --- occurrences -----------------------------------------------------------------------

def test_a_moment_that_meets_the_last_occurrence_is_the_same_occurrence():
    latest = opened("q", "cam", "a1", end=100.0)
    assert decide(None, 10, 20, join=2, cooldown=0) == "alert"
    assert decide(latest, 101.5, 106, join=2, cooldown=0) == "joined"  # the event ran on into the next segment
    assert decide(latest, 103, 106, join=2, cooldown=0) == "alert"  # a second occurrence, 3 s later


def test_a_cooldown_keeps_a_question_quiet_and_counts_from_the_end_of_the_alerted_occurrence():
    latest = opened("q", "cam", "a1", end=100.0)
    assert decide(latest, 130, 135, join=2, cooldown=60) == "quiet"
    running = extended(latest, 140)  # the alerted occurrence itself ran on to 140
    assert running.alerted_end == 140 and decide(running, 190, 195, join=2, cooldown=60) == "quiet"
    quiet = extended(opened("q", "cam", "a1", end=100.0), 100)
    quiet = quiet.model_copy(update={"end": 135})  # a quiet occurrence later on does not move the cooldown
    assert extended(quiet, 150).alerted_end == 100
    assert decide(quiet, 170, 175, join=2, cooldown=60) == "alert"


def test_a_watch_is_the_same_watch_whatever_the_order_of_its_sources():
    assert WatchSpec.of(["b", "a"]).id == WatchSpec.of(["a", "b", "a"]).id != WatchSpec.of(["a"]).id


# --- files arriving ----------------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_file_counts_once_it_has_stopped_growing_and_only_once(tmp_path):
    clock = Clock()
    source = FolderSource(tmp_path, settle=3.0, clock=clock)
    growing = tmp_path / "sub" / "cam.mp4"
    growing.parent.mkdir()
    growing.write_bytes(b"x" * 10)
    (tmp_path / ".partial.mp4").write_bytes(b"hidden")  # a download in progress, named as such
    (tmp_path / "notes.txt").write_text("not a video")
    assert source.scan() == []
    clock.now = 2.0
    with growing.open("ab") as f:
        f.write(b"y" * 10)
    assert source.scan() == []  # it grew: the wait starts again
    clock.now = 4.0
    assert source.scan() == []
    clock.now = 5.1
    [(path, key)] = source.scan()
    assert path == growing and key in source.known
    clock.now = 20.0
    assert source.scan() == []  # announced once


def test_a_file_replaced_under_the_same_name_is_new_footage(tmp_path):
    clock = Clock()
    source = FolderSource(tmp_path, settle=0.0, clock=clock)
    video = tmp_path / "door.mp4"
    video.write_bytes(b"a" * 10)
    source.scan()
    clock.now = 1.0
    assert len(source.scan()) == 1
    video.write_bytes(b"b" * 20)
    clock.now = 2.0
    source.scan()
    clock.now = 3.0
    assert len(source.scan()) == 1


def test_files_known_from_an_earlier_run_are_not_new(tmp_path):
    (tmp_path / "old.mp4").write_bytes(b"a")
    first = FolderSource(tmp_path, settle=0.0)
    known = set(first.current_keys())
    again = FolderSource(tmp_path, settle=0.0, known=known)
    assert again.scan() == [] and again.scan() == []


# --- targets and secrets ------------------------------------------------------------------

def test_targets_are_read_by_their_scheme(tmp_path):
    s = settings(tmp_path)
    assert isinstance(parse_target("https://example.org/hook", s), Webhook)
    mqtt = parse_target("mqtts://ha@broker.lan/home/door%20cam", s)
    assert isinstance(mqtt, Mqtt) and (mqtt.host, mqtt.port, mqtt.topic, mqtt.username, mqtt.tls) == (
        "broker.lan", 8883, "home/door cam", "ha", True)
    assert parse_target("mqtt://broker.lan:1884/a", s).port == 1884
    command = parse_target("cmd:notify-send 'Marlin alert'", s)
    assert isinstance(command, Command) and command.argv == ["notify-send", "Marlin alert"]


@pytest.mark.parametrize(("target", "says"), [
    ("ftp://example.org/x", "unknown notify target"),
    ("mqtt://broker.lan/", "needs a host and a topic"),
    ("mqtt://broker.lan/home/#", "without wildcards"),
    ("mqtt://ha:hunter2@broker.lan/home", "password was written on the command line"),
    ("cmd:", "names no program"),
    ("https://example.org/hook?token=${NOT_SET_ANYWHERE}", "no value for ${NOT_SET_ANYWHERE}"),
])
def test_a_target_that_cannot_work_is_refused_before_the_watch_starts(tmp_path, target, says):
    with pytest.raises(ConfigError) as refused:
        parse_target(target, settings(tmp_path))
    assert says in refused.value.message


def test_secrets_come_from_credentials_first_then_the_environment(tmp_path):
    s = settings(tmp_path, secrets={"TOKEN": "from-file"})
    assert expand_secrets("a/${TOKEN}/${OTHER}", s, env={"TOKEN": "from-env", "OTHER": "x"}) == "a/from-file/x"
    with pytest.raises(ConfigError) as missing:
        expand_secrets("${MISSING}", s, env={})
    assert "[watch.secrets]" in missing.value.hint and str(s.credentials_path) in missing.value.hint


def test_a_stream_password_goes_in_as_a_secret_never_written_out(tmp_path):
    from marlin_agent.watch.runner import Watcher

    s = settings(tmp_path, secrets={"CAM": "pw"})
    with pytest.raises(ConfigError, match="password was written"):
        Watcher(["rtsp://admin:pw@192.168.1.20/stream1"], ["a person at the door"], s)
    watcher = Watcher(["rtsp://admin:${CAM}@192.168.1.20/stream1"], ["a person at the door"], s)
    assert watcher.spec.sources == ["rtsp://admin:${CAM}@192.168.1.20/stream1"]


def test_a_watch_needs_a_question_and_folders_that_exist(tmp_path):
    from marlin_agent.errors import NoVideosFound, VideoUnreadable
    from marlin_agent.watch.runner import Watcher

    s = settings(tmp_path)
    with pytest.raises(ConfigError, match="at least one question"):
        Watcher([str(tmp_path)], ["  "], s)
    with pytest.raises(NoVideosFound):
        Watcher([str(tmp_path / "missing")], ["q"], s)
    (tmp_path / "one.mp4").write_bytes(b"x")
    with pytest.raises(VideoUnreadable, match="not a folder"):
        Watcher([str(tmp_path / "one.mp4")], ["q"], s)


def test_inline_targets_carry_the_pictures(tmp_path):
    thumbnail = tmp_path / "a.jpg"
    thumbnail.write_bytes(b"\xff\xd8jpeg")
    carried = _inline({"id": "a", "thumbnail": str(thumbnail), "clip": str(tmp_path / "gone.mp4")})
    assert base64.b64decode(carried["thumbnail_base64"]) == b"\xff\xd8jpeg" and "clip_base64" not in carried


class _Receiver:
    """A target that is down for its first ``down`` tries; the clock is moved by each wait."""

    def __init__(self, down: int) -> None:
        self.text, self.down, self.tries = "https://receiver.example/hook", down, 0

    def send(self, document: dict) -> None:
        from marlin_agent.watch.notify import DeliveryFailed

        self.tries += 1
        if self.tries <= self.down:
            raise DeliveryFailed("ConnectError: connection refused")


def _deliver(receiver, persistence, raised=0.0):
    import asyncio

    from marlin_agent.watch.delivery import deliver_until_landed

    said = []

    async def failing(error, tries):
        said.append((error, tries))

    def waited() -> float:
        # Waits are real but short here; the clock the give-up counts on is the time waited so far, 1000 times
        # faster, and nothing else: a busy machine's slow tries do not age the alert in this test.
        waits = (min(persistence.first_wait * 2 ** k, persistence.longest_wait) for k in range(receiver.tries - 1))
        return 1000 * sum(waits)

    async def run():
        stop = asyncio.Event()
        return await deliver_until_landed(receiver, {"id": "a"}, raised, persistence, stop, waited, failing)

    return asyncio.run(run()), said


def test_a_delivery_is_tried_again_with_growing_waits_until_the_receiver_is_back():
    from marlin_agent.watch.delivery import Persistence

    receiver = _Receiver(down=6)  # down for about a minute of the scaled clock
    outcome, said = _deliver(receiver, Persistence(first_wait=0.001, longest_wait=0.016, give_up_after=3600,
                                                   report_after=4))
    assert outcome.status == "delivered" and outcome.tries == 7 == receiver.tries
    assert said == [("ConnectError: connection refused", 4)]  # said once, when it had failed four times


def test_a_delivery_is_given_up_only_when_its_alert_is_older_than_its_target_allows_and_says_why():
    from marlin_agent.watch.delivery import Persistence

    receiver = _Receiver(down=10**6)
    outcome, _ = _deliver(receiver, Persistence(first_wait=0.001, longest_wait=0.004, give_up_after=60,
                                                report_after=1))
    assert outcome.status == "failed" and outcome.error.startswith(f"given up after {receiver.tries} tries")
    assert "connection refused" in outcome.error and receiver.tries > 5


def test_a_stopping_watch_leaves_a_failing_delivery_pending_for_its_next_start():
    import asyncio

    from marlin_agent.watch.delivery import Persistence, deliver_until_landed

    async def run():
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, stop.set)

        async def failing(error, tries):
            pass

        return await deliver_until_landed(_Receiver(down=10**6), {}, 0.0, Persistence(0.05, 60, 3600, 3), stop,
                                          lambda: 0.0, failing)

    assert asyncio.run(run()).status == "pending"


def test_each_target_may_be_given_up_after_its_own_time(tmp_path):
    from marlin_agent.watch.delivery import Persistence

    (tmp_path / "config.toml").write_text('[watch]\ngive_up_hours = 48\n[watch.give_up_hours_by_target]\n'
                                          '"mqtt://broker.lan/home/alerts" = 0.5\n')
    watch = settings(tmp_path).watch
    assert Persistence.of("mqtt://broker.lan/home/alerts", watch).give_up_after == 1800
    assert Persistence.of("https://example.org/hook", watch).give_up_after == 48 * 3600


def test_a_command_target_reports_its_exit_status(tmp_path):
    from marlin_agent.watch.notify import DeliveryFailed

    failing = parse_target(f"cmd:{os.sys.executable} -c 'import sys; sys.exit(3)'", settings(tmp_path))
    with pytest.raises(DeliveryFailed, match="exit status 3"):
        failing.send({"id": "a"})
    parse_target(f"cmd:{os.sys.executable} -c 'import sys, json; json.load(sys.stdin)'",
                 settings(tmp_path)).send({"id": "a"})


def test_recordings_are_named_by_their_wall_clock_start(tmp_path):
    from marlin_agent.watch.stream import segment_name, wall_start_of

    name = segment_name(1796169455.460942)
    assert abs(wall_start_of(Path(name)) - 1796169455.460942) < 1e-5
    assert wall_start_of(Path(name + ".part")) is not None and wall_start_of(Path("holiday.mkv")) is None


def test_a_standing_question_asks_whether_something_happens(tmp_path):
    from marlin_agent.watch.runner import Watcher

    s = settings(tmp_path)
    Watcher([str(tmp_path)], ["every time the gate opens", "how many cars pass", "a parcel is delivered"], s)
    for question, form in (("what happens after the goal", "after"), ("how long does the dog bark", "duration")):
        with pytest.raises(ConfigError, match=f"asks for {form}"):
            Watcher([str(tmp_path)], [question], s)


def test_recordings_past_retention_are_deleted_once_judged_and_leave_the_state(tmp_path, simulator, offline_models):
    from evals.synthetic.watch_day import simulate

    s = load_settings({"library.transcribe": False, "watch.retention_hours": 0.01},  # 36 s: under 4 segments
                      env={"MARLIN_HOME": str(tmp_path / "home"), "MARLIN_BASE_URL": simulator.base_url,
                           **offline_models})
    figures = simulate(s, tmp_path / "camera", segments=40, seconds=10.0, alert_every=10, sample_every=10)
    assert figures["alerts"] == 4
    assert figures["recordings_kept"] <= 5 and figures["footage_rows_kept"] <= 5


def test_a_stream_with_a_fixed_length_is_recorded_once_and_not_opened_again(tmp_path, make_footage):
    """A video file given as a stream would start over on every reopening, and be alerted on twice."""
    import threading

    from marlin_agent.watch.stream import StreamRecorder

    video = make_footage("fixed_length", duration=8)
    segments, messages = [], []
    recorder = StreamRecorder(f"file:{video}", tmp_path / "rec", 5.0, timeout=5, reconnect_max=1,
                              on_segment=segments.append, on_outage=lambda o: None, on_error=messages.append)
    worker = threading.Thread(target=recorder.run)
    worker.start()
    worker.join(30)
    assert not worker.is_alive() and "not opened again" in messages[-1]
    assert len(segments) >= 1 and abs(sum(s.duration for s in segments) - 8) < 1.0


def test_only_one_watch_over_the_same_sources_runs_on_a_machine(tmp_path):
    from marlin_agent.errors import IndexBusy
    from marlin_agent.watch.runner import Watcher

    s = settings(tmp_path)
    first = Watcher([str(tmp_path)], ["a parcel is delivered"], s)._take_lock()
    try:
        with pytest.raises(IndexBusy, match="another watch"):
            Watcher([str(tmp_path)], ["a dog barks"], s)._take_lock()
    finally:
        first.close()
    Watcher([str(tmp_path)], ["a dog barks"], s)._take_lock().close()  # free again once the first stopped
