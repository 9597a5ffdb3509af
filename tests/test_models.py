"""The models marlin-agent runs itself (embeddings, verification, Whisper): on ONNX Runtime, no
torch; found in the cache or fetched once; with no hub and no copy, a clear error in seconds."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from marlin_agent.errors import ModelUnavailable
from marlin_agent.library.embeddings import Embedder, word_runs
from tests.cli_runner import invoke


@pytest.fixture
def embedder(offline_models, tmp_path) -> Embedder:
    return Embedder(offline_models["MARLIN_EMBED_MODEL"], tmp_path)


def test_sentence_vectors_are_unit_length_and_keep_the_order_they_were_asked_in(embedder):
    texts = ["a goalkeeper dives to save a penalty", "hi", "the referee shows a yellow card to the defender"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    one_by_one = np.stack([embedder.embed([t])[0] for t in texts])
    assert np.allclose(vectors, one_by_one, atol=1e-5)  # batching, sorting and padding change nothing
    assert embedder.embed([]).shape == (0, 384)


def test_texts_met_recently_are_not_embedded_again(embedder, monkeypatch):
    first = embedder.embed(["a red circle appears", "a blue square moves"])
    embedded: list[list[str]] = []
    real = embedder._embed_all
    monkeypatch.setattr(embedder, "_embed_all", lambda texts: embedded.append(texts) or real(texts))
    again = embedder.embed(["a blue square moves", "a green star", "a red circle appears", "a green star"])
    assert embedded == [["a green star"]]  # once, however often it is asked for in the call
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[0])
    assert np.array_equal(again[1], again[3]) and again.shape == (4, first.shape[1])


def test_meaning_is_closer_than_mere_words(embedder):
    query, near, far = embedder.embed(["when does the keeper stop the penalty",
                                       "the goalkeeper saves the spot kick", "a penalty notice is stuck to the car"])
    assert float(query @ near) > float(query @ far)


def test_runs_of_words_are_counted_at_white_space_whatever_the_tokens():
    assert word_runs("a blue square moves left", (2,)) == [(0, 2), (1, 3), (2, 4), (3, 5)]
    assert word_runs("a blue square", (2, 3, 4)) == [(0, 2), (1, 3), (0, 3)]
    assert word_runs("run", (2, 3)) == []


def test_a_short_question_finds_its_run_of_words_inside_a_long_description(embedder):
    description = "A blue square moves slowly from the left edge to the right edge of the frame."
    query = embedder.embed(["the blue square"])[0]
    (vectors,) = embedder.runs([description], (2, 3, 4))
    assert vectors.shape == (1 + len(word_runs(description, (2, 3, 4))), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], embedder.embed([description])[0], atol=1e-5)  # first, the whole text
    runs = word_runs(description, (2, 3, 4))
    best = runs[int(np.argmax(vectors[1:] @ query))]
    assert " ".join(description.split()[best[0]:best[1]]).lower().startswith(("a blue square", "blue square"))
    assert float((vectors[1:] @ query).max()) > float(vectors[0] @ query)


def test_a_description_is_read_once_for_all_its_runs_alone_and_remembered(embedder, monkeypatch):
    passes: list[list[str]] = []
    real = embedder._forward
    monkeypatch.setattr(embedder, "_forward", lambda session, texts: passes.append(texts) or real(session, texts))
    first = embedder.runs(["a red circle appears at the top", "a blue square moves"], (2, 3))
    again = embedder.runs(["a blue square moves", "a red circle appears at the top"], (2, 3))
    assert passes == [["a red circle appears at the top"], ["a blue square moves"]]  # each alone, once
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[1], first[0])
    # Alone, so what else is new in a call changes nothing (the int8 export quantises a batch as one).
    together = Embedder(embedder.name, embedder.cache).runs(["x y z", "a blue square moves"], (2, 3))
    assert np.array_equal(together[1], first[1])


def test_a_process_loads_a_model_once_and_again_only_when_its_file_changes(offline_models, tmp_path):
    import os
    import shutil

    from marlin_agent.library.embeddings import shared_embedder

    folder = tmp_path / "minilm"
    shutil.copytree(offline_models["MARLIN_EMBED_MODEL"], folder)
    first = shared_embedder(str(folder), tmp_path / "cache", tmp_path / "graphs")
    first.embed(["loaded"])
    assert shared_embedder(str(folder), tmp_path / "another-cache", tmp_path / "graphs") is first
    model = folder / "model.onnx"
    os.utime(model, ns=(model.stat().st_atime_ns, model.stat().st_mtime_ns + 10**9))
    assert shared_embedder(str(folder), tmp_path / "cache", tmp_path / "graphs") is not first


def test_a_folder_without_an_onnx_model_is_refused_with_what_it_needs(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelUnavailable, match="holds no ONNX embedding model") as raised:
        Embedder(str(tmp_path), tmp_path / "cache").embed(["x"])
    assert "model.onnx" in raised.value.hint


def _offline_env(tmp_path, reach: str) -> dict[str, str]:
    """No copy of any model and no hub: offline by setting, or a hub address nothing answers at."""
    env = {"MARLIN_HOME": str(tmp_path / "home"), "MARLIN_BASE_URL": "http://127.0.0.1:9/v1",
           "MARLIN_EMBED_MODEL": "", "MARLIN_VERIFY_MODEL": "", "MARLIN_WHISPER_MODEL": ""}
    if reach == "offline":
        return {**env, "HF_HUB_OFFLINE": "1"}
    return {**env, "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "http://127.0.0.1:9"}


@pytest.mark.parametrize("reach", ["offline", "unreachable"])
@pytest.mark.parametrize("command", [["index", "{folder}"], ["search", "a red circle"],
                                     ["ask", "when does the red circle appear", "--in", "{folder}"]])
def test_with_no_hub_and_no_cache_every_library_command_fails_in_seconds_naming_the_model(
        command, reach, tmp_path, footage):
    args = [part.format(folder=footage["short_field"]) for part in command]
    started = time.monotonic()
    result = invoke([*args, "--json"], _offline_env(tmp_path, reach))
    assert time.monotonic() - started < 10
    assert result.exit_code == 2, result.stdout + result.stderr
    (line,) = result.stdout.strip().splitlines()
    error = json.loads(line)["error"]
    assert error["code"] == "model_unavailable"
    assert "/" in error["message"] and str(tmp_path / "home") in error["message"]  # the model and the cache
    assert "MARLIN_" in error["hint"] and "models pull" in error["hint"]


def test_models_pull_reports_each_model_and_where_it_is_kept(offline_models, tmp_path):
    env = {"MARLIN_HOME": str(tmp_path / "home"), **offline_models}
    result = invoke(["models", "pull", "--json"], env)
    assert result.exit_code == 0, result.stdout + result.stderr
    pulled = {m["role"]: m for m in json.loads(result.stdout)["models"]}
    assert set(pulled) == {"embeddings", "verification", "wordnet", "speech"}
    assert all(m["megabytes"] > 1 for m in pulled.values())
    assert pulled["embeddings"]["folder"] == offline_models["MARLIN_EMBED_MODEL"]
    assert set(json.loads(invoke(["models", "pull", "--json", "--no-transcribe"], env).stdout)["models"][0]) >= {"role"}



def test_models_pull_records_the_folders_the_environment_names_for_front_doors_started_without_it(
        offline_models, tmp_path):
    """An MCP host starts the server without the user's shell: the model folders MARLIN_EMBED_MODEL and the
    rest name there must be in the config file, or the server loads other models than the index was built with."""
    import tomllib

    from marlin_agent.config import load_settings

    env = {"MARLIN_HOME": str(tmp_path / "home"), **offline_models}
    result = invoke(["models", "pull", "--json", "--no-transcribe"], env)
    assert result.exit_code == 0, result.stdout + result.stderr
    recorded = json.loads(result.stdout)["recorded"]
    assert recorded["library.embed_model"] == str(Path(offline_models["MARLIN_EMBED_MODEL"]).resolve())
    stored = tomllib.loads((tmp_path / "home" / "config.toml").read_text())
    assert stored["library"]["embed_model"] == recorded["library.embed_model"]
    started_bare = load_settings(env={"MARLIN_HOME": str(tmp_path / "home")})
    assert started_bare.library.embed_model == recorded["library.embed_model"]


def test_models_pull_with_no_hub_names_what_it_could_not_get(tmp_path):
    result = invoke(["models", "pull", "--json"], _offline_env(tmp_path, "offline"))
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "model_unavailable"


def test_a_hub_model_is_downloaded_into_the_cache_once(tmp_path, monkeypatch, offline_models):
    """The hub stands in as a function that copies the model's files; the second run finds them cached."""
    import shutil
    from pathlib import Path

    import huggingface_hub

    from marlin_agent.model_store import resolve_model

    calls = []

    def fake_download(name, local_dir, allow_patterns, etag_timeout):
        calls.append((name, tuple(allow_patterns)))
        source = Path(offline_models["MARLIN_EMBED_MODEL"])
        for pattern in allow_patterns:
            for found in source.glob(pattern.replace("onnx/", "")):
                target = Path(local_dir) / pattern if "*" not in pattern else Path(local_dir) / found.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(found, target)
        return str(local_dir)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_download)
    embedder = Embedder("org/minilm", tmp_path / "models")
    assert embedder.embed(["a red circle"]).shape == (1, 384)
    assert Embedder("org/minilm", tmp_path / "models").embed(["again"]).shape == (1, 384)
    assert calls == [("org/minilm", ("config.json", "tokenizer.json", "onnx/model.onnx", "1_Pooling/config.json"))]
    assert (tmp_path / "models" / "org--minilm" / "onnx" / "model.onnx").is_file()
    assert resolve_model("org/minilm", tmp_path / "models", ["config.json"], what="x", env_var="Y").name == "org--minilm"
