"""Beyond one machine: an index in an S3 bucket, and jobs split into shards that write into it at once.

The bucket is served by moto in server mode, a real S3-protocol endpoint on a loopback port:
LanceDB talks to it over HTTP exactly as it talks to AWS (including the conditional writes its
commits rely on), so nothing of the client is mocked.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals.synthetic.live import free_port
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.indexing.shards import Shard
from tests.cli_runner import document, invoke

CHUNK = "60"
CHUNKS = 6  # the shelf at 60 s: 24 s, 200 s and 30 s make 1 + 4 + 1 chunks


@pytest.fixture(scope="module")
def s3():
    """A fresh S3 endpoint with one bucket, and the environment that points LanceDB at it."""
    moto_server = pytest.importorskip("moto.server")
    import boto3

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ACCESS_KEY_ID": "marlin", "AWS_SECRET_ACCESS_KEY": "marlin-secret", "AWS_REGION": "us-east-1",
           "AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ALLOW_HTTP": "true"}
    boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                 aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"], region_name=env["AWS_REGION"]
                 ).create_bucket(Bucket="footage")
    yield env
    server.stop()


@pytest.fixture
def job_env(library_env, s3, tmp_path_factory):
    """The simulator and offline models, the bucket's credentials, and a cache shared by the
    module's tests (clips are staged once; the indexes live in the bucket or under --db)."""
    home = tmp_path_factory.getbasetemp() / "scale-out-home"
    if not home.exists():
        shutil.copytree(library_env["MARLIN_HOME"], home)
    return {**library_env, **s3, "MARLIN_HOME": str(home)}


@pytest.fixture(scope="module")
def single_run(tmp_path_factory, shelf):
    """Where the reference index goes: one process, no shards, a local folder."""
    return {"db": str(tmp_path_factory.mktemp("single") / "index"), "done": False}


def _index_once(single_run, shelf, env):
    if not single_run["done"]:
        result = invoke(["index", str(shelf), "--chunk-seconds", CHUNK, "--no-transcribe", "--db", single_run["db"],
                         "--json"], env)
        assert result.exit_code == 0, result.stdout
        single_run["done"] = True
    return single_run["db"]


def _segments(db: str, env: dict[str, str]) -> list[tuple]:
    """Every searchable row of an index, as (id, kind, start, end, text), read straight from LanceDB."""
    program = ("import json, sys, lancedb; t = lancedb.connect(sys.argv[1]).open_table('segments');"
               "print(json.dumps([[r['id'], r['kind'], r['start'], r['end'], r['text']] "
               "for r in t.to_arrow().to_pylist()]))")
    out = subprocess.run([sys.executable, "-c", program, db], env={**os.environ, **env}, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    return sorted(tuple(row) for row in json.loads(out))


def _cli(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "marlin_agent", *args, "--json"], env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen) -> dict:
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-2000:]
    return json.loads(stdout)


def _hits(result) -> list[tuple]:
    return [(h["video"]["id"], h["start"], h["end"], h["text"], h["source"], h["score"])
            for h in document(result)["results"]]


# --- shards ------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_every_key_belongs_to_exactly_one_shard_and_the_shares_are_even(count):
    keys = [f"{n:032x}:{n * 7.5:.3f}-{n * 7.5 + 7.5:.3f}" for n in range(2000)]
    owners = [[s for s in range(count) if Shard(index=s, count=count).owns(key)] for key in keys]
    assert all(len(o) == 1 for o in owners)
    shares = [sum(o == [s] for o in owners) for s in range(count)]
    assert min(shares) > 0.8 * len(keys) / count


def test_a_shard_is_named_the_way_schedulers_count():
    assert Shard.parse("0/4") == Shard(index=0, count=4)
    assert Shard.parse(" 3 / 4 ") == Shard(index=3, count=4)
    assert Shard.parse("1/3").part_name("rows", ".jsonl") == "rows-00001-of-00003.jsonl"


@pytest.mark.parametrize("text", ["4/4", "1/0", "-1/2", "a/b", "2", ""])
def test_a_shard_that_does_not_exist_is_a_clear_input_error(text, footage, tmp_path):
    result = invoke(["index", str(footage["short_field"]), "--shard", text, "--json"], {"MARLIN_HOME": str(tmp_path)})
    assert result.exit_code == 2
    error = document(result)["error"]
    assert error["code"] == "bad_input" and "I/N" in error["message"] + error["hint"]


# --- object storage ----------------------------------------------------------------------


