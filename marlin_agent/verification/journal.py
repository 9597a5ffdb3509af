"""A journal of verification reads: what each read saw over a span and what the signals found there.

Opt-in (``[verify] journal``, env ``MARLIN_VERIFY_JOURNAL``), one JSON line a read, appended. It lets a run be
verified again later without Marlin: ``evals.replay`` reads every logged span's texts with the signals of the
checkout it runs in (or another entailment model) and refits, in a minute instead of a whole evaluation.
The texts are the footage's own words (captions, transcripts); the journal keeps them as data, nothing reads
them as instructions.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.errors import ConfigError
from marlin_agent.verification.signals import SpanTexts, Timed

Row = tuple[float, float, str]


@dataclass(frozen=True)
class Logged:
    """A text at a time, as the journal gives it back (a ``Timed``)."""

    start: float
    end: float
    text: str


class JournalEntry(BaseModel):
    event: str
    span: tuple[float, float]
    about_speech: bool = False
    events: list[Row]  # every caption event of the video
    fresh: list[Row] = []
    lines: list[Row] = []
    features: dict[str, float]  # what the signals found (no verifier or judge kinds)

    @classmethod
    def of(cls, texts: SpanTexts, features: dict[str, float]) -> JournalEntry:
        def rows(timed: list[Timed]) -> list[Row]:
            return [(row.start, row.end, row.text) for row in timed]
        return cls(event=texts.event, span=texts.span, about_speech=texts.about_speech, events=rows(texts.events),
                   fresh=rows(texts.fresh), lines=rows(texts.lines), features=features)

    def texts(self) -> SpanTexts:
        def timed(rows: list[Row]) -> list[Timed]:
            return [Logged(start=start, end=end, text=text) for start, end, text in rows]
        return SpanTexts(event=self.event, span=self.span, events=timed(self.events), fresh=timed(self.fresh),
                         lines=timed(self.lines), about_speech=self.about_speech)


class Journal:
    """Appends entries to one file; safe to share between the threads that verify side by side."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._append("")  # a journal that cannot be written says so before any work, not halfway through

    def write(self, texts: SpanTexts, features: dict[str, float]) -> None:
        self._append(JournalEntry.of(texts, features).model_dump_json() + "\n")

    def _append(self, text: str) -> None:
        try:
            with self._lock:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as out:
                    out.write(text)
        except OSError as exc:
            raise ConfigError(f"cannot write the verification journal {self.path}: {exc.strerror or exc}",
                              hint="Point MARLIN_VERIFY_JOURNAL ([verify] journal) at a file that can be written, "
                                   "or unset it.") from exc


def read_journal(path: Path) -> list[JournalEntry]:
    return [JournalEntry.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
