"""Synthetic eval suites in TimeLens-Bench's own file format, generated on the fly.

Each suite is a folder ``videos/<video_id>.mp4`` plus ``<name>.json`` annotations
(``{video_id: {"duration", "spans", "queries"}}``, plus ``"negatives"`` for the presence
suite: events known not to happen in that video), so the same ``marlin-agent eval``
commands that score the real benchmark score these. Videos are short and small so a
suite runs in CI; a few are longer than one 60 s chunk so chunking is exercised too.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from evals.synthetic.footage import FootageSpec, SyntheticEvent, load_truth, make_video
from evals.synthetic.palette import BACKDROPS, MOTIONS, OBJECT_COLOURS, SHAPES, describe


def _events(rng: random.Random, duration: float, count: int) -> list[SyntheticEvent]:
    colours = rng.sample(list(OBJECT_COLOURS), count)
    slots = sorted(rng.sample(range(int(duration // 12)), count))
    events = []
    for colour, slot in zip(colours, slots, strict=False):
        start = slot * 12 + rng.uniform(1, 3)
        length = rng.uniform(4, 8)
        events.append(SyntheticEvent(colour=colour, shape=rng.choice(SHAPES), start=round(start, 1),
                                     end=round(min(duration - 0.5, start + length), 1), motion=rng.choice(MOTIONS)))
    return events


def phrase(rng: random.Random, colour: str, shape: str, motion: str) -> str:
    """A query the way people write them: the caption's own sentence, or just the object.

    Other words for the shape ("cone" for a triangle) are left out on purpose: the
    simulator's captions only ever say the geometric word, where a real captioner would
    name a cone a cone, so they would measure the synthetic vocabulary, not the agent.
    """
    return describe(colour, shape, motion) if rng.randrange(2) == 0 else f"the {colour} {shape}"


def _negatives(rng: random.Random, events: list[SyntheticEvent]) -> list[str]:
    """Events that do not happen in the video: one hard (a colour it shows, on another shape),
    one easy (a colour it never shows). Pairing queries across videos could pick a query that
    does happen ("a white circle appears" where a white circle crosses the screen)."""
    shown = {(e.colour, e.shape) for e in events}
    colour = rng.choice(events).colour
    hard = phrase(rng, colour, rng.choice([s for s in SHAPES if (colour, s) not in shown]), rng.choice(MOTIONS))
    unused = [c for c in OBJECT_COLOURS if c not in {e.colour for e in events}]
    easy = phrase(rng, rng.choice(unused), rng.choice(SHAPES), rng.choice(MOTIONS))
    return [hard, easy]


def grounding_suite(folder: Path, videos: int = 6, seed: int = 7, name: str = "synthetic-timelens") -> Path:
    """Write a suite of ``videos`` videos (1–2 events each) and return its annotation file."""
    rng = random.Random(seed)
    (folder / "videos").mkdir(parents=True, exist_ok=True)
    annotations = {}
    for n in range(videos):
        duration = rng.choice([24, 30, 36, 48, 90]) if n % 3 else 30
        events = _events(rng, duration, rng.choice([1, 2]))
        video_id = f"syn{seed:02d}{n:03d}"
        spec = FootageSpec(duration=duration, width=160, height=120, fps=6, backdrop=rng.choice(list(BACKDROPS)),
                           events=events)
        path = folder / "videos" / f"{video_id}.mp4"
        if not path.is_file() or load_truth(path) != spec:  # a cached video must be this very spec
            make_video(path, spec)
        annotations[video_id] = {"duration": float(duration), "spans": [[e.start, e.end] for e in events],
                                 "queries": [phrase(random.Random(seed * 7919 + n), e.colour, e.shape, e.motion)
                                             for e in events],
                                 "negatives": _negatives(random.Random(seed * 1000 + n), events)}
    target = folder / f"{name}.json"
    target.write_text(json.dumps(annotations, indent=1))
    return target


def extraction_labels(annotations: Path) -> Path:
    """Labelled rows for the ``objects`` schema (evals/synthetic/schemas/objects.json), one per
    video, from the suite's own truth files."""
    from evals.synthetic.footage import load_truth

    lines = []
    for video_id in json.loads(annotations.read_text()):
        truth = load_truth(annotations.parent / "videos" / f"{video_id}.mp4")
        objects = [{"colour": e.colour, "shape": e.shape, "motion": e.motion, "start": e.start, "end": e.end}
                   for e in truth.events]
        lines.append(json.dumps({"video_id": video_id, "data": {"objects": objects, "speech": False}}))
    target = annotations.with_name(annotations.stem + "-objects.jsonl")
    target.write_text("\n".join(lines) + "\n")
    return target
