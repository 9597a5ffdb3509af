"""Verification: questions become events, a real entailment model reads evidence, evidence becomes confidence."""

import json
import time
from pathlib import Path

import pytest

from marlin_agent.domain import Event, Evidence
from marlin_agent.errors import ModelUnavailable
from marlin_agent.model_store import resolve_model
from marlin_agent.planners.phrasing import event_description
from marlin_agent.verification.calibration import Calibration
from marlin_agent.verification.confidence import confidence, fit
from marlin_agent.verification.entailment import Entailment, EntailmentModel
from marlin_agent.verification.signals import best_match_evidence, contradiction_evidence, entailment_evidence
from marlin_agent.verification.verifier import combined


@pytest.mark.parametrize("question, event", [
    ("when does the cook whisk the eggs?", "the cook whisks the eggs"),
    ("When is the goal scored?", "the goal is scored"),
    ("when do the players celebrate", "the players celebrate"),
    ("when does the car change lanes?", "the car changes lanes"),
    ("when does the traffic light turn red?", "the traffic light turns red"),
    ("when does a car cut us up?", "a car cuts us up"),
    ("when are the eggs poured into the pan?", "the eggs are poured into the pan"),
    ("when is the package left at the door?", "the package is left at the door"),
    ("Does the woman open the door?", "the woman opens the door"),
    ("show me the moments where the dog jumps", "the dog jumps"),
    ("the package being picked up", "the package being picked up"),
    ("when does the goal happen", "the goal"),
    ("when does the red circle appear?", "the red circle appears"),  # not "the red circles"
    ("when does a purple star show up", "a purple star shows up"),
    ("when does the dog jump in the video", "the dog jumps"),
])
def test_a_question_becomes_the_plain_event_sentence_in_the_users_own_words(question, event):
    assert event_description(question) == event


@pytest.fixture(scope="module")
def nli(offline_models) -> EntailmentModel:
    return EntailmentModel(Path(offline_models["MARLIN_VERIFY_MODEL"]))


def test_the_entailment_model_is_a_real_one_run_on_onnx_runtime(nli):
    said, opposite = nli.score([("The front door swings shut behind the courier.", "the door closes"),
                                ("The front door opens and a courier steps out.", "the door closes")])
    assert said.entailment > 0.8 and opposite.entailment < 0.1


def test_pairs_already_scored_are_not_run_again(nli, monkeypatch):
    pair = ("A robin lands on the feeder.", "a bird perches on the feeder")
    first = nli.score([pair])
    monkeypatch.setattr(nli, "_run", lambda pairs: pytest.fail("ran the model again"))
    assert nli.score([pair, pair]) == first * 2


