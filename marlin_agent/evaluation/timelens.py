"""TimeLens-Bench files as published: annotations in, results files out (and back in).

Annotations: ``{video_id: {"duration": s, "spans": [[start, end], ...], "queries": [...]}}``,
one query per span; videos at ``<videos>/<video_id>.mp4``. Queries are cleaned as the
benchmark's loader cleans them (runs of whitespace become one space, periods at either end
go), so keys match the benchmark's own results files and raw mode sends the same text.

A results file maps ``"<video>>>><query>>>>[gt_start, gt_end]"`` to
``{"timestamps": [[s, e], ...], "answers": "..."}``: one JSON object (``.json``) or, as the
benchmark's inference writes it, one object per line (``.jsonl``), merged with later lines
winning. Only the first pair counts; with no ``timestamps`` key the pair is read from
``answers``.
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


class ResultsFileError(InputError):
    code = "bad_results_file"
    default_hint = ('A results file maps "<video>>>><query>>>>[s, e]" to {"timestamps": [[s, e]], "answers": "..."}, '
                    "as one JSON object (.json) or one object per line (.jsonl).")


def clean_query(query: str) -> str:
    """The benchmark loader's cleaning: whitespace runs to one space, surrounding periods dropped."""
    return re.sub(r"\s+", " ", query).strip().strip(".").strip()


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
        for span, query, original in zip(entry.spans, entry.queries, value["spans"], strict=False):
            items.append(GroundingItem(video_id=video_id, query=clean_query(query), span=span, duration=entry.duration,
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
    """(video id without a file suffix, cleaned query, ground-truth span) of a results-file key."""
    parts = key.split(">>>")
    if len(parts) != 3:
        raise ResultsFileError(f"key {key!r} is not <video>>>><query>>>>[start, end]")
    video, query, gt = parts
    try:
        values = json.loads(gt.replace("(", "[").replace(")", "]"))
        span = (float(values[0]), float(values[1]))
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ResultsFileError(f"key {key!r}: the ground truth {gt!r} is not [start, end]") from exc
    stem = Path(video).stem if Path(video).suffix.lower() in _VIDEO_SUFFIXES else video
    return stem, clean_query(query), span


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


def _pair(value: object) -> tuple[float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return float(value[0]), float(value[1])
    return None


def first_span(key: str, entry: dict) -> tuple[float, float] | None:
    """The pair that counts, as the benchmark's scorer takes it: the first of ``timestamps``
    (none when the list is empty), or, with no ``timestamps`` key, the first read from ``answers``."""
    if "timestamps" in entry:
        stamps = entry["timestamps"]
        if not isinstance(stamps, list):
            raise ResultsFileError(f"entry {key!r}: timestamps must be a list of [start, end] pairs, "
                                   f"not {json.dumps(stamps)[:80]}")
        if not stamps:
            return None
        first = _pair(stamps[0])
        if first is None:
            flat = " (a flat [start, end]: wrap it as [[start, end]])" if _pair(stamps) else ""
            raise ResultsFileError(f"entry {key!r}: timestamps must be a list of [start, end] pairs, "
                                   f"not {json.dumps(stamps)[:80]}{flat}")
        return first
    if "answers" in entry:
        if not isinstance(entry["answers"], str):
            raise ResultsFileError(f"entry {key!r}: answers must be text")
        found = spans_in_text(entry["answers"])
        return found[0] if found else None
    raise ResultsFileError(f"entry {key!r} has neither timestamps nor answers")


class ResultsFile(BaseModel):
    """A results file's entries by key (a key given twice keeps its last value, counted once)."""

    entries: dict[str, dict]
    duplicates: int = 0


class _Pairs(list):
    """A JSON object as its key-value pairs in order, so a repeated key can be counted."""


def _objects_of(text: str, path: Path, per_line: bool) -> list[tuple[str, object]]:
    """The file's top-level values as (where, value); objects come as ``_Pairs``."""
    if not per_line:
        try:
            pairs = json.loads(text, object_pairs_hook=_Pairs)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":  # one object per line under a .json name
                return _objects_of(text, path, per_line=True)
            raise ResultsFileError(f"{path} is not JSON: {exc}") from exc
        return [(str(path), pairs)]
    objects = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            objects.append((f"{path} line {number}", json.loads(line, object_pairs_hook=_Pairs)))
        except json.JSONDecodeError as exc:
            raise ResultsFileError(f"{path} line {number} is not JSON: {exc}") from exc
    return objects


def load_predictions(path: Path) -> ResultsFile:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ResultsFileError(f"no results file at {path}", hint="Pass the results file a run wrote.") from exc
    entries: dict[str, dict] = {}
    duplicates = 0
    for where, pairs in _objects_of(text, path, per_line=path.suffix.lower() == ".jsonl"):
        if not isinstance(pairs, _Pairs):
            raise ResultsFileError(f"{where} holds {json.dumps(pairs)[:60]}, not an object of entries")
        for key, value in pairs:
            if ">>>" not in key:
                raise ResultsFileError(f"{where}: key {key!r} is not <video>>>><query>>>>[start, end]")
            if not isinstance(value, _Pairs):
                raise ResultsFileError(f"{where}: entry {key!r} is {json.dumps(value)[:60]}, not an object")
            duplicates += key in entries
            entries[key] = _plain(value)
    return ResultsFile(entries=entries, duplicates=duplicates)


def _plain(value: object) -> object:
    """Plain dicts and lists again (inside an entry, the last of a repeated key wins)."""
    if isinstance(value, _Pairs):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
