"""``eval questions``: every question form answered right, scored as each form demands.

A suite is a JSON list of questions (or ``{"questions": [...]}``), each with what a right answer holds:

- ``question`` and ``form`` (when, every, count, first, last, before, after, between, duration);
- ``scope``: the video (its file name without the extension) the question is asked of, or "" for the
  whole folder;
- ``spans``: ``[video, start, end]`` of the expected moments (every: all of them; the other forms: the
  first is the right one), ``[]`` when the right answer is "not found";
- ``count`` for a count, ``duration`` (seconds, within 1.5 s) for "how long".

An answer in another form than the one asked is wrong whatever it says. Rows go to ``<out>/rows.jsonl``
as each question is answered, so a stopped run resumes; the figures are the share right overall and per
form, and how many answers came back in another form.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel

from marlin_agent.config import Settings
from marlin_agent.evaluation.metrics import temporal_iou
from marlin_agent.evaluation.timelens import AnnotationError

Span = tuple[str, float, float]  # video (file name without extension), start, end
DURATION_TOLERANCE = 1.5


class FormQuestion(BaseModel):
    question: str
    form: str
    scope: str = ""
    spans: list[Span] = []
    count: int | None = None
    duration: float | None = None
    world: str = ""


class FormsReport(BaseModel):
    suite: str
    questions: int
    right: float
    different_form: int
    by_form: dict[str, str]  # form -> "right/asked"


def load_questions(path: Path) -> list[FormQuestion]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AnnotationError(f"{path} is not a readable JSON questions file: {exc}") from exc
    items = raw.get("questions", []) if isinstance(raw, dict) else raw
    try:
        return [FormQuestion.model_validate(item) for item in items]
    except ValueError as exc:
        raise AnnotationError(f"{path}: {exc}") from exc


def answered_right(item: FormQuestion, answer) -> bool:
    """Is ``answer`` (an ``Answer``) what ``item`` asks for?"""
    spans = [(Path(m.video.path).stem, m.start, m.end) for m in answer.moments]

    def same(a: Span, b: Span) -> bool:
        return a[0] == b[0] and temporal_iou(a[1:], b[1:]) >= 0.5

    if answer.form != item.form:
        return False
    if item.form == "count":
        return answer.count == item.count
    if item.form == "duration":
        return answer.duration is not None and abs(answer.duration - (item.duration or 0.0)) <= DURATION_TOLERANCE
    if not item.spans:
        return not answer.found
    if item.form == "every":
        return len(spans) == len(item.spans) and all(any(same(s, t) for s in spans) for t in item.spans)
    return bool(spans) and same(spans[0], item.spans[0])


def _source(videos: Path, scope: str) -> Path:
    if not scope:
        return videos
    found = [p for p in videos.glob(f"{scope}.*") if p.suffix.lower() not in (".json", ".jsonl")]
    if not found:
        raise AnnotationError(f"no video named {scope} in {videos}")
    return found[0]


def form_figures(rows: list[dict], suite: str) -> FormsReport:
    by_form: dict[str, list[bool]] = {}
    for row in rows:
        by_form.setdefault(row["form"], []).append(row["right"])
    return FormsReport(suite=suite, questions=len(rows),
                       right=round(sum(r["right"] for r in rows) / max(1, len(rows)), 3),
                       different_form=sum(r["answered_form"] != r["form"] for r in rows),
                       by_form={form: f"{sum(v)}/{len(v)}" for form, v in sorted(by_form.items())})


_CLOCK_FIELDS = frozenset({"usage", "seconds", "marlin_seconds"})


def answer_digest(answer) -> str:
    """A fingerprint of everything an answer says but its clock: two runs that decided the same (moments,
    counts, evidence, rejections, wording, the steps taken) have the same digest, whatever the times and
    wherever their clips were cut to (a clip is compared by its file name)."""
    def plain(value):
        if isinstance(value, dict):
            return {k: (Path(v).name if k == "clip" and v else plain(v))
                    for k, v in value.items() if k not in _CLOCK_FIELDS}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    text = json.dumps(plain(answer.model_dump(mode="json")), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


async def run_questions(items: list[FormQuestion], videos: Path, settings: Settings, out: Path, suite: str,
                        on_row=None) -> tuple[FormsReport, list[dict]]:
    """Ask every question as ``ask`` does (over its scope), score it, and keep each row as it is answered."""
    from marlin_agent.app.ask import ask

    out.mkdir(parents=True, exist_ok=True)
    log = out / "rows.jsonl"
    done = {json.loads(line)["question"] + "|" + json.loads(line)["scope"]: json.loads(line)
            for line in (log.read_text(encoding="utf-8").splitlines() if log.exists() else []) if line.strip()}
    rows = []
    for item in items:
        key = f"{item.question}|{item.scope}"
        if key not in done:
            answer = await ask(item.question, [str(_source(videos, item.scope))], settings)
            done[key] = {"world": item.world, "scope": item.scope, "question": item.question, "form": item.form,
                         "answered_form": answer.form, "right": answered_right(item, answer), "answer": answer.answer,
                         "count": answer.count,
                         "moments": [[Path(m.video.path).stem, m.start, m.end] for m in answer.moments],
                         "digest": answer_digest(answer)}
            with log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(done[key]) + "\n")
            if on_row is not None:
                on_row(done[key])
        rows.append(done[key])
    return form_figures(rows, suite), rows
