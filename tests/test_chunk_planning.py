"""Chunk plans cover all footage in pieces Marlin reads on its ~60 s timeline."""

import pytest

from marlin_agent.media import plan_chunks


def covered(chunks):
    return [(c.start, c.end) for c in chunks]


def test_a_short_video_is_one_chunk():
    assert covered(plan_chunks(0, 24.0)) == [(0, 24.0)]


def test_exact_multiples_make_equal_chunks():
    assert covered(plan_chunks(0, 180.0)) == [(0, 60), (60, 120), (120, 180)]


def test_a_short_tail_merges_into_the_last_chunk():
    assert covered(plan_chunks(0, 130.0, 60, 15)) == [(0, 60), (60, 130.0)]


def test_a_long_enough_tail_stands_alone():
    assert covered(plan_chunks(0, 140.0, 60, 15)) == [(0, 60), (60, 120), (120, 140.0)]


@pytest.mark.parametrize("duration", [0.5, 59.9, 61, 74.9, 75, 119, 200, 3599.7])
def test_chunks_cover_everything_without_gaps_and_stay_within_the_allowance(duration):
    chunks = plan_chunks(0, duration, 60, 15)
    assert chunks[0].start == 0 and chunks[-1].end == pytest.approx(duration)
    assert all(a.end == b.start for a, b in zip(chunks, chunks[1:]))
    assert all(c.duration <= 75 + 1e-6 for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_a_range_inside_a_video_is_planned_from_its_start():
    assert covered(plan_chunks(100.0, 230.0, 60, 15)) == [(100, 160), (160, 230.0)]


def test_an_empty_range_has_no_chunks():
    assert plan_chunks(10, 10) == []
