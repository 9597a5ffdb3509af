"""Filling one row: Marlin's own output mapped directly, or a small LLM restructuring it.

The LLM answers through pydantic-ai's structured output; every answer is validated
against the user's JSON Schema with ``jsonschema`` and, when it fails, sent back with the
errors so the model can fix them. A row that never validates is returned as invalid with
the last errors, never dropped.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

from marlin_agent.errors import MissingDependency, PlannerUnavailable
from marlin_agent.extraction.schema import Schema, validation_errors
from marlin_agent.extraction.units import Unit
from marlin_agent.resources import data_path


class Filled(BaseModel):
    data: Any
    valid: bool
    error: str | None = None
    tokens: int = 0


def from_marlin(unit: Unit) -> Filled:
    """The built-in schema: scenes and events as Marlin gave them, no LLM involved."""
    return Filled(data={"scenes": unit.scenes, "events": [e.model_dump() for e in unit.events]}, valid=True)


class RowFiller:
    """An LLM that fills ``schema`` from a unit's captions and speech (pydantic-ai; the planner extra).
    Only schemas other than the built-in "marlin" one need it, so it is imported here, not above."""

    def __init__(self, schema: Schema, model, instructions: str | None = None, retries: int = 2) -> None:
        try:
            from pydantic_ai import Agent, ModelRetry, StructuredDict
        except ImportError as exc:
            raise MissingDependency("Filling a schema with an LLM", "planner") from exc
        self.schema = schema
        self.model_name = getattr(model, "model_name", None) or str(model)  # what the rows say filled them
        prompt = data_path("prompts/extract.md").read_text(encoding="utf-8")
        if instructions:
            prompt += f"\n\nThe user's instructions for this job:\n{instructions}"
        # A copy: the structured-output machinery adapts the schema it is given in place.
        shown = copy.deepcopy(schema.llm_document or schema.document)
        output = StructuredDict(shown, name="row", description=f"One {schema.name} record.")
        self.agent = Agent(model, output_type=output, instructions=prompt, retries={"output": retries})
        self._errors: list[str] = []

        @self.agent.output_validator
        def valid(data: dict) -> dict:
            errors = validation_errors(schema, data)
            self._errors = errors
            if errors:
                raise ModelRetry("The record does not match the schema:\n" + "\n".join(f"- {e}" for e in errors))
            return data

    async def fill(self, unit: Unit, max_tokens: int) -> Filled:
        from pydantic_ai import RunUsage, UsageLimits
        from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior, UsageLimitExceeded

        usage = RunUsage()
        self._errors = []
        try:
            result = await self.agent.run(unit.text(), usage=usage,
                                          usage_limits=UsageLimits(request_limit=8, total_tokens_limit=max_tokens))
        except UnexpectedModelBehavior as exc:
            reason = "; ".join(self._errors) if self._errors else str(exc)
            return Filled(data=None, valid=False, error=f"no valid record after retries: {reason}",
                          tokens=usage.total_tokens)
        except UsageLimitExceeded as exc:
            return Filled(data=None, valid=False, error=f"token budget exhausted: {exc}", tokens=usage.total_tokens)
        except ModelAPIError as exc:
            raise PlannerUnavailable(f"the extraction model failed: {exc}") from exc
        return Filled(data=result.output, valid=True, tokens=usage.total_tokens)
