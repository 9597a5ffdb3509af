"""Hybrid search: both halves pull their weight."""

from __future__ import annotations

import pytest

from evals.synthetic.offline_models import minilm_dir
from marlin_agent.domain import ChunkCaption, Event
from marlin_agent.library.embeddings import Embedder
from marlin_agent.library.records import VideoRecord
from marlin_agent.library.store import Library

SURNAMES = ["Kowalczuk", "Kowalski", "Kowalewski", "Kovalenko", "Kowalik", "Kovac", "Kowal", "Kowalcz", "Kozlowski",
            "Kowalkowski"]
ACTIONS = ["takes a throw-in near the corner flag", "heads the ball clear", "argues with the referee",
           "ties a bootlace", "waves to the crowd", "is substituted off", "receives a yellow card", "takes a free kick"]


@pytest.fixture(scope="module")
def match_library(tmp_path_factory) -> Library:
    """One match whose captions name eighty players with look-alike surnames, and Kowalczyk once."""
    library = Library(str(tmp_path_factory.mktemp("index")), Embedder(str(minilm_dir()), tmp_path_factory.mktemp("models")))
    library.put_video(VideoRecord(id="match", path="/footage/match.mp4", title="match", duration=600.0, fps=25.0,
                                  width=1280, height=720, has_audio=False, chunk_seconds=60.0, chunks_planned=10))
    for n, surname in enumerate(SURNAMES):
        events = [Event(start=n * 60 + 7 * i, end=n * 60 + 7 * i + 5, text=f"{surname} {action}")
                  for i, action in enumerate(ACTIONS)]
        if n == 4:
            events.append(Event(start=n * 60 + 57, end=n * 60 + 59, text="Kowalczyk takes a throw-in near the corner flag"))
        library.put_chunk("match", n, ChunkCaption(start=n * 60.0, end=n * 60.0 + 60, scene="wide view of the pitch from the main stand",
                                                   events=events, raw="", format_ok=True), "test", 1)
    library.optimize()
    return library


def test_a_rare_name_only_full_text_can_tell_apart_is_found_first(match_library):
    # To the embedding model Kowalczyk looks like every other Kowal-: the vectors alone rank the
    # right line well down the list, and only the exact word puts it at the top.
    hits = match_library.search("Kowalczyk", k=5)
    assert "Kowalczyk takes a throw-in" in " | ".join(h.text for h in hits[:2]), [h.text for h in hits]


def test_words_that_appear_nowhere_are_still_answered_by_meaning(match_library):
    hits = match_library.search("someone disputes a decision with the official", k=5)
    assert all("argues with the referee" in h.text for h in hits[:3]), [h.text for h in hits]
