"""A stand-in for the extraction LLM: reads the unit's events and fills the ``objects`` schema.

Like the scripted planner it is a pydantic-ai ``FunctionModel`` callback, so the structured
request, validation, re-asking and usage all run for real. ``first`` chooses a bad first
answer to exercise the re-asking: ``"bad_json"`` (arguments that are not JSON) or
``"bad_enum"`` (a motion the schema does not allow); ``always_invalid`` never validates.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

_EVENT = re.compile(r"^<(?P<start>[\d.]+) - (?P<end>[\d.]+)> an? (?P<colour>\w+) (?P<shape>\w+) (?P<rest>.*)$")


def _objects(text: str) -> list[dict]:
    found = []
    for line in text.splitlines():
        match = _EVENT.match(line.strip())
        if match:
            rest = match["rest"]
            motion = "left_to_right" if "left to right" in rest else "right_to_left" if "right to left" in rest else "still"
            found.append({"colour": match["colour"], "shape": match["shape"], "motion": motion,
                          "start": float(match["start"]), "end": float(match["end"])})
    return found


@dataclass
class ScriptedExtractor:
    first: str | None = None
    always_invalid: bool = False
    calls: int = 0

    def model(self) -> FunctionModel:
        return FunctionModel(self, model_name="scripted-extractor")

    def __call__(self, messages, info: AgentInfo) -> ModelResponse:
        self.calls += 1
        unit = next(str(p.content) for m in messages if m.kind == "request" for p in m.parts
                    if p.part_kind == "user-prompt")
        answers = sum(1 for m in messages if m.kind == "response")
        scene = unit.split("Scene:\n- ", 1)[1].split("\n", 1)[0] if "Scene:\n- " in unit else ""
        row = {"setting": scene.split(" seen ")[0] or "unknown", "objects": _objects(unit),
               "speech": "(no speech)" not in unit}
        if self.always_invalid or (answers == 0 and self.first == "bad_enum"):
            row["objects"] = [{**o, "motion": "sideways"} for o in row["objects"]] or [
                {"colour": "red", "shape": "circle", "motion": "sideways", "start": 0, "end": 1}]
        if answers == 0 and self.first == "bad_json":
            return self._reply(info, '{"setting": "a field", "objects": [')
        return self._reply(info, json.dumps(row))

    @staticmethod
    def _reply(info: AgentInfo, text: str) -> ModelResponse:
        """As the request asked: a call of the output tool, or the JSON as text (a schema the server enforces)."""
        if info.output_tools:
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, text)])
        return ModelResponse(parts=[TextPart(text)])
