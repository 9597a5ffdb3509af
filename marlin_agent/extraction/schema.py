"""The schema a job fills: a JSON Schema file, a pydantic model, or the built-in ``marlin``.

Every schema is checked up front, before any footage is touched: against its JSON Schema
dialect, for nesting the checker can follow (``MAX_NESTING``), and for every ``$ref``. A
reference resolves inside the schema itself or, for a schema file named on the command line,
to JSON files in that file's folder; nothing is ever fetched from the network, so a schema
cannot make the agent send a request. References that loop without reading any data are
refused. Legitimately recursive schemas (a tree of parts) are accepted: rows are checked
against the schema as written, and the LLM is shown it spelled out ``RECURSION_DEPTH`` levels
deep. Rows are objects, so the schema must be one.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict

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

# JSON nesting a schema document may have: deeper ones overflow the validator's recursion.
MAX_SPELLED = 20_000  # subschemas a spelled-out schema may hold
MAX_NESTING = 64
# How many times a recursive schema repeats inside itself when shown to the LLM; rows are checked against all of it.
RECURSION_DEPTH = 4

# Keywords whose subschemas apply to the same value (a cycle through only these never ends) ...
_SAME_VALUE_ONE = ("not", "if", "then", "else")
_SAME_VALUE_MANY = ("allOf", "anyOf", "oneOf")
# ... and those that apply to a part of it (a cycle through one of these ends with the data).
_INNER_ONE = ("additionalProperties", "unevaluatedProperties", "propertyNames", "contains", "additionalItems",
              "unevaluatedItems", "items")
_INNER_MAP = ("properties", "patternProperties", "dependentSchemas")
_INNER_MANY = ("prefixItems", "items")


class InvalidSchema(InputError):
    code = "invalid_schema"
    default_hint = "Rows are JSON objects: give a JSON Schema with \"type\": \"object\" and its properties."


def _folder_of(file_uri: str | None) -> Path | None:
    return Path(unquote(urlsplit(file_uri).path)).parent if file_uri else None


class _SchemaFolder:
    """Retrieves ``$ref``s to JSON files inside one folder (a schema file's own); refuses everything else."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder.resolve() if folder is not None else None
        self._loaded: dict[str, Any] = {}

    def __call__(self, uri: str):
        from referencing import Resource
        from referencing.jsonschema import DRAFT202012

        parts = urlsplit(uri)
        if self.folder is None or parts.scheme != "file":
            where = "another file" if parts.scheme == "file" else uri
            raise InvalidSchema(f"the schema refers to {where}: references are resolved only inside the schema"
                                + ("" if self.folder is None else " and the JSON files in its folder")
                                + "; nothing is fetched",
                                hint="Put the referenced definitions under $defs in the schema itself.")
        path = Path(unquote(parts.path)).resolve()
        if not path.is_relative_to(self.folder) or not path.is_file():
            raise InvalidSchema(f"the schema refers to {path}, which is not a file in the schema's folder "
                                f"({self.folder})")
        if uri not in self._loaded:
            try:
                self._loaded[uri] = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError) as exc:
                raise InvalidSchema(f"the schema refers to {path}, which is not readable JSON: {exc}") from exc
        return Resource.from_contents(self._loaded[uri], default_specification=DRAFT202012)


