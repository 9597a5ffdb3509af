"""`ask` with the LLM planner, driven by scripted planner models (no real model requests)."""

import asyncio
import shutil
import socket

import pytest

from evals.synthetic.footage import SyntheticEvent
from evals.synthetic.scripted_planner import ScriptedPlanner
from marlin_agent.app.ask import ask
from marlin_agent.config import PlannerSettings, load_settings
from marlin_agent.errors import PlannerNotConfigured
from marlin_agent.llm.models import planner_model
from marlin_agent.verification.spans import iou
from tests.cli_runner import document, invoke

from .conftest import verify_threshold


def run(question, folder, env, planner, **flags):
    settings = load_settings({"library.transcribe": False, **flags}, env=env)
    return asyncio.run(ask(question, [str(folder)], settings, planner_model=planner.model()))


def test_the_llm_planner_finds_what_exists_and_verifies_it_with_a_judge(shelf, library_env):
    cases = [("when does the white circle appear", ["white circle"], "long_street", (131, 140)),
             ("is there a blue square?", ["blue square"], "short_field", (12.5, 20))]
    for question, events, title, span in cases:
        result = run(question, shelf, library_env, ScriptedPlanner(events))
        assert result.found, result.answer
        top = result.moments[0]
        assert top.video.title == title and iou((top.start, top.end), span) >= 0.5
        assert {"grounding", "caption_event", "fresh_caption", "judge"} <= {e.kind for e in top.evidence}
        assert result.usage.planner_tokens > 0 and result.incomplete is None
        assert [s.step for s in result.trace][-1] == "planner"


def test_the_llm_planner_says_not_found_for_what_never_appears(shelf, library_env):
    result = run("when does a green elephant appear", shelf, library_env, ScriptedPlanner(["green elephant"]))
    assert not result.found and result.moments == []
    assert result.rejected, "the spans Marlin proposed are reported with their evidence"
    assert all(m.confidence < verify_threshold(library_env) for m in result.rejected)


def test_every_time_an_event_happens_each_occurrence_is_a_moment(make_footage, tmp_path, library_env):
    folder = tmp_path / "repeat"
    folder.mkdir()
    video = make_footage("repeat", duration=130, events=[
        SyntheticEvent(colour="red", shape="circle", start=8.0, end=14.0),
        SyntheticEvent(colour="blue", shape="square", start=40.0, end=47.0),
        SyntheticEvent(colour="red", shape="circle", start=95.0, end=102.0),
    ])
    shutil.copy(video, folder / "repeat.mp4")
    planner = ScriptedPlanner(["red circle"], every_time=True, count=True)
    result = run("every time the red circle appears, and how many times", folder, library_env, planner)
    assert result.found and len(result.moments) == 2, result.moments
    for moment, truth in zip(result.moments, [(8, 14), (95, 102)], strict=False):
        assert iou((moment.start, moment.end), truth) >= 0.5
    assert "2" in result.answer


def test_a_moment_the_planner_did_not_verify_is_sent_back_and_never_reported(shelf, library_env):
    made_up = {"video_id": "no-such-video", "start": 1.0, "end": 2.0}
    planner = ScriptedPlanner(["yellow triangle"], first_reports=[made_up])
    result = run("the yellow triangle", shelf, library_env, planner)
    assert result.found
    assert all(m.video.id != "no-such-video" for m in result.moments)
    assert iou((result.moments[0].start, result.moments[0].end), (15, 22)) >= 0.5


def test_a_marlin_budget_spent_mid_run_hands_the_question_to_the_pipeline_and_says_so(shelf, library_env, simulator):
    planner = ScriptedPlanner(["white circle"], endless=True)
    result = run("the white circle", shelf, library_env, planner, **{"planner.max_marlin_calls": 5})
    assert result.found and iou((result.moments[0].start, result.moments[0].end), (131, 140)) >= 0.5
    assert result.fallback and "budget" in result.fallback and "pipeline planner answered" in result.fallback
    assert result.incomplete == result.fallback, "the LLM planner's part of the run was cut short"
    assert "pipeline planner answered in its place" in result.answer
    assert [s.step for s in result.trace].count("fallback") == 1


