"""A host's opening requests answered from the replies an earlier start recorded, then the SDK serving the
rest: the same answers, in either protocol era, with the SDK's own client and by hand."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import stat
import subprocess
import threading
from pathlib import Path

import pytest
from mcp import Client

from marlin_agent.config import load_settings
from marlin_agent.mcp_server.opening import RECORD_FOLDER, OpeningRecord, fingerprint, request_key
from tests.mcp_client import server_params

HANDSHAKE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "by-hand", "version": "1"}}


def _record(env: dict[str, str]) -> Path:
    (only,) = (Path(env["MARLIN_HOME"]) / "cache" / RECORD_FOLDER).glob("*.json")
    return only


def _replies(env: dict[str, str]) -> dict[str, object]:
    return json.loads(_record(env).read_text())["replies"]


class _ByHand:
    """`marlin-agent mcp` spoken to line by line, its stdout read on a thread."""

    def __init__(self, env: dict[str, str], root: Path) -> None:
        params = server_params(env, root)
        self.proc = subprocess.Popen([params.command, *params.args], env=params.env, cwd=params.cwd, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, *messages: dict) -> None:
        self.proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        self.proc.stdin.flush()

    def _until(self, wanted, seconds: float) -> dict | None:
        """The first message ``wanted`` accepts, of those come so far or coming within ``seconds``."""
        while True:
            for message in self.seen:
                if wanted(message):
                    return message
            try:
                self.seen.append(self.lines.get(timeout=seconds))
            except queue.Empty:
                return None

    def reply(self, request_id: int, seconds: float = 120) -> dict:
        found = self._until(lambda message: message.get("id") == request_id, seconds)
        assert found is not None, f"no reply to {request_id}"
        return found

    def heard(self, method: str, seconds: float = 120) -> bool:
        return self._until(lambda message: message.get("method") == method, seconds) is not None

    seen: list[dict]

    def __enter__(self) -> _ByHand:
        self.seen = []
        return self

    def __exit__(self, *exc) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=120)
        self.proc.stdout.close()
        self.proc.stderr.close()


def _opening(client: _ByHand) -> tuple[dict, dict]:
    client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HANDSHAKE},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    return client.reply(1), client.reply(2)


def _listed_then_called(env: dict[str, str], root: Path, mode: str) -> tuple[list[dict], dict]:
    async def run():
        async with Client(server_params(env, root), read_timeout_seconds=240, mode=mode) as client:
            listed = await client.list_tools()
            called = await client.call_tool("list_videos", {})
            return [tool.model_dump() for tool in listed.tools], called.structured_content

    return asyncio.run(run())


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # the initialize handshake, and the 2026 era's discovery
def test_a_second_start_answers_as_the_first_and_then_serves_the_calls(library_env, root, mode):
    first = _listed_then_called(library_env, root, mode)
    assert _replies(library_env), "the first start records the opening replies"
    assert stat.S_IMODE(_record(library_env).stat().st_mode) == 0o600
    second = _listed_then_called(library_env, root, mode)
    assert second[0] == first[0]
    assert second[1]["roots"] == first[1]["roots"] == [str(root.resolve())]


def test_a_recorded_reply_that_went_stale_is_replaced_and_a_host_told_of_changes_lists_again(library_env, root):
    with _ByHand(library_env, root) as host:
        initialized, listed = _opening(host)
    true_description = listed["result"]["tools"][0]["description"]
    # Stand in for a change the fingerprint did not see: the record says one thing, the SDK another, and the
    # recorded handshake lets the host hear that the tools change.
    entry = json.loads(_record(library_env).read_text())
    init_key = request_key("initialize", HANDSHAKE, None)
    list_key = request_key("tools/list", None, json.dumps(HANDSHAKE, sort_keys=True, separators=(",", ":")))
    assert set(entry["replies"]) == {init_key, list_key}
    entry["replies"][init_key]["capabilities"]["tools"] = {"listChanged": True}
    entry["replies"][list_key]["tools"][0]["description"] = "an outdated description"
    _record(library_env).write_text(json.dumps(entry))

    with _ByHand(library_env, root) as host:
        _, listed = _opening(host)
        assert listed["result"]["tools"][0]["description"] == "an outdated description"  # answered from the record
        assert host.heard("notifications/tools/list_changed")
        host.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        again = host.reply(3)
    assert again["result"]["tools"][0]["description"] == true_description
    assert _replies(library_env)[list_key]["tools"][0]["description"] == true_description
    assert _replies(library_env)[init_key] == initialized["result"]  # the SDK's handshake reply, recorded again

    with _ByHand(library_env, root) as host:
        _, listed = _opening(host)
    assert listed["result"]["tools"][0]["description"] == true_description


def test_a_request_the_record_does_not_hold_is_answered_by_the_sdk_in_its_turn(library_env, root):
    with _ByHand(library_env, root) as host:
        _opening(host)
    with _ByHand(library_env, root) as host:
        host.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HANDSHAKE},
                  {"jsonrpc": "2.0", "method": "notifications/initialized"},
                  {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_videos",
                                                                                  "arguments": {}}},
                  {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        assert host.reply(1)["result"]["serverInfo"]["name"] == "marlin"
        assert host.reply(2)["result"]["structuredContent"]["roots"] == [str(root.resolve())]
        assert host.reply(3)["result"]["tools"]
    # Nothing of the checks made behind the host's back reaches it.
    assert sorted(message["id"] for message in host.seen) == [1, 2, 3]


def test_a_damaged_record_is_ignored_and_written_again(library_env, root):
    with _ByHand(library_env, root) as host:
        _opening(host)
    _record(library_env).write_text('{"format": 1, "replies": {"x": ')
    with _ByHand(library_env, root) as host:
        initialized, listed = _opening(host)
    assert initialized["result"]["serverInfo"]["name"] == "marlin" and listed["result"]["tools"]
    assert len(_replies(library_env)) == 2


def test_the_server_ends_when_the_host_goes_away_after_an_opening_answered_from_the_record(library_env, root):
    with _ByHand(library_env, root) as host:
        _opening(host)
    host = _ByHand(library_env, root)
    host.seen = []
    _opening(host)
    host.proc.stdin.close()
    assert host.proc.wait(timeout=120) == 0
    assert host.lines.empty()
    host.proc.stdout.close()
    assert "Traceback" not in host.proc.stderr.read()
    host.proc.stderr.close()


def test_what_shapes_the_replies_is_in_the_fingerprint(tmp_path):
    settings = load_settings(env={"MARLIN_HOME": str(tmp_path)})
    base = fingerprint(settings, ["/a"], False)
    assert base == fingerprint(settings, ["/a"], False)
    assert base != fingerprint(settings, ["/b"], False)
    assert base != fingerprint(settings, ["/a"], True)
    other = load_settings({"mcp.allow_urls": False}, env={"MARLIN_HOME": str(tmp_path)})
    assert other.mcp.allow_urls is False
    assert base != fingerprint(other, ["/a"], False)


def test_a_record_keeps_the_latest_requests_and_the_folder_the_latest_records(tmp_path):
    for n in range(10):
        record = OpeningRecord(tmp_path, f"{n}" * 64)
        for m in range(20):
            record.keep(f"request {m}", {"n": m})
        os.utime(record.path, (n, n))  # written in this order
    assert sorted(path.stem for path in tmp_path.glob("*.json")) == [f"{n}" * 40 for n in range(2, 10)]
    again = OpeningRecord(tmp_path, "9" * 64)
    assert list(again.replies) == [f"request {m}" for m in range(4, 20)]
    again.keep("request 19", None)
    assert OpeningRecord(tmp_path, "9" * 64).reply("request 19") is None
