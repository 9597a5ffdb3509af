"""How verified moments become an answer: the same for both planners."""

from __future__ import annotations

from marlin_agent.domain import Evidence, Moment, VideoRef
from marlin_agent.planners.conclude import decide, in_time_order, summary, weakest

STREET = VideoRef(id="s", path="/f/street.mp4", title="street")
FIELD = VideoRef(id="f", path="/f/field.mp4", title="field")


def moment(start: float, end: float, confidence: float, video: VideoRef = STREET, **scores: float) -> Moment:
    evidence = [Evidence(kind="grounding", text="Marlin placed it here", start=start, end=end, score=1.0)]
    evidence += [Evidence(kind=kind, text=f"{kind} text", start=start, end=end, score=score)
                 for kind, score in scores.items()]
    return Moment(video=video, start=start, end=end, confidence=confidence, evidence=evidence)


def test_moments_at_or_above_the_threshold_are_accepted_best_first_the_rest_rejected():
    low, exact, high = moment(0, 5, 0.2), moment(20, 25, 0.5), moment(40, 45, 0.9)
    accepted, rejected = decide([low, exact, high], 0.5)
    assert accepted == [high, exact] and rejected == [low]


def test_a_moment_mostly_overlapping_or_inside_a_better_one_in_the_same_video_is_dropped():
    best, echo, beside = moment(10, 20, 0.9), moment(11, 20, 0.8), moment(17, 27, 0.7)
    elsewhere = moment(10, 20, 0.6, FIELD)
    accepted, rejected = decide([echo, best, beside, elsewhere], 0.5)
    # echo overlaps best by IoU 0.9 (dropped); beside by 3/17 (kept); the other video is its own.
    assert accepted == [best, beside, elsewhere] and rejected == []
    piece = moment(12, 13.5, 0.85)  # wholly inside best: the same occurrence, however short
    assert decide([best, piece, beside], 0.5)[0] == [best, beside]


def test_one_occurrence_checked_twice_is_reported_where_the_caption_event_that_says_it_lies():
    from marlin_agent.planners.operators import joined

    guessed = moment(8.6, 12.2, 0.83)  # a find's guess for "a shape", beside the white square at 10-16 s
    captioned = moment(10, 16, 0.79, caption_event=0.9)
    assert joined([guessed, captioned]) == joined([captioned, guessed]) == [captioned]
    assert [(m.start, m.end) for m in joined([moment(10, 14, 0.8), moment(12, 18, 0.7)])] == [(10, 18)]


def test_a_weak_echo_of_a_rejected_moment_is_not_reported_twice():
    accepted, rejected = decide([moment(10, 20, 0.3), moment(10, 19, 0.2)], 0.5)
    assert accepted == [] and [m.confidence for m in rejected] == [0.3]


def test_answers_list_moments_by_video_then_time():
    moments = [moment(40, 45, 0.9), moment(5, 9, 0.6, FIELD), moment(3, 8, 0.7)]
    assert [(m.video.title, m.start) for m in in_time_order(moments)] == [("field", 5), ("street", 3), ("street", 40)]


def test_a_found_answer_names_the_best_moment_its_clock_and_how_many_more():
    text = summary("the goal", [moment(61.96, 70, 0.83), moment(5, 9, 0.6)], [], 2)
    assert text == '"the goal": street at 1:02.0–1:10.0 (confidence 0.83) and 1 more moment(s).'
    assert summary("the goal", [moment(5, 9, 0.6)], [], 1) == '"the goal": street at 0:05.0–0:09.0 (confidence 0.60).'


def test_not_found_with_nothing_proposed_says_so_plainly():
    assert summary("a purple star", [], [], 1) == 'Not found: nothing in the 1 video searched resembles "a purple star".'
    assert "in the 3 videos searched" in summary("a purple star", [], [], 3)


def test_not_found_says_what_was_proposed_and_why_each_fell_short():
    rejected = [moment(5, 9, 0.31, caption_event=0.62, contradiction=0.8, transcript=0.1),
                moment(30, 34, 0.2), moment(50, 54, 0.1), moment(70, 74, 0.05)]
    text = summary("the goal", [], rejected, 1)
    assert text.startswith('Not found: "the goal" was not confirmed in the 1 video searched. Marlin proposed 4 span(s)')
    assert "street 0:05.0–0:09.0 (confidence 0.31: what Marlin describes there entails it 62%" in text
    assert "0:50.0" in text and "1:10.0" not in text and text.endswith("; and 1 more.")  # the three best, and a count
    assert "more" not in summary("the goal", [], rejected[:3], 1)


def test_why_a_moment_fell_short_is_told_in_the_words_of_its_evidence():
    assert weakest(moment(0, 5, 0.1)) == "nothing Marlin describes there says it"
    assert weakest(moment(0, 5, 0.1, fresh_caption=0.29)) == "nothing Marlin describes there says it"
    told = weakest(moment(0, 5, 0.4, caption_event=0.3, fresh_caption=0.7, contradiction=0.5, best_match=0.39,
                          transcript=0.25, regrounding=0.5, judge=0.2))
    assert told == ('what Marlin describes there entails it 70%, "contradiction text" contradicts it, best_match text, '
                    "speech says it 25%, re-grounding agreed 50%, the judge gave 20%")
    assert "contradicts" not in weakest(moment(0, 5, 0.4, contradiction=0.49))
    assert "best_match" not in weakest(moment(0, 5, 0.4, best_match=0.4))


