"""Structured extraction: rows that match the user's schema, resumable, failures kept."""

import asyncio
import json
import shutil
from pathlib import Path
from typing import Literal

import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel

from evals.synthetic.scripted_extractor import ScriptedExtractor
from marlin_agent import VideoAgent
from marlin_agent.config import load_settings
from marlin_agent.errors import InputError
from marlin_agent.extraction.job import extract
from marlin_agent.extraction.schema import InvalidSchema, load_schema
from tests.cli_runner import document, invoke

OBJECTS = Path(__file__).parents[1] / "evals" / "synthetic" / "schemas" / "objects.json"


@pytest.fixture
def folder(tmp_path, footage):
    root = tmp_path / "footage"
    root.mkdir()
    for name in ("short_field", "long_street"):
        shutil.copy(footage[name], root / f"{name}.mp4")
    return root


def run(folder, env, output, extractor, **options):
    settings = load_settings({"library.transcribe": False}, env=env)
    return asyncio.run(extract(load_schema(OBJECTS), [str(folder)], settings, output, model=extractor.model(),
                               **options))


def rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_schema_with_nested_arrays_and_enums_is_filled_from_the_footage(folder, library_env, tmp_path):
    out = tmp_path / "rows.jsonl"
    summary = run(folder, library_env, out, ScriptedExtractor())
    assert (summary.rows_ok, summary.rows_failed, summary.rows_skipped) == (2, 0, 0)
    written = {Path(r["video"]["path"]).stem: r for r in rows(out)}
    street = written["long_street"]
    assert {"video", "start", "end", "data", "valid", "error", "model"} <= set(street)
    assert street["valid"] and street["error"] is None and street["model"] == "scripted-extractor"
    assert (street["start"], street["end"]) == (0.0, pytest.approx(200.0, abs=0.2))
    objects = {(o["colour"], o["shape"]): o for o in street["data"]["objects"]}
    assert set(objects) == {("yellow", "triangle"), ("red", "square"), ("white", "circle"), ("purple", "circle")}
    # Times are the video's own seconds, across chunks merged in time order.
    assert objects[("white", "circle")]["start"] == pytest.approx(131, abs=1.5)
    assert objects[("red", "square")]["motion"] == "right_to_left"


def test_rows_per_chunk_cover_the_video_in_order(folder, library_env, tmp_path):
    out = tmp_path / "chunks.jsonl"
    run(folder, library_env, out, ScriptedExtractor(), per="chunk")
    street = sorted((r for r in rows(out) if "long_street" in r["video"]["path"]), key=lambda r: r["start"])
    assert [(r["start"], r["end"]) for r in street][0][0] == 0.0 and len(street) >= 3
    assert all(a["end"] == b["start"] for a, b in zip(street, street[1:], strict=False))
    white = [r for r in street if any(o["colour"] == "white" for o in r["data"]["objects"])]
    assert len(white) == 1 and white[0]["start"] <= 131 < white[0]["end"]


@pytest.mark.parametrize("first", ["bad_json", "bad_enum"])
def test_an_llm_whose_first_answer_is_invalid_is_re_asked_and_succeeds(folder, library_env, tmp_path, first):
    extractor = ScriptedExtractor(first=first)
    summary = run(folder, library_env, tmp_path / "rows.jsonl", extractor)
    assert summary.rows_ok == 2 and summary.rows_failed == 0
    assert extractor.calls >= 3, "at least one row needed a second answer"


def test_an_llm_that_never_validates_leaves_a_recorded_failure_row(folder, library_env, tmp_path):
    out = tmp_path / "rows.jsonl"
    summary = run(folder, library_env, out, ScriptedExtractor(always_invalid=True))
    assert summary.rows_ok == 0 and summary.rows_failed == 2
    for row in rows(out):
        assert row["valid"] is False and row["data"] is None
        assert "objects/0/motion" in row["error"] and "sideways" in row["error"]
    # --retry-failed fills them again without leaving duplicates.
    again = run(folder, library_env, out, ScriptedExtractor(), retry_failed=True)
    assert again.rows_ok == 2 and again.rows_skipped == 0
    assert len(rows(out)) == 2 and all(r["valid"] for r in rows(out))


def test_a_killed_batch_resumes_without_duplicates(folder, library_env, tmp_path):
    out = tmp_path / "rows.jsonl"
    run(folder, library_env, out, ScriptedExtractor())
    complete = rows(out)
    # A kill mid-write leaves the first row and half of the second.
    out.write_text(json.dumps(complete[0]) + "\n" + json.dumps(complete[1])[:40])
    extractor = ScriptedExtractor()
    summary = run(folder, library_env, out, extractor)
    assert (summary.rows_ok, summary.rows_skipped) == (1, 1) and extractor.calls == 1
    keys = [r["key"] for r in rows(out)[-2:]]
    assert sorted(keys) == sorted(r["key"] for r in complete)


