"""What Marlin is asked, one registration per mode: Marlin's own two, and one another package adds."""

from __future__ import annotations

import asyncio
import importlib

import pytest

from marlin_agent.domain import Caption, Span
from marlin_agent.errors import ChunkFailed
from marlin_agent.marlin import MarlinClient
from marlin_agent.marlin.modes import CAPTION, FIND, mode_of, modes
from marlin_agent.marlin.prompts import CAPTION_PROMPT, find_prompt
from marlin_agent.marlin.scan import ask_over_video
from tests.plugins import installed_plugin

# A package that teaches the agent a third thing to ask: how many times an event happens in a clip.
TALLY = '''
from marlin_agent.marlin.modes import Mode
from marlin_agent.marlin.prompts import checked_event


def _count(text, seconds):
    digits = "".join(ch for ch in text if ch.isdigit())
    return int(digits) if digits else None


TALLY = Mode("tally", 'How many times does "{event}" happen in this clip? Answer with one number.', _count, int,
             lambda server: 8, lambda arguments, seconds: "2", usable=lambda answer: answer is not None,
             clean=checked_event)
SHADOW = Mode("caption", "Describe the clip.", lambda text, seconds: text, str, lambda server: 8,
              lambda arguments, seconds: "a clip")
'''


def test_marlins_own_modes_are_its_two_prompts_byte_for_byte():
    assert CAPTION.prompt() == CAPTION_PROMPT and CAPTION.fields == ()
    assert FIND.prompt(event='the "red" square  appears') == find_prompt('the "red" square  appears')
    assert mode_of(find_prompt("a dog runs")) == (FIND, {"event": "a dog runs"})
    assert mode_of(CAPTION_PROMPT) == (CAPTION, {}) and mode_of("Describe the clip.") is None
    assert (CAPTION.result, FIND.result) == (Caption, Span)
    with pytest.raises(TypeError, match="takes event"):
        FIND.prompt()


@pytest.fixture
def tally_installed(tmp_path, monkeypatch):
    site = installed_plugin(tmp_path, "marlin_tally", TALLY, {"marlin_agent.marlin_modes": {
        "tally": "marlin_tally:TALLY", "caption": "marlin_tally:SHADOW"}})
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    modes.cache_clear()
    yield
    modes.cache_clear()


def test_a_mode_another_package_registers_is_asked_over_a_video_like_marlins_own(tally_installed, footage, settings,
                                                                                  simulator):
    with pytest.warns(UserWarning, match="'caption' of marlin-tally is left out: the name is taken"):
        registered = modes()
    assert list(registered) == ["caption", "find", "tally"] and registered["caption"] is CAPTION

    async def go():
        async with MarlinClient(settings.server) as client:
            return await ask_over_video(registered["tally"], footage["long_street"], settings, client,
                                        {"event": 'the "white" circle'})

    answers, failures = asyncio.run(go())
    assert failures == [] and len(answers) == 4 and {answer for _, answer in answers} == {2}
    asked = [r for r in simulator.state.records if r.kind == "tally"]
    assert len(asked) == 4 and {r.max_tokens for r in asked} == {8}
    assert {r.prompt for r in asked} == {"How many times does \"the 'white' circle\" happen in this clip? "
                                         "Answer with one number."}


def test_an_answer_a_mode_cannot_read_is_a_failed_chunk_not_a_result(tally_installed, footage, settings, simulator):
    import dataclasses
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The same prompt, read by a parser that finds no number in what the stand-in says.
        tally = dataclasses.replace(modes()["tally"], parse=lambda text, seconds: None)

    async def go():
        async with MarlinClient(settings.server) as client:
            return await ask_over_video(tally, footage["long_street"], settings, client, {"event": "a circle"},
                                        end=50.0)

    with pytest.raises(ChunkFailed, match=r"(?s)failed; the first: the server's answer is not a tally answer: .*2"):
        asyncio.run(go())


def test_a_video_is_not_staged_for_a_mode_asked_with_the_wrong_arguments(settings, footage, simulator):
    async def go():
        async with MarlinClient(settings.server) as client:
            return await ask_over_video(FIND, footage["long_street"], settings, client, {"query": "a circle"})

    with pytest.raises(TypeError, match="takes event"):
        asyncio.run(go())
    assert simulator.state.records == []
