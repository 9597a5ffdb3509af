"""The web app of `serve`, used as a person uses it, in a real headless Chromium: index a folder from the page,
search, ask, and click a found moment; the player is at that moment. The screenshots in docs/ are taken here
(``MARLIN_SCREENSHOTS=docs`` writes them there)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, CLICKED, FLAGS, NEEDS_CHROMIUM
from tests.serve_process import serve_process

pytestmark = NEEDS_CHROMIUM
REPO = Path(__file__).resolve().parents[1]

# Every thumbnail on the page has loaded a picture.
THUMBNAILS_LOADED = """() => Promise.all([...document.querySelectorAll('.card img')].map(img => img.complete
  ? img.naturalWidth : new Promise(r => { img.onload = () => r(img.naturalWidth); img.onerror = () => r(0); })))"""


def _shot(page, name: str, tmp_path: Path) -> None:
    folder = REPO / os.environ["MARLIN_SCREENSHOTS"] if os.environ.get("MARLIN_SCREENSHOTS") else tmp_path
    page.screenshot(path=str(folder / f"serve-{name}.png"), full_page=True)


def _finished(page, kind: str) -> None:
    """The job page a form led to, once its job ended (the page reloads itself when the job's events say so)."""
    page.wait_for_url(f"**/jobs/{kind}-*")
    page.wait_for_selector(".job[data-job]", state="detached", timeout=240_000)


def test_index_search_ask_and_click_a_moment_in_the_web_app(library_env, root, make_footage, tmp_path):
    from playwright.sync_api import sync_playwright

    shutil.copy(make_footage("garden", duration=12, backdrop="field", events=[
        {"colour": "yellow", "shape": "triangle", "start": 3, "end": 7}]), root / "garden.mp4")
    process, address, _ = serve_process(library_env, root)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda message: message.type == "error" and errors.append(message.text))

            page.goto(address)
            assert "Nothing indexed yet" in page.inner_text("main")
            page.fill('form.inline input[name="path"]', str(root))
            page.click("form.inline button")
            _finished(page, "index")
            assert '"videos_new": 2' in page.inner_text("main")

            page.goto(address)
            assert page.locator(".card").count() == 2
            assert all(width > 0 for width in page.evaluate(THUMBNAILS_LOADED))
            _shot(page, "library", tmp_path)

            page.fill('input[name="q"]', "a yellow triangle")
            page.press('input[name="q"]', "Enter")
            page.wait_for_url("**/search?q=*")
            first = page.locator(".card").first
            assert "garden" in first.inner_text() and "triangle" in first.inner_text()
            assert all(width > 0 for width in page.evaluate(THUMBNAILS_LOADED))
            _shot(page, "search", tmp_path)

            first.click()  # the video's page, its player opened at the hit
            page.wait_for_url("**/videos/*")
            _shot(page, "video", tmp_path)

            page.fill('input[name="question"]', "when does the yellow triangle appear")
            page.press('input[name="question"]', "Enter")
            _finished(page, "ask")
            assert "Found:" in page.inner_text(".verdict")
            start = float(page.locator(".mark.found").first.get_attribute("data-start"))
            clicked = page.evaluate(CLICKED, ".mark.found")
            assert clicked["at"] == pytest.approx(start, abs=0.3)  # the player is at the moment
            assert 2.5 <= start <= 3.5
            _shot(page, "answer", tmp_path)

            page.goto(f"{address}jobs")
            assert page.locator("tr").count() == 4  # a header, then the index, the search and the ask
            page.goto(f"{address}watch")
            assert "No standing questions" in page.inner_text("main")
            assert errors == []
            browser.close()
    finally:
        process.terminate()
        process.wait(30)
