"""The client asks greedily with the canonical prompts and turns every failure into a typed error."""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from marlin_agent.config import load_settings
from marlin_agent.domain import Chunk
from marlin_agent.errors import (
    AuthenticationFailed,
    ModelAccessDenied,
    ModelNotServed,
    NonVideoEngine,
    ServerError,
    ServerNotConfigured,
    ServerProtocolError,
    ServerTimeout,
    ServerUnavailable,
)
from marlin_agent.marlin import MarlinClient
from marlin_agent.marlin.client import video_budget
from marlin_agent.media import probe_video, stage_clip


@pytest.fixture(scope="module")
def clip(footage, tmp_path_factory):
    info = probe_video(footage["short_field"])
    return stage_clip(info, Chunk(index=0, start=0, end=24.0), tmp_path_factory.mktemp("clips"))


def server_settings(tmp_path, **overrides):
    flags = {f"server.{k}": v for k, v in overrides.items()}
    return load_settings(flags, env={"MARLIN_HOME": str(tmp_path)}).server


def run(coroutine_factory, server):
    async def go():
        async with MarlinClient(server) as client:
            return await coroutine_factory(client), client
    return asyncio.run(go())


def test_a_caption_request_is_greedy_capped_and_carries_the_frame_budget(simulator, clip, tmp_path):
    caption, client = run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url))
    assert caption.format_ok and [e.text for e in caption.events] == ["a red circle appears", "a blue square moves from left to right"]
    (record,) = simulator.state.calls
    assert record.kind == "caption" and record.temperature == 0 and record.max_tokens == 1024
    assert record.mm_processor_kwargs == {"fps": 2.0, "min_frames": 4, "max_frames": 240,
                                          "size": {"shortest_edge": 4096, "longest_edge": 48 * 200_704}}
    # The simulator bills 64 prompt tokens a sampled frame and a token per 4 characters of answer.
    assert client.usage.marlin_calls == 1
    assert client.usage.marlin_prompt_tokens == record.frames_sampled * 64 > 0
    assert client.usage.marlin_completion_tokens == len(caption.raw) // 4


def test_the_frame_budget_is_clamped_and_even():
    server = load_settings(env={"MARLIN_HOME": "/tmp"}).server
    assert video_budget(1.0, server)["size"]["longest_edge"] == 4 * 200_704
    assert video_budget(10.3, server)["size"]["longest_edge"] == 22 * 200_704
    assert video_budget(600, server)["size"]["longest_edge"] == 240 * 200_704


def test_a_grounding_request_uses_the_find_prompt_and_64_tokens(simulator, clip, tmp_path):
    span, _ = run(lambda c: c.ground(clip, "the red ball"), server_settings(tmp_path, base_url=simulator.base_url))
    assert (span.start, span.end) == (4.0, 9.0)
    (record,) = simulator.state.calls
    assert record.kind == "find" and record.event == "the red ball" and record.max_tokens == 64


def test_a_loopback_server_gets_file_urls(simulator, clip, tmp_path):
    run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url))
    assert simulator.state.calls[0].transport == "file"


def test_a_server_that_refuses_file_urls_gets_the_clip_inline_from_then_on(simulator, clip, tmp_path):
    simulator.state.refuse_file_urls = True

    async def twice(client):
        await client.caption(clip)
        return await client.caption(clip)

    run(twice, server_settings(tmp_path, base_url=simulator.base_url))
    assert [r.transport for r in simulator.state.records] == [None, "base64", "base64"]


def test_base64_mode_never_sends_a_path(simulator, clip, tmp_path):
    run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url, media="base64"))
    assert simulator.state.calls[0].transport == "base64"


def test_transient_server_errors_are_retried(simulator, clip, tmp_path):
    simulator.state.fail_next = 2
    caption, _ = run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url, max_retries=3))
    assert caption.format_ok
    assert simulator.state.received == 3  # two failures, then the answer


@pytest.mark.parametrize("max_retries", [0, 1, 4])
def test_max_retries_is_the_number_of_attempts_after_the_first(simulator, clip, tmp_path, max_retries):
    simulator.state.fault = "error500"
    with pytest.raises(ServerError, match="HTTP 500"):
        run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url, max_retries=max_retries))
    assert simulator.state.received == max_retries + 1


def test_a_server_that_keeps_failing_gives_up_with_the_status(simulator, clip, tmp_path):
    simulator.state.fault = "error500"
    with pytest.raises(ServerError, match="HTTP 500"):
        run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url, max_retries=1))
    assert simulator.state.received == 2


def test_no_server_configured(tmp_path):
    with pytest.raises(ServerNotConfigured):
        MarlinClient(server_settings(tmp_path))


def test_a_server_that_is_down(clip, tmp_path):
    with pytest.raises(ServerUnavailable, match="cannot reach"):
        run(lambda c: c.caption(clip), server_settings(tmp_path, base_url="http://127.0.0.1:9/v1", max_retries=0))


def test_a_wrong_key(simulator, clip, tmp_path):
    simulator.state.api_key = "right"
    with pytest.raises(AuthenticationFailed, match="401"):
        run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url, api_key="wrong"))


def test_a_gated_model_refusal_points_to_the_access_page(simulator, clip, tmp_path):
    simulator.state.fault = "deny_model"
    with pytest.raises(ModelAccessDenied) as caught:
        run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url))
    assert "https://huggingface.co/NemoStation/Marlin-2B" in caught.value.hint


def test_a_model_the_server_does_not_serve_lists_what_it_does(simulator, clip, tmp_path):
    with pytest.raises(ModelNotServed, match="serves NemoStation/Marlin-2B, not other/model"):
        run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url, model="other/model"))


def test_a_server_answering_garbage(simulator, clip, tmp_path):
    simulator.state.fault = "garbage"
    with pytest.raises(ServerProtocolError):
        run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url))


def test_requests_queued_behind_a_run_stopping_failure_are_never_sent(simulator, clip, tmp_path):
    simulator.state.fault = "garbage"

    async def five_at_once(client):
        return await asyncio.gather(*(client.ground(clip, "a red circle appears") for _ in range(5)),
                                    return_exceptions=True)

    outcomes, client = run(five_at_once, server_settings(tmp_path, base_url=simulator.base_url, concurrency=1))
    assert all(isinstance(o, ServerProtocolError) for o in outcomes)
    assert simulator.state.received == 1 and client.usage.marlin_calls == 1


def test_a_server_that_never_answers_times_out(simulator, clip, tmp_path):
    simulator.state.fault = "hang"
    with pytest.raises(ServerTimeout):
        run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=simulator.base_url,
                                                      request_timeout=0.5, max_retries=0))


class _FakeOllama(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _json(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/api/version":
            self._json(200, {"version": "0.12.0"})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._json(400, {"error": {"message": "invalid content type: video_url", "type": "invalid_request_error"}})


def test_an_engine_without_video_support_is_named(clip, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOllama)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        with pytest.raises(NonVideoEngine, match="Ollama"):
            run(lambda c: c.caption(clip), server_settings(tmp_path, base_url=base_url, media="base64"))
    finally:
        server.shutdown()
        server.server_close()
