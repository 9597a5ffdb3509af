"""Which weights and threshold turn evidence into a confidence, for the entailment model that runs.

A confidence is only as good as its calibration, and a calibration belongs to one entailment
model: weights fitted for a two-way model mean nothing for a three-way one. The shipped
``configs/calibrations.toml`` holds one table per model, found by the model's name or by the
SHA-256 of its ONNX file (so a copy of a model in any folder is recognised). Each says whether it
was fitted (and on what) or is a prior.

What is used, first that applies:
1. weights in the user's own configuration (``[verify.weights]``, as ``eval presence --fit`` prints);
2. the shipped table for the model in use, when it was fitted;
3. a fit made on this machine for the model (``calibration_set``: ``models pull`` or the first use of
   a model without a fitted table makes it, in ``$MARLIN_HOME/calibrations.toml`` by the model's hash);
4. priors: the shipped table's priors for the model, or the default model's, marked **uncalibrated**
   (the answer and ``doctor`` say so, and the next ``models pull`` or answer fits them).
A threshold set by the user (``--threshold``, ``[agent] threshold``) wins over the table's.

Every table names a weight for every kind of evidence the verifier reads (``confidence.feature_kinds``):
a kind left out would count as nothing without a word. Weights of your own that leave one out are a
configuration error naming it; a fit made here by an older version that lacks a kind added since is
passed over (and fitted again on first use).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.errors import ConfigError
from marlin_agent.resources import data_path

SHIPPED = "configs/calibrations.toml"
FIT_COMMAND = "marlin-agent eval presence --fit"


class Calibration(BaseModel):
    """Weights, bias and threshold for one entailment model, and where they came from."""

    model: str
    weights: dict[str, float]
    bias: float
    threshold: float
    note: str = ""
    fitted: bool = False  # measured on labelled data (or the user's own); False: a prior
    calibrated: bool = True  # False: no calibration exists for the model in use
    source: str = "shipped"  # yours | shipped | here (fitted on this machine) | priors

    def describe(self) -> str:
        if not self.calibrated:
            return (f"uncalibrated: no weights are fitted for the entailment model {self.model}; priors for "
                    f"another model are used (`marlin-agent models pull` fits them here, or run `{FIT_COMMAND}` "
                    "on labelled footage)")
        said = {"yours": "your own fit", "shipped": "the shipped fit", "here": "a fit made on this machine",
                "priors": "priors"}.get(self.source, self.source)
        return f"{said} for {self.model}" + (f" ({self.note})" if self.note else "")


def shipped_calibrations(path: Path | None = None) -> tuple[str, dict[str, dict]]:
    """(the fallback's key, the tables by key: a model name, or ``sha256:<hex>`` of its ONNX file)."""
    data = tomllib.loads((path or data_path(SHIPPED)).read_text(encoding="utf-8"))
    return data["fallback"], data.get("models", {})


_HEADER = """# Verification weights and thresholds, one table per entailment model (see verification/calibration.py).
# A table is found by the model's name (or one of its `names`), or by "sha256:<hex>" of its ONNX file.
# Fitted tables are written by `python -m evals.run_synthetic`; your own fit (`marlin-agent eval presence
# --fit`) goes into $MARLIN_HOME/config.toml as [verify] bias and [verify.weights], and wins over these.
"""


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(float(value))
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def write_calibration(path: Path, key: str, table: dict) -> None:
    """Store ``table`` under ``key`` in the calibrations file at ``path``, keeping every other table."""
    fallback, tables = shipped_calibrations(path)
    tables[key] = table
    lines = [_HEADER, f"fallback = {_toml_value(fallback)}", ""]
    for name, entry in tables.items():
        lines.append(f"[models.{json.dumps(name)}]")
        lines += [f"{field} = {_toml_value(value)}" for field, value in entry.items() if field != "weights"]
        lines.append(f"[models.{json.dumps(name)}.weights]")
        lines += [f"{kind} = {_toml_value(weight)}" for kind, weight in entry["weights"].items()]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def onnx_fingerprint(folder: Path, cache: Path) -> str | None:
    """``sha256:<hex>`` of the model folder's ONNX file, remembered in the cache by size and time."""
    files = sorted(folder.rglob("*.onnx")) if folder.is_dir() else []
    if not files:
        return None
    stat = files[0].stat()
    memo = cache / "fingerprints.json"
    key = f"{files[0].resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    known = _read_json(memo)
    if key not in known:
        digest = hashlib.sha256()
        with files[0].open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        known[key] = f"sha256:{digest.hexdigest()}"
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            memo.write_text(json.dumps(known), encoding="utf-8")
        except OSError:  # a read-only cache only costs the hash next time
            pass
    return known[key]


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _table(tables: dict[str, dict], keys: list[str]) -> str | None:
    aliases = {alias: k for k, table in tables.items() for alias in [k, *table.get("names", [])]}
    return next((aliases[k] for k in keys if k in aliases), None)


def missing_features(weights: dict[str, float]) -> list[str]:
    """The kinds of evidence the verifier reads that ``weights`` give no weight (a package's signal brings its
    own for its kinds)."""
    from marlin_agent.verification.confidence import feature_kinds
    from marlin_agent.verification.signals import declared_weights

    declared = declared_weights()
    return [kind for kind in feature_kinds() if kind not in weights and kind not in declared]


def _complete(calibration: Calibration, where: str) -> Calibration:
    missing = missing_features(calibration.weights)
    if missing:
        named = ", ".join(repr(kind) for kind in missing)
        raise ConfigError(f"{where} gives no weight for {named}: it would count for nothing",
                          hint=f"Fit the weights again (`{FIT_COMMAND}`), or give each a weight (0 leaves it out).")
    return calibration


def _with_declared(calibration: Calibration) -> Calibration:
    """``calibration`` with the weights a package's signal brings for its kinds, where it names none for them."""
    from marlin_agent.verification.signals import declared_weights

    declared = declared_weights()
    if not set(declared) - set(calibration.weights):
        return calibration
    return calibration.model_copy(update={"weights": declared | calibration.weights})


def _from_table(table: dict, model: str, source: str, calibrated: bool = True) -> Calibration:
    return Calibration(model=table.get("model", model), weights=table["weights"], bias=table["bias"],
                       threshold=table["threshold"], note=table.get("note", ""),
                       fitted=bool(table.get("fitted", False)), calibrated=calibrated, source=source)


def model_keys(settings: Settings, model_folder: Path | None) -> list[str]:
    """The names a calibration table may be kept under for the model in use: its name, and its ONNX file's hash."""
    name = settings.verify.model
    keys = [name, Path(name).name]
    if model_folder is not None:
        keys.append(onnx_fingerprint(model_folder, settings.cache_dir) or "")
    return [k for k in keys if k]


def calibration_for(settings: Settings, model_folder: Path | None = None,
                    fitted_here: Path | None = None) -> Calibration:
    """The calibration in force for these settings (``model_folder``: the resolved entailment model;
    ``fitted_here``: the file of fits made on this machine, by default ``$MARLIN_HOME/calibrations.toml``)."""
    verify = settings.verify
    name = verify.model
    if verify.weights:
        yours = Calibration(model=name, weights=dict(verify.weights), bias=verify.bias,
                            threshold=settings.agent.threshold if settings.agent.threshold is not None else 0.5,
                            note="your [verify] weights", fitted=True, source="yours")
        chosen = _complete(_with_declared(yours), "[verify.weights] in your configuration")
    else:
        keys = model_keys(settings, model_folder)
        fallback, tables = shipped_calibrations()
        key = _table(tables, keys)
        here = fitted_here or settings.home / "calibrations.toml"
        local = shipped_calibrations(here)[1] if here.is_file() else {}
        local_key = _table(local, keys)
        if local_key is not None and missing_features(local[local_key]["weights"]):
            local_key = None  # fitted by an older version: fitted again rather than read short of a kind
        if key is not None and tables[key].get("fitted"):
            chosen = _from_table(tables[key], name, "shipped")
        elif local_key is not None:
            chosen = _from_table(local[local_key], name, "here")
        elif key is not None:
            chosen = _from_table(tables[key], name, "priors")
        else:
            chosen = _from_table(tables[fallback], name, "priors", calibrated=False).model_copy(update={"model": name})
        chosen = _complete(_with_declared(chosen), f"the calibration table {chosen.describe()!r}")
    if settings.agent.threshold is not None:
        chosen = chosen.model_copy(update={"threshold": settings.agent.threshold})
    return chosen
