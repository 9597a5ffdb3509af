"""A watch's state in the library it indexes into: a restarted watch reads where it stopped.

Rows are written in the order that makes a crash harmless: footage is recorded the moment it is
noticed (so a kill cannot lose it), and a piece's judgement, its alerts and the occurrences they
extend go in one write (so a piece is judged with its alerts or not at all). A delivery is noted
the instant it lands, in a local journal (one appended line, far quicker than a table write), then
in the library; only a kill inside that instant sends the alert again, with the same id.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.library.records import WatchRow
from marlin_agent.library.store import Library
from marlin_agent.redaction import redact
from marlin_agent.watch.records import Alert, Footage, Gap, Occurrence, WatchSpec, WatchStatus, short_hash, stamp


class Baseline(BaseModel):
    """The files a folder already held when the watch first started: not new, so not judged."""

    source: str
    keys: list[str]


class Spec(BaseModel):
    sources: list[str]
    questions: list[str]
    started_at: str


class Loaded(BaseModel):
    """Everything a starting watch needs from its earlier runs."""

    footage: list[Footage] = []
    occurrences: list[Occurrence] = []
    alerts: list[Alert] = []
    baselines: dict[str, list[str]] = {}


class WatchState:
    def __init__(self, library: Library, spec: WatchSpec, journal: Path) -> None:
        self.library = library
        self.spec = spec
        self.journal = journal
        journal.parent.mkdir(parents=True, exist_ok=True)

    def _row(self, kind: str, name: str, record: BaseModel) -> WatchRow:
        return WatchRow(id=f"{self.spec.id}:{kind}:{name}", watch=self.spec.id, kind=kind,
                        record=redact(record.model_dump_json()), at=stamp())

    def _footage_row(self, footage: Footage) -> WatchRow:
        return self._row("footage", short_hash(footage.key), footage)

    def _alert_row(self, alert: Alert) -> WatchRow:
        return self._row("alert", alert.id, alert)

    def _occurrence_row(self, occurrence: Occurrence) -> WatchRow:
        return self._row("occurrence", short_hash(occurrence.question, occurrence.timeline), occurrence)

    # --- reading ----------------------------------------------------------------------

    def load(self) -> Loaded:
        loaded = Loaded()
        for row in self.library.watch_rows(self.spec.id):
            if row.kind == "footage":
                loaded.footage.append(Footage.model_validate_json(row.record))
            elif row.kind == "occurrence":
                loaded.occurrences.append(Occurrence.model_validate_json(row.record))
            elif row.kind == "alert":
                loaded.alerts.append(Alert.model_validate_json(row.record))
            elif row.kind == "baseline":
                baseline = Baseline.model_validate_json(row.record)
                loaded.baselines[baseline.source] = baseline.keys
        landed = self._journal()
        loaded.alerts = [a.model_copy(update={"deliveries": {**a.deliveries, **landed.get(a.id, {})}})
                         for a in loaded.alerts]
        return loaded

    def _journal(self) -> dict[str, dict[str, str]]:
        landed: dict[str, dict[str, str]] = {}
        if self.journal.exists():
            for line in self.journal.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                    landed.setdefault(entry["alert"], {})[entry["target"]] = entry["status"]
                except (ValueError, KeyError, TypeError):  # a line cut short by a kill
                    continue
        return landed

    def landed(self, alert_id: str, target: str, status: str) -> None:
        """Note at once that a delivery ended (called on the delivering thread, right after it)."""
        line = json.dumps({"alert": alert_id, "target": target, "status": status}) + "\n"
        descriptor = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line.encode("utf-8"))
        finally:
            os.close(descriptor)

    # --- writing ----------------------------------------------------------------------

    def started(self, questions: list[str]) -> None:
        self.library.put_watch_rows([self._row("spec", "spec", Spec(sources=self.spec.sources, questions=questions,
                                                                     started_at=stamp()))])

    def set_baseline(self, source: str, keys: list[str]) -> None:
        self.library.put_watch_rows([self._row("baseline", short_hash(source), Baseline(source=source, keys=keys))])

    def found(self, footage: Footage) -> None:
        self.library.put_watch_rows([self._footage_row(footage)])

    def judged(self, footage: Footage, alerts: list[Alert], occurrences: list[Occurrence]) -> None:
        self.library.put_watch_rows([self._footage_row(footage), *map(self._alert_row, alerts),
                                     *map(self._occurrence_row, occurrences)])

    def delivered(self, alert: Alert) -> None:
        self.library.put_watch_rows([self._alert_row(alert)])

    def forget(self, footage_key: str) -> None:
        """A recording its retention deleted: its row goes too, so the state stays the size of the retention."""
        self.library.delete_watch_rows([f"{self.spec.id}:footage:{short_hash(footage_key)}"])

    def gap(self, gap: Gap) -> None:
        self.library.put_watch_rows([self._row("gap", short_hash(gap.source, gap.start), gap)])


def watch_status(library: Library, recent: int = 10) -> list[WatchStatus]:
    """Every watch recorded in ``library``: its footage counts, latest alerts, gaps and failures."""
    by_watch: dict[str, list[WatchRow]] = {}
    for row in library.watch_rows():
        by_watch.setdefault(row.watch, []).append(row)
    statuses = []
    for watch, rows in by_watch.items():
        spec = next((Spec.model_validate_json(r.record) for r in rows if r.kind == "spec"), None)
        if spec is None:
            continue
        footage = [Footage.model_validate_json(r.record) for r in rows if r.kind == "footage"]
        alerts = sorted((Alert.model_validate_json(r.record) for r in rows if r.kind == "alert"),
                        key=lambda a: a.raised_at)
        gaps = sorted((Gap.model_validate_json(r.record) for r in rows if r.kind == "gap"), key=lambda g: g.start)
        judged = [r.at for r in rows if r.kind == "footage" and '"status":"judged"' in r.record]
        counts = {status: sum(f.status == status for f in footage) for status in ("pending", "judged", "failed")}
        statuses.append(WatchStatus(
            id=watch, sources=spec.sources, questions=spec.questions, footage=counts, alerts=len(alerts),
            recent_alerts=alerts[-recent:], gaps=gaps[-recent:], failed=[f for f in footage if f.status == "failed"],
            last_judged_at=max(judged) if judged else None))
    return statuses