def test_a_bucket_that_cannot_be_opened_is_db_unavailable_not_a_traceback(job_env):
    result = invoke(["search", "a red circle", "--db", "s3://no-such-bucket/index", "--json"], job_env)
    assert result.exit_code == 3
    error = document(result)["error"]
    assert error["code"] == "db_unavailable"
    assert "no-such-bucket" in error["message"] and "does not exist" in error["message"]
    assert "AWS_ENDPOINT_URL" in error["hint"]


def test_two_shards_at_once_fill_one_bucket_that_answers_exactly_like_one_process_on_disk(shelf, job_env,
                                                                                          single_run):
    local = _index_once(single_run, shelf, job_env)
    bucket = "s3://footage/two-shards"
    args = ["index", str(shelf), "--chunk-seconds", CHUNK, "--no-transcribe", "--db", bucket]
    running = [_cli([*args, "--shard", f"{i}/2"], job_env) for i in range(2)]
    reports = [_finish(process) for process in running]
    captioned = [r["chunks_captioned"] for r in reports]
    assert sum(captioned) == CHUNKS and min(captioned) > 0
    assert [r["shard"] for r in reports] == ["0/2", "1/2"]

    rows = _segments(bucket, job_env)
    assert len({row[0] for row in rows}) == len(rows)  # no segment twice
    assert rows == _segments(local, job_env)

    finished = document(invoke(["index", "--finalize", "--db", bucket, "--json"], job_env))
    assert (finished["videos"], finished["chunks_done"], finished["chunks_missing"]) == (3, CHUNKS, 0)
    assert (finished["shards"], finished["shards_missing"], finished["unfinished"]) == (2, [], [])

    for query in ("a red circle", "the square moving across"):
        on_disk = invoke(["search", query, "--db", local, "--json"], job_env)
        assert _hits(invoke(["search", query, "--db", bucket, "--json"], job_env)) == _hits(on_disk)
        assert _hits(on_disk)


def _same_answers(question: str, shelf: Path, local: str, bucket: str, env: dict[str, str]) -> None:
    """``ask`` over the bucket answers exactly as over the single-process index on disk."""
    asked = [invoke(["ask", question, "--in", str(shelf), "--chunk-seconds", CHUNK, "--no-transcribe", "--db", db,
                     "--json"], env) for db in (local, bucket)]
    moments = [[(m["video"]["id"], m["start"], m["end"]) for m in document(a)["moments"]] for a in asked]
    assert moments[0] == moments[1] and moments[0]
    # The embedding model runs on int8 ONNX, whose sums differ in the last digits with the batch a
    # text was embedded in; the two indexes embedded in different batches.
    confidences = [[m["confidence"] for m in document(a)["moments"]] for a in asked]
    assert confidences[1] == pytest.approx(confidences[0], abs=0.005)
    # Everything was indexed already: both answers cost the same grounding and verification calls.
    assert document(asked[1])["usage"]["marlin_calls"] == document(asked[0])["usage"]["marlin_calls"]


def test_a_shard_that_never_ran_is_named_by_finalize_and_its_rerun_asks_only_for_its_chunks(shelf, job_env):
    bucket = "s3://footage/lost-shard"
    args = ["index", str(shelf), "--chunk-seconds", CHUNK, "--no-transcribe", "--db", bucket]
    first = document(invoke([*args, "--shard", "0/2", "--json"], job_env))
    finished = document(invoke(["index", "--finalize", "--db", bucket, "--json"], job_env))
    assert (finished["shards"], finished["shards_missing"], finished["shards_unfinished"]) == (2, [1], [])
    # Of the videos shard 0 owns, the chunks shard 1 owns are missing; shard 1's own videos are unknown.
    assert finished["chunks_done"] == first["chunks_captioned"] < CHUNKS
    assert all(v["chunks_done"] < v["chunks_planned"] for v in finished["unfinished"])

    again = document(invoke([*args, "--shard", "0/2", "--json"], job_env))
    assert again["marlin_calls"] == 0
    other = document(invoke([*args, "--shard", "1/2", "--json"], job_env))
    assert other["marlin_calls"] == other["chunks_captioned"] == CHUNKS - first["chunks_captioned"]
    finished = document(invoke(["index", "--finalize", "--db", bucket, "--json"], job_env))
    assert (finished["chunks_done"], finished["chunks_missing"], finished["shards_missing"]) == (CHUNKS, 0, [])
    # index --finalize is the finalize capability: its own command (and MCP tool, and API method) says the same.
    assert document(invoke(["finalize", "--db", bucket, "--json"], job_env))["chunks_done"] == CHUNKS


def test_finalize_takes_no_sources(shelf, tmp_path):
    result = invoke(["index", str(shelf), "--finalize", "--json"], {"MARLIN_HOME": str(tmp_path)})
    assert result.exit_code == 2 and "--finalize" in result.stdout + result.stderr