def test_a_request_budget_spent_without_an_answer_hands_the_question_to_the_pipeline(shelf, library_env):
    planner = ScriptedPlanner(["white circle"], endless=True)
    result = run("the white circle", shelf, library_env, planner, **{"planner.max_requests": 4})
    assert result.fallback and "4 model requests" in result.fallback
    assert result.found and result.usage.planner_tokens > 0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_planner_endpoint_that_is_down_is_a_clear_error_and_the_index_is_kept(shelf, library_env, simulator,
                                                                                monkeypatch):
    # A real client request, to a loopback port nothing listens on: no model is reached.
    monkeypatch.setattr("pydantic_ai.models.ALLOW_MODEL_REQUESTS", True)
    env = {**library_env, "MARLIN_PLANNER_BASE_URL": f"http://127.0.0.1:{_closed_port()}/v1"}
    result = invoke(["ask", "the white circle", "--in", str(shelf), "--no-transcribe", "--planner", "qwen3",
                     "--json"], env)
    assert result.exit_code == 3
    error = document(result)["error"]
    assert error["code"] == "planner_unavailable" and "MARLIN_PLANNER_BASE_URL" in error["hint"]
    simulator.state.reset()
    again = invoke(["index", str(shelf), "--no-transcribe", "--json"], library_env)
    assert again.exit_code == 0 and simulator.state.calls == [], "the videos indexed before the failure are kept"


def test_a_misconfigured_planner_is_refused_before_any_work(shelf, library_env, simulator):
    result = invoke(["ask", "the white circle", "--in", str(shelf), "--planner", "hosted_vllm/qwen3", "--json"],
                    library_env)
    assert result.exit_code == 2
    assert document(result)["error"]["code"] == "planner_not_configured"
    assert simulator.state.calls == []


@pytest.mark.parametrize("model, base_url, served", [
    ("qwen3", "http://127.0.0.1:8001/v1", "qwen3"),
    ("hosted_vllm/Qwen/Qwen3-4B", "http://127.0.0.1:8001/v1", "Qwen/Qwen3-4B"),
    ("Qwen/Qwen3-4B", "http://127.0.0.1:8001/v1", "Qwen/Qwen3-4B"),
    ("ollama_chat/qwen3:4b", None, "qwen3:4b"),
    ("openai/gpt-4.1-mini", None, "gpt-4.1-mini"),
])
def test_litellm_style_model_strings_become_chat_completions_models(model, base_url, served):
    from pydantic_ai.models.openai import OpenAIChatModel

    built = planner_model(PlannerSettings(model=model, base_url=base_url, api_key="k"))
    assert isinstance(built, OpenAIChatModel) and built.model_name == served


@pytest.mark.parametrize("model", ["pipeline", "qwen3", "hosted_vllm/qwen3", "nonsense/model"])
def test_unusable_planner_model_strings_are_explained(model):
    with pytest.raises(PlannerNotConfigured) as caught:
        planner_model(PlannerSettings(model=model))
    assert caught.value.hint


@pytest.mark.parametrize("relation, expected", [("after", (70, 78)), ("before", None)])
def test_before_and_after_questions_look_only_on_that_side_of_the_anchor(shelf, library_env, relation, expected):
    from evals.synthetic.scripted_planner import RelativePlanner

    planner = RelativePlanner(["red square"], anchor="yellow triangle", relation=relation)
    result = run(f"when does the red square appear {relation} the yellow triangle", shelf, library_env, planner)
    if expected is None:
        assert not result.found and result.moments == []
    else:
        assert result.found and len(result.moments) == 1
        assert result.moments[0].video.title == "long_street"
        assert iou((result.moments[0].start, result.moments[0].end), expected) >= 0.5


def test_the_planners_moves_are_the_toolbox_methods_in_their_own_words():
    """Each tool is written once, on the Toolbox: a move's name, parameters and description come from it."""
    import inspect

    from marlin_agent.planners.actions import MOVES, step_schema
    from marlin_agent.tools import Toolbox
    from marlin_agent.tools.toolbox import MODEL_TOOLS

    assert list(MOVES) == [*MODEL_TOOLS, "answer"]
    alternatives = {a["properties"]["tool"]["const"]: a for a in step_schema()["properties"]["action"]["anyOf"]}
    for name in MODEL_TOOLS:
        method = getattr(Toolbox, name)
        summary = " ".join(inspect.getdoc(method).split("\n\nArgs:")[0].split())
        assert alternatives[name]["description"] == summary
        parameters = [p for p in inspect.signature(method).parameters if p not in ("self", "run")]
        assert [p for p in alternatives[name]["properties"] if p != "tool"] == parameters
        assert all(p.get("description") for k, p in alternatives[name]["properties"].items() if k != "tool"), name
        required = [p for p, v in inspect.signature(method).parameters.items()
                    if p not in ("self", "run") and v.default is inspect.Parameter.empty]
        assert alternatives[name]["required"] == ["tool", *required]
