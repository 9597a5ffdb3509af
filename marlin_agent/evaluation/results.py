"""The results table: every suite's latest figures in ``results.json``, rendered to ``results.md``."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from marlin_agent.evaluation.log import write_json


def record(results_dir: Path, name: str, figures: dict, about: dict) -> None:
    """Store ``figures`` under ``name`` (replacing an older run of the same suite) and re-render."""
    table_path = results_dir / "results.json"
    table = json.loads(table_path.read_text(encoding="utf-8")) if table_path.is_file() else {}
    table[name] = {"figures": figures, **about, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d")}
    write_json(table_path, table)
    (results_dir / "results.md").write_text(render(table), encoding="utf-8")


def render(table: dict) -> str:
    lines = ["# Eval results", "",
             "Written by `marlin-agent eval ...`; one row per suite, latest run. Figures are percentages",
             "(R1@t, mIoU × 100, recall@k) or fractions (precision, recall, F1).", ""]
    for kind in ("grounding", "presence", "search", "extract"):
        rows = {k: v for k, v in sorted(table.items()) if v.get("kind") == kind}
        if not rows:
            continue
        columns = list(next(iter(rows.values()))["figures"])
        lines += [f"## {kind}", "", "| suite | " + " | ".join(columns) + " | server | date |",
                  "|---" * (len(columns) + 3) + "|"]
        for name, row in rows.items():
            cells = [str(row["figures"].get(c, "")) for c in columns]
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {row.get('server', '')} | {row['date']} |")
        lines.append("")
    return "\n".join(lines)
