"""Captions and grounding over whole videos, against the simulator: the core acceptance."""

import asyncio

import pytest

from evals.synthetic.footage import load_truth
from marlin_agent.errors import AuthenticationFailed, ChunkFailed, InvalidTimeRange
from marlin_agent.marlin import MarlinClient
from marlin_agent.marlin.scan import caption_video, find_in_video

CHUNK = 60.0
CONTRACT_CAPTION = (
    "Provide a spatial description of this clip followed by time-ranged events.\n"
    "For each event, give the time range as <start - end> and a short description."
)


def caption(path, settings, **kwargs):
    async def go():
        async with MarlinClient(settings.server) as client:
            return await caption_video(path, settings, client, **kwargs)
    return asyncio.run(go())


def find(query, path, settings, **kwargs):
    async def go():
        async with MarlinClient(settings.server) as client:
            return await find_in_video(query, path, settings, client, **kwargs)
    return asyncio.run(go())


def iou(a, b):
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return inter / (max(a[1], b[1]) - min(a[0], b[0]))


def test_a_long_video_is_captioned_with_events_at_their_true_times(footage, settings, simulator):
    truth = load_truth(footage["long_street"])
    result = caption(footage["long_street"], settings)
    assert result.video.duration > 180
    assert [(c.start, c.end) for c in result.chunks] == [(0, 50), (50, 100), (100, 150), (150, 200)]
    assert len(result.events) == len(truth.events)
    for expected, got in zip(truth.events, result.events, strict=False):
        assert got.text == expected.text
        assert got.start == pytest.approx(expected.start, abs=1.0)
        assert got.end == pytest.approx(expected.end, abs=1.0)
    assert result.failures == []


def test_every_request_is_greedy_canonical_and_no_longer_than_a_chunk(footage, settings, simulator):
    caption(footage["long_street"], settings)
    find("the white circle", footage["long_street"], settings)
    records = simulator.state.records
    assert records and all(r.status == 200 for r in records)
    assert simulator.state.off_contract == []
    assert all(r.temperature == 0 for r in records)
    assert {r.prompt for r in records if r.kind == "caption"} == {CONTRACT_CAPTION}
    assert all(r.max_tokens in (1024, 64) for r in records)
    assert simulator.state.longest_clip <= CHUNK


def test_a_short_remainder_is_shared_out_and_stays_on_time(make_footage, settings, simulator):
    video = make_footage("tail", duration=130, events=[{"colour": "blue", "shape": "circle", "start": 121.0, "end": 127.0}])
    result = caption(video, settings)
    assert [(c.start, c.end) for c in result.chunks] == [(0, 43.333333), (43.333333, 86.666667), (86.666667, 130)]
    (event,) = [e for e in result.events if "blue" in e.text]
    assert (event.start, event.end) == pytest.approx((121.0, 127.0), abs=1.0)
    assert simulator.state.longest_clip == pytest.approx(43.5, abs=0.3)


def test_an_event_cut_by_a_chunk_boundary_is_joined_again(make_footage, settings):
    video = make_footage("straddle", duration=100, events=[{"colour": "yellow", "shape": "square", "start": 45.0, "end": 56.0}])
    result = caption(video, settings)  # two 50 s chunks
    (event,) = result.events
    assert (event.start, event.end) == pytest.approx((45.0, 56.0), abs=1.0)
    assert sum(len(c.events) for c in result.chunks) == 2  # each chunk saw its half


def test_a_range_captions_only_that_part_with_video_times(footage, settings, simulator):
    result = caption(footage["long_street"], settings, start=120, end=200)
    assert [(c.start, c.end) for c in result.chunks] == [(120, 160), (160, 200)]
    assert [round(e.start) for e in result.events] == [131, 185]


def test_a_range_outside_the_video_is_refused(footage, settings):
    with pytest.raises(InvalidTimeRange, match="not inside short_field.mp4"):
        caption(footage["short_field"], settings, start=10, end=99)


def test_a_range_that_ends_before_it_starts_says_so(footage, settings, simulator):
    with pytest.raises(InvalidTimeRange, match="ends before it starts: --start 10 is not before --end 5"):
        caption(footage["short_field"], settings, start=10, end=5)
    assert simulator.state.received == 0


def test_find_returns_the_true_span_of_an_event_that_exists(footage, settings):
    result = find("the blue square", footage["short_field"], settings)
    (candidate,) = result.candidates
    assert iou((candidate.start, candidate.end), (12.5, 20.0)) > 0.9


def test_find_in_a_long_video_proposes_one_candidate_per_chunk_including_the_true_one(footage, settings):
    result = find("the white circle", footage["long_street"], settings)
    assert len(result.candidates) == 4
    assert all(c.chunk_start <= c.start <= c.end <= c.chunk_end for c in result.candidates)
    assert max(iou((c.start, c.end), (131.0, 140.0)) for c in result.candidates) > 0.85


def test_find_in_a_rotated_video(footage, settings):
    (candidate,) = find("white square", footage["vertical_night"], settings).candidates
    assert iou((candidate.start, candidate.end), (10.0, 16.0)) > 0.85


def test_a_failing_chunk_is_recorded_and_the_others_still_answer(footage, settings, simulator, monkeypatch):
    from marlin_agent.marlin.scan import ChunkRunner

    original = ChunkRunner._stage

    async def flaky(self, chunk):
        if chunk.index == 1:
            from marlin_agent.errors import VideoUnreadable
            raise VideoUnreadable("simulated decode error in chunk 1")
        return await original(self, chunk)

    monkeypatch.setattr(ChunkRunner, "_stage", flaky)
    result = caption(footage["long_street"], settings)
    assert [(f.start, f.end, f.code) for f in result.failures] == [(50, 100, "video_unreadable")]
    assert [c.start for c in result.chunks] == [0, 100, 150]


def test_when_every_chunk_fails_the_run_fails(footage, settings, simulator):
    simulator.state.fault = "error500"
    settings = settings.model_copy(update={"server": settings.server.model_copy(update={"max_retries": 0})})
    with pytest.raises(ChunkFailed, match="every chunk"):
        caption(footage["short_field"], settings)


def test_a_failure_every_request_would_meet_stops_the_run_at_once(footage, settings, simulator):
    simulator.state.api_key = "needed"
    with pytest.raises(AuthenticationFailed):
        caption(footage["long_street"], settings)
    assert len(simulator.state.calls) == 0
