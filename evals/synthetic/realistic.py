"""Footage and eval suites for the realistic-language world (``scenes.py``).

Each scene becomes a small MP4: its backdrop, a strip saying which event is on screen
(``barcode.py``) and, where the scene has them, spoken lines (espeak-ng) on the soundtrack.
The suite file is in TimeLens-Bench's format plus the kinds this world labels:
``{video_id: {"duration", "spans", "queries", "query_kinds", "negatives", "negative_kinds",
"footage"}}``. Spans of spoken events are where the speech really is (measured when the
audio is made), not where the script hoped it would be.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evals.synthetic import barcode
from evals.synthetic.footage import FootageSpec, SpeechLine, write_mp4
from evals.synthetic.scenes import WORLD, Scene, scenes

# Lines said on the soundtrack that are nobody's event: real talk has filler.
_CHATTER = {
    "meeting_budget": [SpeechLine(text="Okay, can everyone see my screen?", start=45.0)],
    "bakery_bread": [SpeechLine(text="This is my favourite recipe.", start=38.0)],
    "lecture_volcano": [SpeechLine(text="Thank you all for coming tonight.", start=47.0)],
}
WIDTH, HEIGHT, FPS = 160, 120, 4.0


def _spec(scene: Scene) -> FootageSpec:
    speech = [SpeechLine(text=e.said, start=e.start) for e in scene.events if e.spoken]
    speech += _CHATTER.get(scene.name, [])
    return FootageSpec(duration=scene.duration, width=WIDTH, height=HEIGHT, fps=FPS, speech=speech)


def _painter(scene: Scene):
    number = WORLD.index(scene) + 1
    visual = [(n + 1, e) for n, e in enumerate(scene.events) if not e.spoken]
    base = np.empty((HEIGHT, WIDTH, 3), dtype=np.uint8)
    base[:] = scene.backdrop

    def paint(t: float) -> np.ndarray:
        showing = next((n for n, e in visual if e.start <= t < e.end), 0)
        return barcode.paint(base.copy(), number, showing)

    return paint


def make_scene_video(path: Path, scene: Scene) -> dict[int, tuple[float, float]]:
    """Write ``scene`` at ``path``; return the true span of every event, spoken ones as measured."""
    spoken = write_mp4(path, _spec(scene), _painter(scene))
    said = {line.text: (line.start, line.end) for line in spoken}
    return {n: (said[e.said] if e.spoken else (e.start, e.end)) for n, e in enumerate(scene.events)}


def realistic_suite(folder: Path, part: str = "all", name: str | None = None,
                    only: tuple[str, ...] | None = None) -> Path:
    """Write the videos of ``part`` (calibration, heldout, all), or of the scenes named in ``only`` among them,
    and the suite file; return its path.

    Videos already written for the same scene are reused (a scene's footage never changes
    unless its script does, and the spans file beside it says which script made it).
    """
    (folder / "videos").mkdir(parents=True, exist_ok=True)
    annotations = {}
    for scene in scenes(part):
        if only is not None and scene.name not in only:
            continue
        path = folder / "videos" / f"{scene.name}.mp4"
        stamp = path.with_suffix(".spans.json")
        script = scene.model_dump_json()
        cached = json.loads(stamp.read_text()) if stamp.is_file() and path.is_file() else None
        if cached is None or cached["script"] != script:
            spans = make_scene_video(path, scene)
            stamp.write_text(json.dumps({"script": script, "spans": {str(k): v for k, v in spans.items()}}))
        else:
            spans = {int(k): tuple(v) for k, v in cached["spans"].items()}
        entry = {"duration": float(scene.duration), "footage": scene.kind, "spans": [], "queries": [],
                 "query_kinds": [], "spoken": [], "negatives": [], "negative_kinds": []}
        for n, event in enumerate(scene.events):
            for kind, text in event.questions.items():
                entry["spans"].append([round(spans[n][0], 3), round(spans[n][1], 3)])
                entry["queries"].append(text)
                entry["query_kinds"].append(kind)
                entry["spoken"].append(event.spoken)
        for kind, text in scene.negatives.items():
            entry["negatives"].append(text)
            entry["negative_kinds"].append(kind)
        annotations[scene.name] = entry
    target = folder / f"{name or 'realistic-' + part}.json"
    target.write_text(json.dumps(annotations, indent=1))
    return target