def test_a_when_answer_leaves_out_a_look_alike_and_names_it(tmp_path):
    """"When does the baker put the loaf into the oven": the loaf going into its tin passed (0.72) with "tin"
    where the oven was asked; the moment at the oven (0.67) says most of it. The answer is the oven, and says
    which moment it left out and why."""
    from types import SimpleNamespace

    from marlin_agent.config import load_settings
    from marlin_agent.planners.pipeline import PipelinePlanner
    from marlin_agent.tools.run_context import RunContext

    tools = SimpleNamespace(verifier=SimpleNamespace(threshold=0.5))
    planner = PipelinePlanner(load_settings(env={"MARLIN_HOME": str(tmp_path)}), tools)
    tin = moment(13.3, 17.8, 0.72, lexical=0.8, lexical_swap=1.0)
    oven = moment(31.3, 36.0, 0.67, lexical=0.76)
    answer = planner.conclude(RunContext(), "when does the baker put the loaf into the oven?",
                              "the baker puts the loaf into the oven", [tin, oven], 1, 0.0)
    assert answer.found and answer.moments == [oven] and answer.rejected[0] is tin
    assert answer.answer.startswith('"the baker puts the loaf into the oven": street at 0:31.3')
    assert "Left out: 0:13.3, which passed but whose description says much less of it" in answer.answer


def test_the_llm_planner_leaves_out_the_same_look_alike():
    """The planner chose both moments (each verified for the event asked): its answer is the pipeline's."""
    from types import SimpleNamespace

    from pydantic_ai import RunUsage

    from marlin_agent.planners.llm import LLMPlanner
    from marlin_agent.tools.run_context import RunContext

    planner = LLMPlanner.__new__(LLMPlanner)  # only its conclusion is exercised: no model, no agent
    planner.tools = SimpleNamespace(verifier=SimpleNamespace(threshold=0.5))
    planner.usage, planner.moves = RunUsage(), RunUsage()
    tin = moment(13.3, 17.8, 0.72, lexical=0.8, lexical_swap=1.0)
    oven = moment(31.3, 36.0, 0.67, lexical=0.76)
    run = RunContext(verified=[tin, oven])
    answer = planner._conclude(run, "when does the baker put the loaf into the oven?",
                               "the baker puts the loaf into the oven",
                               [tin, oven], 1, 0.0)
    assert answer.moments == [oven] and answer.rejected[0] is tin
    assert "Left out: 0:13.3, which passed but whose description says much less of it" in answer.answer


def test_the_answer_does_not_depend_on_the_order_verifications_finished_in():
    import itertools

    # Two equally confident moments that overlap: the earlier one is kept, whichever finished first.
    first, second, other = moment(10, 20, 0.8), moment(11, 21, 0.8), moment(40, 45, 0.8, FIELD)
    outcomes = {tuple((m.video.id, m.start) for m in decide(list(order), 0.5)[0])
                for order in itertools.permutations([first, second, other])}
    assert outcomes == {(("f", 40), ("s", 10))}


def test_a_difference_no_answer_shows_is_a_tie_and_the_whole_occurrence_is_kept():
    """A 1.3 s piece of the fox's crossing scoring 0.001 above the whole crossing: both show as 0.88, so the earlier
    moment, the whole, is the answer, and the piece inside it is the same occurrence."""
    whole, piece = moment(58.2, 66.1, 0.883), moment(58.7, 60.0, 0.884)
    assert decide([piece, whole], 0.5)[0] == [whole]
    assert decide([moment(58.2, 66.1, 0.87), piece], 0.5)[0] == [piece]  # a difference shown still counts


def test_the_trace_is_told_in_the_order_work_started_whichever_side_by_side_step_finished_first():
    import asyncio

    from marlin_agent.tools.trace_order import branches, stamp

    async def check(name: str, delay: float, told: list) -> None:
        told.append((stamp(), f"{name} caption"))
        await asyncio.sleep(delay)
        told.append((stamp(), f"{name} verify"))

    async def question(delays: tuple[float, float]) -> list[str]:
        told = [(stamp(), "search")]
        await asyncio.gather(*branches(check(name, delay, told) for name, delay in zip("ab", delays, strict=True)))
        told.append((stamp(), "conclude"))
        return [step for _, step in sorted(told)]

    slow_first, fast_first = asyncio.run(question((0.05, 0.0))), asyncio.run(question((0.0, 0.05)))
    assert slow_first == fast_first == ["search", "a caption", "a verify", "b caption", "b verify", "conclude"]


def test_a_caption_event_that_says_nothing_happens_is_not_a_happening():
    from marlin_agent.marlin.wording import idle

    assert all(idle(t) for t in ["The light grey backdrop stays empty.", "The scene stays quiet.", "Nothing happens.",
                                 "An empty street scene."])
    assert not any(idle(t) for t in ["The street stays empty until a car passes.", "The dog lies still on the sofa.",
                                      "A red circle appears and stays where it is."])
