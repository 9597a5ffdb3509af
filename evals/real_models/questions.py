"""The fixed questions the real-model eval asks: the realistic world's held-out scenes only.

Per held-out scene, two events asked in one of the three ways users ask (the question, a
paraphrase in other words, a partial description; the way turns from scene to scene), every
event that is only said (speech), and two hard negatives whose kind also turns (the same actor
doing something else, the same act on another object, the opposite act, something that never
happens). The choice is a fixed function of the scenes, so every run asks the same questions.
"""

from __future__ import annotations

from pydantic import BaseModel

from evals.synthetic.scene_model import NEGATIVE_KINDS, QUESTION_KINDS
from evals.synthetic.scenes import scenes


class RealQuestion(BaseModel):
    scene: str
    question: str
    present: bool
    kind: str  # question / paraphrase / partial / speech, or the negative's kind
    event: int | None = None  # the scene's event number, for a present one

    @property
    def key(self) -> str:
        return f"{self.scene}|{self.question}"


def real_questions() -> list[RealQuestion]:
    chosen: list[RealQuestion] = []
    asked = negative = 0
    for number, scene in enumerate(scenes("heldout")):
        seen_events = [n for n, e in enumerate(scene.events) if not e.spoken]
        picks = dict.fromkeys(seen_events[(number + step) % len(seen_events)] for step in (0, 2))
        for n in picks:
            kind = QUESTION_KINDS[asked % len(QUESTION_KINDS)]
            asked += 1
            chosen.append(RealQuestion(scene=scene.name, question=scene.events[n].questions[kind], present=True,
                                       kind=kind, event=n))
        for n, event in enumerate(scene.events):
            if event.spoken:
                chosen.append(RealQuestion(scene=scene.name, question=event.questions["question"], present=True,
                                           kind="speech", event=n))
        kinds = [k for k in NEGATIVE_KINDS if k in scene.negatives]
        for i in range(2):
            kind = kinds[(negative + i) % len(kinds)]
            chosen.append(RealQuestion(scene=scene.name, question=scene.negatives[kind], present=False, kind=kind))
        negative += 2
    return chosen
