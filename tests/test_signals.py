"""The evidence verification reads, one signal at a time, with exact figures."""

from __future__ import annotations

import numpy as np
import pytest

from marlin_agent.domain import Event
from marlin_agent.verification.entailment import Entailment
from marlin_agent.verification.signals import (
    best_match_evidence,
    contradiction_evidence,
    entailment_evidence,
    regrounding_evidence,
    spoken,
)
from marlin_agent.verification.signals.similarity import (
    run_sizes,
    similarity_score,
    text_evidence,
    text_similarities,
)
from marlin_agent.verification.spans import overlap_credit, overlap_share, tighter_window


def row(start: float, end: float, text: str = "x") -> dict:
    return Event(start=start, end=end, text=text)


def test_overlap_is_measured_against_the_shorter_interval():
    assert overlap_share((10, 20), (12, 14)) == 1.0
    assert overlap_share((12, 14), (10, 20)) == 1.0
    assert overlap_share((10, 20), (15, 30)) == 0.5
    assert overlap_share((10, 20), (20, 30)) == 0.0
    assert overlap_share((10, 20), (25, 30)) == 0.0
    assert overlap_share((10, 10), (5, 15)) == 0.0  # a point has no length to share


@pytest.mark.parametrize(("start", "credit"), [(7.1, 0.0), (7.0, 0.5), (4.0, 1.0), (5.2, 0.8)])
def test_overlap_credit_starts_at_thirty_percent_and_is_full_at_sixty(start, credit):
    # Span 0-10 s, row start-20 s: the shared part is 10 - start of the ten-second span.
    assert overlap_credit((0.0, 10.0), row(start, 20.0)) == pytest.approx(credit)


def test_a_query_is_compared_with_the_runs_of_words_about_its_length():
    assert run_sizes(2) == (1, 2, 3, 4)
    assert run_sizes(5) == (4, 5, 6, 7)
    assert run_sizes(1) == (1, 2, 3)


class _BagOfWords:
    """A stand-in encoder: a text's vector is the sum of its words' (blue and square only)."""

    vocabulary = {"blue": [1.0, 0.0], "square": [0.0, 1.0]}

    def embed(self, texts):
        vectors = np.array([np.sum([self.vocabulary.get(w, [0.0, 0.0]) for w in t.split()], axis=0) for t in texts])
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)

    def runs(self, texts, sizes):
        from marlin_agent.library.embeddings import word_runs

        return [self.embed([text, *(" ".join(text.split()[a:b]) for a, b in word_runs(text, sizes))]) for text in texts]


def test_each_text_scores_its_best_run_of_words():
    scores = text_similarities(_BagOfWords(), "blue", ["a blue square here", "square only"])
    assert scores == pytest.approx([1.0, 0.0])  # "blue" alone is a run of the first; the second has none
    assert text_similarities(_BagOfWords(), "blue", []) == []


@pytest.mark.parametrize(("similarity", "score"), [(0.3, 0.0), (0.37, 0.0), (0.61, 0.5), (0.85, 1.0), (0.99, 1.0)])
def test_similarity_counts_from_the_floor_and_is_full_near_identity(similarity, score):
    assert similarity_score(similarity) == pytest.approx(score)


def test_text_evidence_is_the_best_overlapping_row_by_similarity_times_overlap():
    rows = [row(0, 10, "far better but elsewhere"), row(20, 30, "half inside"), row(22, 28, "inside")]
    best = text_evidence("similarity", (20.0, 30.0), rows, [0.95, 0.95, 0.7])
    assert (best.kind, best.text, best.score) == ("similarity", "half inside", 1.0)
    assert text_evidence("similarity", (20.0, 30.0), rows, [0.95, 0.6, 0.8]).text == "inside"
    assert text_evidence("similarity", (40.0, 50.0), rows, [0.95, 0.95, 0.95]) is None


