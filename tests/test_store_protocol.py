"""The store protocol: what any store under the library must do, run against every implementation.

A new store (another vector database) is one module implementing ``library.protocol.Store``;
adding it to STORES below runs this whole specification against it.
"""

from __future__ import annotations

import pytest

from evals.synthetic.offline_models import minilm_dir
from marlin_agent.domain import ChunkCaption, Event
from marlin_agent.errors import IndexMismatch
from marlin_agent.library.embeddings import Embedder
from marlin_agent.library.lance import LanceStore
from marlin_agent.library.memory import MemoryStore
from marlin_agent.library.protocol import Store
from marlin_agent.library.records import FailureWrite, Segment, ShardRun, VideoRecord, WatchRow, Writes, chunk_id
from marlin_agent.library.store import Library
from marlin_agent.library.transcripts import Transcript, TranscriptLine

STORES = {"lance": lambda folder: LanceStore(str(folder)), "memory": lambda folder: MemoryStore()}


@pytest.fixture(scope="module")
def embedder(tmp_path_factory) -> Embedder:
    return Embedder(str(minilm_dir()), tmp_path_factory.mktemp("models"))


@pytest.fixture(params=sorted(STORES))
def make_store(request, tmp_path):
    return lambda: STORES[request.param](tmp_path / "index")


@pytest.fixture
def library(make_store, embedder) -> Library:
    store = make_store()
    return Library(store.uri, embedder, store)


def _video(video_id: str, title: str = "") -> VideoRecord:
    return VideoRecord(id=video_id, path=f"/footage/{video_id}.mp4", title=title or video_id, duration=120.0,
                       fps=25.0, width=640, height=360, has_audio=True, chunk_seconds=60.0, chunks_planned=2)


def _caption(start: float, *events: tuple[float, float, str], scene: str = "", ok: bool = True) -> ChunkCaption:
    return ChunkCaption(start=start, end=start + 60, scene=scene, raw="raw answer", format_ok=ok,
                        events=[Event(start=s, end=e, text=t) for s, e, t in events])


def test_every_store_is_a_store(make_store):
    assert isinstance(make_store(), Store)


def test_rows_are_replaced_by_id_selected_by_value_or_list_and_deleted_alike(make_store):
    store = make_store()
    store.add("shards", [{"id": "a", "status": "running", "index": 0}, {"id": "b", "status": "running", "index": 1}])
    store.add("shards", [{"id": "a", "status": "finished", "index": 0}])
    assert sorted((r["id"], r["status"]) for r in store.rows("shards")) == [("a", "finished"), ("b", "running")]
    assert [r["id"] for r in store.rows("shards", {"status": "running"})] == ["b"]
    assert sorted(r["id"] for r in store.rows("shards", {"id": ["a", "b", "zz"]})) == ["a", "b"]
    assert store.rows("shards", {"id": []}) == [] and store.count("shards", {"id": []}) == 0
    assert store.rows("shards", {"id": "a"}, ["id"]) == [{"id": "a"}]
    store.delete("shards", {"id": []})  # names nothing: deletes nothing
    assert store.count("shards") == 2
    store.delete("shards", {"id": ["a"]})
    assert [r["id"] for r in store.rows("shards")] == ["b"]
    assert store.rows("nowhere") == [] and store.count("nowhere") == 0
    store.delete("nowhere", {"id": "a"})  # a table that does not exist: nothing to do, no error


def test_a_value_with_a_quote_is_a_value_not_syntax(make_store):
    store = make_store()
    store.add("shards", [{"id": "it's", "status": "x' OR '1'='1"}, {"id": "other", "status": "running"}])
    assert [r["id"] for r in store.rows("shards", {"status": "x' OR '1'='1"})] == ["it's"]
    store.delete("shards", {"id": "it's"})
    assert [r["id"] for r in store.rows("shards")] == ["other"]


def test_versions_can_be_returned_to(make_store):
    store = make_store()
    store.add("shards", [{"id": "a", "status": "first"}])
    store.add("shards", [{"id": "a", "status": "second"}])
    versions = store.versions("shards")
    assert len(versions) >= 2 and versions == sorted(versions)
    before = [v for v in versions if v < versions[-1]]
    for version in reversed(before):  # the newest version that still said "first"
        store.restore("shards", version)
        if store.rows("shards")[0]["status"] == "first":
            break
    assert store.rows("shards")[0]["status"] == "first"


def test_written_captions_read_back_as_typed_segments_in_time_order(library):
    library.write(Writes(videos=[_video("v1")]))
    library.put_chunk("v1", 1, _caption(60, (70, 75, "a dog jumps"), scene="a garden"), "marlin", 3)
    library.put_chunk("v1", 0, _caption(0, (5, 9, "a red ball rolls"), (2, 4, "a cat sits"), scene="a yard"), "marlin", 3)
    segments = library.segments("v1")
    assert all(isinstance(s, Segment) for s in segments)
    assert [(s.start, s.kind, s.text) for s in segments] == [
        (0, "scene", "a yard"), (2, "event", "a cat sits"), (5, "event", "a red ball rolls"),
        (60, "scene", "a garden"), (70, "event", "a dog jumps")]
    assert [s.text for s in library.segments("v1", "event")] == ["a cat sits", "a red ball rolls", "a dog jumps"]
    assert library.done_chunk_ids("v1") == {chunk_id("v1", 0, 60), chunk_id("v1", 60, 120)}
    captions = library.chunk_captions("v1")
    assert [c.start for c in captions] == [0, 60] and [e.text for e in captions[0].events] == ["a cat sits",
                                                                                               "a red ball rolls"]
    assert library.get_video("v1").title == "v1" and [v.id for v in library.list_videos()] == ["v1"]