def test_a_folder_that_is_not_an_entailment_model_is_refused(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(ModelUnavailable, match="not an entailment model folder"):
        EntailmentModel(tmp_path).score([("a", "b")])


NLI_FILES = ["config.json", "tokenizer.json", "onnx/model_quint8_avx2.onnx"]


def test_with_no_hub_and_no_cache_the_model_is_unavailable_within_seconds(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        resolve_model("cross-encoder/nli-deberta-v3-xsmall", tmp_path / "models", NLI_FILES,
                      what="verification model", env_var="MARLIN_VERIFY_MODEL")
    assert time.monotonic() - started < 10
    assert "cross-encoder/nli-deberta-v3-xsmall" in raised.value.message and str(tmp_path) in raised.value.message
    assert "MARLIN_VERIFY_MODEL" in raised.value.hint


def test_a_cached_hub_model_is_used_without_the_hub(tmp_path):
    cached = tmp_path / "models" / "org--nli"
    (cached / "onnx").mkdir(parents=True)
    (cached / "config.json").write_text(json.dumps({"id2label": {"0": "contradiction", "1": "entailment"}}))
    (cached / "onnx" / "model.onnx").write_bytes(b"")
    (cached / "tokenizer.json").write_text("{}")
    found = resolve_model("org/nli", tmp_path / "models", ["config.json", "tokenizer.json", "onnx/model.onnx"],
                          what="verification model", env_var="MARLIN_VERIFY_MODEL")
    assert found == cached


ROWS = [Event(start=10.0, end=15.0, text="the door opens"), Event(start=30.0, end=35.0, text="the door closes")]


def test_only_rows_that_overlap_the_span_count_as_its_evidence():
    scores = [Entailment(0.1, 0.8), Entailment(0.95, 0.0)]
    assert entailment_evidence("caption_event", (10.0, 15.0), ROWS, scores).score == pytest.approx(0.1)
    assert entailment_evidence("caption_event", (30.5, 34.5), ROWS, scores).text == "the door closes"
    assert entailment_evidence("caption_event", (50.0, 55.0), ROWS, scores) is None
    assert contradiction_evidence((10.0, 15.0), ROWS, scores).score == pytest.approx(0.8)


def test_a_span_whose_event_another_part_of_the_video_says_better_is_not_the_best_match():
    scores = [Entailment(0.3, 0.0), Entailment(0.95, 0.0)]
    wrong = best_match_evidence((10.0, 15.0), ROWS, scores)
    right = best_match_evidence((30.0, 35.0), ROWS, scores)
    assert wrong.score < 0.5 < right.score and "the door closes" in wrong.text


WEIGHTS = {"caption_event": 4.0, "fresh_caption": 4.0, "contradiction": -4.0, "judge": 3.0}


def _evidence(**scores) -> list[Evidence]:
    return [Evidence(kind=kind, text="", start=0, end=1, score=score) for kind, score in scores.items()]


def test_the_judges_verdict_moves_confidence_both_ways():
    without = confidence(_evidence(caption_event=0.5), WEIGHTS, -2.0)
    assert confidence(_evidence(caption_event=0.5, judge=1.0), WEIGHTS, -2.0) > without
    assert confidence(_evidence(caption_event=0.5, judge=0.0), WEIGHTS, -2.0) < without


def test_contradiction_counts_against_a_candidate_and_missing_evidence_adds_nothing():
    base = confidence(_evidence(caption_event=0.9, fresh_caption=0.9), WEIGHTS, -4.0)
    assert confidence(_evidence(caption_event=0.9, fresh_caption=0.9, contradiction=0.9), WEIGHTS, -4.0) < base
    assert confidence(_evidence(caption_event=0.9, fresh_caption=0.9, unknown_kind=1.0), WEIGHTS, -4.0) == base


def test_fitting_learns_which_evidence_separates_present_from_absent():
    rows = [{"caption_event": 0.9, "similarity": 0.5}, {"caption_event": 0.8, "similarity": 0.2},
            {"caption_event": 0.1, "similarity": 0.5}, {"caption_event": 0.2, "similarity": 0.2}] * 5
    weights, bias = fit(rows, [True, True, False, False] * 5, ("caption_event", "similarity"))
    assert weights["caption_event"] > 2 * abs(weights["similarity"])
    assert confidence(_evidence(caption_event=0.85), weights, bias) > 0.5 > confidence(_evidence(caption_event=0.15),
                                                                                       weights, bias)


def test_ask_without_a_reachable_verification_model_fails_at_once_with_what_to_do(shelf, library_env, simulator):
    from tests.cli_runner import document, invoke

    env = {**library_env, "MARLIN_VERIFY_MODEL": "cross-encoder/nli-deberta-v3-xsmall", "HF_HUB_OFFLINE": "1"}
    started = time.monotonic()
    result = invoke(["ask", "when does the white circle appear", "--in", str(shelf), "--json"], env)
    assert result.exit_code == 2 and time.monotonic() - started < 10
    error = document(result)["error"]
    assert error["code"] == "model_unavailable" and "MARLIN_VERIFY_MODEL" in error["hint"]
    assert simulator.state.calls == [], "nothing is indexed before the check"


def test_an_act_that_no_description_says_in_words_or_meaning_keeps_the_moment_under_the_threshold():
    calibration = Calibration(model="test", weights={"lexical": 3.0, "similarity": 3.0, "caption_event": 1.0},
                              bias=-2.0, threshold=0.5)
    same_scene = {"lexical": 0.67, "similarity": 0.9, "lexical_action": 0.0, "caption_event": 0.06}
    assert combined(same_scene, calibration) < 0.5  # the baker and the loaf, but nothing slices it
    assert combined({**same_scene, "caption_event": 0.8}, calibration) >= 0.5  # the model reads the act there
    assert combined({**same_scene, "lexical_action": 0.8}, calibration) >= 0.5  # a word for the act is there
    no_act = {k: v for k, v in same_scene.items() if k != "lexical_action"}
    assert combined(no_act, calibration) >= 0.5  # "the red circle" names no act to miss


def test_an_entailment_models_yes_does_not_say_an_act_in_a_description_unlike_the_event():
    """"The teacher wipes the whiteboard clean" against "the teacher draws out a division problem": no word
    says wiping, the description hardly reads like the event, and a small entailment model says yes anyway."""
    calibration = Calibration(model="test", weights={"lexical": 3.0, "similarity": 3.0, "caption_event": 1.0},
                              bias=-2.0, threshold=0.5)
    teacher = {"lexical": 0.5, "similarity": 0.17, "lexical_action": 0.0, "caption_event": 0.87}
    assert combined({**teacher, "similarity": 0.9}, calibration) >= 0.5  # a paraphrase the words miss
    assert combined(teacher, calibration) < 0.5
    assert combined({k: v for k, v in teacher.items() if k != "similarity"}, calibration) >= 0.5  # no embedding


def test_a_judges_shown_answers_the_act_rule_only_where_the_description_already_reads_like_the_event():
    """"The skater takes a tumble" against "a skater loses balance and falls on the ramp": no reading rule links the
    idiom to the act and the entailment model misses it, but the description reads like the event, and a second
    model reading it says "shown". With a lifting judge that carries it; nothing else does. Where only the
    entailment model reads the event, in a description that hardly reads like it (its known false "yes"), the
    judge's "shown" does not make that "yes" trusted: "the baker kneads a ball of clay" read into "hands knead and
    fold the bread dough" stays out."""
    calibration = Calibration(model="test", weights={"lexical": 3.0, "similarity": 3.0, "caption_event": 1.0,
                                                     "judge": 1.0}, bias=-2.0, threshold=0.5)
    tumble = {"lexical": 0.67, "similarity": 0.5, "lexical_action": 0.0, "caption_event": 0.1}
    assert combined(tumble, calibration, judge="lifts") < 0.5  # the act rule holds it: no word says falling
    assert combined({**tumble, "judge": 1.0}, calibration, judge="lifts") >= 0.5
    assert combined({**tumble, "judge": 0.0}, calibration, judge="lifts") < 0.5, "unclear is not shown"
    assert combined({**tumble, "judge": 1.0}, calibration) < 0.5, "a judge that only lowers answers nothing"
    unread = {**tumble, "similarity": 0.1}  # nothing reads like the event: the judge's yes alone is not enough
    assert combined({**unread, "judge": 1.0}, calibration, judge="lifts") < 0.5
    false_yes = {**tumble, "caption_event": 0.8, "similarity": 0.13}  # only the entailment model reads it there
    assert combined({**false_yes, "judge": 1.0}, calibration, judge="lifts") < 0.5
    assert combined({**false_yes, "judge": 1.0}, calibration, judge="only-lifts") < 0.5
    spoken_to = {**tumble, "judge": 1.0, "instructions": 1.0}  # the footage spoke to its reader
    assert combined(spoken_to, calibration, judge="lifts") < 0.5
    denied = {**tumble, "judge": 1.0, "lexical_conflict": 1.0}  # a word over the span denies the event
    assert combined(denied, calibration, judge="lifts") < 0.5


def test_a_judge_that_only_lifts_never_takes_away_what_the_footages_texts_hold():
    """A small judge reads "a skater loses balance and falls on the ramp" literally and says "not shown" for "the
    skater falls over": the texts hold the moment, and under ``only-lifts`` that verdict costs nothing, where a
    judge that may lower throws it away. Its "shown" lifts exactly where a lifting judge's would, and never past
    a denial or text that spoke to its reader."""
    calibration = Calibration(model="test", weights={"lexical": 3.0, "similarity": 3.0, "caption_event": 1.0,
                                                     "judge": 1.0}, bias=-2.0, threshold=0.5)
    held = {"lexical": 0.5, "similarity": 0.3, "lexical_action": 1.0, "caption_event": 0.4}
    alone = combined(held, calibration)
    assert alone >= 0.5
    assert combined({**held, "judge": -1.0}, calibration, judge="lowers") < 0.5
    assert combined({**held, "judge": -1.0}, calibration, judge="lifts") < 0.5
    assert combined({**held, "judge": -1.0}, calibration, judge="only-lifts") == alone
    assert combined({**held, "judge": 0.0}, calibration, judge="only-lifts") == alone, "unclear changes nothing"
    tumble = {"lexical": 0.67, "similarity": 0.5, "lexical_action": 0.0, "caption_event": 0.1}
    assert combined({**tumble, "judge": 1.0}, calibration, judge="only-lifts") >= 0.5
    assert combined({**tumble, "judge": 1.0}, calibration, judge="only-lifts") == combined(
        {**tumble, "judge": 1.0}, calibration, judge="lifts")
    assert combined({**tumble, "judge": 1.0, "instructions": 1.0}, calibration, judge="only-lifts") < 0.5
    assert combined({**tumble, "judge": 1.0, "lexical_conflict": 1.0}, calibration, judge="only-lifts") < 0.5


def test_a_judges_shown_where_the_entailment_model_reads_the_event_answers_a_description_with_none_of_its_words():
    """"The breakaway" against "two riders attack off the front and open a gap": no word of the event is there,
    which alone keeps a moment out; the entailment model and the judge both read the event there."""
    calibration = Calibration(model="test", weights={"caption_event": 3.0, "lexical_none": -1.0, "judge": 1.0},
                              bias=-2.0, threshold=0.5)
    breakaway = {"caption_event": 0.8, "lexical": 0.0, "lexical_none": 1.0, "lexical_thing": 0.0}
    assert combined(breakaway, calibration, judge="lifts") < 0.5
    assert combined({**breakaway, "judge": 1.0}, calibration, judge="lifts") >= 0.5
    assert combined({**breakaway, "judge": 1.0}, calibration) < 0.5, "a judge that only lowers answers nothing"
    alike_only = {**breakaway, "caption_event": 0.2, "similarity": 0.6, "judge": 1.0}  # no entailment reading
    assert combined(alike_only, calibration, judge="lifts") < 0.5


def test_things_no_word_names_are_not_made_by_an_entailment_models_yes_in_a_description_unlike_the_event():
    """"A motorbike crashes into the crowd" against "one cyclist in green loses grip and falls onto the
    grass": "falls" says some of the crash, nothing names the motorbike or the crowd, the description hardly
    reads like the event, and a small entailment model says yes anyway."""
    calibration = Calibration(model="test", weights={"lexical": 3.0, "similarity": 3.0, "caption_event": 3.0},
                              bias=-2.0, threshold=0.5)
    crash = {"lexical": 0.4, "similarity": 0.2, "lexical_action": 0.55, "lexical_thing": 0.0, "caption_event": 0.9}
    assert combined(crash, calibration) < 0.5
    assert combined({**crash, "lexical_thing": 0.5}, calibration) >= 0.5  # "the crowd" is said
    assert combined({**crash, "similarity": 0.6}, calibration) >= 0.5  # worded apart, but it reads like the event
    assert combined({k: v for k, v in crash.items() if k != "lexical_thing"}, calibration) >= 0.5  # names no thing


def test_speech_alone_lifts_a_question_about_what_is_said_but_not_one_about_what_is_seen():
    """A spoken line that says the event, strongly enough to pass on its own, with nothing on screen that
    says it: a question about what is seen stays below the threshold, one about what is said passes."""
    calibration = Calibration(model="m", weights={"transcript": 6.0, "caption_event": 3.0}, bias=-3.0, threshold=0.5)
    heard_only = {"transcript": 0.95, "caption_event": 0.05}
    assert combined(heard_only, calibration, speech_question=True) >= calibration.threshold
    assert combined(heard_only, calibration, speech_question=False) < calibration.threshold
    seen_too = {"transcript": 0.95, "caption_event": 0.95}  # what is seen passes: speech may add to it
    assert combined(seen_too, calibration) > combined({"caption_event": 0.95}, calibration)
