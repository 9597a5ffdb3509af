"""Hybrid search's ranking: the vector ranking and the word ranking, fused by reciprocal rank."""

from __future__ import annotations

from collections.abc import Callable

_RRF_K = 60


def ranks(rows: list[tuple[dict, float]], worse: Callable[[float], float]) -> dict[str, int]:
    """Competition ranks (1, 2, 2, 4) by ``worse`` of each row's value (smaller is better). The same
    words in two chunks score alike in both halves; giving them one rank, instead of the order they
    happen to be stored in, makes a search answer the same over any copy of the index, however written."""
    result: dict[str, int] = {}
    ordered = sorted(rows, key=lambda item: round(worse(item[1]), 6))
    for n, (row, value) in enumerate(ordered):
        previous = ordered[n - 1] if n else None
        tied = previous is not None and round(worse(previous[1]), 6) == round(worse(value), 6)
        result[row["id"]] = result[previous[0]["id"]] if tied else n + 1
    return result


def fuse(by_distance: list[tuple[dict, float]], by_words: list[tuple[dict, float]],
         k: int) -> list[tuple[dict, float]]:
    """The top ``k`` rows of both rankings by reciprocal-rank fusion, with their fused scores; ties
    broken by id, so every copy of an index answers alike."""
    near = ranks(by_distance, lambda distance: distance)
    words = ranks(by_words, lambda score: -score)
    rows = {row["id"]: row for row, _ in [*by_distance, *by_words]}
    fused = {i: sum(1 / (_RRF_K + rank[i]) for rank in (near, words) if i in rank) for i in rows}
    return [(rows[i], fused[i]) for i in sorted(fused, key=lambda i: (-fused[i], i))[:k]]