class Schema(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    document: dict[str, Any]
    builtin: bool = False
    model: Any = None  # a pydantic model class when the schema came from one
    file_uri: str | None = None  # the schema file's own address, when its $refs may reach files beside it
    llm_document: dict[str, Any] | None = None  # what the LLM is shown, when it differs from ``document``

    @cached_property
    def fingerprint(self) -> str:
        """Names this exact schema: rows written for it carry it, so a job knows its own output."""
        canonical = json.dumps(self.document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    @cached_property
    def registry(self):
        """The references this schema may follow (built on demand: it does not travel to Ray workers)."""
        from referencing import Registry

        return Registry(retrieve=_SchemaFolder(_folder_of(self.file_uri)))

    @property
    def checked_document(self) -> dict[str, Any]:
        """The document rows are validated against, anchored at its file so relative $refs resolve there."""
        if self.file_uri and "$id" not in self.document:
            return {"$id": self.file_uri, **self.document}
        return self.document

    def __getstate__(self):  # the cached registry holds a function: leave it behind when pickled
        state = super().__getstate__()
        state["__dict__"] = {k: v for k, v in state["__dict__"].items() if k not in ("registry", "fingerprint")}
        return state


def _nesting(document: Any) -> int:
    """How deeply ``document`` nests (counted without recursion: the document may be hostile)."""
    deepest, stack = 0, [(document, 1)]
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_NESTING:
            return depth
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _subschemas(schema: dict) -> tuple[list[Any], list[Any]]:
    """A schema's subschemas that apply to the same value, and those that apply to parts of it."""
    same = [schema[k] for k in _SAME_VALUE_ONE if k in schema]
    same += [s for k in _SAME_VALUE_MANY for s in schema.get(k) or [] if isinstance(schema.get(k), list)]
    inner = [schema[k] for k in _INNER_ONE if isinstance(schema.get(k), dict)]
    inner += [s for k in _INNER_MAP if isinstance(schema.get(k), dict) for s in schema[k].values()]
    inner += [s for k in _INNER_MANY if isinstance(schema.get(k), list) for s in schema[k]]
    dependencies = schema.get("dependencies")
    if isinstance(dependencies, dict):
        inner += [s for s in dependencies.values() if isinstance(s, dict)]
    return [s for s in same if isinstance(s, dict)], [s for s in inner if isinstance(s, dict)]


def _has_cycle(edges: dict[int, list[int]]) -> bool:
    """Whether the graph loops (an iterative depth-first search: a hostile chain of $refs may be long)."""
    colour: dict[int, int] = {}  # 1 on the current path, 2 finished
    for start in edges:
        if colour.get(start):
            continue
        colour[start] = 1
        stack = [(start, iter(edges[start]))]
        while stack:
            node, pending = stack[-1]
            step = next(pending, None)
            if step is None:
                colour[node] = 2
                stack.pop()
            elif colour.get(step) == 1:
                return True
            elif not colour.get(step):
                colour[step] = 1
                stack.append((step, iter(edges.get(step, ()))))
    return False


class _Graph:
    """Every subschema reachable from the root, $refs followed: which apply to the same value, which to parts."""

    def __init__(self, document: dict, registry, name: str, file_uri: str | None) -> None:
        from referencing.jsonschema import DRAFT202012

        self.name, self.spec = name, DRAFT202012
        own_id = document.get("$id")
        self.base = own_id if isinstance(own_id, str) and own_id else file_uri or "urn:marlin-agent:schema"
        self.registry = registry.with_resource(self.base, self.spec.create_resource(document))
        self.same: dict[int, list[int]] = {}
        self.inner: dict[int, list[int]] = {}
        self.nodes: dict[int, tuple[dict, Any]] = {}
        self.external = False
        self.spelled = 0
        self._build(document)

    def _lookup(self, ref: str, resolver):
        from referencing.exceptions import Unresolvable

        try:
            return resolver.lookup(ref)
        except Unresolvable as exc:
            cause = exc.__cause__ or exc.__context__
            while cause is not None and not isinstance(cause, InvalidSchema):
                cause = cause.__cause__ or cause.__context__
            if cause is not None:
                raise cause from None
            raise InvalidSchema(f"the schema {self.name} has a $ref that leads nowhere: {ref!r}") from None

    def _build(self, document: dict) -> None:
        pending = [(document, self.registry.resolver(self.base), True)]
        while pending:
            schema, resolver, top = pending.pop()
            key = id(schema)
            if key in self.nodes:
                continue
            if not top and isinstance(schema.get("$id"), str):
                resolver = resolver.in_subresource(self.spec.create_resource(schema))
            self.nodes[key] = (schema, resolver)
            same, inner = _subschemas(schema)
            pending.extend((s, resolver, False) for s in same + inner if id(s) not in self.nodes)
            ref = schema.get("$ref", schema.get("$dynamicRef"))
            if isinstance(ref, str):
                resolved = self._lookup(ref, resolver)
                if not ref.startswith("#"):
                    self.external = True
                if isinstance(resolved.contents, dict):
                    # Read in its own document's context: "#/$defs/x" inside another file means that file's.
                    pending.append((resolved.contents, resolved.resolver, False))
                    same.append(resolved.contents)
            self.same[key] = [id(s) for s in same]
            self.inner[key] = [id(s) for s in inner]

    def check(self) -> bool:
        """Refuses $refs that loop on one value; says whether the schema is (legitimately) recursive."""
        if _has_cycle(self.same):
            raise InvalidSchema(f"the schema {self.name} has $refs that loop without reading any data: a value "
                                "would have to match itself forever",
                                hint="Make each $ref lead to the schema of a part of the value (a property or an "
                                     "item), or remove the loop.")
        return _has_cycle({k: self.same[k] + self.inner[k] for k in self.nodes})

    def spelled_out(self, schema: dict, depth: dict[int, int] | None = None) -> Any:
        """``schema`` with every $ref replaced by what it names, recursion cut after ``RECURSION_DEPTH`` levels.

        A few KB of $defs that each name the one before twice spell out to billions of subschemas: past
        ``MAX_SPELLED`` the schema is refused, as no model could be shown it."""
        depth = depth or {}
        self.spelled += 1
        if self.spelled > MAX_SPELLED:
            raise InvalidSchema(f"the schema {self.name}'s $refs spell out to more than {MAX_SPELLED} subschemas",
                                hint="Let each $def be named fewer times, or keep the schema in one file without "
                                     "recursion (it is then shown to the model as it is written).")
        out: dict[str, Any] = {}
        _, resolver = self.nodes[id(schema)]
        ref = schema.get("$ref", schema.get("$dynamicRef"))
        if isinstance(ref, str):
            target = self._lookup(ref, resolver).contents
            seen = depth.get(id(target), 0)
            if seen >= RECURSION_DEPTH:  # deeper levels are left open: the rows are checked against all of it
                kind = target.get("type") if isinstance(target, dict) else None
                out.update({"type": kind} if isinstance(kind, str) else {})
            elif isinstance(target, dict):
                out.update(self.spelled_out(target, {**depth, id(target): seen + 1}))
        for key, value in schema.items():
            if key in ("$ref", "$dynamicRef", "$defs", "definitions", "$id", "$schema", "$anchor", "$dynamicAnchor"):
                continue
            out[key] = self._spell(key, value, depth)
        return out

    def _spell(self, key: str, value: Any, depth: dict[int, int]) -> Any:
        if key in _INNER_MAP and isinstance(value, dict):
            return {k: self.spelled_out(v, depth) if isinstance(v, dict) and id(v) in self.nodes else v
                    for k, v in value.items()}
        if isinstance(value, dict) and id(value) in self.nodes:
            return self.spelled_out(value, depth)
        if isinstance(value, list):
            return [self.spelled_out(v, depth) if isinstance(v, dict) and id(v) in self.nodes else v for v in value]
        return value


def check(document: Any, name: str, file_uri: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``document`` checked before any work, and what the LLM is shown when that differs (None: the same)."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for
    from referencing import Registry

    if not isinstance(document, dict):
        raise InvalidSchema(f"the schema {name} is a {type(document).__name__}, not a JSON object")
    if _nesting(document) > MAX_NESTING:
        raise InvalidSchema(f"the schema {name} nests deeper than {MAX_NESTING} levels",
                            hint="Flatten it, or name repeated parts under $defs and refer to them with $ref.")
    try:
        validator_for(document).check_schema(document)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "the top level"
        raise InvalidSchema(f"the schema {name} is not valid JSON Schema at {where}: {exc.message}") from exc
    if document.get("type") != "object":
        raise InvalidSchema(f"the schema {name} describes {document.get('type', 'anything')!r}, "
                            "not an object (one row)")
    graph = _Graph(document, Registry(retrieve=_SchemaFolder(_folder_of(file_uri))), name, file_uri)
    recursive = graph.check()
    return document, (graph.spelled_out(document) | {"title": document.get("title", name)}
                      if recursive or graph.external else None)


def _named(name: str, document: dict, file_uri: str | None = None, **extra: Any) -> Schema:
    document, shown = check(document, name, file_uri)
    return Schema(name=name, document=document, llm_document=shown, file_uri=file_uri, **extra)


def load_schema(source: str | Path | type[BaseModel] | dict, files_beside: bool = True) -> Schema:
    """A schema from a path, the name ``marlin``, a JSON Schema dict or a pydantic model class.

    ``files_beside``: a schema file's $refs may name JSON files in its folder (the command line);
    a front door for other agents passes False so references stay inside the schema."""
    if isinstance(source, type) and issubclass(source, BaseModel):
        return _named(source.__name__, source.model_json_schema(), model=source)
    if isinstance(source, dict):
        title = source.get("title")
        return _named(title if isinstance(title, str) and title.strip() else "schema", source)
    if str(source) == BUILTIN:
        return Schema(name=BUILTIN, document=MARLIN_SCHEMA, builtin=True)
    path = Path(source)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InvalidSchema(f"no schema file at {path}",
                            hint=f"Give a JSON Schema file, or --schema {BUILTIN} for Marlin's own scene "
                                 "and events.") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidSchema(f"{path} is not JSON: {exc}") from exc
    except RecursionError:
        raise InvalidSchema(f"{path} nests deeper than {MAX_NESTING} levels") from None
    return _named(path.stem, document, path.resolve().as_uri() if files_beside else None)


def validation_errors(schema: Schema, data: Any) -> list[str]:
    """Every way ``data`` breaks the schema, as "where: what" lines (empty when it is valid)."""
    from jsonschema.validators import validator_for

    document = schema.checked_document
    validator = validator_for(document)(document, registry=schema.registry)
    try:
        errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    except RecursionError:
        return ["(row): nested too deeply to check"]
    return [f"{'/'.join(str(p) for p in error.absolute_path) or '(row)'}: {error.message}" for error in errors]