@pytest.mark.parametrize(("args", "said"), [
    (["index", "--workers", "2"], "go with --ray"),
    (["index", "--endpoints", "http://a/v1"], "go with --ray"),
    (["index", "--ray", "local", "--shard", "0/2"], "makes its own shards"),
    (["extract", "--schema", "marlin", "--workers", "2"], "go with --ray"),
    (["extract", "--schema", "marlin", "--ray", "local", "--shard", "0/2"], "makes its own shards"),
])
def test_ray_options_that_cannot_go_together_are_refused_before_any_work(args, said, shelf, tmp_path):
    where = [str(shelf)] if args[0] == "index" else ["--in", str(shelf)]
    result = invoke([args[0], *where, *args[1:], "--json"], {"MARLIN_HOME": str(tmp_path)})
    assert result.exit_code == 2 and said in result.stdout + result.stderr
    assert not (tmp_path / "index").exists()


# --- extraction --------------------------------------------------------------------------


EXTRACT = ["extract", "--schema", "marlin", "--in", None, "--per", "chunk", "--chunk-seconds", CHUNK,
           "--no-transcribe"]


def _extract_args(shelf: Path, *more: str) -> list[str]:
    return [str(shelf) if arg is None else arg for arg in EXTRACT] + list(more)


def _keyed(paths: list[Path]) -> tuple[dict, int]:
    """The rows of an extraction's output (or of its parts together) by key, and how many lines held them."""
    rows = [json.loads(line) for path in paths for line in path.read_text().splitlines()]
    return {row["key"]: (row["video"], row["start"], row["end"], row["data"], row["valid"]) for row in rows}, len(rows)


def _extract_once(single_run, shelf, env) -> tuple[dict, int]:
    """The rows one unsharded extraction writes, from the reference index."""
    if "rows" not in single_run:
        target = Path(single_run["db"]).parent / "rows.jsonl"
        result = invoke(_extract_args(shelf, "-o", str(target), "--db", _index_once(single_run, shelf, env),
                                      "--json"), env)
        assert result.exit_code == 0, result.stdout
        single_run["rows"] = _keyed([target])
    return single_run["rows"]


def test_extract_shards_write_parts_that_together_are_the_rows_of_one_run(shelf, job_env, single_run, tmp_path):
    single, n_single = _extract_once(single_run, shelf, job_env)
    parts = []
    for i in range(3):
        result = invoke(_extract_args(shelf, "-o", str(tmp_path / "parts" / "rows.jsonl"), "--shard", f"{i}/3",
                                      "--db", "s3://footage/extract", "--json"), job_env)
        assert result.exit_code == 0, result.stdout
        parts.append(Path(document(result)["output"]))
    assert [p.name for p in parts] == [f"rows-0000{i}-of-00003.jsonl" for i in range(3)]
    assert not (tmp_path / "parts" / "rows.jsonl").exists()
    sharded, n_sharded = _keyed(parts)
    assert n_sharded == n_single == len(sharded) == CHUNKS
    assert sharded == single


# --- Ray -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_cluster(s3, tmp_path_factory):
    """A two-CPU Ray cluster on this machine, started the way a user starts one (`ray start --head`)."""
    pytest.importorskip("ray")
    ray_cli = Path(sys.executable).with_name("ray")
    port = free_port()
    env = {**os.environ, **s3, "RAY_USAGE_STATS_ENABLED": "0"}
    subprocess.run([str(ray_cli), "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
                    "--disable-usage-stats"], env=env, check=True, capture_output=True, timeout=180)
    yield f"127.0.0.1:{port}"
    subprocess.run([str(ray_cli), "stop", "--force"], env=env, capture_output=True, timeout=120)




def _ray_workers(task: str) -> list:
    import psutil

    return [p for p in psutil.process_iter(["cmdline"]) if task in " ".join(p.info["cmdline"] or [])]


