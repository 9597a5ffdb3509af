"""Build the calibration set the package ships: ``python -m evals.calibration_set``.

From a run recorded with a verification journal (``python -m evals.replay record``), every candidate
the calibration part put to verification becomes texts and a label (``marlin_agent.verification.
calibration_set``): ``configs/calibration-set.json.gz``, from which a machine fits an entailment model
that has no table of its own. The held-out part is written the same way beside the evals
(``evals/synthetic/heldout-set.json.gz``), for the test that checks such a fit against the shipped one.
Each candidate is paired with its journal entry by the signal features the recording code found there
(``evals.replay.pair``); a candidate with no entry is left out and counted.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evals.replay import HOME, JOURNAL, PARTS, pair
from marlin_agent.evaluation.presence import MATCH_IOU, PresenceResult
from marlin_agent.verification.calibration_set import (
    CalibrationSet,
    SetCandidate,
    SetEntry,
    SetQuestion,
    save_set,
)
from marlin_agent.verification.confidence import VERIFIER_KINDS
from marlin_agent.verification.journal import JournalEntry, read_journal

TARGETS = {"calibration": Path("configs/calibration-set.json.gz"),
           "heldout": Path("evals/synthetic/heldout-set.json.gz")}


def build(rows: list[PresenceResult], entries: list[JournalEntry], made_by: str) -> tuple[CalibrationSet, int]:
    """(the set of ``rows``' candidates, how many had no journal entry)."""
    videos: list[list] = []
    video_index: dict[str, int] = {}
    kept: list[SetEntry] = []
    entry_index: dict[int, int] = {}
    questions, unpaired = [], 0
    for row, matches in zip(rows, pair(rows, entries), strict=True):
        candidates = []
        for candidate, entry in zip(row.candidates, matches, strict=True):
            if entry is None:
                unpaired += 1
                continue
            if id(entry) not in entry_index:
                events = repr(entry.events)
                if events not in video_index:
                    video_index[events] = len(videos)
                    videos.append(entry.events)
                entry_index[id(entry)] = len(kept)
                kept.append(SetEntry(event=entry.event, span=entry.span, about_speech=entry.about_speech,
                                     video=video_index[events], fresh=entry.fresh, lines=entry.lines))
            candidates.append(SetCandidate(
                entry=entry_index[id(entry)], speech=candidate.speech, on_span=candidate.iou >= MATCH_IOU,
                kept={k: v for k, v in candidate.features.items() if k in VERIFIER_KINDS}))
        questions.append(SetQuestion(present=row.present, candidates=candidates))
    return CalibrationSet(made_by=made_by, videos=videos, entries=kept, questions=questions), unpaired


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=HOME, help="a run recorded by `python -m evals.replay record`")
    args = parser.parse_args()
    entries = read_journal(args.home / JOURNAL)
    for part, target in TARGETS.items():
        rows = [PresenceResult.model_validate_json(line) for line in (args.home / PARTS[part]).read_text().splitlines()
                if line.strip()]
        made, unpaired = build(rows, entries, f"evals.replay record, {part} part: the realistic world and the toy "
                                              "suite against the Marlin simulator, with its scripted judge")
        save_set(made, target)
        print(f"{part}: {len(made.questions)} questions, {sum(len(q.candidates) for q in made.questions)} "
              f"candidates, {len(made.entries)} texts read, {unpaired} unpaired -> {target} "
              f"({target.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
