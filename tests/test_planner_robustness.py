"""The LLM planner against models and servers that do not follow the protocol.

A real 1.5B model on a real local server (evals/real_models) loops on one call, writes a video's
title for its id, answers before looking, answers in prose; its server refuses forced tools,
null content and OpenAI's schema form. None of it may cost the user a right answer or turn into
a lie: the planner repairs what it can, and hands what it cannot finish to the pipeline, saying so.
"""

import asyncio
import json
import threading

import pytest
from pydantic_ai.models.function import FunctionModel

from evals.synthetic.planner_server import PlannerServer
from evals.synthetic.scripted_planner import FixedMoves, SloppyPlanner
from marlin_agent.app.ask import ask
from marlin_agent.config import load_settings
from marlin_agent.errors import PlannerError
from marlin_agent.verification.spans import iou
from tests.cli_runner import document, invoke

WHITE_CIRCLE = (131, 140)


def _ask(question, folder, env, model=None, **flags):
    settings = load_settings({"library.transcribe": False, **flags}, env=env)
    return asyncio.run(ask(question, [str(folder)], settings, planner_model=model))


def _right(answer, span=WHITE_CIRCLE):
    return answer.found and iou((answer.moments[0].start, answer.moments[0].end), span) >= 0.5


def _move(tool, **args):
    return json.dumps({"action": {"tool": tool, **args}})


def test_a_call_repeated_gets_a_note_and_a_third_time_ends_the_run_in_the_pipelines_hands(shelf, library_env):
    looping = FixedMoves([_move("search", query="the white circle")])
    answer = _ask("when does the white circle appear", shelf, library_env, looping.model())
    assert _right(answer), answer.answer
    assert "search with the same arguments 3 times" in answer.fallback
    assert "pipeline planner answered in its place" in answer.answer and answer.incomplete
    assert looping.turns == 3, "the loop is stopped at the third identical call"


@pytest.mark.parametrize("finds", [
    [{"event": event} for event in ("the white circle appears", "a white circle appears", "the white circle shows up")],
    [{"event": "the white circle appears"}, {"event": "the white circle appears", "start": 0, "end": 200},
     {"event": "the white circle appears", "start": 0.0, "end": 199.8}],  # the video is 200 s long
    # As the real model did it: the window's start slid a second at a time.
    [{"event": "the white circle appears", "start": 110 + at, "end": 170} for at in range(3)],
    # Past the end of the video, the end is read as the video's end, not refused (the model then moved the start).
    [{"event": "the white circle appears", "start": 110 + at, "end": 230} for at in range(3)],
], ids=["reworded", "renumbered", "slid", "past the end"])
def test_a_find_asked_again_over_the_same_windows_is_a_loop_whatever_its_words_or_numbers(shelf, library_env, finds):
    """The real 1.5B model once called find fifteen times in a run, only four of them new to Marlin, and never
    verified. Asked again in other words, Marlin answers the same where the event is and guesses anew where it
    is not, so the windows it was shown, not its spans or the call's words, say it is the same find."""
    rewording = FixedMoves([_move("find", video_id="long_street", **args) for args in finds])
    answer = _ask("when does the white circle appear", shelf, library_env, rewording.model())
    assert _right(answer), answer.answer
    assert "it called find 3 times over the same window of a video" in answer.fallback
    assert rewording.turns == 3, "stopped at the third find over (nearly) the same windows"


def test_moves_written_sloppily_are_repaired_where_the_intent_is_clear(shelf, library_env):
    answer = _ask("when does the white circle appear", shelf, library_env, SloppyPlanner(["white circle"]).model())
    assert _right(answer), answer.answer
    assert answer.fallback is None, "titles for ids, m:ss times and a missing event are repaired, not refused"
    moves = [s.detail for s in answer.trace if s.detail.startswith("move: find")]
    assert moves and "'event': 'the white circle appears'" in moves[0]


def test_invalid_moves_go_back_naming_the_field_and_three_in_a_row_end_the_run(shelf, library_env):
    confused = FixedMoves([_move("find", video_id="no-such-video", event="x", start="soon")])
    answer = _ask("when does the white circle appear", shelf, library_env, confused.model())
    invalid = [s.detail for s in answer.trace if s.detail.startswith("invalid move")]
    assert len(invalid) == 3 and "video_id 'no-such-video' is not a video of this question" in invalid[0]
    assert "3 invalid moves in a row" in answer.fallback and _right(answer)


def test_not_found_is_never_said_because_the_model_did_not_look(shelf, library_env):
    lazy = FixedMoves([_move("answer", answer="Not found.", moments=[])])
    answer = _ask("when does the white circle appear", shelf, library_env, lazy.model())
    assert _right(answer), "the pipeline looked, and found it"
    assert answer.fallback.startswith("the LLM planner answered without grounding any candidate")
    said_back = [m for m in range(lazy.turns)]
    assert len(said_back) == 3, "the answer was sent back twice before the pipeline took over"


