"""Chunk plans cover all footage in equal pieces, none longer than Marlin's ~60 s timeline."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from marlin_agent.media import plan_chunks


def covered(chunks):
    return [(c.start, c.end) for c in chunks]


def test_a_short_video_is_one_chunk():
    assert covered(plan_chunks(0, 24.0)) == [(0, 24.0)]


def test_exact_multiples_make_chunks_of_the_full_length():
    assert covered(plan_chunks(0, 180.0)) == [(0, 60), (60, 120), (120, 180)]


@pytest.mark.parametrize("duration, pieces", [(61, [(0, 30.5), (30.5, 61)]),
                                              (70, [(0, 35), (35, 70)]),
                                              (185, [(0, 46.25), (46.25, 92.5), (92.5, 138.75), (138.75, 185)])])
def test_a_remainder_is_shared_out_instead_of_stretching_the_last_chunk(duration, pieces):
    assert covered(plan_chunks(0, duration)) == pieces


@given(duration=st.floats(min_value=1.0, max_value=3600.0, allow_nan=False),
       start=st.floats(min_value=0.0, max_value=600.0, allow_nan=False),
       length=st.sampled_from([60.0, 45.0, 30.0, 20.0]))
def test_no_chunk_is_longer_than_the_chunk_length_and_nothing_is_dropped(duration, start, length):
    chunks = plan_chunks(start, start + duration, length)
    assert (len(chunks) - 1) * length < duration + 1e-6  # no more chunks than the length requires
    assert chunks[0].start == pytest.approx(start, abs=1e-6)
    assert chunks[-1].end == pytest.approx(start + duration, abs=1e-6)
    assert all(a.end == b.start for a, b in zip(chunks, chunks[1:], strict=False))
    assert all(c.duration <= length + 1e-6 for c in chunks)
    assert max(c.duration for c in chunks) - min(c.duration for c in chunks) <= 2e-6  # equal pieces
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_a_range_inside_a_video_is_planned_from_its_start():
    assert covered(plan_chunks(100.0, 230.0, 60)) == [(100, 143.333333), (143.333333, 186.666667),
                                                      (186.666667, 230.0)]


def test_an_empty_range_has_no_chunks():
    assert plan_chunks(10, 10) == []
