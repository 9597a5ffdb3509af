"""The verification judge, measured with a real model: ``python -m evals.real_models.judge``.

Every candidate of the shipped calibration set and of the held-out set (texts and labels, see
``marlin_agent/verification/calibration_set.py``) is read by the real model as the judge reads a
span in a run: the event, and Marlin's fresh caption of the span (the caption events over it where
the recorded run took none). Its verdicts replace the scripted judge's; the judge's weight is fitted
on the calibration part, and both parts are scored four ways:

- ``none``: no judge (the pipeline planner without an LLM);
- ``lowers``: the judge may only lower a confidence (the rule shipped until now);
- ``lifts``: it may also raise one, but only where a caption or the fresh caption already reads like
  the event (its likeness at least the act rule's level; the entailment model's reading only where no
  likeness was measured: ``verifier.reads_like``) and no text over the span speaks to its reader;
- ``only-lifts``: it raises one there and never lowers one (a "not shown" changes nothing).

The calibration part's figures are over the questions whose candidates the judge read all of.

Verdicts are cached in ``<cache>/real-models/judge/<server>.jsonl`` by what the judge read (a stopped run
resumes; a rebuilt set asks again only what is new).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import hashlib
import json
from pathlib import Path

from evals.real_models.server import ServedModel, add_server_arguments, served_from
from evals.synthetic.offline_models import minilm_dir, nli_dir
from marlin_agent.config import load_settings
from marlin_agent.verification.calibration import Calibration
from marlin_agent.verification.calibration_set import CalibrationSet, SetEntry, figures_at, load_set, read_again
from marlin_agent.verification.confidence import features
from marlin_agent.verification.fitting import FitQuestion, auc, fit_calibration

HELDOUT = Path(__file__).parent.parent / "synthetic" / "heldout-set.json.gz"


def _caption(calibration_set: CalibrationSet, entry: SetEntry):
    from marlin_agent.domain import Event, VideoRef
    from marlin_agent.tools import SpanCaption

    rows = entry.fresh or [r for r in calibration_set.videos[entry.video]
                           if r[1] > entry.span[0] and r[0] < entry.span[1]]
    return SpanCaption(video=VideoRef(id="v", path="", title="v"), start=entry.span[0], end=entry.span[1], scenes=[],
                       events=[Event(start=a, end=b, text=t) for a, b, t in rows], fresh=True)


async def verdicts(served: ServedModel, sets: dict[str, CalibrationSet], cache: Path,
                   limit: int) -> dict[tuple[str, int], float]:
    from pydantic_ai import RunUsage

    from marlin_agent.config import PlannerSettings
    from marlin_agent.llm.models import planner_llm
    from marlin_agent.planners.llm import PlannerJudge

    read: dict[str, float] = {}  # by what the judge read (a rebuilt set numbers its entries anew)
    if cache.exists():
        for row in map(json.loads, cache.read_text().splitlines()):
            if "read" in row:
                read[row["read"]] = row["score"]
    llm = planner_llm(PlannerSettings(model=served.model, base_url=served.base_url), cache.parent)
    done: dict[tuple[str, int], float] = {}
    for part, chosen in sets.items():
        for number, entry in enumerate(chosen.entries):
            if part == "calibration" and number >= limit:
                continue
            caption = _caption(chosen, entry)
            key = _read_key(entry.event, caption)
            if key not in read:
                score, reason = await _judged(PlannerJudge(llm, RunUsage(), 1_000_000, 120.0), entry.event, caption,
                                              f"{part} {number}")
                read[key] = score
                with cache.open("a") as out:
                    out.write(json.dumps({"read": key, "part": part, "entry": number, "score": score,
                                          "reason": reason[:200]}) + "\n")
                print(f"{part} {number}/{len(chosen.entries)} {score:.2f} {entry.event[:50]!r}", flush=True)
            done[(part, number)] = read[key]
    return done


async def _judged(judge, event: str, caption, where: str, tries: int = 3) -> tuple[float, str]:
    """The judge's verdict, asked again when the server took too long (a machine busy with other work slows a CPU
    server past the request's limit; the server is still there): one slow answer does not end an hour's run."""
    from marlin_agent.errors import PlannerError

    for attempt in range(1, tries):
        try:
            return await judge(event, caption)
        except PlannerError as exc:
            print(f"{where}: {exc.message}; asking again ({attempt}/{tries - 1})", flush=True)
    return await judge(event, caption)


def _read_key(event: str, caption) -> str:
    """What a verdict was given on: the event and the caption's times and words."""
    shown = [event, caption.start, caption.end, [(e.start, e.end, e.text) for e in caption.events]]
    return hashlib.sha256(json.dumps(shown).encode()).hexdigest()[:20]


