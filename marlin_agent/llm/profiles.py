"""What an LLM server accepts, found out once and remembered.

OpenAI-compatible servers differ in what they take: llama-cpp-python's server refuses
``tool_choice: "required"`` and an assistant message whose content is null; it takes a JSON
schema only as ``{"type": "json_object", "schema": …}``; llama.cpp's own server also takes it as
a top-level ``json_schema`` field; older vLLM as ``guided_json``. The first request that a server
refuses is sent again in the next form it may accept (``transport``), and the form that worked
is written here, per server address and model, so later runs start with it.

Separately, whether the *model* answers in the structured form asked for (``structured``) is
learnt by the code that reads its replies: a model that answers tool definitions with prose is
asked with a JSON schema, or with the schema in its instructions.
"""

from __future__ import annotations

import json
import os
import threading
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ValidationError


class SchemaForm(str, Enum):
    """How a JSON schema that constrains the reply is put in a request."""

    response_format = "response_format"  # OpenAI's {"type": "json_schema", "json_schema": {...}}
    json_object = "json_object"  # {"type": "json_object", "schema": ...} (llama-cpp-python, Anyscale)
    llama_cpp = "llama_cpp"  # llama.cpp's top-level "json_schema" field, turned into a grammar
    guided_json = "guided_json"  # vLLM's older extra field
    none = "none"  # no constraint: the schema goes in the instructions and the reply is read leniently


class Structured(str, Enum):
    """How the model is asked for a structured reply."""

    native = "native"  # a JSON schema the server enforces (in the SchemaForm above)
    tool = "tool"  # a tool the model must call
    prompted = "prompted"  # the schema in the instructions, the JSON read out of the text


class ServerProfile(BaseModel):
    schema_form: SchemaForm = SchemaForm.response_format
    tool_choice_required: bool = True
    null_content: bool = True
    max_completion_tokens: bool = True
    structured: Structured | None = None  # None: not found out yet (native is tried first)

    def describe(self) -> str:
        quirks = [f"schema as {self.schema_form.value}"]
        if not self.tool_choice_required:
            quirks.append('tool_choice "auto" only')
        if not self.null_content:
            quirks.append("no null content")
        if not self.max_completion_tokens:
            quirks.append("max_tokens, not max_completion_tokens")
        if self.structured is not None:
            quirks.append(f"structured replies {self.structured.value}")
        return ", ".join(quirks)


class ProfileBook:
    """Profiles per ``base_url|model``, kept in a JSON file (or only in memory when ``path`` is None)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._profiles: dict[str, ServerProfile] = {}
        if path is not None and path.exists():
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
                self._profiles = {key: ServerProfile.model_validate(value) for key, value in raw.items()}
            except (OSError, ValueError, ValidationError):
                self._profiles = {}  # a damaged file is found out again, not trusted

    @staticmethod
    def key(base_url: str, model: str) -> str:
        return f"{base_url.rstrip('/')}|{model}"

    def get(self, key: str) -> ServerProfile:
        with self._lock:
            return self._profiles.get(key, ServerProfile()).model_copy()

    def update(self, key: str, **changes) -> ServerProfile:
        with self._lock:
            profile = self._profiles.get(key, ServerProfile()).model_copy(update=changes)
            self._profiles[key] = profile
            self._save()
            return profile

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            temporary.write_text(json.dumps({k: v.model_dump(mode="json") for k, v in self._profiles.items()},
                                            indent=1), encoding="utf-8")
            os.chmod(temporary, 0o600)
            temporary.replace(self.path)
        except OSError:
            pass  # remembering is an optimisation: the next run finds the same out again
