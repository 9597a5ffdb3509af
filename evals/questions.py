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

from evals.synthetic.footage import standard_library
from evals.synthetic.offline_models import minilm_dir, nli_dir
from evals.synthetic.realistic import realistic_suite
from evals.synthetic.scenes import scenes
from evals.synthetic.simulator import MarlinSimulator
from marlin_agent.config import load_settings
from marlin_agent.evaluation.forms_eval import FormQuestion, form_figures, run_questions

Item = FormQuestion  # the package's own: ``marlin-agent eval questions --data`` reads the same shape
TOY_VIDEOS = ("short_field", "long_street", "vertical_night")


def toy_items() -> list[Item]:
    """Every form over the three toy videos (videos are ordered by title for first and last), in the wordings
    people use."""
    red, blue = ("short_field", 4.0, 9.0), ("short_field", 12.5, 20.0)
    yellow, square = ("long_street", 15.0, 22.0), ("long_street", 70.0, 78.0)
    white, purple = ("long_street", 131.0, 140.0), ("long_street", 185.0, 193.0)
    night = ("vertical_night", 10.0, 16.0)
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
        i("how many squares appear?", "count", count=3),
        i("how many times does a purple triangle appear?", "count", count=0),
        i("how many times does the white circle appear?", "count", count=1),
        i("every time a square appears", "every", [square, blue, night]),
        i("every time a circle appears", "every", [white, purple, red]),
        i("the first time a circle appears", "first", [white]),
        i("the last time a circle appears", "last", [red]),
        i("when does the red square first appear", "first", [square]),
        i("how long does the red square stay on screen", "duration", [square], duration=8.0),
        i("how long does the blue square stay on screen?", "duration", [blue], duration=7.5),
        i("when does the yellow triangle appear?", "when", [yellow]),
        i("when is the purple circle on screen?", "when", [purple]),
        i("when does a green star appear", "when"),
        i("when does the white square appear", "when", [night], scope="vertical_night"),
        i("every time a triangle appears", "every", [yellow]),
        i("every time a green circle appears", "every"),
        i("how many times does the blue square appear?", "count", count=1),
        i("how many white squares appear?", "count", count=1),
        i("how many triangles are there?", "count", count=1),
        i("how many times does a green star appear", "count", count=0),
        i("the first time a square appears", "first", [square]),
        i("the last time a square appears", "last", [night]),
        i("the first time a circle appears", "first", [red], scope="short_field"),
        i("what happens before the white circle?", "before", [square]),
        i("what happens after the red circle appears?", "after", [blue], scope="short_field"),
        i("what comes after the purple circle?", "after"),
        i("what happens between the red square and the purple circle", "between", [white]),
        i("what happens before a green elephant appears", "before"),
        i("how long is the white circle on screen?", "duration", [white], duration=9.0),
        i("how long does the yellow triangle stay on screen", "duration", [yellow], duration=7.0),
        i("how long is the white square visible?", "duration", [night], duration=6.0, scope="vertical_night"),
        i("how many red circles appear?", "count", count=1),
        # Kinds and ways of moving: the captions say "glides", "drifts", "shows up" as often as "moves".
        i("the last time a shape moves across the screen", "last", [blue]),
        i("the first time a shape moves across the screen", "first", [square]),
        i("how many times does a shape move across the screen?", "count", count=2),
        i("every time a red shape appears", "every", [square, red]),
        i("how many red shapes appear?", "count", count=2),
        i("every time something red appears", "every", [square, red]),
        i("how many shapes appear?", "count", count=1, scope="vertical_night"),
        i("how long is the blue square on screen", "duration", [blue], duration=7.5),
        i("when does a shape slide from right to left?", "when", [square]),
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


def scene_parts(rows: list[dict]) -> dict:
    """The realistic part's figures for the scenes held out before the unseen ten and for the unseen six apart,
    so that a figure stays comparable with the ones measured before those scenes were added."""
    from evals.synthetic.scenes_unseen import UNSEEN

    unseen = {scene.name for scene in UNSEEN}
    realistic = [row for row in rows if row["world"] == "realistic"]
    parts = {"realistic-earlier": [row for row in realistic if row["scope"] not in unseen],
             "realistic-unseen": [row for row in realistic if row["scope"] in unseen]}
    return {name: form_figures(chosen, name).model_dump() for name, chosen in parts.items() if chosen}


