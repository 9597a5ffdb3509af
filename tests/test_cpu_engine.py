"""The CPU engine: transformers behind the chat-completions API, run with a tiny random model
of Marlin's architecture built here (plumbing, not quality: its answers are noise)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.util
import json
import socket
import subprocess
import sys
import time

import httpx
import openai
import pytest

from evals.synthetic.tiny_marlin import build_tiny_marlin
from marlin_agent.config import load_settings
from marlin_agent.engines import Launch, recipe
from marlin_agent.engines.recipes import cpu_server_script
from marlin_agent.errors import ChunkFailed, ModelNotServed
from marlin_agent.marlin import MarlinClient
from marlin_agent.marlin.scan import caption_video

# The engine's server and the tiny checkpoint run torch here. The test extra leaves it out (a plain
# `torch` requirement resolves to a multi-GB CUDA build on Linux); .ci/run installs the CPU build.
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="needs torch: pip install torch --index-url https://download.pytorch.org/whl/cpu")


def test_the_cpu_engine_is_launched_from_its_own_environment_with_the_media_path(tmp_path):
    launch = Launch(venv=tmp_path / "venv", host="127.0.0.1", port=8000, media_dir=tmp_path / "cache")
    assert recipe("cpu").command(launch) == [
        str(tmp_path / "venv/bin/python"), str(cpu_server_script()), "--model", "NemoStation/Marlin-2B",
        "--allowed-local-media-path", str(tmp_path / "cache"), "--host", "127.0.0.1", "--port", "8000"]
    assert "torchvision" not in recipe("cpu").requirements


@pytest.fixture(scope="module")
def cpu_server(tmp_path_factory, marlin_home):
    """The CPU engine's exact command, run with this interpreter and the tiny checkpoint."""
    checkpoint = build_tiny_marlin(tmp_path_factory.mktemp("tiny-marlin"))
    log = tmp_path_factory.mktemp("cpu-log") / "cpu.log"
    with _running(tmp_path_factory.mktemp("venv"), marlin_home / "cache", log, "NemoStation/Marlin-2B",
                  checkpoint=checkpoint) as base_url:
        yield base_url, log


