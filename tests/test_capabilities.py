"""One table of capabilities feeds every front door: the CLI's commands, the MCP server's tools and
``VideoAgent``'s methods. A new capability is a function and its entry; nothing else is written."""

from __future__ import annotations

import asyncio
import inspect
import shutil
import threading
from pathlib import Path
from typing import Annotated

import pytest
import typer
from mcp import Client
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from marlin_agent import VideoAgent
from marlin_agent.api import _methods
from marlin_agent.app.capabilities import BY_NAME, CAPABILITIES, Video
from marlin_agent.app.capability import Capability, Run
from marlin_agent.cli.commands import command
from marlin_agent.cli.main import app
from marlin_agent.config import load_settings
from marlin_agent.errors import InputError
from marlin_agent.mcp_server import build_server
from tests.cli_runner import document, invoke


class FirstScene(BaseModel):
    video: str
    scene: str


async def first_scene(
    video: Video,
    words: Annotated[int, Field(ge=1, le=50, description="How many words of the scene to keep.")] = 12,
    *, run: Run,
) -> FirstScene:
    """The scene Marlin sees in the first chunk of a video, cut to a few words."""
    from marlin_agent.marlin import with_client
    from marlin_agent.marlin.scan import caption_video

    settings = await run.served()
    caption = await with_client(settings.server, lambda client: caption_video(video, settings, client, 0.0, 10.0))
    return FirstScene(video=str(video), scene=" ".join(caption.chunks[0].scene.split()[:words]))


# The whole declaration of the new capability: the function above and this entry.
FIRST_SCENE = Capability(first_scene, "tests.test_capabilities:FirstScene", "captioning", library=False)


def _mcp(settings_env: dict[str, str], root: Path, work):
    """Run ``work(client)`` against an in-process MCP server over ``root`` whose table has the new capability."""
    import marlin_agent.mcp_server.toolset as toolset

    async def run():
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(toolset, "CAPABILITIES", (*CAPABILITIES, FIRST_SCENE))
            server = build_server(load_settings(env=settings_env), [root])
        async with Client(server) as client:
            return await work(client)

    return asyncio.run(run())


def test_a_new_capability_is_a_command_a_tool_and_a_method(library_env, root):
    video = root / "short_field.mp4"
    cli = typer.Typer()
    cli.command("first-scene")(command(FIRST_SCENE))
    cli.command("other")(lambda: None)  # (a group, as the real app is)
    ran = CliRunner().invoke(cli, ["first-scene", str(video), "--words", "3", "--json"], env=library_env)
    assert ran.exit_code == 0, ran.output
    from_cli = document(ran)
    assert len(from_cli["scene"].split()) == 3

    async def work(client):
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        called = await client.call_tool("first_scene", {"video": "short_field.mp4", "words": 3})
        outside = await client.call_tool("first_scene", {"video": "/etc/hostname"})
        return listed["first_scene"], called, outside

    tool, called, outside = _mcp(library_env, root, work)
    assert tool.input_schema["properties"]["words"]["maximum"] == 50
    assert tool.annotations.read_only_hint is True
    assert called.structured_content | {"schema_version": "1"} == from_cli | {"video": str(video.resolve())}
    assert outside.is_error and "path_not_allowed" in outside.content[0].text  # confined by its role, unasked

    coroutine, blocking = _methods(FIRST_SCENE)
    agent = VideoAgent(env=library_env)
    assert blocking(agent, video, words=3).scene == from_cli["scene"]
    assert asyncio.run(coroutine(agent, str(video), 3)).scene == from_cli["scene"]
    with pytest.raises(InputError, match="words"):
        blocking(agent, video, words=500)  # the declaration's bounds hold on every front door


