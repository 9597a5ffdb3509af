"""An entailment model with no fitted table is fitted on this machine, from the set the package ships.

The test model's own table is hidden, as if it were a model nobody fitted: the fit made here from the
shipped calibration set must answer the held-out part as the shipped fit does, and be made once.
"""

from pathlib import Path

import pytest

from marlin_agent.config import load_settings
from marlin_agent.verification import calibration as calibration_module
from marlin_agent.verification.calibration import calibration_for
from marlin_agent.verification.calibration_set import ensure_fitted, figures_at, load_set, read_again
from marlin_agent.verification.confidence import features

HELDOUT = Path(__file__).parent.parent / "evals" / "synthetic" / "heldout-set.json.gz"


@pytest.fixture
def unfitted(offline_models, tmp_path, monkeypatch):
    """Settings whose entailment model (the test model) has no table shipped for it."""
    settings = load_settings(env={**offline_models, "MARLIN_HOME": str(tmp_path / "home")})
    real = calibration_module.shipped_calibrations
    shipped = calibration_for(settings, Path(settings.verify.model))
    assert shipped.source == "shipped", "the test model's own fit is shipped"

    def without_it(path=None):
        fallback, tables = real(path)
        if path is None:
            tables = {k: t for k, t in tables.items() if t.get("model") != shipped.model}
        return fallback, tables

    monkeypatch.setattr(calibration_module, "shipped_calibrations", without_it)
    return settings, shipped


def _embed(settings):
    from marlin_agent.library.embeddings import shared_embedder

    return lambda: shared_embedder(settings.library.embed_model, settings.cache_dir / "models", settings.graphs_dir)


def test_a_model_without_a_fitted_table_is_fitted_here_and_answers_as_the_shipped_fit(unfitted):
    from marlin_agent.verification.verifier import Verifier

    settings, shipped = unfitted
    before = calibration_for(settings, Path(settings.verify.model))
    assert before.source == "priors" and not before.calibrated and "models pull" in before.describe()
    steps = []
    fitted = ensure_fitted(settings, _embed(settings), lambda done, total: steps.append((done, total)))
    assert fitted.source == "here" and fitted.fitted and "fitted here on 540 candidates" in fitted.describe()
    assert steps and steps[-1][0] == steps[-1][1], "the fit shows its progress to the end"
    assert (settings.home / "calibrations.toml").is_file()

    verifier = Verifier(settings, _embed(settings))
    heldout = read_again(load_set(HELDOUT), lambda texts: features(verifier.read(texts)))
    here, there = figures_at(heldout, fitted), figures_at(heldout, shipped)
    assert abs(here.f1 - there.f1) < 0.01, (here, there)

    steps.clear()
    again = ensure_fitted(settings, _embed(settings), lambda done, total: steps.append(done))
    assert steps == [] and again == fitted, "the fit is made once, and found by the model's hash afterwards"
