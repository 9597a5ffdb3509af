"""The small models load from a saved optimised graph and run at the length of the text."""

import os
from pathlib import Path

import numpy as np
import pytest

from marlin_agent import onnx_session
from marlin_agent.errors import ModelUnavailable
from marlin_agent.onnx_session import fixed_sequence_length, open_session, original_length
from marlin_agent.verification.entailment import EntailmentModel


@pytest.fixture(scope="module")
def nli_file(offline_models) -> Path:
    return Path(offline_models["MARLIN_VERIFY_MODEL"]) / "model.onnx"


def _tokens(n: int) -> dict[str, np.ndarray]:
    return {"input_ids": np.array([[1] + [300] * (n - 2) + [2]], dtype=np.int64),
            "attention_mask": np.ones((1, n), dtype=np.int64)}


def test_an_export_fixed_at_160_tokens_runs_a_short_pair_at_its_own_length(nli_file, tmp_path):
    assert fixed_sequence_length(nli_file.read_bytes()) == 160
    session = open_session(nli_file, tmp_path)
    assert [i.shape[1] for i in session.get_inputs()] == ["marlin_sequence"] * 2
    assert session.run(None, _tokens(12))[0].shape == (1, 2)
    assert original_length(session) == 160  # text is still cut where the export stopped


def test_the_optimised_graph_is_written_once_and_later_loads_without_the_model(nli_file, tmp_path, monkeypatch):
    first = open_session(nli_file, tmp_path).run(None, _tokens(20))[0]
    assert len(list(tmp_path.glob("model-*.onnx"))) == 1
    monkeypatch.setattr(onnx_session, "free_sequence_length", lambda _: pytest.fail("read the model again"))
    again = open_session(nli_file, tmp_path)
    assert np.allclose(again.run(None, _tokens(20))[0], first)
    assert original_length(again) == 160


def test_a_changed_model_file_is_optimised_anew(nli_file, tmp_path):
    copy = tmp_path / "model" / "model.onnx"
    copy.parent.mkdir()
    copy.write_bytes(nli_file.read_bytes())
    open_session(copy, tmp_path / "graphs")
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 10**9))
    open_session(copy, tmp_path / "graphs")
    assert len(list((tmp_path / "graphs").glob("model-*.onnx"))) == 2


def test_a_damaged_cached_graph_is_rebuilt_from_the_model(nli_file, tmp_path):
    open_session(nli_file, tmp_path)
    (cached,) = tmp_path.glob("model-*.onnx")
    cached.write_bytes(b"half a graph")
    assert open_session(nli_file, tmp_path).run(None, _tokens(8))[0].shape == (1, 2)
    assert cached.stat().st_size > 1_000_000


def test_a_file_that_is_no_onnx_graph_is_a_model_error_that_names_it(tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"\x08\x07garbage that is no graph")
    with pytest.raises(ModelUnavailable, match="model.onnx"):
        open_session(bad, tmp_path / "graphs", what="verification model")


def test_a_pairs_score_does_not_depend_on_the_pairs_scored_with_it(nli_file, tmp_path):
    """int8 exports quantise a batch with one scale: pairs run alone, so a score is the pair's own."""
    pair = ("A courier leaves a parcel on the step.", "a package is delivered")
    alone = EntailmentModel(nli_file.parent, graphs=tmp_path).score([pair])[0]
    crowd = [("The goalkeeper dives to his left and the crowd roars as the ball flies wide of the post.",
              "a dog runs"), pair, ("Rain.", "it rains")]
    assert EntailmentModel(nli_file.parent, graphs=tmp_path).score(crowd)[1] == alone


def test_a_graph_that_cannot_be_written_leaves_nothing_behind_and_the_model_still_loads(nli_file, tmp_path):
    # Where the optimised graph would be written, something that cannot take it (as a full disk would not).
    open_session(nli_file, tmp_path / "probe")
    (name,) = [p.name for p in (tmp_path / "probe").glob("model-*.onnx")]
    blocked = tmp_path / "graphs" / f"{name}.{os.getpid()}.tmp"
    blocked.mkdir(parents=True)
    session = open_session(nli_file, tmp_path / "graphs")
    assert session.run(None, _tokens(8))[0].shape == (1, 2)
    assert [p.name for p in (tmp_path / "graphs").iterdir()] == [blocked.name]  # no half-written graph kept
