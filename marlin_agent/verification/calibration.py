"""Which weights and threshold turn evidence into a confidence, for the entailment model that runs.

A confidence is only as good as its calibration, and a calibration belongs to one entailment
model: weights fitted for a two-way model mean nothing for a three-way one. The shipped
``configs/calibrations.toml`` holds one table per model, found by the model's name or by the
SHA-256 of its ONNX file (so a copy of a model in any folder is recognised). Each says whether it
was fitted (and on what) or is a prior.

What is used, first that applies:
1. weights in the user's own configuration (``[verify.weights]``, as ``eval presence --fit`` prints);
2. the shipped table for the model in use;
3. the default model's priors, marked **uncalibrated**: the answer and ``doctor`` say so and name
   the command that fits them.
A threshold set by the user (``--threshold``, ``[agent] threshold``) wins over the table's.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.config import Settings
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

    def describe(self) -> str:
        if not self.calibrated:
            return (f"uncalibrated: no weights are fitted for the entailment model {self.model}; priors for "
                    f"another model are used (run `{FIT_COMMAND}` on labelled footage)")
        return f"{'fitted' if self.fitted else 'priors'} for {self.model}" + (f" ({self.note})" if self.note else "")


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


def calibration_for(settings: Settings, model_folder: Path | None = None) -> Calibration:
    """The calibration in force for these settings (``model_folder``: the resolved entailment model)."""
    verify = settings.verify
    name = verify.model
    if verify.weights:
        chosen = Calibration(model=name, weights=dict(verify.weights), bias=verify.bias,
                             threshold=settings.agent.threshold if settings.agent.threshold is not None else 0.5,
                             note="your [verify] weights", fitted=True)
    else:
        fallback, tables = shipped_calibrations()
        aliases = {alias: k for k, table in tables.items() for alias in [k, *table.get("names", [])]}
        keys = [name, Path(name).name]
        if model_folder is not None:
            keys.append(onnx_fingerprint(model_folder, settings.cache_dir) or "")
        key = next((aliases[k] for k in keys if k in aliases), None)
        table = tables[key or fallback]
        chosen = Calibration(model=table.get("model", name) if key else name, weights=table["weights"],
                             bias=table["bias"], threshold=table["threshold"], note=table.get("note", ""),
                             fitted=bool(table.get("fitted", False)), calibrated=key is not None)
    if settings.agent.threshold is not None:
        chosen = chosen.model_copy(update={"threshold": settings.agent.threshold})
    return chosen