def test_entailment_evidence_scales_by_overlap_and_keeps_the_best_row():
    rows = [row(20, 30, "the ball crosses the line"), row(25, 45, "players celebrate")]
    found = entailment_evidence("caption_event", (20.0, 30.0), rows, [Entailment(0.6, 0.0), Entailment(0.9, 0.0)])
    # The second row shares 5 of the span's 10 s: credit 0.5/0.6, score 0.9 × 0.833 = 0.75 > 0.6.
    assert (found.text, found.score, found.start, found.end) == ("players celebrate", 0.75, 25, 45)
    assert entailment_evidence("transcript", (20.0, 30.0), rows, [Entailment(0.0, 0.0), Entailment(0.0, 0.0)]).score == 0


def test_contradiction_is_the_most_contradicting_overlapping_row_and_absent_when_nothing_contradicts():
    rows = [row(20, 30, "the ball hits the post"), row(0, 5, "the goalkeeper saves")]
    worst = contradiction_evidence((20.0, 30.0), rows, [Entailment(0.0, 0.7), Entailment(0.0, 0.99)])
    assert (worst.kind, worst.text, worst.score) == ("contradiction", "the ball hits the post", 0.7)
    assert contradiction_evidence((20.0, 30.0), rows, [Entailment(0.9, 0.0), Entailment(0.0, 0.99)]) is None


def test_best_match_is_half_the_margin_over_the_best_elsewhere():
    rows = [row(20, 30, "a goal is scored"), row(21, 29, "a corner"), row(50, 55, "the winning goal")]
    here_wins = best_match_evidence((20.0, 30.0), rows, [Entailment(0.9, 0), Entailment(0.2, 0), Entailment(0.3, 0)])
    assert here_wins.score == 0.8 and here_wins.text == 'best elsewhere: "the winning goal" at 50.0–55.0 s'
    elsewhere_wins = best_match_evidence((20.0, 30.0), rows,
                                         [Entailment(0.1, 0), Entailment(0.2, 0), Entailment(0.9, 0)])
    assert elsewhere_wins.score == 0.15 and (elsewhere_wins.start, elsewhere_wins.end) == (20.0, 30.0)
    alone = best_match_evidence((20.0, 30.0), rows[:2], [Entailment(0.4, 0), Entailment(0.2, 0)])
    assert alone.score == 0.7 and alone.text == "no other event in the video"
    assert best_match_evidence((60.0, 70.0), rows, [Entailment(0.9, 0)] * 3) is None


def test_regrounding_agreement_is_the_iou_of_the_two_spans():
    agreed = regrounding_evidence((20.0, 30.0), (25.0, 30.0), (10.0, 40.0))
    assert (agreed.score, agreed.start, agreed.end) == (0.5, 25.0, 30.0)
    assert agreed.text == "grounded again on 10.0–40.0 s: 25.0–30.0 s (IoU 0.50)"
    lost = regrounding_evidence((20.0, 30.0), None, (10.0, 40.0))
    assert (lost.score, lost.start, lost.end, lost.text) == (0.0, 10.0, 40.0, "no span on the tighter window")


@pytest.mark.parametrize(("span", "window", "duration", "tighter"), [
    ((20.0, 30.0), (0.0, 60.0), 120.0, (10.0, 40.0)),       # half the window, centred on the span
    ((20.0, 50.0), (0.0, 60.0), 120.0, (18.0, 52.0)),       # never shorter than the span and 2 s a side
    ((2.0, 4.0), (0.0, 60.0), 120.0, (0.0, 30.0)),          # clamped at the start of the video
    ((110.0, 118.0), (60.0, 120.0), 120.0, (90.0, 120.0)),  # and at its end
])
def test_the_regrounding_window_is_tighter_and_stays_in_the_video(span, window, duration, tighter):
    assert tighter_window(span, window, duration) == tighter


def test_a_spoken_line_reads_as_someone_saying_it():
    assert spoken("  the keeper saves it ") == 'Someone says: "the keeper saves it"'


