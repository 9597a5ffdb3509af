"""`ask --html`: one self-contained page, opened in a real headless Chromium: it loads without
errors, every moment's video plays, and each opens at its moment."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from tests.browser import CHROMIUM, CLICKED, FLAGS, NEEDS_CHROMIUM
from tests.cli_runner import document, invoke

pytestmark = NEEDS_CHROMIUM

PLAY = """async (index) => {
  const v = document.querySelectorAll('section.moment video')[index];
  if (v.readyState < 1) await new Promise(r => v.addEventListener('loadedmetadata', r, {once: true}));
  if (v.seeking) await new Promise(r => v.addEventListener('seeked', r, {once: true}));
  const opened = v.currentTime;
  await v.play();
  await new Promise(r => setTimeout(r, 700));
  v.pause();
  return {opened, after: v.currentTime, duration: v.duration, error: v.error ? v.error.code : null,
          inline: v.src.startsWith('data:video/mp4')};
}"""


@contextmanager
def opened(page_file):
    """``page_file`` in headless Chromium; the page records its errors in ``.errors``. (Playwright's sync
    API runs an event loop of its own, so the CLI runs before it starts.)"""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda message: message.type == "error" and errors.append(message.text))
        page.errors = errors
        page.goto(page_file.as_uri())
        try:
            yield page
        finally:
            browser.close()


def test_a_found_answer_is_a_page_whose_moments_play_from_where_they_start(footage, library_env, tmp_path):
    target = tmp_path / "report" / "answer.html"
    result = invoke(["ask", "when does the red circle appear", "--in", str(footage["short_field"]),
                     "--html", str(target), "--json", "--no-transcribe"], library_env)
    assert result.exit_code == 0, result.stdout + result.stderr
    answer = document(result)
    assert answer["found"] and target.is_file()
    text = target.read_text()
    assert "file://" not in text  # nothing outside the page: the clip is inline

    with opened(target) as page:
        assert page.locator("section.moment video").count() == len(answer["moments"])
        for index, moment in enumerate(answer["moments"]):
            state = page.evaluate(PLAY, index)
            assert state["error"] is None and state["inline"] and state["duration"] > 0
            assert state["opened"] == pytest.approx(min(1.0, moment["start"]), abs=0.1)  # the moment, not its context
            assert state["after"] > state["opened"]  # it plays
        assert "confidence" in page.inner_text("body")
        assert page.errors == []


def test_a_not_found_answer_says_so_and_keeps_the_rejected_candidates_folded(footage, library_env, tmp_path):
    target = tmp_path / "answer.html"
    result = invoke(["ask", "when does the purple triangle appear", "--in", str(footage["short_field"]),
                     "--html", str(target), "--json", "--no-transcribe"], library_env)
    answer = document(result)
    assert not answer["found"]
    with opened(target) as page:
        assert "Not found" in page.inner_text("h1 + p")
        assert page.locator("section.moment video").count() == 0
        if answer["rejected"]:
            folded = page.locator("details")
            assert folded.count() == 1 and folded.get_attribute("open") is None
            assert f"{len(answer['rejected'])} candidate" in folded.inner_text()
        assert page.errors == []




def test_the_timeline_places_moments_candidates_and_speech_and_a_click_plays_from_there(speech_video, library_env,
                                                                                       tmp_path):
    target = tmp_path / "timeline.html"
    result = invoke(["ask", "when does the red circle appear", "--in", str(speech_video), "--html", str(target),
                     "--json"], library_env)
    answer = document(result)
    assert result.exit_code == 0 and answer["found"], result.stdout
    moment = answer["moments"][0]
    with opened(target) as page:
        assert page.locator(".timeline").count() == 1
        assert page.locator(".mark.found").count() == len(answer["moments"])
        assert page.locator(".mark.rejected").count() == len(answer["rejected"])
        assert page.locator(".mark.speech").count() >= 2  # the two spoken sentences
        found = page.evaluate(CLICKED, ".mark.found")
        assert found["start"] == pytest.approx(moment["start"], abs=0.01)
        assert found["at"] == pytest.approx(moment["start"], abs=0.3)  # the player went to the moment
        assert found["left"] == pytest.approx(100 * moment["start"] / 30, abs=0.5)  # placed on a 30 s bar
        spoken = page.evaluate(CLICKED, ".mark.speech")
        assert spoken["at"] == pytest.approx(spoken["start"], abs=0.3)
        assert "said:" in page.locator(".mark.speech").first.get_attribute("title")
        assert f"{answer['usage']['seconds']:.1f} s" in page.inner_text("body")  # the same time the command gives
        assert page.errors == []
