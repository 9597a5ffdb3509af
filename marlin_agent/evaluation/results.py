"""The results table: every suite's latest figures in ``results.json``, rendered to ``results.md``.

Each row names what produced it: the served model and host, and the engine the server says
it is (``owned_by`` in /v1/models). The project's simulator says so there, and its rows read
"simulator" — a figure measured against a stand-in must never pass for one measured on Marlin.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlparse

from marlin_agent.config import Settings
from marlin_agent.errors import MarlinAgentError
from marlin_agent.evaluation.log import write_json

# What the project's simulator (evals/synthetic/simulator.py) gives as ``owned_by``.
SIMULATOR_OWNER = "marlin-simulator"


def results_dir(settings: Settings, chosen: Path | None) -> Path:
    """Where the results table goes: ``--results``, else ``$MARLIN_HOME/evals`` (never the
    current folder, which may be a checkout whose recorded figures must not change by accident)."""
    return chosen if chosen is not None else settings.home / "evals"


def runs_dir(settings: Settings) -> Path:
    """Where per-query logs and results files go when ``--out`` is not given."""
    return settings.home / "evals" / "runs"


async def server_label(settings: Settings) -> str:
    """"<model> @ <host> (<engine>)", or "simulator (...)" when the server is the project's simulator."""
    from marlin_agent.marlin.client import MarlinClient

    if not settings.server.base_url:
        return "no server"
    host = urlparse(settings.server.base_url).hostname or settings.server.base_url
    try:
        async with MarlinClient(settings.server) as client:
            owner = (await client.served()).get(settings.server.model, "")
    except MarlinAgentError:
        owner = ""  # the label is a courtesy; the run itself already met the server
    if owner == SIMULATOR_OWNER:
        return f"simulator (evals/synthetic, serving as {settings.server.model})"
    return f"{settings.server.model} @ {host}" + (f" ({owner})" if owner else "")


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
    for kind in ("grounding", "presence", "search", "extract", "injection"):
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
