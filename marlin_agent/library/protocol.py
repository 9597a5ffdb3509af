"""The seam between the library and what keeps its rows: a ``Store``.

A store holds named tables of rows (plain dicts, each with a unique ``id``) and can rank the
rows of one table, ``segments``, two ways: by the distance of their ``vector`` to a query
vector, and by how well their ``text`` matches a query's words. Everything else — records,
writes in the right order, fusing the two rankings, which embedding model made the vectors —
is the library's (``library.store.Library``), the same over any store.

``library.lance`` is the store the product runs (LanceDB, on disk or in a bucket);
``library.memory`` keeps everything in the process (tests, throwaway work). A new store is one
module that implements this protocol and passes ``tests/test_store_protocol.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

# The tables the library writes. ``meta`` (key/value settings of the library) is the store's own.
TABLES = ("videos", "chunks", "segments", "failures", "shards", "watch")

# Rows to act on: each column must equal the value, or be one of the values of a list. A store
# compares exactly (no patterns); an empty list matches nothing.
Where = Mapping[str, str | int | bool | Sequence[str]]


def matches(row: Mapping, where: Where | None) -> bool:
    """Whether ``row`` is one of the rows ``where`` names (the meaning every store gives it)."""
    for column, wanted in (where or {}).items():
        value = row.get(column)
        if isinstance(wanted, str | int | bool):
            if value != wanted:
                return False
        elif value not in wanted:
            return False
    return True


@runtime_checkable
class Store(Protocol):
    """Tables of rows keyed by ``id``, and the two rankings of ``segments`` that search fuses.

    A store may say which of ``library.health``'s checks apply to it with a class attribute
    ``health_checks``: ``"lance"`` (its table files are read whole, damaged tables go back to a version that
    reads, search indexes are rebuilt), or ``None``, the default (it keeps its own health: ``doctor`` and
    ``index --repair`` pass it over)."""

    uri: str

    def tables(self) -> set[str]:
        """The tables that exist."""

    def create_tables(self, dim: int) -> None:
        """Make every table of ``TABLES`` (segments with ``dim``-wide vectors and a text index) that is
        missing; safe when another process makes them at the same moment."""

    def tables_ready(self) -> bool:
        """Whether every table and the text index exist, so that writers need create nothing."""

    def meta(self) -> dict[str, str]:
        """The library's settings (its embedding model, vector width, schema version)."""

    def set_meta(self, values: Mapping[str, str]) -> None:
        """Add or replace settings."""

    def add(self, table: str, rows: Sequence[Mapping]) -> None:
        """Insert rows, replacing those with the same ``id``."""

    def rows(self, table: str, where: Where | None = None, columns: Sequence[str] | None = None) -> list[dict]:
        """The rows ``where`` names (all of them without it), with only ``columns`` when given; none
        from a table that does not exist."""

    def delete(self, table: str, where: Where) -> None:
        """Remove the rows ``where`` names; nothing when the table does not exist."""

    def count(self, table: str, where: Where | None = None) -> int:
        """How many rows ``where`` names."""

    def nearest(self, vector: Sequence[float], k: int, where: Where | None = None) -> list[tuple[dict, float]]:
        """Up to ``k`` segments nearest to ``vector`` with their (squared L2) distances, nearest
        first, among those ``where`` names; rows come without their vectors."""

    def matching(self, text: str, k: int, where: Where | None = None) -> list[tuple[dict, float]]:
        """Up to ``k`` segments whose text matches the words of ``text``, with their scores, best first
        (higher is better), among those ``where`` names; rows come without their vectors."""

    def optimize(self) -> None:
        """Compact what many small writes left, and build what makes search fast at this size."""

    def has_vector_index(self) -> bool:
        """Whether nearest() uses an index rather than an exact scan."""

    def versions(self, table: str) -> list[int]:
        """The versions of ``table`` that can be returned to, oldest first (a store that keeps none: [])."""

    def restore(self, table: str, version: int) -> None:
        """Make ``version`` of ``table`` the current one."""