def test_a_ray_job_through_two_endpoints_outlives_a_killed_worker_and_answers_like_one_process(
        shelf, job_env, single_run, ray_cluster):
    local = _index_once(single_run, shelf, job_env)
    bucket = "s3://footage/ray"
    # Both servers want a key: the workers must get it with the rest of the settings.
    key = {"MARLIN_API_KEY": "ray-job-key"}
    with MarlinSimulator(latency=0.5, api_key=key["MARLIN_API_KEY"]) as first, \
            MarlinSimulator(latency=0.5, api_key=key["MARLIN_API_KEY"]) as second:
        job = _cli(["index", str(shelf), "--chunk-seconds", CHUNK, "--no-transcribe", "--db", bucket,
                    "--ray", ray_cluster, "--workers", "2", "--endpoints", f"{first.base_url},{second.base_url}"],
                   {**job_env, **key})
        deadline = time.monotonic() + 120
        while first.state.received + second.state.received < 4 and time.monotonic() < deadline:
            time.sleep(0.2)
        victims = _ray_workers("_index_shard")
        assert victims, "no Ray worker was running a shard"
        victims[0].kill()  # Ray runs its shard again; the retry skips the chunks already stored
        report = _finish(job)
        assert first.state.received > 0 and second.state.received > 0  # the workers shared both servers
    assert report["videos_new"] + report["videos_partial"] + report["videos_updated"] >= 3
    rows = _segments(bucket, job_env)
    assert len({row[0] for row in rows}) == len(rows) and rows == _segments(local, job_env)
    on_disk = invoke(["search", "a white circle", "--db", local, "--json"], job_env)
    assert _hits(invoke(["search", "a white circle", "--db", bucket, "--json"], job_env)) == _hits(on_disk)
    _same_answers("when does the white circle appear", shelf, local, bucket, job_env)
    finished = document(invoke(["index", "--finalize", "--db", bucket, "--json"], job_env))
    assert (finished["chunks_done"], finished["chunks_missing"], finished["shards_unfinished"]) == (CHUNKS, 0, [])


def test_extract_on_ray_writes_the_rows_of_one_run_into_one_output(shelf, job_env, single_run, ray_cluster, tmp_path):
    single, n_single = _extract_once(single_run, shelf, job_env)
    target = tmp_path / "rows.jsonl"
    summary = _finish(_cli(_extract_args(shelf, "-o", str(target), "--db", "s3://footage/extract-ray",
                                         "--ray", ray_cluster, "--workers", "2"), job_env))
    assert summary["output"] == str(target) and summary["rows_ok"] == CHUNKS and summary["marlin_calls"] == CHUNKS
    rows, lines = _keyed([target])
    assert lines == n_single and rows == single
    again = _finish(_cli(_extract_args(shelf, "-o", str(target), "--db", "s3://footage/extract-ray",
                                       "--ray", ray_cluster, "--workers", "2"), job_env))
    assert (again["rows_ok"], again["rows_skipped"], again["marlin_calls"]) == (0, CHUNKS, 0)


def test_a_ray_driver_killed_mid_run_is_resumed_by_a_rerun_that_asks_only_for_what_is_missing(shelf, job_env,
                                                                                              ray_cluster):
    bucket = "s3://footage/ray-driver-killed"
    args = ["index", str(shelf), "--chunk-seconds", CHUNK, "--no-transcribe", "--db", bucket,
            "--ray", ray_cluster, "--workers", "2", "--concurrency", "1"]
    with MarlinSimulator(latency=2.0) as slow:
        driver = _cli(args, {**job_env, "MARLIN_BASE_URL": slow.base_url})
        deadline = time.monotonic() + 180
        while not slow.state.calls and time.monotonic() < deadline:
            time.sleep(0.1)
        # From the first answer on, the server fails: only the requests already in flight (one per
        # worker) can still land, so the job cannot finish before its driver is killed, however slow
        # this machine is; the failures are recorded and asked again, like the chunks never reached.
        slow.state.fault = "error500"
        while not _some_stored(bucket, job_env) and time.monotonic() < deadline:
            time.sleep(0.3)
        driver.kill()
        driver.communicate(timeout=60)
        # Ray ends a dead driver's tasks: wait until no request has come for a while.
        quiet_since, seen = time.monotonic(), slow.state.received
        while time.monotonic() - quiet_since < 3:
            time.sleep(0.3)
            if slow.state.received != seen:
                quiet_since, seen = time.monotonic(), slow.state.received
    stored = document(invoke(["index", "--finalize", "--db", bucket, "--json"], job_env))["chunks_done"]
    assert 0 < stored <= 3  # answered before the fault, plus the one each worker had in flight
    rerun = _finish(_cli(args, job_env))
    assert rerun["marlin_calls"] == rerun["chunks_captioned"] == CHUNKS - stored


def _some_stored(db: str, env: dict[str, str]) -> bool:
    """Whether a chunk has been stored yet (the table may not exist so early)."""
    program = ("import sys, lancedb; db = lancedb.connect(sys.argv[1]);"
               "print('chunks' in db.table_names() and db.open_table('chunks').count_rows() > 0)")
    run = subprocess.run([sys.executable, "-c", program, db], env={**os.environ, **env}, capture_output=True,
                         text=True, timeout=120)
    return run.stdout.strip() == "True"
