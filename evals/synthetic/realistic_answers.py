"""How the simulated Marlin answers about realistic-world footage, given what it saw.

It behaves like a grounding and captioning model, not like the verifier would like:
- captions word each event a little differently every time a clip is captioned, with times
  a few tenths of a second off, and leave out events that are barely on screen;
- find always answers. It reads the request the way a model does, by meaning (MiniLM
  similarity between the request and what it saw), and lands on the most similar event in
  the clip, the same one in any window, whether or not that is what was asked for (the
  courier arriving, for "the courier leaving"). Now and then it trims the span (a near
  miss), and when nothing on screen is alike, or on an unlucky request, it invents a span
  placed relative to the clip, which moves when the window does;
- it never hears the soundtrack, so things only said are grounded on whatever is on screen.
It knows the scenes only through ``scenes.shown`` (what the footage shows): never the
questions or negatives the evals ask.
"""

from __future__ import annotations

import hashlib
import random
import tempfile
import threading
from pathlib import Path

import numpy as np

from evals.synthetic.scenes import shown
from evals.synthetic.vision import Observation, Sighting

_MIN_VISIBLE = 1.0  # seconds on screen before a captioner mentions an event
_ALIKE = 0.3  # below this similarity nothing on screen resembles the request
_INVENT_SHARE = 0.06
_TRIM_SHARE = 0.15

_model = None
_vectors: dict[str, np.ndarray] = {}  # the world's wordings recur in every request
_lock = threading.Lock()


def _embed(texts: list[str]) -> np.ndarray:
    """MiniLM sentence vectors (unit length) from the same ONNX export the library's tests use: a
    model that reads by meaning, not the verifier's words. Each text is embedded alone, so a text's
    vector never depends on what it was batched with (int8 exports quantise a batch together)."""
    global _model
    with _lock:
        if _model is None:
            from evals.synthetic.offline_models import minilm_dir
            from marlin_agent.library.embeddings import Embedder

            _model = Embedder(str(minilm_dir()), Path(tempfile.gettempdir()))
        for text in texts:
            if text not in _vectors:
                _vectors[text] = _model.embed([text])[0]
        return np.vstack([_vectors[text] for text in texts])


def _rng(*parts: object) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big"))


def _fmt(seconds: float) -> str:
    return f"{max(0.0, seconds):.1f}"


def caption_text(observation: Observation, clip_key: str, scale: float) -> str:
    """``Scene:`` then ``Events:``; ``clip_key`` makes each distinct clip worded its own way."""
    world = shown(observation.scene)
    rng = _rng("caption", clip_key)
    lines = [f"Scene: {rng.choice(world.paragraphs)}", "Events:"]
    seen = [s for s in observation.sightings if s.end - s.start >= _MIN_VISIBLE and s.event in world.captions]
    for sighting in seen:
        start = sighting.start + rng.uniform(-0.3, 0.3)
        end = sighting.end + rng.uniform(-0.3, 0.3)
        lines.append(f"<{_fmt(start * scale)} - {_fmt(min(observation.duration, end) * scale)}> "
                     f"{rng.choice(world.captions[sighting.event])}")
    if not seen:
        lines.append(f"<0.0 - {_fmt(observation.duration * scale)}> Nothing notable happens; the view stays the same.")
    return "\n".join(lines)


def _most_alike(observation: Observation, request: str) -> tuple[Sighting | None, float]:
    world = shown(observation.scene)
    candidates = [s for s in observation.sightings if s.event in world.captions]
    if not candidates:
        return None, 0.0
    texts = [text for s in candidates for text in world.captions[s.event]]
    vectors = _embed([request, *texts])
    scores = vectors[1:] @ vectors[0]
    best, best_score, at = None, -1.0, 0
    for sighting in candidates:
        score = float(scores[at: at + len(world.captions[sighting.event])].max())
        at += len(world.captions[sighting.event])
        if score > best_score:
            best, best_score = sighting, score
    return best, best_score


def find_text(observation: Observation, request: str, scale: float) -> str:
    sighting, similarity = _most_alike(observation, request)
    luck = _rng("find", observation.scene, request)
    if sighting is None or similarity < _ALIKE or luck.random() < _INVENT_SHARE:
        # Invented: placed relative to the clip, so a shifted window moves it.
        rng = _rng("invent", request, round(observation.duration, 1))
        length = observation.duration * rng.uniform(0.08, 0.2)
        start = rng.uniform(0, observation.duration - length)
        end = start + length
    else:
        rng = _rng("span", request, sighting.event)
        start, end = sighting.start + rng.uniform(-0.4, 0.4), sighting.end + rng.uniform(-0.4, 0.4)
        if luck.random() < _TRIM_SHARE:
            start += (end - start) * 0.25
    return f"From {_fmt(start * scale)} to {_fmt(min(observation.duration, end) * scale)}."


def off_contract_text(observation: Observation) -> str:
    world = shown(observation.scene)
    return f"This video shows this: {world.paragraphs[0]}"
