"""The LLM planner's moves, as one JSON object a model writes per turn.

Each move is a toolbox tool (its name, parameters and the description in its docstring, so a
tool is still written once, on the ``Toolbox``) or the final ``answer``. The schema of a turn is
``{"action": {"tool": NAME, ...its arguments}}``, one alternative per move, which a server that
constrains replies to a schema enforces: a small model cannot misspell a tool or leave out a
required argument there. Where the server does not enforce it, what the model wrote is read
leniently and repaired where its intent is clear (a video's title or file name where its id is
expected, "1:05" or "12.5 s" for seconds, the question's own event where one is missing); what
cannot be repaired goes back to the model naming the one field to fix.
"""

from __future__ import annotations

import inspect
import re
import types
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Union, get_args, get_origin, get_type_hints

from marlin_agent.llm.replies import called_tool
from marlin_agent.tools import Toolbox
from marlin_agent.tools.toolbox import MODEL_TOOLS

ANSWER = "answer"
_JSON_TYPES = {str: "string", float: "number", int: "integer", bool: "boolean"}
_CLOCK = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)\s*$")
_SECONDS = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds?)?\s*$", re.IGNORECASE)
_ANSWER_DOC = ("End the run: one or two sentences answering the question (times as m:ss), and the moments that "
               "passed verify (none when nothing passed).")


def _summary_and_args(method) -> tuple[str, dict[str, str]]:
    """A Google-style docstring's first part, and its ``Args:`` descriptions by name."""
    doc = inspect.getdoc(method) or ""
    summary, _, rest = doc.partition("\n\nArgs:")
    described: dict[str, str] = {}
    name = None
    for line in rest.splitlines():
        match = re.match(r"^\s{2,}(\w+):\s*(.*)$", line)
        if match:
            name, described[match.group(1)] = match.group(1), match.group(2).strip()
        elif name and line.strip():
            described[name] += " " + line.strip()
    return " ".join(summary.split()), described


def _json_type(annotation: Any) -> dict:
    """The JSON schema of a tool parameter's annotation (the few types tools take)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        return _json_type(options[0])
    if origin is list:
        return {"type": "array", "items": _json_type(get_args(annotation)[0])}
    return {"type": _JSON_TYPES[annotation]}


@dataclass
class Move:
    """One move a model may make: a tool's parameters as JSON schema, or the answer."""

    name: str
    description: str
    properties: dict[str, dict]
    required: list[str]
    numbers: set[str] = field(default_factory=set)

    def schema(self) -> dict:
        return {"type": "object", "description": self.description,
                "properties": {"tool": {"type": "string", "const": self.name}, **self.properties},
                "required": ["tool", *self.required], "additionalProperties": False}


def tool_move(method) -> Move:
    summary, described = _summary_and_args(method)
    properties, required, numbers = {}, [], set()
    hints = get_type_hints(method)
    for name, parameter in inspect.signature(method).parameters.items():
        if name in ("self", "run"):  # the question's run context is the planner's to pass, not the model's
            continue
        schema = _json_type(hints[name])
        properties[name] = {**schema, "description": described.get(name, "")}
        if schema.get("type") in ("number", "integer"):
            numbers.add(name)
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
    return Move(name=method.__name__, description=summary, properties=properties, required=required,
                numbers=numbers)


ANSWER_MOVE = Move(
    name=ANSWER, description=_ANSWER_DOC,
    properties={"answer": {"type": "string", "description": "The answer in words."},
                "moments": {"type": "array", "description": "Moments whose verify passed.", "items": {
                    "type": "object", "additionalProperties": False, "required": ["video_id", "start", "end"],
                    "properties": {"video_id": {"type": "string"}, "start": {"type": "number"},
                                   "end": {"type": "number"}}}}},
    required=["answer", "moments"])

MOVES: dict[str, Move] = {**{name: tool_move(getattr(Toolbox, name)) for name in MODEL_TOOLS}, ANSWER: ANSWER_MOVE}


def step_schema() -> dict:
    """The JSON schema of one turn: an object whose ``action`` is one of the moves."""
    return {"type": "object", "properties": {"action": {"anyOf": [move.schema() for move in MOVES.values()]}},
            "required": ["action"], "additionalProperties": False}


def moves_text() -> str:
    """The moves as the instructions list them (for models that are not sent the schema)."""
    lines = []
    for move in MOVES.values():
        args = ", ".join(f"{name}{'' if name in move.required else '?'}" for name in move.properties)
        lines.append(f"- {move.name}({args}): {move.description}")
    return "\n".join(lines)


