"""A real headless Chromium for the page tests: where it is, how it is started on a closed network, and a
click on a timeline mark measured where the player lands."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.machine import needs

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# As the machine's notes advise for a closed network: no background connections, no first run.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--autoplay-policy=no-user-gesture-required"]
NEEDS_CHROMIUM = needs(Path(CHROMIUM).exists(), "Chromium", "apt-get install chromium")

CLICKED = """async (selector) => {
  const mark = document.querySelector(selector);
  const player = document.getElementById(mark.dataset.player);
  mark.click();
  for (let n = 0; n < 50 && (player.readyState < 1 || player.seeking || player.currentTime === 0); n++)
    await new Promise(r => setTimeout(r, 100));
  player.pause();
  return {start: parseFloat(mark.dataset.start), at: player.currentTime, left: parseFloat(mark.style.left)};
}"""
