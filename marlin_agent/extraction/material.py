"""Whether a row's choices are the ones its material states: a check that needs no model.

A small model restructuring captions can fill a schema-valid row that contradicts them: the first
direction the enum lists where the event says the other one, the colours of two objects swapped.
For each value chosen from an ``enum`` of words, the material is read where the value belongs —
the events that overlap the times written beside it (an item with a start and an end), else the
whole unit — and when that text says another of the enum's options and not the chosen one, the
row is sent back once with what the material says. Options are matched as phrases
(``right_to_left`` is "right to left"), so a value nothing in the material names is left alone.

An empty list is a choice too: a small model under a server's grammar can leave ``objects`` empty for a
chunk whose events each name a colour and a shape the item's enums list. A list left empty while events
of the unit name options of (at least two of) its items' word enums is sent back the same way.
"""

from __future__ import annotations

import re
from typing import Any

from marlin_agent.domain import Event
from marlin_agent.extraction.units import Unit

_START = ("start", "begin", "from")
_END = ("end", "stop", "until", "to")


def _phrase(option: str) -> str:
    return " ".join(re.split(r"[\s_\-]+", option.strip().lower()))


def _says(text: str, phrase: str) -> bool:
    return bool(phrase) and re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def _span(item: dict) -> tuple[float, float] | None:
    """The item's own times, when it has a start and an end (by the usual names)."""
    def number(names: tuple[str, ...]) -> float | None:
        for key, value in item.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and \
                    any(key.lower() == n or key.lower().startswith(n + "_") or key.lower().endswith("_" + n)
                        for n in names):
                return float(value)
        return None

    start, end = number(_START), number(_END)
    return (start, end) if start is not None and end is not None and end >= start else None


def _local(unit: Unit, span: tuple[float, float] | None) -> str:
    """The text a value with ``span`` is about: the events overlapping it most, else the whole unit."""
    if span is None:
        return unit.text().lower()

    def overlap(event: Event) -> float:
        return max(0.0, min(span[1], event.end) - max(span[0], event.start))

    timed = [e for e in unit.events + unit.transcript if overlap(e) > 0]
    if not timed:
        return unit.text().lower()
    best = max(overlap(e) for e in timed)
    return " ".join(e.text for e in timed if overlap(e) >= 0.5 * best).lower()


def _resolve(schema: dict, root: dict) -> dict:
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/"):
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
        schema = target
    return schema if isinstance(schema, dict) else {}


def _items_named(items: dict, unit: Unit) -> list[str]:
    """The unit's events that name an option of each of an item's word enums (of two at least, or its only
    one when it has one): what a list of such items leaves out when it is empty."""
    enums = [[_phrase(o) for o in prop["enum"] if isinstance(o, str)]
             for prop in (items.get("properties") or {}).values()
             if isinstance(prop, dict) and isinstance(prop.get("enum"), list)]
    enums = [options for options in enums if len(options) >= 2]
    if not enums:
        return []
    needed = min(2, len(enums))
    return [event.text for event in unit.events
            if sum(any(_says(event.text.lower(), o) for o in options) for options in enums) >= needed]


def contradictions(schema: dict, row: Any, unit: Unit) -> list[str]:
    """Where ``row`` chose an option its material does not say, and says another: one line each."""
    found: list[str] = []

    def walk(sub: dict, value: Any, path: str, span: tuple[float, float] | None) -> None:
        sub = _resolve(sub, schema)
        if isinstance(value, dict):
            span = _span(value) or span
            for key, inner in value.items():
                walk((sub.get("properties") or {}).get(key, {}), inner, f"{path}.{key}" if path else key, span)
        elif isinstance(value, list):
            items = sub.get("items") if isinstance(sub.get("items"), dict) else {}
            if not value:
                named = _items_named(_resolve(items, schema), unit)
                if named:
                    found.append(f"{path}: empty, but the material's events name {len(named)} such item(s): "
                                 + "; ".join(repr(text) for text in named[:5]))
            for n, inner in enumerate(value):
                walk(items, inner, f"{path}[{n}]", span)
        elif isinstance(value, str) and isinstance(sub.get("enum"), list):
            options = [o for o in sub["enum"] if isinstance(o, str)]
            text = _local(unit, span)
            if len(options) < 2 or _says(text, _phrase(value)):
                return
            said = [o for o in options if o != value and _says(text, _phrase(o))]
            if len(said) == 1:
                where = f" at {span[0]:g}–{span[1]:g} s" if span else ""
                found.append(f"{path}: {value!r} is not what the material says{where}; it says "
                             f"{_phrase(said[0])!r} (the option {said[0]!r})")

    walk(schema, row, "", None)
    return found