def judged(questions: list[FitQuestion], calibration_set: CalibrationSet, part: str,
           scores: dict[tuple[str, int], float]) -> list[FitQuestion]:
    """``questions`` with each candidate's judge feature the real model's verdict."""
    out = []
    for question, raw in zip(questions, calibration_set.questions, strict=True):
        if not all((part, r.entry) in scores for r in raw.candidates):
            continue  # a question whose candidates were not all judged (a limited run) is left out whole
        candidates = [c.model_copy(update={"features": {**c.features, "judge": 2 * scores[(part, r.entry)] - 1}})
                      for c, r in zip(question.candidates, raw.candidates, strict=True)]
        out.append(question.model_copy(update={"candidates": candidates}))
    return out


def judge_weight(questions: list[FitQuestion], base) -> float:
    """The judge's weight fitted on top of ``base`` (its logit held fixed), never below 0."""
    from marlin_agent.verification.confidence import fit

    samples = [(c.features, q.present and c.on_span) for q in questions for c in q.candidates]
    offsets = [base.bias + sum(base.weights.get(k, 0.0) * v for k, v in f.items() if k != "judge") for f, _ in samples]
    weights, _ = fit([f for f, _ in samples], [label for _, label in samples], ("judge",), offsets=offsets,
                     with_bias=False)
    return max(0.0, weights["judge"])


def score_ways(heldout: list[FitQuestion], calibration: Calibration) -> dict:
    from marlin_agent.verification.fitting import decided, point
    from marlin_agent.verification.verifier import combined

    def with_rule(rule: str):
        return lambda c: combined(c.features, calibration, c.speech, rule)

    t = calibration.threshold
    return {"none": figures_at(heldout, calibration).model_dump(),
            **{rule: point(decided(heldout, t, with_rule(rule)), t).model_dump()
               for rule in ("lowers", "lifts", "only-lifts")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_server_arguments(parser)
    parser.add_argument("--calibration-entries", type=int, default=10_000,
                        help="judge only the first N texts of the calibration set (the judge's weight is fitted on the "
                             "questions whose candidates were all judged)")
    args = parser.parse_args()
    served = served_from(args)
    sets = {"calibration": load_set(), "heldout": load_set(HELDOUT)}
    cache = args.cache / "real-models" / "judge" / f"{served.server.split(' ')[0].strip('()')}.jsonl"
    cache.parent.mkdir(parents=True, exist_ok=True)
    try:
        scores = asyncio.run(verdicts(served, sets, cache, args.calibration_entries))
    finally:
        served.stop()
    models = args.cache / "real-models" / "models"
    models.mkdir(parents=True, exist_ok=True)
    settings = load_settings(env={"MARLIN_EMBED_MODEL": str(minilm_dir()), "MARLIN_VERIFY_MODEL": str(nli_dir(models)),
                                  "MARLIN_HOME": str(args.cache / "real-models" / "judge-home")})
    from marlin_agent.library.embeddings import shared_embedder
    from marlin_agent.verification.verifier import Verifier

    verifier = Verifier(settings, lambda: shared_embedder(settings.library.embed_model, settings.cache_dir / "models",
                                                          settings.graphs_dir))
    plain = {part: [q.model_copy(update={"candidates": [c.model_copy(update={"features": {
        k: v for k, v in c.features.items() if k != "judge"}}) for c in q.candidates]})
        for q in read_again(chosen, lambda texts: features(verifier.read(texts)))] for part, chosen in sets.items()}
    read = {part: judged(plain[part], chosen, part, scores) for part, chosen in sets.items()}
    # The other weights and the threshold are fitted on the whole calibration part without a judge (the shipped
    # fit, read again); the real judge's weight on top of them, on the questions it judged, as run_synthetic
    # fits the scripted judge's.
    base = fit_calibration(plain["calibration"])
    weights = {**base.weights, "judge": judge_weight(read["calibration"], base)}
    calibration = Calibration(model="test", weights=weights, bias=base.bias, threshold=base.threshold)
    right = [s for (part, n), s in scores.items()]
    summary = {"date": datetime.date.today().isoformat(), "server": served.server, "model": served.model,
               "verdicts": len(right),
               "calibration_questions_judged": len(read["calibration"]), "heldout_questions": len(read["heldout"]),
               "judge_weight": weights["judge"], "threshold": base.threshold,
               "judge_auc_calibration": auc([c.features["judge"] for q in read["calibration"] for c in q.candidates
                                              if q.present and c.on_span],
                                             [c.features["judge"] for q in read["calibration"] for c in q.candidates
                                              if not (q.present and c.on_span)]),
               "calibration": score_ways(read["calibration"], calibration),
               "heldout": score_ways(read["heldout"], calibration)}
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "real_judge.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
