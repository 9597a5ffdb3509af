"""Shared fixtures: synthetic footage (made once per run), a simulator per test, settings."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video, standard_library
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.config import Settings, load_settings

# The files that take longest (measured with --durations=0), handed to the workers first: with
# whole files per worker, a long file started last is the run's tail. Order only; nothing skips.
LONGEST_FIRST = ("test_scale_out.py", "test_mcp.py", "test_resident.py", "test_watch_streams.py", "test_integrity.py",
                 "test_reliability.py", "test_ask.py", "test_engines.py", "test_install.py", "test_watch.py",
                 "test_library.py", "test_realistic_world.py", "test_ask_llm.py", "test_trust.py", "test_evals.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file's own order is kept


try:  # the suite never talks to a real planner LLM; scripted models stand in (evals/synthetic)
    from pydantic_ai import models as _planner_models

    _planner_models.ALLOW_MODEL_REQUESTS = False
except ImportError:  # pragma: no cover - the planner extra is part of the test extra
    pass


@pytest.fixture(scope="session")
def footage(tmp_path_factory) -> dict[str, Path]:
    """short_field (24 s, audio), long_street (200 s, 4 events), vertical_night (rotated)."""
    return standard_library(tmp_path_factory.mktemp("footage"))


@pytest.fixture(scope="session")
def make_footage(tmp_path_factory):
    """Make a one-off synthetic video: ``make_footage("name", duration=..., events=[...])``."""
    folder = tmp_path_factory.mktemp("oneoff")

    def make(name: str, **spec) -> Path:
        events = [e if isinstance(e, SyntheticEvent) else SyntheticEvent(**e) for e in spec.pop("events", [])]
        return make_video(folder / f"{name}.mp4", FootageSpec(events=events, **spec))

    return make


@pytest.fixture(scope="session")
def shelf(tmp_path_factory, footage) -> Path:
    """A folder of three videos, one over three minutes and one rotated."""
    root = tmp_path_factory.mktemp("shelf")
    for name in ("short_field", "long_street", "vertical_night"):
        shutil.copy(footage[name], root / f"{name}.mp4")
    return root


@pytest.fixture
def root(tmp_path, footage) -> Path:
    """The folder an MCP server is allowed: one short video in it."""
    folder = tmp_path / "allowed"
    folder.mkdir()
    shutil.copy(footage["short_field"], folder / "short_field.mp4")
    return folder


@pytest.fixture
def simulator() -> Iterator[MarlinSimulator]:
    with MarlinSimulator() as sim:
        yield sim


@pytest.fixture(scope="session")
def marlin_home(tmp_path_factory) -> Path:
    """A MARLIN_HOME shared by the run, so staged clips are reused across tests."""
    return tmp_path_factory.mktemp("marlin-home")


@pytest.fixture
def env(simulator, marlin_home) -> dict[str, str]:
    """The environment a user pointing at the simulator would have."""
    return {"MARLIN_HOME": str(marlin_home), "MARLIN_BASE_URL": simulator.base_url}


@pytest.fixture
def settings(env) -> Settings:
    return load_settings(env=env)


# Libraries must never reach for a model hub during tests.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Every test's CLI runs in its own process, as without a resident; tests/test_resident.py turns it on.
os.environ.setdefault("MARLIN_RESIDENT", "off")


@pytest.fixture(scope="session")
def offline_models(tmp_path_factory) -> dict[str, str]:
    """The real small models PyPI packages carry: MiniLM embeddings, Whisper base, a DeBERTa NLI cross-encoder,
    with one folder for their optimised graphs shared by the run (each test's home would write its own)."""
    from evals.synthetic.offline_models import minilm_dir, nli_dir, whisper_base_dir

    folder = tmp_path_factory.mktemp("models")
    embed, whisper, nli = minilm_dir(), whisper_base_dir(folder), nli_dir(folder)
    if embed is None or whisper is None or nli is None:
        pytest.fail("the offline model packages are missing: pip install -e '.[test]'")
    return {"MARLIN_EMBED_MODEL": str(embed), "MARLIN_WHISPER_MODEL": str(whisper), "MARLIN_VERIFY_MODEL": str(nli),
            "MARLIN_GRAPH_CACHE": str(folder / "graphs")}


@pytest.fixture(scope="session")
def speech_video(tmp_path_factory) -> Path:
    """30 s with two spoken sentences (espeak-ng) and a red circle from 2 s to 6 s."""
    from evals.synthetic.footage import SpeechLine

    spec = FootageSpec(duration=30, backdrop="field", events=[SyntheticEvent(colour="red", shape="circle", start=2, end=6)],
                       speech=[SpeechLine(text="The goalkeeper saves the penalty kick.", start=5.0),
                               SpeechLine(text="Now the referee blows the final whistle.", start=18.0)])
    return make_video(tmp_path_factory.mktemp("speech") / "speech.mp4", spec)


@pytest.fixture(scope="session")
def staged_clips(tmp_path_factory) -> Path:
    """Staged clips shared by the run: they are named by the content and chunk they hold, so a test
    finds those an earlier test staged and skips the re-encoding, and never sees another clip."""
    return tmp_path_factory.mktemp("staged-clips")


def verify_threshold(env: dict[str, str]) -> float:
    """The threshold answers are decided at under ``env``: the calibration for its entailment model."""
    from marlin_agent.config import load_settings
    from marlin_agent.verification.calibration import calibration_for

    settings = load_settings(env=env)
    return calibration_for(settings, Path(settings.verify.model)).threshold


@pytest.fixture
def library_env(simulator, tmp_path, offline_models, staged_clips) -> dict[str, str]:
    """A fresh MARLIN_HOME (index and cache) pointing at the simulator and the offline models. Nothing
    is copied into it: the weights for the offline entailment model are the shipped ones
    (configs/calibrations.toml), found by the model's fingerprint, as a user's copy would find them.
    Only the staged clips are shared (see ``staged_clips``)."""
    home = tmp_path / "home"
    (home / "cache").mkdir(parents=True)
    (home / "cache" / "clips").symlink_to(staged_clips, target_is_directory=True)
    return {"MARLIN_HOME": str(home), "MARLIN_BASE_URL": simulator.base_url, **offline_models}


@pytest.fixture
def watch_env(library_env) -> dict[str, str]:
    """``library_env`` with a config.toml that makes a watch quick (see ``FAST_WATCH_CONFIG``)."""
    from evals.synthetic.watch_cli import FAST_WATCH_CONFIG

    (Path(library_env["MARLIN_HOME"]) / "config.toml").write_text(FAST_WATCH_CONFIG)
    return library_env
