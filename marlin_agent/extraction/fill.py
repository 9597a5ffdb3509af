"""Filling one row: Marlin's own output mapped directly, or a small LLM restructuring it.

The LLM is asked for the row the most reliable way its server offers (``llm.structured``): the
user's schema, cut to what servers can enforce (``server_schema``), goes with the request as a
constraint (OpenAI's ``response_format``, llama.cpp's grammar, vLLM's guided decoding), or, where the
server takes none, in the instructions, with the reply read leniently. Every answer is then checked
against the whole schema with ``jsonschema`` and, when it fails, sent back with the errors so the
model can fix them. Each request is capped in tokens (from the schema's and the unit's size) and in
time; a row that never validates is returned as invalid with the last errors, never dropped.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic import BaseModel

from marlin_agent.errors import MissingDependency
from marlin_agent.extraction.material import contradictions
from marlin_agent.extraction.schema import Schema, validation_errors
from marlin_agent.extraction.units import Unit
from marlin_agent.resources import data_path

# Keywords a server that constrains replies cannot enforce (or that break its grammar): left out of what it is
# sent, and still checked by jsonschema on every answer.
_UNENFORCEABLE = frozenset({"not", "if", "then", "else", "patternProperties", "dependentSchemas",
                            "dependentRequired", "unevaluatedProperties", "unevaluatedItems", "contains",
                            "minContains", "maxContains", "uniqueItems", "multipleOf", "propertyNames",
                            "$schema", "$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$comment", "examples",
                            "readOnly", "writeOnly", "deprecated", "contentEncoding", "contentMediaType"})
# A row's token budget: a floor, then a share of what it is made from.
_ROW_TOKENS_FLOOR = 256
_ROW_TOKENS_CAP = 4096


class Filled(BaseModel):
    data: Any
    valid: bool
    error: str | None = None
    tokens: int = 0
    attempts: int = 0  # answers the model gave (1: right the first time)
    first_valid: bool = False  # the first answer matched the schema
    contradictions: list[str] = []  # values the kept answer chose that its material does not say


def from_marlin(unit: Unit) -> Filled:
    """The built-in schema: scenes and events as Marlin gave them, no LLM involved."""
    return Filled(data={"scenes": [s.text for s in unit.scenes], "events": [e.model_dump() for e in unit.events]},
                  valid=True)


def server_schema(document: Any) -> Any:
    """``document`` with the keywords servers cannot enforce taken out, at every depth."""
    if isinstance(document, dict):
        return {k: server_schema(v) for k, v in document.items() if k not in _UNENFORCEABLE}
    if isinstance(document, list):
        return [server_schema(v) for v in document]
    return document


def row_tokens(schema_text: str, unit_text: str) -> int:
    """What one row may take: a row restates part of its unit in the schema's shape."""
    return min(_ROW_TOKENS_CAP, _ROW_TOKENS_FLOOR + len(schema_text) // 4 + len(unit_text) // 3)


class RowFiller:
    """An LLM that fills ``schema`` from a unit's captions and speech (the planner extra).
    Only schemas other than the built-in "marlin" one need it, so it is imported here, not above."""

    def __init__(self, schema: Schema, model, instructions: str | None = None, retries: int = 2,
                 timeout: float | None = None) -> None:
        try:
            from marlin_agent.llm.models import as_llm
        except ImportError as exc:
            raise MissingDependency("Filling a schema with an LLM", "planner") from exc
        self.schema = schema
        self.llm = as_llm(model)
        self.model_name = self.llm.name  # what the rows say filled them
        self.retries = retries
        self.timeout = timeout
        prompt = data_path("prompts/extract.md").read_text(encoding="utf-8")
        if instructions:
            prompt += f"\n\nThe user's instructions for this job:\n{instructions}"
        self.prompt = prompt
        # A copy: what the server is sent is cut down, and the structured-output machinery adapts it in place.
        self.sent = server_schema(copy.deepcopy(schema.llm_document or schema.document))
        self.sent_text = json.dumps(self.sent, separators=(",", ":"))

    async def fill(self, unit: Unit, max_tokens: int) -> Filled:
        """The row for ``unit``: asked for, re-asked with the schema's errors until it validates, and once
        more when a valid row contradicts its material (``material``), keeping the better of the two."""
        from pydantic_ai import ModelRequest, RunUsage

        from marlin_agent.llm.structured import StructuredAsker

        usage = RunUsage()
        asker = StructuredAsker(self.llm, usage, self.timeout)
        text = unit.text()
        messages: list = [ModelRequest.user_text_prompt(text, instructions=self.prompt)]
        errors: list[str] = []
        kept: Filled | None = None  # a valid row sent back for contradicting its material
        cap = row_tokens(self.sent_text, text)
        for attempt in range(1, self.retries + 2):
            if usage.total_tokens >= max_tokens:
                return kept or Filled(data=None, valid=False, error=f"token budget exhausted: {usage.total_tokens} "
                                      f"of {max_tokens} tokens spent; last errors: {'; '.join(errors)}",
                                      tokens=usage.total_tokens, attempts=attempt - 1)
            reply = await asker.ask(list(copy.copy(messages)), copy.deepcopy(self.sent), self.prompt, name="row",
                                    description=f"One {self.schema.name} record.", max_tokens=cap)
            errors = (["(row): the reply holds no JSON object (it may have been cut off at the token cap)"]
                      if reply.value is None else validation_errors(self.schema, reply.value))
            if errors:
                messages += [reply.response, reply.then(
                    "The record does not match the schema:\n" + "\n".join(f"- {e}" for e in errors[:20])
                    + "\nAnswer again with the whole record, fixed.", self.prompt)]
                continue
            contradicted = contradictions(self.schema.document, reply.value, unit)
            filled = Filled(data=reply.value, valid=True, tokens=usage.total_tokens, attempts=attempt,
                            first_valid=attempt == 1 if kept is None else kept.first_valid,
                            contradictions=contradicted)
            if kept is not None:  # the second opinion: taken when it contradicts the material less
                better = filled if len(contradicted) < len(kept.contradictions) else kept
                return better.model_copy(update={"tokens": usage.total_tokens, "attempts": attempt})
            if not contradicted or attempt > self.retries:
                return filled
            kept = filled
            messages += [reply.response, reply.then(
                "The record matches the schema, but some values are not what the material says:\n"
                + "\n".join(f"- {c}" for c in contradicted[:20])
                + "\nAnswer again with the whole record, with those values as the material states them.",
                self.prompt)]
        return kept or Filled(data=None, valid=False, error=f"no valid record after {self.retries + 1} answers: "
                              f"{'; '.join(errors)}", tokens=usage.total_tokens, attempts=self.retries + 1)