@contextlib.contextmanager
def _running(venv, media_dir, log, served: str, checkpoint=None, model: str | None = None):
    """The CPU engine's command for Marlin (``checkpoint`` in place of the weights) or for a planner
    ``model``, run with this interpreter until it answers; its base URL while it runs."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = recipe("cpu").command(Launch(venv=venv, host="127.0.0.1", port=port, media_dir=media_dir,
                                           model=model))
    command[0] = sys.executable
    if checkpoint is not None:
        command[command.index("--model") + 1] = str(checkpoint)
    with log.open("w") as out:
        process = subprocess.Popen([*command, "--served-model-name", served], stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            try:
                if httpx.get(base_url + "/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, log.read_text()
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _settings(marlin_home, base_url, **more):
    return load_settings({"server.base_url": base_url, **more}, env={"MARLIN_HOME": str(marlin_home)})


@needs_torch
def test_a_caption_request_goes_through_decoding_the_processor_and_generate(cpu_server, marlin_home, footage):
    base_url, log = cpu_server
    settings = _settings(marlin_home, base_url, **{"server.caption_max_tokens": 24})

    async def caption():
        async with MarlinClient(settings.server) as client:
            # Random weights generate noise: a real generation, which the client rightly refuses as a caption.
            with pytest.raises(ChunkFailed, match="not a caption"):
                await caption_video(footage["short_field"], settings, client)
            return client.usage

    usage = asyncio.run(caption())
    assert usage.marlin_calls == 1
    # 24 s staged at 2 fps: 48 frames in 24 temporal patches, each labelled with its time.
    assert usage.marlin_prompt_tokens > 24 * 10 and 0 < usage.marlin_completion_tokens <= 24
    assert "slow" in log.read_text()


@needs_torch
def test_inline_video_works_and_local_files_outside_the_media_path_are_refused(cpu_server, marlin_home, footage):
    base_url, _ = cpu_server
    client = openai.OpenAI(base_url=base_url, api_key="EMPTY")
    outside = footage["short_field"].resolve().as_uri()  # not under $MARLIN_HOME/cache
    with pytest.raises(openai.BadRequestError, match="allowed-local-media-path"):
        client.chat.completions.create(model="NemoStation/Marlin-2B", max_tokens=4, messages=[{"role": "user", "content": [
            {"type": "video_url", "video_url": {"url": outside}}, {"type": "text", "text": "x"}]}])
    inline = "data:video/mp4;base64," + base64.b64encode(footage["short_field"].read_bytes()).decode()
    reply = client.chat.completions.create(model="NemoStation/Marlin-2B", max_tokens=4, temperature=0,
                                           messages=[{"role": "user", "content": [
                                               {"type": "video_url", "video_url": {"url": inline}},
                                               {"type": "text", "text": "Identify the timestamps."}]}])
    assert reply.choices[0].message.content is not None and reply.usage.completion_tokens <= 4


@needs_torch
def test_a_wrong_model_name_is_the_usual_specific_error(cpu_server, marlin_home, footage):
    base_url, _ = cpu_server
    settings = _settings(marlin_home, base_url, **{"server.model": "someone/else"})

    async def caption():
        async with MarlinClient(settings.server) as client:
            return await caption_video(footage["short_field"], settings, client)

    with pytest.raises(ModelNotServed, match="NemoStation/Marlin-2B"):
        asyncio.run(caption())


# --- the CPU engine as the planner beside Marlin -------------------------------------------


def _cpu_server_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("cpu_server", cpu_server_script())
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_planner_on_the_cpu_engine_is_the_same_server_as_a_chat_model(tmp_path):
    launch = Launch(venv=tmp_path / "venv", host="127.0.0.1", port=8001, media_dir=tmp_path / "cache",
                    model="Qwen/Qwen2.5-0.5B-Instruct")
    assert recipe("cpu").command(launch) == [
        str(tmp_path / "venv/bin/python"), str(cpu_server_script()), "--model", "Qwen/Qwen2.5-0.5B-Instruct",
        "--chat", "--host", "127.0.0.1", "--port", "8001"]


@needs_torch
def test_tool_calls_in_the_qwen_format_come_back_as_openai_tool_calls():
    split = _cpu_server_module().split_tool_calls
    content, calls = split('Let me look.\n<tool_call>\n{"name": "search", "arguments": {"query": "goal", "k": 5}}\n'
                           '</tool_call>\n<tool_call>{"name": "list_videos", "arguments": {}}</tool_call>')
    assert content == "Let me look."
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("search", {"query": "goal", "k": 5}), ("list_videos", {})]
    assert all(c["type"] == "function" and c["id"].startswith("call_") for c in calls)
    # A block the model got wrong stays in the text, where the client sees it and asks again.
    content, calls = split("<tool_call>{not json}</tool_call>")
    assert calls == [] and content == "<tool_call>{not json}</tool_call>"


@pytest.fixture(scope="module")
def tiny_chat_model(tmp_path_factory):
    from evals.synthetic.tiny_marlin import build_tiny_chat_model

    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny-chat"))


@needs_torch
def test_the_chat_engine_renders_tools_calls_and_results_and_returns_the_models_calls(tiny_chat_model, monkeypatch):
    engine = _cpu_server_module().ChatEngine(str(tiny_chat_model), "float32", 1)
    tools = [{"type": "function", "function": {"name": "final_result", "description": "The verdict.",
                                               "parameters": {"type": "object", "properties": {"score": {}}}}}]
    messages = [{"role": "system", "content": "You judge clips."}, {"role": "user", "content": "Event: a goal"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query": "goal"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": '{"hits": []}'}]
    prompt = engine.prompt(messages, tools)
    assert '"name": "final_result"' in prompt and "You judge clips." in prompt
    assert '<tool_call>{"name": "search", "arguments": {"query": "goal"}}</tool_call>' in prompt
    assert '<tool_response>\n{"hits": []}\n</tool_response>' in prompt
    monkeypatch.setattr(engine, "generate", lambda prompt, max_tokens: (
        '<tool_call>{"name": "final_result", "arguments": {"score": 0.9, "reason": "it says so"}}</tool_call>', 40, 9))
    message, _, _ = engine.complete(messages, tools, 64)
    assert message["content"] is None
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"score": 0.9, "reason": "it says so"}


@needs_torch
def test_the_cpu_engine_serves_a_chat_model_with_tools_over_http(tiny_chat_model, tmp_path):
    with _running(tmp_path / "venv", tmp_path, tmp_path / "chat.log", "Qwen/Qwen2.5-0.5B-Instruct",
                  model=str(tiny_chat_model)) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="not-needed")
        reply = client.chat.completions.create(
            model="Qwen/Qwen2.5-0.5B-Instruct", max_tokens=8,
            messages=[{"role": "user", "content": "Event: a goal"}],
            tools=[{"type": "function", "function": {"name": "final_result", "parameters": {"type": "object"}}}])
        assert reply.choices[0].finish_reason in ("stop", "tool_calls") and reply.usage.completion_tokens <= 8