# A signal another package adds: how many descriptions lie over the span (its own weight, 0, leaves answers as
# they were; the evidence shows it read every candidate).
COUNTED = '''from typing import ClassVar

from marlin_agent.domain import Evidence


class Counted:
    kinds: ClassVar[tuple[str, ...]] = ("descriptions_here",)
    weights: ClassVar[dict[str, float]] = {"descriptions_here": 0.0}

    def __init__(self, settings, embed):
        pass

    def read(self, texts):
        here = len(texts.described)
        return [Evidence(kind="descriptions_here", text=f"{here} description(s) over the span",
                         start=texts.span[0], end=texts.span[1], score=min(1.0, here / 4))]
'''


def _asked_with_signal(tmp_path, library_env, footage, module: str, source: str, signal: str) -> dict:
    """``ask`` "when does the red circle appear" over short_field in a process that has the plugin ``module``
    (``source``) installed, adding the signal ``signal`` (its class); the answer's document."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    from tests.plugins import installed_plugin, with_plugin

    site = installed_plugin(tmp_path, module, source, {"marlin_agent.signals": {signal.lower(): f"{module}:{signal}"}})
    clips = tmp_path / "clips"
    clips.mkdir()
    shutil.copy(footage["short_field"], clips / "short_field.mp4")
    done = subprocess.run([sys.executable, "-m", "marlin_agent", "ask", "when does the red circle appear", "--in",
                           str(clips), "--no-transcribe", "--json"], env={**os.environ, **with_plugin(library_env, site)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_a_signal_another_package_adds_reads_every_candidate_with_the_weight_it_brings(tmp_path, library_env,
                                                                                      footage):
    answer = _asked_with_signal(tmp_path, library_env, footage, "marlin_counted", COUNTED, "Counted")
    assert answer["found"], answer
    for moment in answer["moments"] + answer["rejected"]:
        assert "descriptions_here" in {item["kind"] for item in moment["evidence"]}


def test_the_verifiers_rules_read_features_by_the_roles_their_signals_declare():
    from marlin_agent.verification.confidence import feature_kinds, roles
    from marlin_agent.verification.features import Rule

    declared = roles()
    assert declared.said == {"transcript"} and declared.outside == {"judge"}
    assert declared.vetoes == {"lexical_conflict": 0.7, "lexical_none": 1.0}
    assert declared.read_by == {Rule.DESCRIBED: ("caption_event", "fresh_caption"), Rule.LIKENESS: ("similarity",),
                                Rule.ACT: ("lexical_action",), Rule.THINGS: ("lexical_thing",),
                                Rule.UNWORDED: ("lexical_none",)}
    assert set(feature_kinds()) >= declared.said | declared.outside | set(declared.vetoes)


# A signal another package adds that declares its feature's role: text burnt into the picture saying the
# footage is a rehearsal, which vetoes every moment it lies over.
REHEARSAL = '''from typing import ClassVar

from marlin_agent.domain import Evidence
from marlin_agent.verification.features import Feature


class Rehearsal:
    features: ClassVar[tuple[Feature, ...]] = (Feature("rehearsal_card", veto=0.5, weight=0.0),)

    def __init__(self, settings, embed):
        pass

    def read(self, texts):
        return [Evidence(kind="rehearsal_card", text="a card reads: rehearsal", start=texts.span[0],
                         end=texts.span[1], score=1.0)]
'''


def test_a_veto_a_package_signal_declares_keeps_every_moment_under_the_threshold(tmp_path, library_env, footage):
    answer = _asked_with_signal(tmp_path, library_env, footage, "marlin_rehearsal", REHEARSAL, "Rehearsal")
    assert not answer["found"], answer
    assert answer["rejected"] and all(m["confidence"] < 0.5 for m in answer["rejected"])
    assert all("rehearsal_card" in {e["kind"] for e in m["evidence"]} for m in answer["rejected"])