def test_every_capability_is_on_every_front_door_with_its_declared_parameters(library_env, root):
    commands = typer.main.get_command(app).commands

    async def work(client):
        return {tool.name: tool for tool in (await client.list_tools()).tools}

    tools = _mcp(library_env, root, work)
    for capability in CAPABILITIES:
        params = [p.name for p in capability.params()]
        cli = commands[capability.name.replace("_", "-")]
        assert {p.name for p in cli.params} >= {n for n in params if n != "speech"} | {"as_json"}, capability.name
        mcp = tools[capability.name]
        assert list(mcp.input_schema["properties"])[:len(params)] == ["paths" if n == "sources" else n for n in params]
        assert mcp.description == capability.description
        method = getattr(VideoAgent, capability.name)
        assert inspect.iscoroutinefunction(getattr(VideoAgent, f"a{capability.name}")) or capability.name == "extract"
        assert list(inspect.signature(method).parameters)[1:len(params) + 1] == params, capability.name


def test_list_videos_on_the_command_line_and_describe_over_mcp(library_env, root, footage):
    indexed = invoke(["index", str(root), "--json"], library_env)
    assert indexed.exit_code == 0, indexed.output
    listed = invoke(["list-videos", "--json"], library_env)
    assert [v["video"]["path"] for v in document(listed)["videos"]] == [str(root / "short_field.mp4")]
    shown = invoke(["list-videos"], {**library_env, "COLUMNS": "200"})
    assert "short_field" in shown.stdout and "0:24" in shown.stdout
    # A video without sound was transcribed to nothing: it has no transcript, and says why.
    shutil.copy(footage["long_street"], root / "silent.mp4")
    assert invoke(["index", str(root / "silent.mp4"), "--json"], library_env).exit_code == 0
    silent = next(v for v in document(invoke(["list-videos", "--json"], library_env))["videos"]
                  if v["video"]["title"] == "silent")
    assert silent["has_audio"] is False and silent["has_transcript"] is False
    assert "no audio" in invoke(["list-videos"], {**library_env, "COLUMNS": "200"}).stdout

    async def work(client):
        return await client.call_tool("describe", {"video": "short_field.mp4", "max_chars": 200})

    described = _mcp(library_env, root, work)
    assert not described.is_error, described.content
    text = described.structured_content["result"]
    assert 0 < len(text) <= 200 and text == described.content[0].text


def test_a_value_outside_the_declaration_is_refused_by_the_api_before_any_work():
    agent = VideoAgent(env={"MARLIN_HOME": "/nonexistent", "MARLIN_BASE_URL": "http://127.0.0.1:9/v1"})
    with pytest.raises(InputError, match="k"):
        agent.search("a red ball", k=0)
    with pytest.raises(InputError, match="question"):
        agent.ask("", "./footage")


def test_the_models_a_capability_reads_load_beside_its_work_without_holding_it_up(monkeypatch, library_env):
    """A cold command spends its first second importing; the embedding model loads on its own thread
    meanwhile, and the command never waits for that thread (its own use of the model waits only on
    the model's cache)."""
    import marlin_agent.app.warm as warm

    started, release, threads = threading.Event(), threading.Event(), []

    def slow_load(settings, first_run):
        threads.append((threading.current_thread().name, first_run))
        started.set()
        release.wait(30)
        return True

    monkeypatch.setitem(warm._STEPS, warm.EMBEDDER, slow_load)
    try:
        result = invoke(["search", "a red circle", "--json"], library_env)
        assert result.exit_code == 0, result.stdout
        assert document(result)["results"] == []  # an empty library: the search ran to its end
        assert started.wait(5) and threads == [("load embedding model", False)]  # loaded, not run
    finally:
        release.set()


def test_a_load_ahead_that_fails_leaves_the_command_to_load_or_report_the_model_itself(monkeypatch, library_env):
    import marlin_agent.app.warm as warm

    def broken(settings, first_run):
        raise OSError("the disk is gone")

    monkeypatch.setitem(warm._STEPS, warm.EMBEDDER, broken)
    result = invoke(["search", "a red circle", "--json"], library_env)
    assert result.exit_code == 0, result.stdout
    assert warm.warm(load_settings(env=library_env)).count(warm.EMBEDDER) == 0