def test_an_off_format_caption_is_stored_but_not_done(library):
    library.put_chunk("v1", 0, _caption(0, (1, 2, "a bird lands"), ok=False), "marlin", 3)
    assert library.stored_chunk_ids() == {chunk_id("v1", 0, 60)} and library.done_chunk_ids() == set()


def test_failures_count_their_attempts_and_a_later_caption_clears_them(library):
    failure = FailureWrite(video_id="v1", start=0, end=60, code="server_unavailable", message="down")
    library.write(Writes(failures=[failure]))
    library.write(Writes(failures=[failure]))
    assert [(f.id, f.attempts) for f in library.failures()] == [(chunk_id("v1", 0, 60), 2)]
    library.put_chunk("v1", 0, _caption(0, (1, 2, "a bird lands")), "marlin", 3)
    assert library.failures("v1") == []


def test_a_retired_chunk_takes_its_segments_and_failures_with_it(library):
    library.put_chunk("v1", 0, _caption(0, (1, 2, "a bird lands")), "marlin", 3)
    library.write(Writes(failures=[FailureWrite(video_id="v1", start=60, end=120, code="x", message="y")]))
    library.write(Writes(retired=[chunk_id("v1", 0, 60), chunk_id("v1", 60, 120)]))
    assert library.segments("v1") == [] and library.stored_chunk_ids() == set() and library.failures() == []


def test_a_transcript_replaces_the_last_one_and_keeps_its_words(library):
    library.write(Writes(videos=[_video("v1")]))
    first = Transcript(source="whisper", lines=[TranscriptLine(start=1, end=2, text="hello there")])
    second = Transcript(source="whisper", lines=[TranscriptLine(start=3, end=4, text="the match begins")])
    library.put_transcript("v1", first)
    library.put_transcript("v1", second)
    speech = library.segments("v1", "transcript")
    assert [(s.start, s.text) for s in speech] == [(3, "the match begins")] and speech[0].words == "[]"


def test_search_fuses_words_and_meaning_and_keeps_to_the_videos_asked(library):
    library.write(Writes(videos=[_video("a", "kitchen"), _video("b", "street")]))
    library.put_chunk("a", 0, _caption(0, (3, 8, "a chef slices an onion"), (20, 25, "water boils in a pot")), "m", 3)
    library.put_chunk("b", 0, _caption(0, (4, 9, "a courier leaves a parcel at the door"),
                                       (30, 35, "a bus stops at the corner")), "m", 3)
    hits = library.search("parcel delivered to the door", k=3)
    assert hits[0].text == "a courier leaves a parcel at the door" and hits[0].video.title == "street"
    assert hits[0].score >= hits[-1].score and len(hits) == 3
    only_a = library.search("parcel delivered to the door", k=3, video_ids=["a"])
    assert only_a and {h.video.id for h in only_a} == {"a"}
    assert library.search("parcel", video_ids=[]) == [] and library.search("   ") == []


def test_a_watch_keeps_its_rows_and_a_forgotten_video_leaves_nothing_behind(library):
    library.put_watch_rows([WatchRow(id="w1:1", watch="w1", kind="alert", record="{}", at="2026-01-01T00:00:02"),
                            WatchRow(id="w1:0", watch="w1", kind="footage", record="{}", at="2026-01-01T00:00:01")])
    assert [r.id for r in library.watch_rows("w1")] == ["w1:0", "w1:1"]
    assert [r.id for r in library.watch_rows("w1", "alert")] == ["w1:1"]
    library.delete_watch_rows(["w1:1"])
    assert [r.id for r in library.watch_rows()] == ["w1:0"]
    library.write(Writes(videos=[_video("v1")]))
    library.put_chunk("v1", 0, _caption(0, (1, 2, "a bird lands")), "marlin", 3)
    library.forget_video("v1")
    assert library.list_videos() == [] and library.segments("v1") == [] and library.stored_chunk_ids() == set()


def test_shard_runs_and_counts(library):
    library.put_shard_run(ShardRun(id="0/2", index=0, count=2, status="finished"))
    library.put_chunk("v1", 0, _caption(0, (1, 2, "a bird lands"), scene="a roof"), "marlin", 3)
    assert [r.id for r in library.shard_runs()] == ["0/2"]
    counts = library.counts()
    assert (counts["chunks"], counts["segments"], counts["event"], counts["scene"], counts["transcript"]) == \
        (1, 2, 1, 1, 0)


