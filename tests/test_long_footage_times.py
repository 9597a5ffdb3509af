"""Times stay true on footage longer than Marlin's timeline.

The simulator squeezes every clip longer than 60 s onto a 60 s timeline, the harshest reading
of Marlin's quirk. Nothing longer than a chunk is ever sent, so no answer comes back squeezed:
a 185 s video goes out as four 46.25 s chunks, not 60 + 60 + 65 s.
"""

import asyncio

import pytest

from marlin_agent.config import load_settings
from marlin_agent.indexing.run import index_inputs
from marlin_agent.library.access import open_library
from marlin_agent.library.records import chunk_id
from marlin_agent.media import plan_chunks
from tests.cli_runner import document, invoke

# Each event lies inside one chunk of the equal plan; under the old plan (a remainder under
# 15 s merged into the last chunk) the 70 s, 125 s and 185 s ones would come back seconds early.
FOOTAGE = {
    61: [{"colour": "red", "shape": "circle", "start": 5.0, "end": 12.0},
         {"colour": "blue", "shape": "square", "start": 47.0, "end": 58.0}],
    70: [{"colour": "red", "shape": "circle", "start": 8.0, "end": 15.0},
         {"colour": "blue", "shape": "square", "start": 50.0, "end": 62.0}],
    125: [{"colour": "yellow", "shape": "triangle", "start": 20.0, "end": 28.0},
          {"colour": "red", "shape": "square", "start": 100.0, "end": 110.0}],
    185: [{"colour": "red", "shape": "circle", "start": 60.0, "end": 70.0},
          {"colour": "white", "shape": "circle", "start": 160.0, "end": 171.0}],
}


@pytest.fixture(scope="module")
def videos(make_footage):
    return {d: make_footage(f"timeline_{d}", duration=d, fps=8, events=events) for d, events in FOOTAGE.items()}


@pytest.mark.parametrize("duration", sorted(FOOTAGE))
def test_caption_events_come_back_at_their_true_times(duration, videos, env, simulator):
    result = invoke(["caption", str(videos[duration]), "--json"], env)
    assert result.exit_code == 0, result.stdout + result.stderr
    caption = document(result)
    assert simulator.state.longest_clip <= 60.0
    assert [c["end"] - c["start"] for c in caption["chunks"]] == [pytest.approx(duration / len(caption["chunks"]))] * \
        len(caption["chunks"])
    for truth in FOOTAGE[duration]:
        name = f"{truth['colour']} {truth['shape']}"
        (event,) = [e for e in caption["events"] if name in e["text"]]
        assert (event["start"], event["end"]) == (pytest.approx(truth["start"], abs=1.0),
                                                   pytest.approx(truth["end"], abs=1.0)), name


@pytest.mark.parametrize("duration", [70, 185])
def test_find_grounds_an_event_at_its_true_times_in_the_chunk_that_holds_it(duration, videos, env, simulator):
    truth = FOOTAGE[duration][-1]
    result = invoke(["find", f"the {truth['colour']} {truth['shape']}", str(videos[duration]), "--json"], env)
    assert result.exit_code == 0, result.stdout + result.stderr
    candidates = document(result)["candidates"]
    (holding,) = [c for c in candidates if c["chunk_start"] <= truth["start"] and truth["end"] <= c["chunk_end"]]
    assert (holding["start"], holding["end"]) == (pytest.approx(truth["start"], abs=1.0),
                                                  pytest.approx(truth["end"], abs=1.0))
    assert simulator.state.longest_clip <= 60.0


def test_an_index_cut_with_another_plan_is_recut_and_the_old_chunks_go(videos, library_env, simulator):
    video = videos[125]

    def index(**flags):
        settings = load_settings({"library.transcribe": False, **flags}, env=library_env)
        return asyncio.run(index_inputs([str(video)], settings))

    index(**{"media.chunk_seconds": 30.0})  # five 25 s chunks
    report = index()  # three 41.67 s chunks now
    assert report.chunks_captioned == 3
    library = open_library(load_settings(env=library_env))
    (record,) = library.list_videos()
    planned = {chunk_id(record.id, c.start, c.end) for c in plan_chunks(0, record.duration)}
    assert library.stored_chunk_ids() == planned
    assert {segment.chunk_id for segment in library.segments(record.id)} == planned
    red = [segment for segment in library.segments(record.id, "event") if "red square" in segment.text]
    assert len(red) == 1 and (red[0].start, red[0].end) == (pytest.approx(100, abs=1), pytest.approx(110, abs=1))
    simulator.state.reset()
    assert index().chunks_captioned == 0 and simulator.state.calls == []  # and the new plan is kept