def test_parquet_output_holds_the_same_rows(folder, library_env, tmp_path):
    out = tmp_path / "rows.parquet"
    run(folder, library_env, out, ScriptedExtractor())
    table = pq.read_table(out).to_pylist()
    assert len(table) == 2 and all(r["valid"] for r in table)
    assert {"video_id", "start", "end", "data", "valid", "error", "model"} <= set(table[0])
    assert json.loads(table[0]["data"])["objects"]


def test_the_builtin_schema_needs_no_llm(folder, library_env, tmp_path):
    result = invoke(["extract", "--schema", "marlin", "--in", str(folder), "-o", str(tmp_path / "m.jsonl"),
                     "--no-transcribe", "--json"], library_env)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert document(result)["rows_ok"] == 2
    street = next(r for r in rows(tmp_path / "m.jsonl") if "long_street" in r["video"]["path"])
    assert street["model"] == "marlin (no LLM)" and len(street["data"]["events"]) == 4


def test_without_an_llm_a_custom_schema_explains_the_options(folder, library_env, tmp_path, simulator, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the default output (objects.jsonl) would go
    result = invoke(["extract", "--schema", str(OBJECTS), "--in", str(folder), "--json"], library_env)
    assert list(tmp_path.glob("*.jsonl")) == [], "a refused job leaves no empty output behind"
    assert result.exit_code == 2
    error = document(result)["error"]
    assert error["code"] == "planner_not_configured"
    assert error["hint"].startswith("Pass --planner,")  # the parameter as the command line spells it
    assert "MARLIN_PLANNER_BASE_URL" in error["hint"] and 'schema "marlin"' in error["hint"]
    assert simulator.state.calls == [], "refused before any work"


@pytest.mark.parametrize("schema, reason", [
    ({"type": "object", "properties": {"mood": {"enum": "happy"}}}, "properties/mood/enum"),
    ({"type": "array", "items": {"type": "string"}}, "not an object"),
    ({"type": "object", "properties": {"n": {"type": "number", "minimum": "zero"}}}, "minimum"),
])
def test_an_invalid_schema_is_refused_up_front_with_the_reason(tmp_path, library_env, schema, reason):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    with pytest.raises(InvalidSchema) as caught:
        load_schema(path)
    assert reason in caught.value.message
    result = invoke(["extract", "--schema", str(path), "--in", str(tmp_path), "--json"], library_env)
    assert result.exit_code == 2 and document(result)["error"]["code"] == "invalid_schema"


class SyntheticObject(BaseModel):
    colour: Literal["red", "blue", "yellow", "white", "purple"]
    shape: Literal["circle", "square", "triangle"]
    motion: Literal["still", "left_to_right", "right_to_left"]
    start: float
    end: float


class Objects(BaseModel):
    setting: str
    objects: list[SyntheticObject]
    speech: bool


def test_the_python_api_yields_validated_pydantic_objects(folder, library_env, tmp_path):
    agent = VideoAgent(env=library_env, transcribe=False)
    found = list(agent.extract(Objects, folder, tmp_path / "api.jsonl", model=ScriptedExtractor().model()))
    assert len(found) == 2 and all(isinstance(row, Objects) for row in found)
    assert sum(len(row.objects) for row in found) == 6


def test_rows_read_without_an_event_loop_stop_the_job_when_the_reader_stops_and_a_run_again_resumes(
        folder, library_env, tmp_path):
    """The blocking methods stream one way (the job on a thread of its own, each row handed over as it lands): an
    error is raised in the reader, and closing the iterator after the first row leaves a job the next run finishes."""
    import threading

    agent = VideoAgent(env=library_env, transcribe=False)
    out = tmp_path / "api.jsonl"
    rows = agent.extract(Objects, folder, out, model=ScriptedExtractor().model())
    first = next(rows)
    rows.close()
    assert isinstance(first, Objects)
    assert not [t for t in threading.enumerate() if t.name == "marlin-stream"]
    rest = list(agent.extract(Objects, folder, out, model=ScriptedExtractor().model()))
    assert len(rest) <= 1 and len(out.read_text().splitlines()) == 2  # each video's row once, in all
    with pytest.raises(InputError):
        next(agent.extract(Objects, folder, tmp_path / "rows.csv", model=ScriptedExtractor().model()))


def test_the_worked_example_schema_is_valid():
    schema = load_schema(Path(__file__).parents[1] / "configs" / "schemas" / "reel.json")
    assert schema.name == "reel" and "products" in schema.document["properties"]
