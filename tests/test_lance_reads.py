"""Reads through lancedb's compiled core: the same rows as its whole API, and the whole API whenever needed.

A store that has only read never imports lancedb's Python layer (half a second of every cold command);
the moment it writes, or the core cannot do a read, the whole API takes over and answers as it always did.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from marlin_agent.library.health import mend_search_indexes
from marlin_agent.library.lance import LanceStore
from marlin_agent.library.lance_reads import CoreReads

DIM = 8
_WORDS = ["red", "circle", "dog", "runs", "ball", "kicks", "door", "opens", "car", "stops", "player", "jumps"]


def _segments(count: int) -> list[dict]:
    rng = random.Random(7)
    rows = []
    for n in range(count):
        # Repeated words and repeated texts, so rankings have ties that an order-sensitive read would break apart.
        text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 6))) if n % 5 else "the red circle appears"
        rows.append({"id": f"s{n:03d}", "video_id": f"v{n % 4}", "chunk_id": f"v{n % 4}:{n // 10}",
                     "kind": ("event", "scene", "transcript")[n % 3], "start": float(n), "end": n + 2.5,
                     "text": text, "model": "m", "prompt_version": 1, "words": "",
                     "vector": [rng.uniform(-1, 1) for _ in range(DIM)]})
    return rows


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lance") / "index"
    writer = LanceStore(str(folder))
    writer.set_meta({"embed_model": "test", "embed_dim": str(DIM)})
    writer.create_tables(DIM)
    writer.add("segments", _segments(240))
    writer.add("videos", [{"id": f"v{n}", "record": "{}", "path": f"/footage/{n}.mp4", "title": f"it's {n}"}
                          for n in range(4)])
    return folder


def _core_store(folder) -> LanceStore:
    store = LanceStore(str(folder))
    assert store._reads is not None, "a local index is read through the core"
    return store


def _whole_api_store(folder) -> LanceStore:
    store = LanceStore(str(folder))
    store._db  # noqa: B018 - connected: every read now goes through the whole API
    return store


READS = {
    "tables": lambda s: sorted(s.tables()),
    "meta": lambda s: s.meta(),
    "every video": lambda s: s.rows("videos"),
    "a video by a quoted title": lambda s: s.rows("videos", {"title": "it's 2"}),
    "columns of some segments": lambda s: s.rows("segments", {"video_id": ["v1", "v3"], "kind": "event"},
                                                  ["id", "start", "text"]),
    "no row named": lambda s: s.rows("segments", {"id": []}),
    "a table that is not there": lambda s: s.rows("failures_of_nothing"),
    "nearest": lambda s: s.nearest([0.1 * n for n in range(DIM)], 12),
    "nearest in two videos": lambda s: s.nearest([0.5] * DIM, 7, {"video_id": ["v0", "v2"]}),
    "matching words": lambda s: s.matching("red circle", 15),
    "matching words in events": lambda s: s.matching("player kicks the ball", 9, {"kind": "event"}),
    "matching nothing asked": lambda s: s.matching("circle", 5, {"video_id": []}),
    "counts": lambda s: [s.count("segments"), s.count("segments", {"kind": "event"}), s.count("videos", {"id": []})],
    "indexes and a sample": lambda s: [s.indexed_columns("segments"), s.first_value("segments", "text")],
}


@pytest.mark.parametrize("read", sorted(READS))
def test_the_core_reads_what_the_whole_api_reads_in_the_same_order(index, read):
    core, whole = _core_store(index), _whole_api_store(index)
    assert READS[read](core) == READS[read](whole)
    assert core._connection is None, "the read was made by the core, not by the whole API"


def test_the_check_of_the_search_indexes_every_index_run_makes_reads_through_the_core(index):
    store = _core_store(index)
    library = SimpleNamespace(store=store, embedder=SimpleNamespace(dim=DIM), uri=store.uri)
    assert mend_search_indexes(library) is False  # intact: nothing to rebuild
    assert store._connection is None


def test_with_a_vector_index_the_core_probes_as_the_whole_api_does(tmp_path):
    folder = tmp_path / "index"
    writer = LanceStore(str(folder))
    writer.set_meta({"embed_model": "test", "embed_dim": str(DIM), "vector_partitions": "4"})
    writer.create_tables(DIM)
    writer.add("segments", _segments(600))
    from lancedb.index import IvfFlat

    writer._table("segments").create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=4))
    assert writer.has_vector_index()
    core, whole = _core_store(folder), _whole_api_store(folder)
    for vector in ([0.3] * DIM, [(-1) ** n for n in range(DIM)]):
        assert core.nearest(vector, 20, {"kind": ["event", "scene"]}) == whole.nearest(vector, 20, {"kind": ["event", "scene"]})
    assert core._connection is None


def test_a_write_hands_every_later_read_to_the_whole_api_which_sees_it(tmp_path):
    store = LanceStore(str(tmp_path / "index"))
    store.set_meta({"embed_model": "test"})
    store.create_tables(DIM)
    store.add("videos", [{"id": "a", "record": "{}", "path": "/a.mp4", "title": "a"}])
    reader = LanceStore(str(tmp_path / "index"))
    assert [row["id"] for row in reader.rows("videos")] == ["a"] and reader._connection is None
    reader.add("videos", [{"id": "b", "record": "{}", "path": "/b.mp4", "title": "b"}])
    assert sorted(row["id"] for row in reader.rows("videos")) == ["a", "b"]
    assert reader._connection is not None
    # Another process's write is seen at once by a store still reading through the core.
    other = LanceStore(str(tmp_path / "index"))
    store.add("videos", [{"id": "c", "record": "{}", "path": "/c.mp4", "title": "c"}])
    assert sorted(row["id"] for row in other.rows("videos")) == ["a", "b", "c"] and other._connection is None


def test_a_read_the_core_cannot_make_is_made_by_the_whole_api(index, monkeypatch):
    expected = _whole_api_store(index).rows("segments", {"kind": "scene"}, ["id"])
    store = _core_store(index)

    def broken(*args, **kwargs):
        raise RuntimeError("a core that changed in a new lancedb release")

    monkeypatch.setattr(CoreReads, "scan", broken)
    assert store.rows("segments", {"kind": "scene"}, ["id"]) == expected
    assert store._reads is None, "a core that failed once is not asked again"


def test_inside_a_running_event_loop_the_whole_api_reads(index):
    store = _core_store(index)

    async def inside():
        return store.matching("red circle", 5)

    assert asyncio.run(inside()) == _whole_api_store(index).matching("red circle", 5)


def test_a_process_that_only_reads_never_imports_lancedbs_python_api(index):
    program = textwrap.dedent(f"""
        import json, sys
        from marlin_agent.library.lance import LanceStore
        store = LanceStore({str(index)!r})
        found = [len(store.rows("videos")), len(store.nearest([0.2] * {DIM}, 5)), len(store.matching("red", 5))]
        read_only = "lancedb" in sys.modules
        store.add("failures", [{{"id": "x", "video_id": "v0", "code": "c", "message": "m", "attempts": 1}}])
        print(json.dumps([found, read_only, "lancedb" in sys.modules, len(store.rows("failures"))]))
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [[4, 5, 5], False, True, 1]