def test_every_model_a_capability_loads_ahead_is_one_the_warm_up_knows():
    import marlin_agent.app.warm as warm

    declared = {name for capability in CAPABILITIES for name in capability.loads}
    assert declared and declared <= set(warm._STEPS)


def test_every_argument_of_extract_reaches_every_way_of_running_the_job():
    """The job in this process, the API's rows and a Ray job each take extract's arguments by the capability's own
    names (``job_options``): a parameter added to the capability reaches all three, and a runner that does not
    take it fails this test rather than dropping it."""
    from marlin_agent.app.capabilities import job_options
    from marlin_agent.extraction.job import rows_of
    from marlin_agent.scale.extract_on_ray import extract_on_ray

    capability = BY_NAME["extract"]
    names = [p.name for p in capability.params()] + [p.name for p in capability.surface_options()]
    options = set(job_options(dict.fromkeys(names)))
    assert {"per", "instructions", "overwrite", "retry_failed"} <= options
    for runner in (rows_of, extract_on_ray):
        assert options <= set(inspect.signature(runner).parameters), runner.__name__
    assert names == [name for name in inspect.signature(VideoAgent.aextract).parameters if name != "self"]
    assert names == [name for name in inspect.signature(VideoAgent.extract).parameters if name != "self"]


def test_a_ray_job_refuses_what_it_cannot_send_to_its_workers_instead_of_dropping_it(tmp_path):
    from marlin_agent.extraction.schema import load_schema
    from marlin_agent.scale.extract_on_ray import extract_on_ray

    schema = load_schema("marlin")
    settings = load_settings(env={"MARLIN_HOME": str(tmp_path)})
    with pytest.raises(InputError, match="cannot be sent to Ray workers"):
        asyncio.run(extract_on_ray(schema, ["."], settings, tmp_path / "rows.jsonl", "auto", model=object()))
    assert not (tmp_path / "rows.jsonl").exists()


def test_recaption_shard_and_repair_are_parameters_on_every_front_door(library_env, root):
    """Not command-line flags alone: an MCP caller and the Python API recaption, shard and repair the same way
    (a confined caller's repair names its footage: every stored video may lie outside its roots)."""
    agent = VideoAgent(env=library_env)
    first = agent.index(str(root))
    assert first.videos_new == 1 and first.chunks_captioned > 0
    assert agent.index(str(root)).chunks_captioned == 0  # nothing new
    again = agent.index(str(root), recaption="all")
    assert again.chunks_captioned == first.chunks_captioned
    assert agent.index(str(root), shard="0/1").shard == "0/1"
    with pytest.raises(InputError, match="repair goes alone"):
        agent.index(str(root), recaption="all", repair=True)

    async def work(client):
        return (await client.call_tool("index", {"paths": [], "repair": True}),
                await client.call_tool("index", {"paths": ["."], "repair": True, "wait_seconds": 300}),
                await client.call_tool("index", {"paths": ["."], "recaption": "failed", "wait_seconds": 300}),
                await client.call_tool("index", {"paths": ["."], "shard": "4/2"}),
                await client.call_tool("extract", {"schema": "marlin", "paths": ["."], "shard": "4/2"}))

    unnamed, named, failed_only, no_such_shard, no_such_part = _mcp(library_env, root, work)
    assert unnamed.is_error and "give the footage to index again after the repair" in unnamed.content[0].text
    assert named.structured_content["state"] == "done", named.structured_content
    assert named.structured_content["result"]["repair"] is not None
    assert failed_only.structured_content["state"] == "done", failed_only.structured_content
    assert failed_only.structured_content["result"]["chunks_captioned"] == 0  # none had failed
    assert no_such_shard.is_error and "there is no shard 4 of 2" in no_such_shard.content[0].text
    assert no_such_part.is_error and "there is no shard 4 of 2" in no_such_part.content[0].text
