"""The schema a job fills: a JSON Schema file, a pydantic model, or the built-in ``marlin``.

Every schema is checked up front against its JSON Schema dialect, so a job never starts
with a schema it could not validate against. Rows are objects, so the schema must be one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from marlin_agent.errors import InputError

# Marlin's own output, mapped without any LLM: the scene(s) and the timed events.
BUILTIN = "marlin"
MARLIN_SCHEMA: dict[str, Any] = {
    "title": "marlin",
    "type": "object",
    "properties": {
        "scenes": {"type": "array", "items": {"type": "string"}},
        "events": {"type": "array", "items": {
            "type": "object",
            "properties": {"start": {"type": "number", "minimum": 0}, "end": {"type": "number", "minimum": 0},
                           "text": {"type": "string"}},
            "required": ["start", "end", "text"]}},
    },
    "required": ["scenes", "events"],
}


class InvalidSchema(InputError):
    code = "invalid_schema"
    default_hint = "Rows are JSON objects: give a JSON Schema with \"type\": \"object\" and its properties."


class Schema(BaseModel):
    name: str
    document: dict[str, Any]
    builtin: bool = False
    model: Any = None  # a pydantic model class when the schema came from one


def check(document: Any, name: str) -> dict[str, Any]:
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    if not isinstance(document, dict):
        raise InvalidSchema(f"the schema {name} is a {type(document).__name__}, not a JSON object")
    try:
        validator_for(document).check_schema(document)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "the top level"
        raise InvalidSchema(f"the schema {name} is not valid JSON Schema at {where}: {exc.message}") from exc
    if document.get("type") != "object":
        raise InvalidSchema(f"the schema {name} describes {document.get('type', 'anything')!r}, not an object (one row)")
    return document


def load_schema(source: str | Path | type[BaseModel] | dict) -> Schema:
    """A schema from a path, the name ``marlin``, a JSON Schema dict or a pydantic model class."""
    if isinstance(source, type) and issubclass(source, BaseModel):
        return Schema(name=source.__name__, document=check(source.model_json_schema(), source.__name__), model=source)
    if isinstance(source, dict):
        return Schema(name=source.get("title", "schema"), document=check(source, "given"))
    if str(source) == BUILTIN:
        return Schema(name=BUILTIN, document=MARLIN_SCHEMA, builtin=True)
    path = Path(source)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InvalidSchema(f"no schema file at {path}",
                            hint=f"Give a JSON Schema file, or --schema {BUILTIN} for Marlin's own scene and events.") from exc
    except json.JSONDecodeError as exc:
        raise InvalidSchema(f"{path} is not JSON: {exc}") from exc
    return Schema(name=path.stem, document=check(document, path.name))


def validation_errors(schema: Schema, data: Any) -> list[str]:
    """Every way ``data`` breaks the schema, as "where: what" lines (empty when it is valid)."""
    from jsonschema.validators import validator_for

    validator = validator_for(schema.document)(schema.document)
    return [f"{'/'.join(str(p) for p in error.absolute_path) or '(row)'}: {error.message}"
            for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))]