async def run_world(items: list[Item], folder: Path, env: dict, out: Path, concurrency: int | None = None,
                    quiet: bool = False) -> list[dict]:
    from marlin_agent.indexing.run import index_inputs

    overrides = {"library.transcribe": False} | ({"server.concurrency": concurrency} if concurrency else {})
    settings = load_settings(overrides, env=env)
    await index_inputs([str(folder)], settings)

    def said(row: dict) -> None:
        print(("ok   " if row["right"] else "MISS ") + row["question"] + " -> " + row["answer"][:140], flush=True)

    _, rows = await run_questions(items, folder, settings, out, items[0].world if items else "",
                                  on_row=None if quiet else said)
    return rows


def stability(items: list[Item], folder: Path, env: dict, runs: int) -> dict:
    """The same questions over the same footage ``runs`` times at each of concurrency 1 and 8, every run
    indexed afresh in its own home: which answers differ in anything but their clock (``answer_digest``)."""
    digests: dict[str, set[str]] = {}
    for concurrency in (1, 8):
        for run in range(runs):
            with tempfile.TemporaryDirectory() as home:
                rows = asyncio.run(run_world(items, folder, env | {"MARLIN_HOME": home}, Path(home) / "out",
                                             concurrency=concurrency, quiet=True))
            for row in rows:
                digests.setdefault(f"{row['question']}|{row['scope']}", set()).add(row["digest"])
            print(f"stability: concurrency {concurrency}, run {run + 1} done", flush=True)
    differing = sorted(key for key, seen in digests.items() if len(seen) > 1)
    return {"runs_per_concurrency": runs, "concurrency": [1, 8], "questions": len(digests),
            "identical": len(digests) - len(differing), "differing": differing}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("evals/results"))
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "marlin-evals")
    parser.add_argument("--world", choices=("toy", "realistic"), action="append",
                        help="only this world (repeatable; default both)")
    parser.add_argument("--stability", type=int, default=0, metavar="RUNS",
                        help="also ask the toy matrix RUNS times at concurrency 1 and at 8, each indexed afresh, "
                             "and report the answers that differ in anything but their times")
    args = parser.parse_args()
    worlds_asked = args.world or ["toy", "realistic"]
    worlds = args.cache / "questions"
    toy = worlds / "toy"
    toy.mkdir(parents=True, exist_ok=True)
    made = standard_library(worlds / "toy-all")
    for name in TOY_VIDEOS:
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
    suites = {"toy": toy_items(), "realistic": realistic_items(spans_of)}
    for world, items in suites.items():  # the files `marlin-agent eval questions --data` reads
        (worlds / f"{world}-questions.json").write_text(json.dumps([item.model_dump() for item in items], indent=1))
    # Toy clips worded as a captioner words them, each with its own verbs ("glides", "shows up").
    with MarlinSimulator(wording="varied") as simulator, tempfile.TemporaryDirectory() as home:
        env = {"MARLIN_HOME": home, "MARLIN_BASE_URL": simulator.base_url, "MARLIN_EMBED_MODEL": str(minilm_dir()),
               "MARLIN_VERIFY_MODEL": str(nli_dir(models)), "MARLIN_PLANNER": "pipeline"}
        folders = {"toy": toy, "realistic": worlds / "realistic" / "videos"}
        rows = []
        for world in worlds_asked:
            rows += asyncio.run(run_world(suites[world], folders[world], env, Path(home) / world))
        report = {world: form_figures([r for r in rows if r["world"] == world], world).model_dump()
                  for world in worlds_asked}
        report |= scene_parts(rows)
        if args.stability:
            report["stability"] = stability(suites["toy"], toy, env, args.stability)
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "questions.json").write_text(json.dumps({"summary": report, "rows": rows}, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
