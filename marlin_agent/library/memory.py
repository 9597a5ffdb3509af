"""A store that keeps everything in the process: for tests and throwaway work.

The second implementation of ``library.protocol.Store`` (LanceDB's is the first), and the proof
that the library above it holds no LanceDB of its own. Vectors are compared exactly; words are
ranked with BM25, as a full-text index ranks them. Versions are kept whole, one per write.
"""

from __future__ import annotations

import copy
import math
import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import ClassVar

from marlin_agent.library.protocol import TABLES, Where, matches

_WORD = re.compile(r"\w+")
_K1, _B = 1.2, 0.75  # BM25's usual constants


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text or "")]


class MemoryStore:
    """Tables as dicts of rows by id, each write a new version."""

    health_checks: ClassVar[str | None] = None  # nothing on disk to be damaged

    def __init__(self, uri: str = "memory://") -> None:
        self.uri = uri
        self._lock = threading.RLock()
        self._tables: dict[str, dict[str, dict]] = {}
        self._history: dict[str, list[tuple[int, dict[str, dict]]]] = {}  # (version, the table then)
        self._meta: dict[str, str] = {}

    def tables(self) -> set[str]:
        return set(self._tables) | ({"meta"} if self._meta else set())

    def create_tables(self, dim: int) -> None:
        with self._lock:
            for name in TABLES:
                self._tables.setdefault(name, {})

    def tables_ready(self) -> bool:
        return set(TABLES) <= set(self._tables) and bool(self._meta.get("embed_model"))

    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def set_meta(self, values: Mapping[str, str]) -> None:
        self._meta.update(values)

    def add(self, table: str, rows: Sequence[Mapping]) -> None:
        if rows:
            with self._lock:
                self._tables.setdefault(table, {}).update({row["id"]: dict(row) for row in rows})
                self._commit(table)

    def rows(self, table: str, where: Where | None = None, columns: Sequence[str] | None = None) -> list[dict]:
        with self._lock:
            found = [copy.deepcopy(row) for row in self._tables.get(table, {}).values() if matches(row, where)]
        return [{c: row.get(c) for c in columns} for row in found] if columns else found

    def delete(self, table: str, where: Where) -> None:
        with self._lock:
            if table in self._tables:
                kept = {i: row for i, row in self._tables[table].items() if not matches(row, where)}
                if len(kept) != len(self._tables[table]):
                    self._tables[table] = kept
                    self._commit(table)

    def count(self, table: str, where: Where | None = None) -> int:
        return sum(1 for row in self._tables.get(table, {}).values() if matches(row, where))

    def nearest(self, vector: Sequence[float], k: int, where: Where | None = None) -> list[tuple[dict, float]]:
        scored = [(row, sum((a - b) ** 2 for a, b in zip(row["vector"], vector, strict=True)))
                  for row in self.rows("segments", where)]
        return [(_without_vector(row), d) for row, d in sorted(scored, key=lambda item: item[1])[:k]]

    def matching(self, text: str, k: int, where: Where | None = None) -> list[tuple[dict, float]]:
        rows = self.rows("segments", where)
        asked = set(_words(text))
        if not rows or not asked:
            return []
        documents = [Counter(_words(row["text"])) for row in rows]
        average = sum(sum(d.values()) for d in documents) / len(documents) or 1.0
        having = Counter(word for d in documents for word in asked if d[word])
        scored = []
        for row, counts in zip(rows, documents, strict=True):
            length = sum(counts.values())
            score = sum(math.log(1 + (len(rows) - having[w] + 0.5) / (having[w] + 0.5))
                        * counts[w] * (_K1 + 1) / (counts[w] + _K1 * (1 - _B + _B * length / average))
                        for w in asked if counts[w])
            if score > 0:
                scored.append((_without_vector(row), score))
        return sorted(scored, key=lambda item: -item[1])[:k]

    def optimize(self) -> None:
        with self._lock:
            for name in self._history:
                self._history[name] = self._history[name][-1:]

    def has_vector_index(self) -> bool:
        return False

    def versions(self, table: str) -> list[int]:
        return [version for version, _ in self._history.get(table, [])]

    def restore(self, table: str, version: int) -> None:
        with self._lock:
            then = dict(self._history[table])[version]
            self._tables[table] = copy.deepcopy(then)
            self._commit(table)

    def _commit(self, table: str) -> None:
        history = self._history.setdefault(table, [])
        history.append((history[-1][0] + 1 if history else 1, copy.deepcopy(self._tables[table])))


def _without_vector(row: dict) -> dict:
    return {key: value for key, value in row.items() if key != "vector"}
