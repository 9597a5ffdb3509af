"""TimeLens-Bench files as published: annotations in, predictions out (and back in).

Annotations: ``{video_id: {"duration": s, "spans": [[start, end], ...], "queries": [...]}}``,
one query per span; videos at ``<videos>/<video_id>.mp4``. Predictions:
``{"<video>>>><query>>>>[gt_start, gt_end]": {"timestamps": [[s, e]], "answers": "..."}}``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ValidationError

from marlin_agent.errors import InputError

_VIDEO_SUFFIXES = (".mp4", ".mkv", ".webm", ".mov", ".avi")


class AnnotationError(InputError):
    code = "bad_annotations"
    default_hint = 'Annotations are {video_id: {"duration": s, "spans": [[s, e], ...], "queries": [...]}}.'


class GroundingItem(BaseModel):
    video_id: str
    query: str
    span: tuple[float, float]
    duration: float
    gt_text: str  # the ground-truth span exactly as the key spells it

    def key(self, video_name: str | None = None) -> str:
        """The results-file key. The benchmark's own runs name the video by its file name
        (``<id>.mp4``); the bare id is accepted when reading."""
        return f"{video_name or self.video_id + '.mp4'}>>>{self.query}>>>{self.gt_text}"

    @property
    def match(self) -> tuple[str, str, tuple[float, float]]:
        return self.video_id, self.query, self.span


class _Entry(BaseModel):
    duration: float
    spans: list[tuple[float, float]]
    queries: list[str]


def load_annotations(path: Path, limit: int | None = None) -> list[GroundingItem]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise AnnotationError(f"no annotation file at {path}") from exc
    except json.JSONDecodeError as exc:
        raise AnnotationError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise AnnotationError(f"{path} holds a {type(raw).__name__}, not an object keyed by video id")
    items: list[GroundingItem] = []
    for video_id, value in raw.items():
        try:
            entry = _Entry.model_validate(value)
        except ValidationError as exc:
            raise AnnotationError(f"{path}: video {video_id!r}: {exc.errors()[0]['msg']}") from exc
        if len(entry.spans) != len(entry.queries):
            raise AnnotationError(f"{path}: video {video_id!r} has {len(entry.spans)} spans and "
                                  f"{len(entry.queries)} queries; there must be one query per span")
        for span, query, original in zip(entry.spans, entry.queries, value["spans"]):
            items.append(GroundingItem(video_id=video_id, query=query, span=span, duration=entry.duration,
                                       gt_text=str(list(original))))
            if limit is not None and len(items) == limit:
                return items
    return items


def find_video(videos: Path, video_id: str) -> Path | None:
    for suffix in ("", *_VIDEO_SUFFIXES):
        candidate = videos / f"{video_id}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def split_key(key: str) -> tuple[str, str, tuple[float, float]]:
    """(video id without a file suffix, query, ground-truth span) of a results-file key."""
    video, query, gt = key.split(">>>")
    values = json.loads(gt.replace("(", "[").replace(")", "]"))
    stem = Path(video).stem if Path(video).suffix.lower() in _VIDEO_SUFFIXES else video
    return stem, query, (float(values[0]), float(values[1]))


_CLOCK = re.compile(r"\b(\d{1,2}:\d{2}:\d{2}(?:\.\d+)?|\d{1,2}:\d{2}(?:\.\d+)?)\b")
_RANGE = (re.compile(r"(\d+\.?\d*)\s*-\s*(\d+\.?\d*)"), re.compile(r"(\d+\.?\d*)\s+to\s+(\d+\.?\d*)"))
_NUMBER = re.compile(r"\b(\d+\.\d+|\d+)\b")


def _seconds(clock: str) -> float:
    total = 0.0
    for part in clock.split(":"):
        total = total * 60 + float(part)
    return total


def spans_in_text(answer: str) -> list[tuple[float, float]]:
    """Time pairs in a free-text answer, tried as the benchmark's scorer tries them: clock
    times first, then "a - b" / "a to b", then any two numbers in a row."""
    text = answer.lower()
    clocks = [_seconds(c) for c in _CLOCK.findall(text)]
    if len(clocks) >= 2:
        return [(clocks[i], clocks[i + 1]) for i in range(0, len(clocks) - 1, 2)]
    for pattern in _RANGE:
        pairs = pattern.findall(text)
        if pairs:
            return [(float(a), float(b)) for a, b in pairs]
    numbers = [float(n) for n in _NUMBER.findall(text)]
    return [(numbers[i], numbers[i + 1]) for i in range(0, len(numbers) - 1, 2)]


def first_span(prediction: dict) -> tuple[float, float] | None:
    """The pair that counts: the first of ``timestamps``, else the first found in ``answers``."""
    if prediction.get("timestamps"):
        first = prediction["timestamps"][0]
        return float(first[0]), float(first[1])
    if "timestamps" not in prediction and prediction.get("answers"):
        found = spans_in_text(str(prediction["answers"]))
        return found[0] if found else None
    return None


def load_predictions(path: Path) -> dict[str, dict]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise AnnotationError(f"no predictions file at {path}", hint="Pass the results file a run wrote.") from exc
    except json.JSONDecodeError as exc:
        raise AnnotationError(f"{path} is not JSON: {exc}", hint="Pass the results file a run wrote.") from exc
    if not isinstance(raw, dict) or not all(isinstance(v, dict) and ">>>" in k for k, v in raw.items()):
        raise AnnotationError(f"{path} is not a TimeLens results file",
                              hint='Results are {"<video>>>><query>>>>[s, e]": {"timestamps": [[s, e]], "answers": ...}}.')
    return raw
