"""Questions beyond "when", over both synthetic worlds: `python -m evals.questions`.

Every form the agent reads (every, count, first, last, before, after, between, duration), asked
the way people ask, with absent targets and absent anchors, scored against the worlds' truth:

- count: the number is exact;
- every: every occurrence is there (IoU >= 0.5) and nothing else;
- first, last, before, after, between: the first moment is the right event (IoU >= 0.5), and an
  absent target or anchor is "not found";
- duration: within 1.5 s of the truth;
- and, over all of them, how many were answered as a different form than asked (must be 0).

The toy world is the standard library (short_field, long_street); the realistic part is the
held-out scenes, questions built from each scene's own paraphrases and never-happening negatives.
Results go to evals/results/questions.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path

from pydantic import BaseModel

from evals.synthetic.footage import standard_library
from evals.synthetic.offline_models import minilm_dir, nli_dir
from evals.synthetic.realistic import realistic_suite
from evals.synthetic.scenes import scenes
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.config import load_settings
from marlin_agent.verification.signals import iou

Span = tuple[str, float, float]  # video stem, start, end


class Item(BaseModel):
    world: str
    question: str
    scope: str = ""  # the one video asked about (a scene's); empty: the whole folder
    form: str
    spans: list[Span] = []  # every/relations/first/last: the expected moments, in order; [] = not found
    count: int | None = None
    duration: float | None = None


def toy_items() -> list[Item]:
    red, blue = ("short_field", 4.0, 9.0), ("short_field", 12.5, 20.0)
    yellow, square = ("long_street", 15.0, 22.0), ("long_street", 70.0, 78.0)
    white, purple = ("long_street", 131.0, 140.0), ("long_street", 185.0, 193.0)
    i = lambda question, form, spans=(), **kw: Item(world="toy", question=question, form=form, spans=list(spans), **kw)  # noqa: E731
    return [
        i("what happens after the red circle?", "after", [blue]),
        i("what happens before the blue square?", "before", [red]),
        i("what happens after the yellow triangle appears?", "after", [square]),
        i("what happens before the red square?", "before", [yellow]),
        i("what comes after the white circle", "after", [purple]),
        i("what happens before the purple circle?", "before", [white]),
        i("what happens between the yellow triangle and the white circle", "between", [square]),
        i("what happens after a green elephant dances?", "after"),
        i("did a white circle appear after the red square?", "after", [white]),
        i("how many circles appear?", "count", count=3),
        i("how many squares appear?", "count", count=2),
        i("how many times does a purple triangle appear?", "count", count=0),
        i("how many times does the white circle appear?", "count", count=1),
        i("every time a square appears", "every", [square, blue]),
        i("every time a circle appears", "every", [white, purple, red]),
        i("the first time a circle appears", "first", [white]),
        i("the last time a circle appears", "last", [red]),
        i("when does the red square first appear", "first", [square]),
        i("how long does the red square stay on screen", "duration", [square], duration=8.0),
        i("how long does the blue square stay on screen?", "duration", [blue], duration=7.5),
    ]


def realistic_items(spans_of: dict[str, dict[int, tuple[float, float]]]) -> list[Item]:
    items = []
    for scene in scenes("heldout"):
        visual = [(n, e) for n, e in enumerate(scene.events) if not e.spoken]
        truth = spans_of[scene.name]

        def span(n: int, name: str = scene.name, truth: dict = truth) -> tuple:
            return (name, *truth[n])

        for at, (_, event) in enumerate(visual):
            words = event.questions["paraphrase"]
            items.append(Item(world="realistic", scope=scene.name, question=f"how many times {words}?", form="count",
                              count=1))
            if at + 1 < len(visual):
                items.append(Item(world="realistic", scope=scene.name, question=f"what happens after {words}?",
                                  form="after", spans=[span(visual[at + 1][0])]))
            if at > 0:
                items.append(Item(world="realistic", scope=scene.name, question=f"what happens before {words}?",
                                  form="before", spans=[span(visual[at - 1][0])]))
        # A negative never happens in its own scene (another scene may show it): asked of that video alone.
        never = scene.negatives["never"]
        items.append(Item(world="realistic", scope=scene.name, question=f"how many times {never}?", form="count",
                          count=0))
        items.append(Item(world="realistic", scope=scene.name, question=f"what happens after {never}?", form="after"))
    return items


def right(item: Item, answer) -> bool:
    spans = [(Path(m.video.path).stem, m.start, m.end) for m in answer.moments]

    def same(a: Span, b: Span) -> bool:
        return a[0] == b[0] and iou(a[1:], b[1:]) >= 0.5

    if answer.form != item.form:
        return False
    if item.form == "count":
        return answer.count == item.count
    if item.form == "duration":
        return answer.duration is not None and abs(answer.duration - item.duration) <= 1.5
    if not item.spans:
        return not answer.found
    if item.form == "every":
        return len(spans) == len(item.spans) and all(any(same(s, t) for s in spans) for t in item.spans)
    return bool(spans) and same(spans[0], item.spans[0])


async def run_world(items: list[Item], folder: Path, env: dict) -> list[dict]:
    from marlin_agent.app.ask import ask
    from marlin_agent.indexing.run import index_inputs

    settings = load_settings({"library.transcribe": False}, env=env)
    await index_inputs([str(folder)], settings)
    rows = []
    for item in items:
        scope = folder / f"{item.scope}.mp4" if item.scope else folder
        answer = await ask(item.question, [str(scope)], settings)
        rows.append({"world": item.world, "scope": item.scope, "question": item.question, "form": item.form, "answered_form": answer.form,
                     "right": right(item, answer), "answer": answer.answer, "count": answer.count,
                     "moments": [[Path(m.video.path).stem, m.start, m.end] for m in answer.moments]})
        print(("ok   " if rows[-1]["right"] else "MISS ") + item.question + " -> " + answer.answer[:140], flush=True)
    return rows


def score(rows: list[dict]) -> dict:
    by_form: dict[str, list[bool]] = {}
    for row in rows:
        by_form.setdefault(row["form"], []).append(row["right"])
    return {"questions": len(rows), "right": round(sum(r["right"] for r in rows) / max(1, len(rows)), 3),
            "different_form": sum(r["answered_form"] != r["form"] for r in rows),
            "by_form": {form: f"{sum(v)}/{len(v)}" for form, v in sorted(by_form.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("evals/results"))
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "marlin-evals")
    args = parser.parse_args()
    worlds = args.cache / "questions"
    toy = worlds / "toy"
    toy.mkdir(parents=True, exist_ok=True)
    made = standard_library(worlds / "toy-all")
    for name in ("short_field", "long_street"):
        target = toy / f"{name}.mp4"
        if not target.exists():
            target.symlink_to(made[name])
    realistic_suite(worlds / "realistic", "heldout")
    spans_of = {}
    for scene in scenes("heldout"):
        stamp = json.loads((worlds / "realistic" / "videos" / f"{scene.name}.spans.json").read_text())
        spans_of[scene.name] = {int(k): tuple(v) for k, v in stamp["spans"].items()}
    models = args.cache / "models"
    models.mkdir(parents=True, exist_ok=True)
    with MarlinSimulator() as simulator, tempfile.TemporaryDirectory() as home:
        env = {"MARLIN_HOME": home, "MARLIN_BASE_URL": simulator.base_url, "MARLIN_EMBED_MODEL": str(minilm_dir()),
               "MARLIN_VERIFY_MODEL": str(nli_dir(models)), "MARLIN_PLANNER": "pipeline"}
        rows = asyncio.run(run_world(toy_items(), toy, env))
        rows += asyncio.run(run_world(realistic_items(spans_of), worlds / "realistic" / "videos", env))
    report = {world: score([r for r in rows if r["world"] == world]) for world in ("toy", "realistic")}
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "questions.json").write_text(json.dumps({"summary": report, "rows": rows}, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
