"""Where a verified moment is reported: Marlin's grounded span, or the caption event the verifier read."""

from __future__ import annotations

from marlin_agent.domain import Event, Evidence
from marlin_agent.tools.timing import caption_timing

SIGN = Event(start=32.8, end=39.8, text="The car passes under an overhead gantry with a sign for the airport.")
OTHER = Event(start=52.1, end=60.0, text="The car indicates and moves into the left lane behind a lorry.")


def said_by(row: Event, score: float = 1.0) -> list[Evidence]:
    return [Evidence(kind="grounding", text="Marlin placed it", start=0.0, end=0.0, score=1.0),
            Evidence(kind="lexical", text=f'"{row.text}": ...', start=row.start, end=row.end, score=score)]


def test_a_grounded_span_a_few_seconds_off_the_caption_event_that_says_it_takes_the_events_span():
    timed = caption_timing((36.7, 42.4), said_by(SIGN), [SIGN, OTHER])
    assert timed is not None
    span, note = timed
    assert span == (32.8, 39.8)
    assert note.kind == "grounding" and "caption event at 0:32.8–0:39.8" in note.text and "0:36.7" in note.text


def test_a_grounded_span_that_agrees_with_the_caption_event_or_is_another_moment_stands():
    assert caption_timing((33.0, 39.6), said_by(SIGN), [SIGN, OTHER]) is None  # they agree
    assert caption_timing((44.0, 50.0), said_by(SIGN), [SIGN, OTHER]) is None  # another moment


def test_a_piece_the_index_cut_at_a_chunks_edge_does_not_time_the_whole_event():
    piece = Event(start=32.0, end=33.3, text="A cyclist crosses in front of the car.")
    assert caption_timing((27.5, 33.0), said_by(piece), [piece]) is None


def test_only_the_indexs_caption_events_time_a_moment_not_a_fresh_caption_of_the_span_itself():
    fresh = Event(start=35.0, end=41.0, text="The car passes under a sign for the airport.")
    assert caption_timing((36.7, 42.4), said_by(fresh), [SIGN, OTHER]) is None
    assert caption_timing((36.7, 42.4), [], [SIGN, OTHER]) is None


def test_a_caption_event_the_index_cut_at_a_chunks_edge_is_told_from_one_inside_its_chunk():
    from marlin_agent.library.records import Segment, chunk_id
    from marlin_agent.tools.timing import cut_at_chunk_edge

    def row(low: float, high: float, start: float, end: float) -> Segment:
        return Segment(id="e", video_id="v", chunk_id=chunk_id("v", low, high), kind="event", start=start, end=end,
                       text="two riders attack off the front")

    assert cut_at_chunk_edge(row(55.0, 110.0, 55.0, 63.2), duration=110.0, edge=1.0)  # the event began before
    assert cut_at_chunk_edge(row(0.0, 55.0, 48.2, 54.8), duration=110.0, edge=1.0)  # it goes on after
    assert not cut_at_chunk_edge(row(0.0, 55.0, 22.0, 30.0), duration=110.0, edge=1.0)
    assert not cut_at_chunk_edge(row(55.0, 110.0, 100.0, 110.0), duration=110.0, edge=1.0)  # the video ends there


def test_a_caption_event_that_may_be_a_piece_is_joined_with_the_grounded_span_never_reported_alone():
    """The breakaway runs 48-63 s over a chunk edge at 55 s; Marlin grounded it whole, and the caption event
    the verifier read is the piece told in the second chunk: the moment keeps the whole."""
    piece = Event(start=55.0, end=63.2, text="Two riders attack off the front and open a gap on the peloton.")
    timed = caption_timing((48.0, 63.0), said_by(piece), [piece], piece=lambda row: True)
    assert timed is not None and timed[0] == (48.0, 63.2)
    assert timed[1].text.startswith("joined with Marlin's caption event at 0:55.0–1:03.2")
