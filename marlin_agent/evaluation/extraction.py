"""``eval extract``: schema-valid rate and field accuracy of extraction against labelled rows.

Labels are JSON lines ``{"video_id": ..., "data": {...}}`` (plus ``"start"``/``"end"`` for
per-chunk rows). Only the fields a label gives are scored, each in [0, 1]: strings match
case-insensitively, numbers within ``tolerance`` seconds, arrays by the share of items that
find a partner (objects pair up when every labelled key matches), so an extra invented item
costs as much as a missing one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.evaluation.timelens import AnnotationError
from marlin_agent.extraction.job import extract
from marlin_agent.extraction.schema import Schema

TOLERANCE = 1.0


class ExtractionReport(BaseModel):
    suite: str
    rows: int
    labelled: int
    valid_rate: float
    field_accuracy: float
    per_field: dict[str, float]


def agreement(label: Any, value: Any, tolerance: float = TOLERANCE) -> float:
    if isinstance(label, bool) or label is None:
        return float(label == value)
    if isinstance(label, int | float):
        return float(isinstance(value, int | float) and not isinstance(value, bool) and abs(label - value) <= tolerance)
    if isinstance(label, str):
        return float(isinstance(value, str) and label.strip().lower() == value.strip().lower())
    if isinstance(label, dict):
        if not isinstance(value, dict):
            return 0.0
        return float(all(agreement(v, value.get(k), tolerance) == 1.0 for k, v in label.items()))
    if isinstance(label, list):
        if not isinstance(value, list):
            return 0.0
        if not label and not value:
            return 1.0
        unmatched = list(value)
        matched = 0
        for item in label:
            partner = next((i for i, v in enumerate(unmatched) if agreement(item, v, tolerance) == 1.0), None)
            if partner is not None:
                matched += 1
                unmatched.pop(partner)
        return matched / max(len(label), len(value))
    return float(label == value)


def load_labels(path: Path) -> list[dict]:
    try:
        labels = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (FileNotFoundError, json.JSONDecodeError) as exc:
        raise AnnotationError(f"cannot read labels from {path}: {exc}",
                              hint='Labels are JSON lines: {"video_id": ..., "data": {...}}.') from exc
    if not all(isinstance(x, dict) and "video_id" in x and isinstance(x.get("data"), dict) for x in labels):
        raise AnnotationError(f"{path}: every line needs video_id and data",
                              hint='Labels are JSON lines: {"video_id": ..., "data": {...}}.')
    return labels


async def run_extract_eval(schema: Schema, labels: list[dict], videos: Path, settings: Settings, out: Path,
                           suite: str, model=None, per: str = "video") -> ExtractionReport:
    paths = sorted({str(p) for label in labels for p in videos.glob(f"{label['video_id']}.*") if p.suffix != ".json"})
    if not paths:
        raise AnnotationError(f"none of the labelled videos is in {videos}")
    output = out / "rows.jsonl"
    await extract(schema, paths, settings, output, per=per, model=model)
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    by_unit = {(Path(r["video"]["path"]).stem, round(r["start"]), round(r["end"])): r for r in rows}
    by_video = {Path(r["video"]["path"]).stem: r for r in rows}
    scores: dict[str, list[float]] = {}
    for label in labels:
        row = (by_unit.get((label["video_id"], round(label["start"]), round(label["end"])))
               if "start" in label else by_video.get(label["video_id"]))
        data = row["data"] if row and row["valid"] else {}
        for field, expected in label["data"].items():
            scores.setdefault(field, []).append(agreement(expected, (data or {}).get(field)))
    every = [s for values in scores.values() for s in values]
    return ExtractionReport(suite=suite, rows=len(rows), labelled=len(labels),
                            valid_rate=round(sum(r["valid"] for r in rows) / len(rows), 4) if rows else 0.0,
                            field_accuracy=round(sum(every) / len(every), 4) if every else 0.0,
                            per_field={f: round(sum(v) / len(v), 4) for f, v in scores.items()})
