"""Replaying verification: a journal of what every read saw, and candidates read again from it."""

from __future__ import annotations

import pytest

from evals.replay import outcomes, reread
from marlin_agent.config import load_settings
from marlin_agent.errors import ConfigError
from marlin_agent.evaluation.presence import Candidate, PresenceResult
from marlin_agent.library.embeddings import shared_embedder
from marlin_agent.verification.calibration import Calibration
from marlin_agent.verification.confidence import features
from marlin_agent.verification.journal import JournalEntry, Logged, read_journal
from marlin_agent.verification.signals import SpanTexts
from marlin_agent.verification.verifier import Verifier

FORKLIFT = SpanTexts(event="the forklift lifts a pallet of tyres", span=(16.0, 24.0),
                     events=[Logged(3.7, 12.0, "A forklift truck backs away from the racking."),
                             Logged(16.1, 24.3, "The forklift lifts a pallet of cartons onto the top shelf.")],
                     fresh=[Logged(16.0, 24.0, "A pallet of boxes is raised onto the highest rack.")],
                     lines=[Logged(20.0, 22.0, "Careful with that one.")])


def _verifier(tmp_path, offline_models, journal: bool) -> Verifier:
    env = {"MARLIN_HOME": str(tmp_path / "home"), **offline_models}
    if journal:
        env["MARLIN_VERIFY_JOURNAL"] = str(tmp_path / "reads.jsonl")
    settings = load_settings(env=env)
    return Verifier(settings, lambda: shared_embedder(settings.library.embed_model, settings.cache_dir / "models",
                                                      settings.graphs_dir))


def test_a_verifier_with_a_journal_logs_every_read_so_that_it_can_be_read_again(tmp_path, offline_models):
    verifier = _verifier(tmp_path, offline_models, journal=True)
    found = features(verifier.read(FORKLIFT))
    [entry] = read_journal(tmp_path / "reads.jsonl")
    assert entry.texts() == FORKLIFT
    assert entry.features == found and "lexical" in found and "caption_event" in found
    assert features(verifier.read(entry.texts())) == found  # read again, the same evidence
    assert len(read_journal(tmp_path / "reads.jsonl")) == 2


def test_without_a_journal_nothing_is_written(tmp_path, offline_models):
    _verifier(tmp_path, offline_models, journal=False).read(FORKLIFT)
    assert not list(tmp_path.rglob("*.jsonl"))


def test_a_journal_that_cannot_be_written_is_a_clear_error_before_any_read(tmp_path, offline_models):
    (tmp_path / "taken").write_text("a file, not a folder")
    env = {"MARLIN_HOME": str(tmp_path / "home"), **offline_models,
           "MARLIN_VERIFY_JOURNAL": str(tmp_path / "taken" / "reads.jsonl")}
    with pytest.raises(ConfigError, match="cannot write the verification journal") as raised:
        Verifier(load_settings(env=env), lambda: None)
    assert "MARLIN_VERIFY_JOURNAL" in raised.value.hint


def _row(query: str, present: bool, *candidates: Candidate) -> PresenceResult:
    return PresenceResult(video_id="v", query=query, present=present, confidence=0.0, found=False,
                          candidates=list(candidates))


def test_candidates_are_paired_with_their_reads_by_what_the_signals_found_and_read_again():
    """An answer may report a moment at the caption event that says it, not at the span read: the pairing goes
    by the signal features the recorded code found there. What only Marlin could say (regrounding) is kept."""
    read_there = JournalEntry.of(FORKLIFT, {"lexical": 0.75, "similarity": 0.84})
    elsewhere = JournalEntry.of(SpanTexts(event="the forklift lifts a pallet of tyres", span=(3.0, 12.0),
                                          events=FORKLIFT.events), {"lexical": 0.25})
    moved = Candidate(start=16.1, end=24.3, confidence=0.7, iou=0.0, features={"lexical": 0.75, "similarity": 0.84,
                                                                               "regrounding": 1.0})
    early = Candidate(start=3.7, end=12.0, confidence=0.2, features={"lexical": 0.25})
    unknown = Candidate(start=40.0, end=44.0, confidence=0.1, features={"lexical": 0.5})
    reads = []

    def read(texts: SpanTexts) -> dict[str, float]:
        reads.append(texts.span)
        return {"lexical": 0.1 if texts.span == (16.0, 24.0) else 0.3, "lexical_swap": 1.0}

    replayed = reread([_row("the forklift lifts a pallet of tyres", False, moved, early, unknown)],
                      [elsewhere, read_there], read)
    [row] = replayed.rows
    assert row.candidates[0].features == {"lexical": 0.1, "lexical_swap": 1.0, "regrounding": 1.0}
    assert row.candidates[1].features == {"lexical": 0.3, "lexical_swap": 1.0}
    assert row.candidates[2] == unknown and replayed.unmatched == 1
    assert sorted(reads) == [(3.0, 12.0), (16.0, 24.0)]


def test_an_answer_is_right_when_found_on_the_true_span_or_not_found_when_absent():
    calibration = Calibration(model="m", weights={"lexical": 10.0}, bias=-5.0, threshold=0.5)
    on_span = Candidate(start=0, end=5, confidence=0.0, iou=0.8, features={"lexical": 0.9})
    off_span = Candidate(start=9, end=12, confidence=0.0, iou=0.1, features={"lexical": 0.9})
    weak = Candidate(start=0, end=5, confidence=0.0, iou=0.8, features={"lexical": 0.2})
    right = outcomes([_row("a", True, on_span), _row("b", True, off_span), _row("c", False, weak),
                      _row("d", False, off_span), _row("e", True)], calibration)
    assert right == {("v", "a"): True, ("v", "b"): False, ("v", "c"): True, ("v", "d"): False, ("v", "e"): False}
