"""Shared fixtures: synthetic footage (made once per run), a simulator per test, settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evals.synthetic.footage import FootageSpec, SyntheticEvent, make_video, standard_library
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.config import Settings, load_settings


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