def seconds(value: Any) -> float | None:
    """Seconds from what a model writes for them: 12.5, "12.5", "12.5 s", "1:05", "0:01:05.5"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    match = _CLOCK.match(value)
    if match:
        hours, minutes, secs = match.groups()
        return (int(hours) * 3600 if hours else 0) + int(minutes) * 60 + float(secs)
    match = _SECONDS.match(value)
    return float(match.group(1)) if match else None


@dataclass
class Call:
    """A move to make, its arguments repaired and complete."""

    tool: str
    args: dict
    repaired: str = ""  # what was changed that the model should hear about ("end 61 s is past the end ...")

    def signature(self) -> tuple:
        """What makes two calls the same call (numbers to a tenth of a second)."""
        return (self.tool, tuple(sorted((k, round(v, 1) if isinstance(v, float) else str(v))
                                        for k, v in self.args.items())))


class Invalid(ValueError):
    """A move that cannot be made as written; the message names the field to fix."""


def unwrap(value: Any) -> dict:
    """The move in a reply, whichever shape the model gave it: ``{"action": {…}}``, the move itself,
    ``{"name", "arguments"}`` as tool calls are written, or ``{"search": {…}}``."""
    if not isinstance(value, dict):
        raise Invalid("the reply holds no JSON object; answer with {\"action\": {\"tool\": …, …}}")
    if isinstance(value.get("action"), dict):
        value = value["action"]
    elif isinstance(value.get("action"), str):
        value = {**value, "tool": value.pop("action")}
    if "tool" not in value:
        call = called_tool(value)
        if call is not None:
            value = {"tool": call[0], **call[1]}
        elif len(value) == 1 and next(iter(value)) in MOVES and isinstance(next(iter(value.values())), dict):
            name, args = next(iter(value.items()))
            value = {"tool": name, **args}
    return value


class VideoNames:
    """The videos of a question, by id and by the other names a model may use for one."""

    def __init__(self, videos: dict[str, tuple[str, str]], durations: dict[str, float] | None = None) -> None:
        self.videos = videos  # id -> (title, path)
        self.durations = durations or {}  # id -> seconds

    def resolve(self, given: Any) -> str:
        if not isinstance(given, str) or not given.strip():
            if len(self.videos) == 1:
                return next(iter(self.videos))
            raise Invalid(f"video_id is missing; use one of: {self.listing()}")
        given = given.strip().strip("'\"")
        if given in self.videos:
            return given
        lowered = given.lower()
        for video_id, (title, path) in self.videos.items():
            names = {title.lower(), PurePath(path).name.lower(), PurePath(path).stem.lower(), path.lower()}
            if lowered in names or (len(lowered) >= 6 and video_id.startswith(lowered)):
                return video_id
        if len(self.videos) == 1:
            return next(iter(self.videos))
        raise Invalid(f"video_id {given!r} is not a video of this question; use one of: {self.listing()}")

    def listing(self) -> str:
        return ", ".join(f"{video_id} ({title})" for video_id, (title, _) in self.videos.items())


def read_call(value: Any, names: VideoNames, event: str) -> Call:
    """The call a reply asks for, repaired; ``Invalid`` naming the field when it cannot be."""
    move_args = unwrap(value)
    tool = str(move_args.get("tool", "")).strip()
    move = MOVES.get(tool)
    if move is None:
        raise Invalid(f"tool {tool!r} does not exist; the tools are: {', '.join(MOVES)}")
    args = {k: v for k, v in move_args.items() if k != "tool" and v is not None}
    if tool == ANSWER:
        return Call(ANSWER, _answer_args(args, names))
    args = {k: v for k, v in args.items() if k in move.properties}
    _repair_videos(args, move, names)
    for name in ("event", "query"):
        if name in move.properties and not str(args.get(name, "")).strip():
            args[name] = event  # the question's own event, where the model left it out
    _repair_numbers(args, move)
    missing = [name for name in move.required if name not in args]
    if missing:
        said = "; ".join(f"{n}: {move.properties[n].get('description', '')}" for n in missing)
        raise Invalid(f"{tool}: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing ({said})")
    repaired = _within_video(args, names)
    if "start" in args and "end" in args and args["end"] <= args["start"]:
        raise Invalid(f"{tool}: end ({args['end']}) must come after start ({args['start']})")
    return Call(tool, args, repaired)


def _repair_videos(args: dict, move: Move, names: VideoNames) -> None:
    if "video_id" in move.properties and ("video_id" in args or "video_id" in move.required):
        args["video_id"] = names.resolve(args.get("video_id"))
    if isinstance(args.get("video_ids"), str):
        args["video_ids"] = [args["video_ids"]]
    if "video_ids" in args:
        args["video_ids"] = [names.resolve(v) for v in args["video_ids"]] or None


def _within_video(args: dict, names: VideoNames) -> str:
    """An end past the video's end read as the video's end (the intent is clear: up to where it stops), and a line
    saying so. Refused instead, the real 1.5B model moved the start a second at a time (0-61 s of a 50 s video,
    then 1-61, ...) for fifteen moves."""
    duration = names.durations.get(args.get("video_id", ""))
    end, start = args.get("end"), args.get("start", 0.0)
    if duration is None or not isinstance(end, int | float) or end <= duration or start >= duration:
        return ""
    args["end"] = duration
    return f"(end {end:g} s is past the end of the video, {duration:.1f} s: read as {duration:.1f}.)\n"


def _repair_numbers(args: dict, move: Move) -> None:
    for name in move.numbers & set(args):
        number = seconds(args[name])
        if number is None:
            raise Invalid(f"{move.name}: {name} must be a number of seconds, not {args[name]!r}")
        args[name] = int(number) if move.properties[name]["type"] == "integer" else number


def _answer_args(args: dict, names: VideoNames) -> dict:
    moments = []
    for item in args.get("moments") or []:
        if not isinstance(item, dict):
            continue
        start, end = seconds(item.get("start")), seconds(item.get("end"))
        if start is None or end is None:
            raise Invalid("answer: each moment needs start and end in seconds, as verify reported them")
        moments.append({"video_id": names.resolve(item.get("video_id")), "start": start, "end": end})
    return {"answer": str(args.get("answer") or ""), "moments": moments}
