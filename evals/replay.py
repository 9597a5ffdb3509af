"""Replay verification: every candidate of the realistic world's runs read again by the signals as they are now.

A change to a signal (a WordNet rule, another entailment model, a new signal module) is measured in a minute or
two instead of a whole ``evals.run_synthetic``: the runs are recorded once with a journal of what every
verification read (the event, the span, the descriptions and lines around it, see
``marlin_agent.verification.journal``); the replay reads each logged candidate again with the verifier this
checkout builds, keeps what only Marlin or the judge could say (``regrounding``, ``judge``), refits on the
calibration part as ``run_synthetic`` does and reports the held-out part, with every question whose answer
changed against the recorded code and its own fit.

    python -m evals.replay record     # the runs, with the journal (about four minutes; ships and writes nothing)
    python -m evals.replay            # read them again, refit, report
    MARLIN_VERIFY_MODEL=/path/to/nli python -m evals.replay    # the same candidates under another model

What it cannot replay: a change that would make Marlin's find land elsewhere, or make the planner verify
other spans (which candidates exist is the recorded run's). Those need ``run_synthetic``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from marlin_agent.config import Settings, load_settings
from marlin_agent.evaluation import presence
from marlin_agent.evaluation.presence import PresenceResult
from marlin_agent.verification.calibration import Calibration
from marlin_agent.verification.confidence import VERIFIER_KINDS, features
from marlin_agent.verification.fitting import scorer
from marlin_agent.verification.journal import JournalEntry, read_journal
from marlin_agent.verification.signals import SpanTexts
from marlin_agent.verification.verifier import Verifier

HOME = Path(".cache/evals/replay")
SUITE = Path(".cache/evals/suite-12")
JOURNAL = "journal.jsonl"
PARTS = {"calibration": "runs/calibration/presence.jsonl", "heldout": "runs/heldout/presence.jsonl"}
Reader = Callable[[SpanTexts], dict[str, float]]


@dataclass(frozen=True)
class Replayed:
    rows: list[PresenceResult]
    unmatched: int  # candidates no journal entry could be paired with (kept as recorded)


def _signal_features(found: dict[str, float]) -> frozenset[tuple[str, float]]:
    return frozenset((kind, value) for kind, value in found.items() if kind not in VERIFIER_KINDS)


def pair(rows: list[PresenceResult], entries: list[JournalEntry]) -> list[list[JournalEntry | None]]:
    """Each candidate's journal entry: one whose signal features are the candidate's (what the recorded code
    read from those texts), the nearest in span. Features, not spans, pair them: an answer reports a moment
    where the caption event that says it lies, which need not be the span that was read."""
    by_features: dict[frozenset, list[JournalEntry]] = defaultdict(list)
    for entry in entries:
        by_features[_signal_features(entry.features)].append(entry)

    def nearest(candidate) -> JournalEntry | None:
        same = by_features.get(_signal_features(candidate.features), [])
        return min(same, key=lambda e: abs(e.span[0] - candidate.start) + abs(e.span[1] - candidate.end),
                   default=None)
    return [[nearest(candidate) for candidate in row.candidates] for row in rows]


def reread(rows: list[PresenceResult], entries: list[JournalEntry], read: Reader) -> Replayed:
    """The rows with each candidate's signal features read again from its journal entry's texts."""
    memo: dict[int, dict[str, float]] = {}
    unmatched = 0
    out = []
    for row, matches in zip(rows, pair(rows, entries), strict=True):
        candidates = []
        for candidate, entry in zip(row.candidates, matches, strict=True):
            if entry is None:
                unmatched += 1
                candidates.append(candidate)
                continue
            if id(entry) not in memo:
                memo[id(entry)] = read(entry.texts())
            kept = {k: v for k, v in candidate.features.items() if k in VERIFIER_KINDS}
            candidates.append(candidate.model_copy(update={"features": {**memo[id(entry)], **kept}}))
        out.append(row.model_copy(update={"candidates": candidates}))
    return Replayed(rows=out, unmatched=unmatched)


def _calibration(rows: list[PresenceResult], name: str) -> Calibration:
    fitted = presence.fit_weights(rows)
    return Calibration(model=name, weights=fitted.weights, bias=fitted.bias, threshold=fitted.threshold)




def outcomes(rows: list[PresenceResult], calibration: Calibration) -> dict[tuple[str, str], bool]:
    """Per question (video, query): is the answer at the threshold right (found on the true span, or not found)?"""
    return {(row.video_id, row.query): right if row.present else not found
            for row, found, right in presence.decisions_at(rows, calibration.threshold, scorer(calibration))}


def compare(recorded: dict[str, list[PresenceResult]], replayed: dict[str, Replayed]) -> dict:
    """Refit on each calibration part (recorded and replayed); every part's figures now, and what changed."""
    before = _calibration(recorded["calibration"], "recorded")
    now = _calibration(replayed["calibration"].rows, "replayed")
    report: dict = {"threshold": now.threshold, "bias": now.bias, "weights": now.weights}
    for part, again in replayed.items():
        figures = presence.presence_report(again.rows, now.threshold, part, score=scorer(now))
        was, is_ = outcomes(recorded[part], before), outcomes(again.rows, now)
        report[part] = {
            "precision": figures.at_threshold.precision, "recall": figures.at_threshold.recall,
            "f1": figures.at_threshold.f1, "best": figures.best.model_dump(),
            "on_true_span": figures.found_at_true_span,
            "recall_by_kind": {k.kind: k.rate for k in figures.question_kinds},
            "balanced_precision": {k.kind: k.precision for k in figures.negative_kinds},
            "unmatched_candidates": again.unmatched,
            "now_right": [f"{video} | {query}" for (video, query), ok in is_.items() if ok and not was.get((video, query))],
            "now_wrong": [f"{video} | {query}" for (video, query), ok in is_.items() if not ok and was.get((video, query))],
        }
    return report


