"""Scoring a results file gives TimeLens-Bench's own figures, case by case.

The expected figures below were worked out by hand from the benchmark's definitions
(``evaluation/compute_metrics.py``, ``timelens/utils.py`` and the loader's query cleaning in
TencentARC/TimeLens): every distinct key of the file counts once, against the span the key
names; only the first pair counts; with no ``timestamps`` key the pair is read from
``answers``; an empty list or an answer with no times scores IoU 0; IoU is compared with the
thresholds exactly.
"""

import json

import pytest

from marlin_agent.evaluation.grounding import QueryResult, predictions_document, score_predictions
from marlin_agent.evaluation.timelens import ResultsFileError, load_annotations, load_predictions
from tests.cli_runner import document, invoke

# (key, entry, IoU worked out by hand)
CASES = [
    ("v1.mp4>>>a man opens the door>>>[10, 20]", {"timestamps": [[10, 20]], "answers": "x"}, 1.0),
    ("v1.mp4>>>a man walks in>>>[0, 100]", {"timestamps": [[0, 29.996]]}, 0.29996),  # just under 0.3
    ("v2.mp4>>>a woman sits down>>>[0, 100]", {"timestamps": [[0, 30]]}, 0.3),  # exactly 0.3
    ("v2.mp4>>>she drinks coffee>>>[0, 10]", {"timestamps": [[0, 4.9999]]}, 0.49999),  # just under 0.5
    ("v2.mp4>>>she puts the cup down>>>[0, 10]", {"timestamps": [[0, 5]]}, 0.5),
    ("v3.mp4>>>the dog barks>>>[0, 100]", {"timestamps": [[0, 69.999]]}, 0.69999),  # just under 0.7
    ("v3.mp4>>>the dog runs away>>>[0, 10]", {"timestamps": [[0, 7]]}, 0.7),
    # Given twice (see DUPLICATE): the last value counts, once.
    ("v3.mp4>>>a cat jumps>>>[20, 30]", {"timestamps": [[40, 50]]}, 0.0),
    # The annotations spell these two "a  person   opens the   window" and "someone closes the door.".
    ("v4.mp4>>>a person opens the window>>>[5, 15]", {"timestamps": [[5, 10]]}, 0.5),
    ("v4.mp4>>>someone closes the door>>>[30, 40]", {"timestamps": [[32, 40]]}, 0.8),
    ("v5.mp4>>>a child laughs>>>[12, 18]", {"answers": "The event happens in 12 - 18 seconds."}, 1.0),
    ("v5.mp4>>>the lights turn off>>>[10, 20]", {"answers": "It happens from 0:12 to 0:18."}, 0.6),
    ("v5.mp4>>>a phone rings>>>[0, 10]", {"timestamps": [], "answers": "0 - 10"}, 0.0),  # the list wins
    ("v6.mp4>>>a bird sings>>>[3, 9]", {"answers": "I cannot tell."}, 0.0),
    ("v6.mp4>>>a car passes>>>[10, 20]", {"timestamps": [[0, 5], [10, 20]]}, 0.0),  # only the first pair
    ("v6.mp4>>>a door slams>>>[10, 20]", {"timestamps": [[20, 10]]}, 0.0),  # start after end
    ("v7.mp4>>>a man waves>>>[10, 20]", {"timestamps": [[15, 25]]}, 1 / 3),
    ("v7.mp4>>>a woman smiles>>>[0, 40]", {"timestamps": [[10, 30]]}, 0.5),
    ("v7.mp4>>>the kettle boils>>>[1.5, 4.5]", {"timestamps": [[1.5, 3.0]]}, 0.5),
    ("v8>>>someone claps>>>[2, 6]", {"timestamps": [[2, 6]]}, 1.0),  # a bare video id
    ("v9.mp4>>>a plane lands>>>[0, 20]", {"timestamps": [[0, 10]]}, 0.5),  # no annotation: still counted
    ("v8>>>someone sits>>>[4, 8]", {"answers": "from 4.0 to 6.0"}, 0.5),
]
DUPLICATE = ("v3.mp4>>>a cat jumps>>>[20, 30]", {"timestamps": [[20, 30]]})  # written first, then replaced

