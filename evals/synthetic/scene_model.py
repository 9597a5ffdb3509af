"""The shape of a realistic-world scene: events with captioner wordings, users' questions, hard negatives."""

from __future__ import annotations

from pydantic import BaseModel, Field

QUESTION_KINDS = ("question", "paraphrase", "partial")
NEGATIVE_KINDS = ("same_actor", "other_object", "opposite", "never")


class Happening(BaseModel):
    """One event: when it happens and how a captioner words it (visual) or what is said (speech)."""

    start: float
    end: float
    captions: list[str] = Field(default=[], description="Captioner sentences for a visual event, 3 wordings.")
    said: str = Field("", description="For an event that is only said: the spoken line (espeak-ng).")
    questions: dict[str, str] = Field(description="question kind -> how a user asks for it.")

    @property
    def spoken(self) -> bool:
        return bool(self.said)


class Scene(BaseModel):
    name: str
    kind: str
    duration: float
    backdrop: tuple[int, int, int]
    scenes: list[str]
    events: list[Happening]
    negatives: dict[str, str] = Field(description="negative kind -> an event that never happens in this video.")


def _q(question: str, paraphrase: str, partial: str) -> dict[str, str]:
    return {"question": question, "paraphrase": paraphrase, "partial": partial}


def _n(same_actor: str, other_object: str, opposite: str, never: str) -> dict[str, str]:
    return {"same_actor": same_actor, "other_object": other_object, "opposite": opposite, "never": never}