def test_a_model_that_finds_nothing_has_its_not_found_checked_by_the_pipeline(shelf, library_env):
    answer = _ask("when does a green elephant appear", shelf, library_env, FixedMoves([
        _move("search", query="a green elephant"), _move("answer", answer="nothing", moments=[])]).model())
    assert not answer.found and answer.answer.startswith("Not found")
    assert answer.rejected, "the pipeline grounded candidates and rejected them before saying not found"
    assert answer.fallback and answer.incomplete is None, "the planner finished; the pipeline checked its answer"


@pytest.fixture
def planner_server(request):
    quirks = frozenset(getattr(request, "param", ()))
    server = PlannerServer("127.0.0.1", 0, "small-qwen", quirks=quirks)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _served_env(library_env, server):
    return {**library_env, "MARLIN_PLANNER": "small-qwen",
            "MARLIN_PLANNER_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1"}


@pytest.mark.parametrize("planner_server", [
    (), ("json_object_schema_only",), ("tool_choice_auto_only", "no_null_content", "json_object_schema_only"),
    ("prose",), ("prose", "writes_on"),
], indirect=True)
def test_the_planner_answers_through_each_kind_of_server_and_remembers_its_forms(shelf, library_env, planner_server,
                                                                                 monkeypatch):
    monkeypatch.setattr("pydantic_ai.models.ALLOW_MODEL_REQUESTS", True)
    env = _served_env(library_env, planner_server)
    answer = _ask("when does the white circle appear", shelf, env)
    assert _right(answer), answer.answer
    assert answer.fallback is None and answer.usage.planner_tokens > 0
    assert all(b.get("max_tokens") for b in planner_server.bodies), "every request is capped"
    profiles = json.loads((load_settings(env=env).home / "llm_servers.json").read_text())
    profile = next(iter(profiles.values()))
    if "json_object_schema_only" in planner_server.quirks:
        assert profile["schema_form"] == "json_object"
    refused_before = len(planner_server.bodies)
    _ask("when does the white circle appear", shelf, env)
    forms = {(b.get("response_format") or {}).get("type") for b in planner_server.bodies[refused_before:]}
    assert len(forms) == 1, "a later run starts with the form that worked: nothing is refused and sent again"


def test_a_planner_server_that_answers_with_errors_is_a_planner_error_with_what_it_said(shelf, library_env,
                                                                                        monkeypatch):
    from evals.synthetic.simulator import MarlinSimulator

    monkeypatch.setattr("pydantic_ai.models.ALLOW_MODEL_REQUESTS", True)
    with MarlinSimulator(served_model="not-the-planner") as wrong:  # answers, but not with this model
        env = {**library_env, "MARLIN_PLANNER": "small-qwen", "MARLIN_PLANNER_BASE_URL": wrong.base_url}
        result = invoke(["ask", "the white circle", "--in", str(shelf), "--no-transcribe", "--json"], env)
    error = document(result)["error"]
    assert result.exit_code == 3 and error["code"] == "planner_error", error
    assert "answered with an error" in error["message"] and "HTTP 404" in error["message"]
    assert "configure" not in error["hint"].lower() and "reachable" in error["hint"]


def test_without_a_fallback_a_run_the_model_cannot_finish_is_an_error_not_a_guess(shelf, library_env):
    from marlin_agent.app.ask import _session
    from marlin_agent.planners.llm import LLMPlanner
    from marlin_agent.tools import Toolbox

    async def go():
        settings = load_settings({"library.transcribe": False}, env=library_env)
        async with _session([str(shelf)], settings) as (library, client, report):
            ids = [v.id for v in report.videos]
            planner = LLMPlanner(settings, Toolbox(settings, library, client), FixedMoves([_move("list_videos")]).model())
            return await planner.answer(planner.run_for(ids), "when does the white circle appear", ids)

    with pytest.raises(PlannerError, match="no fallback planner"):
        asyncio.run(go())


def test_a_span_over_most_of_the_video_is_refused_as_a_moment_and_never_reported(shelf, library_env):
    """A real 1.5B planner verified 0–54 s of a 54 s video: every event lies in such a span, so whatever the video
    shows somewhere read as happening there, and the whole video was its answer."""
    whole = {"video_id": "long_street", "event": "the white circle appears", "start": 0, "end": 200}
    greedy = FixedMoves([_move("verify", **whole), _move("answer", answer="the whole video", moments=[
        {"video_id": "long_street", "start": 0, "end": 200}])])
    heard: list[str] = []

    def listening(messages, info):
        heard.append(str(messages[-1]))
        return greedy(messages, info)

    answer = _ask("when does the white circle appear", shelf, library_env, FunctionModel(listening))
    assert any("covers most of the video" in said and "call find with that window" in said for said in heard)
    assert answer.fallback.startswith("the LLM planner answered without grounding any candidate"), \
        "a refused verify is not a look"
    assert _right(answer) and all(m.end - m.start < 30 for m in answer.moments), answer.answer