# 22 entries. IoU >= 0.3: 16; >= 0.5: 13; >= 0.7: 5; sum of IoUs 10.2332733...
EXPECTED = {"queries": 22, "r1_at_0_3": 72.73, "r1_at_0_5": 59.09, "r1_at_0_7": 22.73, "miou": 46.51}

ANNOTATIONS = {
    "v1": {"duration": 120, "spans": [[10, 20], [0, 100]], "queries": ["a man opens the door", "a man walks in"]},
    "v2": {"duration": 100, "spans": [[0, 100], [0, 10], [0, 10]],
           "queries": ["a woman sits down", "she drinks coffee", "she puts the cup down"]},
    "v3": {"duration": 100, "spans": [[0, 100], [0, 10], [20, 30]],
           "queries": ["the dog barks", "the dog runs away", "a cat jumps"]},
    "v4": {"duration": 60, "spans": [[5, 15], [30, 40]],
           "queries": ["a  person   opens the   window", "someone closes the door."]},
    "v5": {"duration": 30, "spans": [[12, 18], [10, 20], [0, 10]],
           "queries": ["a child laughs", "the lights turn off", "a phone rings"]},
    "v6": {"duration": 30, "spans": [[3, 9], [10, 20], [10, 20]], "queries": ["a bird sings", "a car passes", "a door slams"]},
    "v7": {"duration": 60, "spans": [[10, 20], [0, 40], [1.5, 4.5]],
           "queries": ["a man waves", "a woman smiles", "the kettle boils"]},
    # "someone stands up" has no entry in the file.
    "v8": {"duration": 20, "spans": [[2, 6], [4, 8], [10, 14]], "queries": ["someone claps", "someone sits", "someone stands up"]},
}


def _as_json(path):
    """One object; the duplicate key written in place, as a text file can hold it."""
    parts = [f"{json.dumps(DUPLICATE[0])}: {json.dumps(DUPLICATE[1])}"]
    parts += [f"{json.dumps(key)}: {json.dumps(entry)}" for key, entry, _ in CASES]
    path.write_text("{\n" + ",\n".join(parts) + "\n}\n")
    return path


def _as_jsonl(path):
    """One object per line, as the benchmark's inference writes (with the duration it adds)."""
    lines = [json.dumps({DUPLICATE[0]: DUPLICATE[1]})]
    lines += [json.dumps({key: {**entry, "duration": 60}}) for key, entry, _ in CASES]
    lines.insert(5, "")  # a blank line from concatenating shards
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def annotations(tmp_path):
    path = tmp_path / "charades-like.json"
    path.write_text(json.dumps(ANNOTATIONS))
    return path


@pytest.mark.parametrize("write", [_as_json, _as_jsonl], ids=["json", "jsonl"])
def test_a_results_file_scores_exactly_the_hand_worked_figures(tmp_path, annotations, write):
    results = load_predictions(write(tmp_path / f"results{'.jsonl' if write is _as_jsonl else '.json'}"))
    report = score_predictions(results, load_annotations(annotations), "charades-like")
    assert report.scores.model_dump() == EXPECTED
    assert report.entries == 22 and report.duplicate_entries == 1
    assert report.annotations_without_entry == 1  # v8 "someone stands up"
    assert report.entries_without_annotation == 1  # v9 "a plane lands"
    assert report.rounding == "none"


def test_each_case_scores_its_own_hand_worked_iou(tmp_path):
    for key, entry, iou in CASES:
        path = tmp_path / "one.json"
        path.write_text(json.dumps({key: entry}))
        report = score_predictions(load_predictions(path), None, "one")
        assert report.scores.miou == pytest.approx(round(100 * iou, 2)), key


def test_cleaned_queries_are_what_raw_mode_sends_and_what_keys_say(annotations):
    items = load_annotations(annotations)
    queries = {item.query for item in items}
    assert "a person opens the window" in queries and "someone closes the door" in queries
    assert items[-3].key() == "v8.mp4>>>someone claps>>>[2, 6]"


ROUNDING_CASES = {
    "r1.mp4>>>q one>>>[12, 18]": {"timestamps": [[12.5, 17.5]]},  # halves to even: [12, 18] → 1.0 (else 5/6)
    "r1.mp4>>>q two>>>[3, 9]": {"timestamps": [[2.5, 9.4]]},  # [2, 9] → 6/7 (else 6/6.9)
    "r1.mp4>>>q three>>>[0, 10]": {"answers": "From 0.4 to 4.6."},  # [0, 5] → 0.5 (else 0.42)
}