def settings_for(home: Path) -> Settings:
    """The settings the recorded runs verified with (the offline test models), unless the environment names others."""
    from evals.synthetic.offline_models import minilm_dir, nli_dir

    env = dict(os.environ)
    env.setdefault("MARLIN_HOME", str(home))
    env.setdefault("MARLIN_EMBED_MODEL", str(minilm_dir()))
    env.setdefault("MARLIN_VERIFY_MODEL", str(nli_dir(SUITE / "models")))
    env.pop("MARLIN_VERIFY_JOURNAL", None)
    return load_settings(env=env)


def record(home: Path) -> None:
    """The runs of ``evals.run_synthetic`` with a journal, into ``home``; nothing shipped, no results written."""
    from evals.run_synthetic import run_all

    home.mkdir(parents=True, exist_ok=True)
    (home / JOURNAL).unlink(missing_ok=True)
    shutil.rmtree(home / "runs", ignore_errors=True)  # a run resumes from its log: each must read again
    with tempfile.TemporaryDirectory() as results:
        run_all(SUITE, 12, Path(results), home, journal=home / JOURNAL, ship=False)


def replay(home: Path) -> dict:
    if not (home / JOURNAL).exists():
        raise SystemExit(f"no journal in {home}: run `python -m evals.replay record` first")
    entries = read_journal(home / JOURNAL)
    settings = settings_for(home)
    verifier = Verifier(settings, embed=_embedder(settings))
    recorded = {part: [PresenceResult.model_validate_json(line) for line in (home / path).read_text().splitlines()
                       if line.strip()] for part, path in PARTS.items()}
    replayed = {part: reread(rows, entries, lambda texts: features(verifier.read(texts)))
                for part, rows in recorded.items()}
    return compare(recorded, replayed)


def _embedder(settings: Settings):
    from marlin_agent.library.embeddings import shared_embedder

    return lambda: shared_embedder(settings.library.embed_model, settings.cache_dir / "models", settings.graphs_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", nargs="?", choices=("record", "replay"), default="replay")
    parser.add_argument("--home", type=Path, default=HOME, help="where the recorded runs and their journal are kept")
    args = parser.parse_args()
    if args.step == "record":
        record(args.home)
    print(json.dumps(replay(args.home), indent=1))


if __name__ == "__main__":
    main()
