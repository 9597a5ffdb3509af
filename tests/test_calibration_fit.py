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
    candidates = sum(len(question.candidates) for question in load_set().questions)
    assert fitted.source == "here" and fitted.fitted and f"fitted here on {candidates} candidates" in fitted.describe()
    assert steps and steps[-1][0] == steps[-1][1], "the fit shows its progress to the end"
    assert (settings.home / "calibrations.toml").is_file()

    verifier = Verifier(settings, _embed(settings))
    heldout = read_again(load_set(HELDOUT), lambda texts: features(verifier.read(texts)))
    here, there = figures_at(heldout, fitted), figures_at(heldout, shipped)
    assert abs(here.f1 - there.f1) < 0.01, (here, there)

    steps.clear()
    again = ensure_fitted(settings, _embed(settings), lambda done, total: steps.append(done))
    assert steps == [] and again == fitted, "the fit is made once, and found by the model's hash afterwards"


def test_every_shipped_table_weighs_every_kind_of_evidence_the_verifier_reads():
    from marlin_agent.verification.calibration import missing_features

    _, tables = calibration_module.shipped_calibrations()
    assert tables and {key: missing_features(table["weights"]) for key, table in tables.items()} == dict.fromkeys(
        tables, [])


def test_weights_of_your_own_that_leave_a_kind_out_are_refused_with_the_kind_named(offline_models, tmp_path):
    from marlin_agent.errors import ConfigError

    home = tmp_path / "home"
    home.mkdir()
    shipped = calibration_for(load_settings(env={**offline_models, "MARLIN_HOME": str(home)}),
                              Path(offline_models["MARLIN_VERIFY_MODEL"]))
    short = {kind: weight for kind, weight in shipped.weights.items() if kind != "lexical_thing"}
    (home / "config.toml").write_text("[verify]\nbias = -3.0\n[verify.weights]\n"
                                      + "".join(f"{kind} = {weight}\n" for kind, weight in short.items()))
    settings = load_settings(env={**offline_models, "MARLIN_HOME": str(home)})
    with pytest.raises(ConfigError, match="'lexical_thing'") as refused:
        calibration_for(settings, Path(settings.verify.model))
    assert "--fit" in refused.value.hint


def test_a_fit_made_here_by_an_older_version_short_of_a_kind_is_passed_over_for_a_new_fit(unfitted, tmp_path):
    from marlin_agent.verification.calibration import write_calibration

    settings, shipped = unfitted
    here = settings.home / "calibrations.toml"
    here.parent.mkdir(parents=True, exist_ok=True)
    here.write_text('fallback = "x"\n')
    old = {"model": shipped.model, "fitted": True, "threshold": 0.5, "bias": -3.0,
           "weights": {k: v for k, v in shipped.weights.items() if k != "lexical_action"}}
    write_calibration(here, shipped.model, old)
    assert calibration_for(settings, Path(settings.verify.model)).source == "priors"  # so ensure_fitted fits again


def test_doctor_names_the_kind_your_weights_leave_out_instead_of_failing(offline_models, tmp_path):
    from marlin_agent.setup.doctor import run_doctor

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[verify]\nbias = -3.0\n[verify.weights]\ncaption_event = 1.0\n")
    report = run_doctor(load_settings(env={**offline_models, "MARLIN_HOME": str(home)}), start_engine=False)
    check = next(c for c in report.checks if c.name == "verification")
    assert check.status == "fail" and "'similarity'" in check.detail