def test_whole_second_rounding_follows_the_benchmarks_inference(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(ROUNDING_CASES))
    rounded = score_predictions(load_predictions(path), None, "r", "whole seconds")
    assert rounded.scores.model_dump() == {"queries": 3, "r1_at_0_3": 100.0, "r1_at_0_5": 100.0,
                                           "r1_at_0_7": 66.67, "miou": 78.57}
    exact = score_predictions(load_predictions(path), None, "r")
    assert exact.scores.model_dump() == {"queries": 3, "r1_at_0_3": 100.0, "r1_at_0_5": 66.67,
                                         "r1_at_0_7": 66.67, "miou": 70.76}


def test_the_cli_scores_a_jsonl_file_and_says_what_it_counted(tmp_path, annotations):
    results = _as_jsonl(tmp_path / "charades.jsonl")
    env = {"MARLIN_HOME": str(tmp_path / "home"), "MARLIN_BASE_URL": ""}
    scored = invoke(["eval", "grounding", "--data", str(annotations), "--predictions", str(results), "--json"], env)
    assert scored.exit_code == 0, scored.stdout + scored.stderr
    report = document(scored)
    assert report["scores"] == EXPECTED and report["annotations_without_entry"] == 1
    alone = invoke(["eval", "grounding", "--predictions", str(results), "--json"], env)
    assert document(alone)["scores"] == EXPECTED and document(alone)["annotations_without_entry"] is None
    human = invoke(["eval", "grounding", "--data", str(annotations), "--predictions", str(results)], env)
    assert "1 annotated queries have no entry" in human.stdout and "1 keys appear more than once" in human.stdout


@pytest.mark.parametrize("entries, named", [
    ({"v1.mp4>>>flat>>>[0, 10]": {"timestamps": [2, 8]}}, "v1.mp4>>>flat>>>[0, 10]"),
    ({"v1.mp4>>>nothing>>>[0, 10]": {"duration": 30}}, "v1.mp4>>>nothing>>>[0, 10]"),
    ({"v1.mp4>>>text>>>[0, 10]": {"timestamps": "2 - 8"}}, "v1.mp4>>>text>>>[0, 10]"),
    ({"v1.mp4>>>bad truth>>>[0]": {"timestamps": [[2, 8]]}}, "v1.mp4>>>bad truth>>>[0]"),
    ({"v1.mp4>>>two parts": {"timestamps": [[2, 8]]}}, "v1.mp4>>>two parts"),
])
def test_a_malformed_entry_is_a_clear_error_naming_its_key(tmp_path, entries, named):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(entries))
    with pytest.raises(ResultsFileError) as raised:
        score_predictions(load_predictions(path), None, "bad")
    assert named in raised.value.message
    result = invoke(["eval", "grounding", "--predictions", str(path), "--json"],
                    {"MARLIN_HOME": str(tmp_path / "home"), "MARLIN_BASE_URL": ""})
    assert result.exit_code == 2 and document(result)["error"]["code"] == "bad_results_file"
    assert named in document(result)["error"]["message"] and "Traceback" not in result.stderr


def test_a_jsonl_line_that_is_not_an_object_of_entries_is_named_by_its_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"v>>>q>>>[0, 1]": {"timestamps": [[0, 1]]}}\n[1, 2]\n')
    with pytest.raises(ResultsFileError, match="line 2"):
        load_predictions(path)


def test_predictions_this_project_writes_carry_no_think_text_and_can_round():
    row = QueryResult(key="v.mp4>>>q>>>[0, 10]", video_id="v", query="q", gt=(0, 10), prediction=(2.5, 7.5),
                      iou=0.5, duration=30.0, answer="<think>maybe 1 to 2, or 3 to 4</think>From 2.5 to 7.5.")
    entry = predictions_document([row])["v.mp4>>>q>>>[0, 10]"]
    assert entry == {"timestamps": [[2.5, 7.5]], "answers": "From 2.5 to 7.5.", "duration": 30.0}
    assert predictions_document([row], "whole seconds")["v.mp4>>>q>>>[0, 10]"]["timestamps"] == [[2.0, 8.0]]
