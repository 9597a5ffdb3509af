"""Fitting an entailment model that has no table of its own, on this machine, in under a minute.

Weights fitted for one entailment model mean nothing for another, and the model a user's machine
downloads (or any other they point ``MARLIN_VERIFY_MODEL`` at) may have no fitted table. The
package ships a calibration set instead: every candidate moment the realistic world's calibration
part (and the toy suite) put to verification, as texts (the event asked, the caption events of its
video, the fresh caption and the lines said over the span) with its label (on the true span of a
present event, or not) and what only Marlin or a judge could say there (``regrounding``, ``judge``).
The model in use reads every text again, as it would in a run, and the weights and threshold are
fitted on what it read (``fitting``). The fit is stored under ``$MARLIN_HOME`` by the model's
content hash, so a copy of the model anywhere is recognised and the fit is made once.
"""

from __future__ import annotations

import datetime
import gzip
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.domain import ChunkProgress
from marlin_agent.resources import data_path
from marlin_agent.verification.calibration import (
    Calibration,
    calibration_for,
    onnx_fingerprint,
    shipped_calibrations,
    write_calibration,
)
from marlin_agent.verification.confidence import VERIFIER_KINDS, features
from marlin_agent.verification.entailment import model_folder
from marlin_agent.verification.fitting import FitCandidate, FitQuestion, decided, fit_calibration, point, scorer
from marlin_agent.verification.journal import Logged
from marlin_agent.verification.signals import SpanTexts
from marlin_agent.verification.verifier import Verifier

SET_FILE = "configs/calibration-set.json.gz"
# Fits made on this machine, by model hash, in the calibrations file format.
FITTED_HERE = "calibrations.toml"

Row = tuple[float, float, str]


class SetEntry(BaseModel):
    """What one verification read: the event, the span, and the texts around it (``video``: its video's
    caption events, kept once per video)."""

    event: str
    span: tuple[float, float]
    about_speech: bool = False
    video: int
    fresh: list[Row] = []
    lines: list[Row] = []


class SetCandidate(BaseModel):
    entry: int
    speech: bool = False
    on_span: bool = False
    kept: dict[str, float] = {}  # regrounding, judge: what the recorded run's Marlin and judge said


class SetQuestion(BaseModel):
    present: bool
    candidates: list[SetCandidate]


class CalibrationSet(BaseModel):
    made_by: str  # what recorded it
    videos: list[list[Row]]
    entries: list[SetEntry]
    questions: list[SetQuestion]

    def texts(self, entry: SetEntry) -> SpanTexts:
        def timed(rows: list[Row]) -> list[Logged]:
            return [Logged(start=a, end=b, text=t) for a, b, t in rows]
        return SpanTexts(event=entry.event, span=entry.span, events=timed(self.videos[entry.video]),
                         fresh=timed(entry.fresh), lines=timed(entry.lines), about_speech=entry.about_speech)


def load_set(path: Path | None = None) -> CalibrationSet:
    with gzip.open(path or data_path(SET_FILE), "rt", encoding="utf-8") as handle:
        return CalibrationSet.model_validate_json(handle.read())


def save_set(calibration_set: CalibrationSet, path: Path) -> None:
    # mtime=0: the same set always makes the same bytes, so rebuilding it changes nothing in the repository.
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
        handle.write(calibration_set.model_dump_json().encode("utf-8"))


def read_again(calibration_set: CalibrationSet, read: Callable[[SpanTexts], dict[str, float]],
               progress: ChunkProgress | None = None) -> list[FitQuestion]:
    """The set's questions with each candidate's features as ``read`` finds them now."""
    found: list[dict[str, float]] = []
    total = len(calibration_set.entries)
    for number, entry in enumerate(calibration_set.entries, 1):
        found.append(read(calibration_set.texts(entry)))
        if progress is not None:
            progress(number, total)

    def video(question: SetQuestion) -> str:  # the video its candidates were read in, for a cross-fit
        return str(calibration_set.entries[question.candidates[0].entry].video) if question.candidates else ""
    return [FitQuestion(present=q.present, candidates=[
        FitCandidate(features={**{k: v for k, v in found[c.entry].items() if k not in VERIFIER_KINDS}, **c.kept},
                     speech=c.speech, on_span=c.on_span) for c in q.candidates], group=video(q))
        for q in calibration_set.questions]


def fit_model(verifier, model: str, progress: ChunkProgress | None = None,
              calibration_set: CalibrationSet | None = None) -> Calibration:
    """A calibration for the entailment model ``verifier`` runs, fitted on the shipped set read by it."""
    chosen = calibration_set or load_set()
    questions = read_again(chosen, lambda texts: features(verifier.read(texts)), progress)
    fitted = fit_calibration(questions)
    note = (f"fitted here on {fitted.candidates} candidates of the shipped calibration set "
            f"({datetime.date.today().isoformat()})")
    return Calibration(model=model, weights=fitted.weights, bias=fitted.bias, threshold=fitted.threshold,
                       note=note, fitted=True, source="here")


def store_fit(home: Path, key: str, calibration: Calibration) -> Path:
    """Keep ``calibration`` under ``key`` (the model's hash) in ``$MARLIN_HOME``'s calibrations file."""
    path = home / FITTED_HERE
    if not path.exists():
        fallback, _ = shipped_calibrations()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"fallback = {fallback!r}\n".replace("'", '"'), encoding="utf-8")
    write_calibration(path, key, {"model": calibration.model, "fitted": True, "note": calibration.note,
                                  "threshold": calibration.threshold, "bias": calibration.bias,
                                  "weights": calibration.weights})
    return path


def ensure_fitted(settings, embed, progress: ChunkProgress | None = None) -> Calibration:
    """The calibration for the entailment model in use, fitted here first when it has none but priors.

    ``embed``: the sentence embedder the similarity signal reads with (the library's). The fit reads the
    shipped set with the same signals a run uses (well under a minute on two cores), and is stored by the
    model's hash, so it is made once per model and machine."""
    folder = model_folder(settings.verify, settings.cache_dir)
    current = calibration_for(settings, folder)
    if current.source != "priors":
        return current
    verifier = Verifier(settings.model_copy(update={"verify": settings.verify.model_copy(update={"journal": None})}),
                        embed)
    fitted = fit_model(verifier, settings.verify.model, progress)
    store_fit(settings.home, onnx_fingerprint(folder, settings.cache_dir) or settings.verify.model, fitted)
    return calibration_for(settings, folder)


def figures_at(questions: list[FitQuestion], calibration: Calibration):
    """Precision, recall and F1 of ``questions`` answered under ``calibration`` (a pipeline's, without a judge)."""
    return point(decided(questions, calibration.threshold, scorer(calibration)), calibration.threshold)
