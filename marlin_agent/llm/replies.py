"""Reading JSON out of what a model wrote, when it wrote more (or less) than JSON.

Small models asked for a JSON object answer in many shapes: the object alone, the object in a
Markdown fence, Qwen's ``<tool_call>`` tags, prose around it, braces doubled as in a
template (``{{"name": …}}``), Python's ``True``/``None``, a trailing comma, or output cut off by
the token cap after the object closed. These functions find the objects in such text; they
never evaluate it.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON|javascript|python)?\s*\n?(.*?)```", re.DOTALL)
_TAGGED = re.compile(r"<(tool_call|function_call|tools?|json|answer)>\s*(.*?)\s*</\1>", re.DOTALL)
_PY_WORDS = {"True": "true", "False": "false", "None": "null"}


def _balanced(text: str, start: int) -> int | None:
    """The index just past the object or array opening at ``start``, or None when it never closes."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _outside_strings(text: str, pattern: re.Pattern, replace) -> str:
    """``pattern`` substituted only where it is not inside a JSON string."""
    pieces = re.split(r'("(?:[^"\\]|\\.)*")', text)
    return "".join(piece if i % 2 else pattern.sub(replace, piece) for i, piece in enumerate(pieces))


def _loads(candidate: str) -> Any:
    """JSON, or JSON with the slips small models make; raises ValueError when it is neither."""
    try:
        return json.loads(candidate)
    except ValueError:
        pass
    mended = _outside_strings(candidate, re.compile(r",\s*([}\]])"), r"\1")
    mended = _outside_strings(mended, re.compile(r"\b(True|False|None)\b"), lambda m: _PY_WORDS[m.group(1)])
    if mended.startswith("{{") and mended.endswith("}}"):
        mended = mended[1:-1]
    return json.loads(mended)


def json_values(text: str) -> list[Any]:
    """Every JSON object (or array of objects) in ``text``, most deliberate first: tagged, fenced, then bare."""
    found: list[Any] = []
    regions = [m.group(2) for m in _TAGGED.finditer(text)] + [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for region in regions:
        i = 0
        while i < len(region):
            if region[i] not in "{[":
                i += 1
                continue
            end = _balanced(region, i)
            if end is None:
                break
            try:
                value = _loads(region[i:end])
            except ValueError:
                i += 1
                continue
            if isinstance(value, dict) or (isinstance(value, list) and value and isinstance(value[0], dict)):
                if value not in found:
                    found.append(value)
            i = end
    return found


def json_object(text: str) -> dict | None:
    """The first JSON object in ``text`` (the first item when the model wrote a list of them)."""
    for value in json_values(text):
        return value if isinstance(value, dict) else value[0]
    return None


def called_tool(value: dict) -> tuple[str, dict] | None:
    """(name, arguments) when ``value`` is a function call in one of the shapes models write it:
    ``{"name", "arguments"}`` (Qwen, Hermes), ``{"function": {…}}`` (OpenAI's own), ``{"tool", "args"}``."""
    if isinstance(value.get("function"), dict):
        value = value["function"]
    name = value.get("name") or value.get("tool") or value.get("tool_name")
    arguments = value.get("arguments", value.get("args", value.get("parameters")))
    if not isinstance(name, str) or not name:
        return None
    if isinstance(arguments, str):
        try:
            arguments = _loads(arguments)
        except ValueError:
            return None
    if arguments is None:
        arguments = {k: v for k, v in value.items() if k not in ("name", "tool", "tool_name")}
    return (name, arguments) if isinstance(arguments, dict) else None
