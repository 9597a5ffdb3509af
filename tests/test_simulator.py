"""The simulator is a faithful instrument: it looks at frames and reproduces Marlin's quirks."""

import base64

import httpx
import pytest

from evals.synthetic import marlin_answers
from evals.synthetic.vision import look

CAPTION = marlin_answers.CAPTION_PROMPT


def ask(simulator, video_path, prompt, key=None, model="NemoStation/Marlin-2B"):
    url = "data:video/mp4;base64," + base64.b64encode(video_path.read_bytes()).decode()
    body = {"model": model, "temperature": 0, "max_tokens": 1024, "messages": [{"role": "user", "content": [
        {"type": "video_url", "video_url": {"url": url}}, {"type": "text", "text": prompt}]}]}
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(simulator.base_url + "/chat/completions", json=body, headers=headers, timeout=60)


def content(response):
    return response.json()["choices"][0]["message"]["content"]


def test_its_eyes_find_the_drawn_objects_at_their_times(footage):
    seen = look(footage["short_field"].read_bytes())
    assert [(t.colour, t.shape, t.motion) for t in seen.tracks] == [
        ("red", "circle", "still"), ("blue", "square", "left_to_right")]
    assert [(t.start, t.end) for t in seen.tracks] == [
        pytest.approx((4.0, 9.0), abs=0.5), pytest.approx((12.5, 20.0), abs=0.5)]
    assert seen.backdrop == "field"


def test_varied_wording_gives_each_clip_its_own_verb_and_the_same_clip_the_same_one(footage):
    from dataclasses import replace

    seen = look(footage["short_field"].read_bytes())
    clips = [replace(seen, duration=seen.duration + n / 10) for n in range(12)]  # twelve clips, one event set
    worded = [marlin_answers.caption_text(clip, varied=True) for clip in clips]
    verbs = {line.split("square ")[1].split(" from")[0] for text in worded for line in text.splitlines()
             if "blue square" in line and line.startswith("<")}
    assert len(verbs) >= 3 and verbs <= {"moves", "slides", "glides", "drifts", "travels"}
    assert worded == [marlin_answers.caption_text(clip, varied=True) for clip in clips]
    assert "blue square moves from left to right" in marlin_answers.caption_text(seen)


def test_a_long_clip_is_read_on_a_60_second_timeline(footage, simulator):
    simulator.state.think = "none"
    reply = content(ask(simulator, footage["long_street"], CAPTION))
    # The white circle is at 131-140 s of 200 s; squeezed onto 60 s it lands near 39-42 s.
    (line,) = [text for text in reply.splitlines() if text.startswith("<") and "white circle" in text]
    start, end = (float(x) for x in line[1 : line.index(">")].split(" - "))
    assert (start, end) == (pytest.approx(131 * 0.3, abs=0.5), pytest.approx(140 * 0.3, abs=0.5))


def test_find_always_answers_even_for_something_absent(footage, simulator):
    simulator.state.think = "none"
    prompt = 'Identify the timestamps during which "a green elephant" takes place. ' \
             'Output the time range as "From <start> to <end>." (numbers in seconds).'
    reply = content(ask(simulator, footage["short_field"], prompt))
    assert reply.startswith("From ") and reply.endswith(".")


def test_an_off_contract_prompt_gets_prose_and_is_recorded(footage, simulator):
    simulator.state.think = "none"
    reply = content(ask(simulator, footage["short_field"], "What happens in this video?"))
    assert "Scene:" not in reply and "From" not in reply
    assert len(simulator.state.off_contract) == 1


def test_a_near_miss_of_the_caption_prompt_is_off_contract(footage, simulator):
    ask(simulator, footage["short_field"], CAPTION + "\n")
    assert simulator.state.records[-1].kind == "off_contract"


def test_keys_are_checked(footage, simulator):
    simulator.state.api_key = "k"
    assert ask(simulator, footage["short_field"], CAPTION).status_code == 401
    assert ask(simulator, footage["short_field"], CAPTION, key="k").status_code == 200


def test_an_unknown_model_is_a_404(footage, simulator):
    assert ask(simulator, footage["short_field"], CAPTION, model="gpt-x").status_code == 404


def test_think_preambles_appear_in_mixed_mode(footage, simulator, tmp_path):
    simulator.state.think = "mixed"
    prompts = [f'Identify the timestamps during which "thing {i}" takes place. '
               'Output the time range as "From <start> to <end>." (numbers in seconds).' for i in range(12)]
    replies = [content(ask(simulator, footage["short_field"], p)) for p in prompts]
    assert any(r.startswith("<think>") for r in replies) and any(not r.startswith("<think>") for r in replies)
