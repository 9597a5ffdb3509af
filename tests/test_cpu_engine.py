"""The CPU engine: transformers behind the chat-completions API, run with a tiny random model
of Marlin's architecture built here (plumbing, not quality: its answers are noise)."""

from __future__ import annotations

import asyncio
import base64
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
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = recipe("cpu").command(Launch(venv=tmp_path_factory.mktemp("venv"), host="127.0.0.1", port=port,
                                           media_dir=marlin_home / "cache"))
    command[0] = sys.executable
    command[command.index("--model") + 1] = str(checkpoint)
    log = tmp_path_factory.mktemp("cpu-log") / "cpu.log"
    with log.open("w") as out:
        process = subprocess.Popen([*command, "--served-model-name", "NemoStation/Marlin-2B"], stdout=out,
                                   stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            if httpx.get(base_url + "/models", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert process.poll() is None, log.read_text()
        time.sleep(0.5)
    yield base_url, log
    process.terminate()
    process.wait(timeout=30)


def _settings(marlin_home, base_url, **more):
    return load_settings({"server.base_url": base_url, **more}, env={"MARLIN_HOME": str(marlin_home)})


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


def test_a_wrong_model_name_is_the_usual_specific_error(cpu_server, marlin_home, footage):
    base_url, _ = cpu_server
    settings = _settings(marlin_home, base_url, **{"server.model": "someone/else"})

    async def caption():
        async with MarlinClient(settings.server) as client:
            return await caption_video(footage["short_field"], settings, client)

    with pytest.raises(ModelNotServed, match="NemoStation/Marlin-2B"):
        asyncio.run(caption())
