"""How long fitting verification to an entailment model with no table of its own takes here.

``models pull`` (or the first answer) reads the shipped calibration set with the model in use and fits
the weights and threshold (``verification/calibration_set.py``). Timed on this machine with the offline
test model, its shipped table hidden, from a new ``$MARLIN_HOME`` (the models' optimised graphs already
built, as they are after ``models pull`` fetched them); WordNet and the embedder load inside the timing.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from evals.synthetic.offline_models import minilm_dir, nli_dir
from marlin_agent.config import load_settings
from marlin_agent.verification import calibration as calibration_module


def run() -> dict:
    models = Path(tempfile.gettempdir()) / "marlin-bench-models"
    models.mkdir(exist_ok=True)
    env = {"MARLIN_EMBED_MODEL": str(minilm_dir()), "MARLIN_VERIFY_MODEL": str(nli_dir(models))}
    real = calibration_module.shipped_calibrations
    name = "nli-deberta-v3-xsmall-2way"

    def without_it(path=None):
        fallback, tables = real(path)
        return fallback, tables if path is not None else {k: t for k, t in tables.items() if t.get("model") != name}

    from marlin_agent.library.embeddings import shared_embedder
    from marlin_agent.verification.calibration_set import ensure_fitted

    calibration_module.shipped_calibrations = without_it
    try:
        with tempfile.TemporaryDirectory() as home:
            settings = load_settings(env={**env, "MARLIN_HOME": home})
            started = time.perf_counter()
            fitted = ensure_fitted(settings, lambda: shared_embedder(settings.library.embed_model,
                                                                     settings.cache_dir / "models",
                                                                     settings.graphs_dir))
            seconds = time.perf_counter() - started
    finally:
        calibration_module.shipped_calibrations = real
    return {"seconds": round(seconds, 1), "calibration": fitted.describe(), "threshold": fitted.threshold,
            "target_seconds": 60}