def test_tables_made_at_once_are_ready_for_writers(library):
    assert not library.tables_ready()
    library.create_tables()
    assert library.tables_ready()


def test_a_library_refuses_a_store_written_with_another_embedding_model(make_store, embedder, tmp_path):
    store = make_store()
    Library(store.uri, embedder, store).put_chunk("v1", 0, _caption(0, (1, 2, "a bird lands")), "marlin", 3)
    other = Embedder(str(minilm_dir()), tmp_path / "other-models")
    other.name = "another-model"  # what a different MARLIN_EMBED_MODEL would be called
    with pytest.raises(IndexMismatch, match="another-model"):
        Library(store.uri, other, store)


def test_the_same_embedding_model_in_another_folder_is_the_same_model_and_a_changed_one_is_not(
        make_store, embedder, tmp_path):
    """A model is known by its content: a host that starts the MCP server without the user's shell reaches the
    same files by another path (or by the hub name they were fetched by), and the index is still its own."""
    import shutil

    store = make_store()
    Library(store.uri, embedder, store).put_chunk("v1", 0, _caption(0, (1, 2, "a bird lands")), "marlin", 3)
    copied = tmp_path / "copied"
    shutil.copytree(minilm_dir(), copied)
    Library(store.uri, Embedder(str(copied), tmp_path / "models-b"), store)  # no mismatch
    retrained = tmp_path / "retrained"
    shutil.copytree(minilm_dir(), retrained)
    with (retrained / "model.onnx").open("ab") as graph:
        graph.write(b"\0")  # other weights: another model, though its folder looks the same
    with pytest.raises(IndexMismatch, match="retrained"):
        Library(store.uri, Embedder(str(retrained), tmp_path / "models-c"), store)
    store.set_meta({"embed_identity": ""})  # an index made before models were known by content
    Library(store.uri, Embedder(str(copied), tmp_path / "models-b"), store)  # the recorded folder is read


def test_chunks_whose_segments_are_gone_are_forgotten_so_they_are_captioned_again(library):
    library.put_chunk("v1", 0, _caption(0, (1, 2, "a bird lands")), "marlin", 3)
    library.put_chunk("v1", 1, _caption(60, (61, 62, "a cat lands")), "marlin", 3)
    library.store.delete("segments", {"chunk_id": chunk_id("v1", 60, 120)})
    assert library.forget_uncovered_chunks() == 1
    assert library.stored_chunk_ids() == {chunk_id("v1", 0, 60)}


# A store another package adds: the library in memory, on a shelf that says it was used.
SHELF = '''from pathlib import Path

from marlin_agent.library.memory import MemoryStore


def shelf(uri):
    Path(uri).mkdir(parents=True, exist_ok=True)
    (Path(uri) / "shelf-was-here").write_text("this library was kept on the shelf")
    return MemoryStore(f"shelf://{uri}")
'''


def test_a_store_another_package_adds_is_chosen_by_setting_and_keeps_a_whole_ask(tmp_path, library_env, footage):
    import json
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from tests.plugins import installed_plugin, with_plugin

    site = installed_plugin(tmp_path, "marlin_shelf", SHELF, {"marlin_agent.stores": {"shelf": "marlin_shelf:shelf"}})
    env = {**os.environ, **with_plugin(library_env, site)}
    home = Path(library_env["MARLIN_HOME"])
    clips = tmp_path / "clips"
    clips.mkdir()
    shutil.copy(footage["short_field"], clips / "short_field.mp4")

    def ask(store: str):
        (home / "config.toml").write_text(f'[library]\nstore = "{store}"\n')
        done = subprocess.run([sys.executable, "-m", "marlin_agent", "ask", "when does the red circle appear", "--in",
                               str(clips), "--no-transcribe", "--json"], env=env, capture_output=True, text=True,
                              timeout=300)
        return done.returncode, json.loads(done.stdout)

    code, unknown = ask("attic")
    assert code == 2 and "shelf" in unknown["error"]["hint"], unknown
    code, answer = ask("shelf")
    assert code == 0 and answer["found"], answer
    index = home / "index"
    assert (index / "shelf-was-here").is_file() and not list(index.glob("*.lance"))  # nothing went to LanceDB


def test_the_health_checks_a_store_declares_are_the_ones_run_on_it(tmp_path):
    """LanceDB's files are read whole and mended by library.health; a store that declares no such checks keeps its
    own health and is passed over, however many of LanceDB's methods it happens to share."""
    from marlin_agent.library.health import check
    from marlin_agent.library.store import Library

    class LookAlike(MemoryStore):
        def raw_table(self, name):  # a method LanceDB's store has, which used to be how it was told apart
            raise AssertionError("the LanceDB checks ran on a store that did not declare them")

    assert LanceStore.health_checks == "lance" and MemoryStore.health_checks is None
    embedder = Embedder(str(minilm_dir()), tmp_path)
    assert check(Library("memory://x", embedder, LookAlike())).ok
    lance = Library(str(tmp_path / "index"), embedder)
    lance.store.create_tables(lance.embedder.dim)
    assert check(lance).tables  # LanceDB's tables are read
