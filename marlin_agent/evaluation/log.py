"""A run's per-query log: one JSON line per finished query, so an interrupted run resumes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


class QueryLog:
    def __init__(self, path: Path, model: type[T]) -> None:
        self.path = path
        self.model = model
        path.parent.mkdir(parents=True, exist_ok=True)

    def done(self) -> dict[str, T]:
        """Rows already written, by key; a line cut short by a kill is ignored (and redone)."""
        rows: dict[str, T] = {}
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    row = self.model.model_validate_json(line)
                except ValueError:
                    continue
                rows[row.key] = row
        return rows

    def add(self, row: T) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(row.model_dump_json() + "\n")


def write_json(path: Path, document) -> None:
    """Write through a temporary file so a reader never sees half a document."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)
