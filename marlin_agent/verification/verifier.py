"""The verifier: every signal and the decision, built complete once per run.

Both planners and the toolbox call it; nothing else decides whether a moment may be
reported. It reads the registered signals over a span's texts, then turns the evidence into
one confidence with the rules that keep an answer honest:

- **Seen, not only said.** For a question about what is seen, speech corroborates but cannot
  confirm: when the visual evidence alone falls clearly short, the confidence is the visual
  one. A question about what is said ("when does she mention the budget") is answered from
  the transcript, and the answer says so.
- **A contradiction vetoes.** Evidence a signal declares a veto (the lexical signal's: a description
  over the span that denies a key word of the event, "a red square" for "the red circle", "closes"
  for "opens") keeps the moment under the threshold, however alike the rest reads: that is what a
  near miss looks like.
- **The act must be said.** When the event names an act ("the baker slices the loaf") that no
  description over the span says, neither word for word (the lexical signal) nor in meaning (the
  entailment model), the moment is another one of the same scene, whatever else matches. Nor when
  only the entailment model reads it there, in a description that hardly reads like the event at
  all: that is a small model's known false "yes" ("the teacher wipes the whiteboard clean" read
  into "the teacher draws out a division problem in marker pen").
- **So must a thing.** The same two tests hold for the things the event names: when no word over the
  span names any of them, the moment is out unless the entailment model reads the event there, in a
  description that reads like it ("a motorbike crashes into the crowd" against "one cyclist in green
  loses grip and falls onto the grass" is that same false "yes").
- **A judge confirms only what already reads like the event.** With a planner LLM configured, its verdict
  on the fresh caption raises a confidence only where a description over the span already reads like the
  event (it reads alike; where nothing measured that, the entailment model reads the event there: its "yes" in a
  description unlike the event is the false "yes" above, which a judge's does not redeem) and no text there
  spoke to its reader (``instructions``): text in the footage that talks the judge into "yes" changes nothing.
  By default (``[verify] judge = "only-lifts"``) its "not shown" changes nothing either: a small model reads a
  description literally and costs more right moments than wrong ones; ``"lifts"`` lets it lower a confidence
  anywhere as well, ``"lowers"`` only lower one. Where it lifts, and only there, its "shown" also answers the
  act and things rules: an act said in words no reading rule links ("takes a tumble" for "falls"), which a
  second model reads in the description too, is not held back for want of a matching word (nor a thing named
  so: ``said_nowhere`` covers both); and where the entailment model reads the event there, it answers the veto
  of a description that says none of its words (``Rule.UNWORDED``: "the breakaway" in "two riders attack off
  the front"). A denial ("a red square" for "the red circle") it never answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from functools import cached_property
from pathlib import Path
from typing import Any

from marlin_agent.config import JudgeRule, Settings
from marlin_agent.domain import Evidence
from marlin_agent.verification.calibration import Calibration, calibration_for
from marlin_agent.verification.confidence import JUDGE_KIND, confidence_of, features, roles
from marlin_agent.verification.entailment import model_folder
from marlin_agent.verification.features import Rule
from marlin_agent.verification.instructions import INSTRUCTIONS_KIND, addressed, described
from marlin_agent.verification.journal import Journal, Logged
from marlin_agent.verification.signals import SPEECH_VERB, Embed, SpanTexts, build_signals
from marlin_agent.verification.signals.lexical import Lexical

# A judge reads Marlin's fresh caption of a span (the toolbox's SpanCaption, which sits above this
# layer) and says whether the event is in it: (score in 0..1, a one-line reason).
Judge = Callable[[str, Any], Awaitable[tuple[float, str]]]

# Speech may lift a seen event over the threshold only when what is seen comes this close on its own.
SPEECH_MARGIN = 0.1
# Evidence a signal declares a veto (``Feature.veto``) keeps a moment this far under the threshold.
CONTRADICTED_MARGIN = 0.05
# The level of the entailment model's reading of the descriptions over a span (``Rule.DESCRIBED``) under which
# it does not read the event there.
UNREAD = 0.5
# The likeness (``Rule.LIKENESS``: the similarity signal's score) under which a description hardly reads like
# the event (MiniLM cosine about 0.49): an entailment model's "yes" there does not make an act no word says. The
# middle of the levels (0.205 to 0.285) that score the realistic world's calibration part best, replayed.
UNLIKE = 0.245
# The share of a topic's words a line said must say for the line to answer it (``Verifier.answered_by_line``):
# every word, each said outright (the word, a synonym, a kind of it), none only in part.
WORDED = 0.99
# The judge's "shown" (a verdict enters as 2·score − 1: shown 1, unclear 0, not shown −1).
JUDGE_SHOWN = 1.0


def about_speech(question: str) -> bool:
    """Does the question ask what is said (answered from transcripts) rather than what is seen?"""
    return bool(SPEECH_VERB.search(question))


def _likeness(found: dict[str, float]) -> float | None:
    """How much a description over the span reads like the event (None: nothing measured it)."""
    measured = [found[kind] for kind in roles().read_by[Rule.LIKENESS] if kind in found]
    return max(measured) if measured else None


def unsaid(found: dict[str, float], part: Rule) -> bool:
    """The part of the event a feature read by ``part`` measures (``Rule.ACT``: the act, "slices";
    ``Rule.THINGS``: the things, "a motorbike", "the crowd") is said by no description over the span, in words
    or in meaning: another moment of the same scene, or of another."""
    if not any(found.get(kind) == 0.0 for kind in roles().read_by[part]):
        return False
    likeness = _likeness(found)
    return not _read_there(found) or (likeness is not None and likeness < UNLIKE)


def _read_there(found: dict[str, float]) -> bool:
    """The entailment model reads the event in a description over the span."""
    return max((found.get(kind, 0.0) for kind in roles().read_by[Rule.DESCRIBED]), default=0.0) >= UNREAD


def said_nowhere(found: dict[str, float]) -> bool:
    """The act or the things the event names are said nowhere over the span (see ``unsaid``)."""
    return unsaid(found, Rule.ACT) or unsaid(found, Rule.THINGS)


def reads_like(found: dict[str, float]) -> bool:
    """A description over the span already reads like the event: it reads alike (the likeness the act rule asks
    for), or, where nothing measured the likeness, the entailment model reads the event there. An entailment "yes"
    in a description that hardly reads like the event is the small model's false "yes" the act and things rules
    do not trust ("the baker kneads a ball of clay" read into "hands knead and fold the bread dough"); a judge's
    "yes" does not make it trusted."""
    likeness = _likeness(found)
    return likeness >= UNLIKE if likeness is not None else _read_there(found)


def judge_may_lift(found: dict[str, float]) -> bool:
    """Where a judge's "yes" may raise a confidence: a description over the span already reads like the event,
    and no text there spoke to its reader."""
    return reads_like(found) and INSTRUCTIONS_KIND not in found


def judge_shows(found: dict[str, float]) -> bool:
    """The judge said "shown" where it may lift: a second reader of the description found the act (or the
    things) the reading rules found no word for."""
    return found.get(JUDGE_KIND, 0.0) >= JUDGE_SHOWN and judge_may_lift(found)


def combined(found: dict[str, float], calibration: Calibration, speech_question: bool = False,
             judge: JudgeRule = "lowers") -> float:
    """One confidence from feature values, with the rules above: speech corroborates, and the judge's verdict
    (where one was asked) does what ``judge`` lets it (see ``JudgeRule``)."""
    if judge != "only-lifts":
        return _combined(found, calibration, speech_question, judge_lifts=judge == "lifts")
    alone = _combined({kind: value for kind, value in found.items() if kind not in roles().outside}, calibration,
                      speech_question)
    if not judge_shows(found):
        return alone
    return max(alone, _combined(found, calibration, speech_question, judge_lifts=True))


def _combined(found: dict[str, float], calibration: Calibration, speech_question: bool, judge_lifts: bool = False
              ) -> float:
    weights, bias, kinds = calibration.weights, calibration.bias, roles()
    shown = judge_lifts and judge_shows(found)
    if shown and _read_there(found):
        # Two readers find the event in meaning where no word of it is said ("the breakaway" in "two riders
        # attack off the front"): "no word" is answered, not a denial.
        found = {kind: value for kind, value in found.items() if kind not in kinds.read_by[Rule.UNWORDED]}
    everything = confidence_of({k: v for k, v in found.items() if k not in kinds.outside}, weights, bias)
    decided = everything
    if not speech_question:
        seen = confidence_of({k: v for k, v in found.items() if k not in kinds.said and k not in kinds.outside},
                             weights, bias)
        if seen < calibration.threshold - SPEECH_MARGIN:
            decided = min(everything, seen)
    if kinds.outside & found.keys():
        judged = confidence_of(found, weights, bias)
        decided = judged if judge_lifts and judge_may_lift(found) and judged > decided else min(decided, judged)
    held = said_nowhere(found) and not shown
    if any(found.get(kind, 0.0) >= level for kind, level in kinds.vetoes.items()) or held:
        decided = min(decided, round(calibration.threshold - CONTRADICTED_MARGIN, 3))
    return decided


def without_instructions(texts: SpanTexts) -> tuple[SpanTexts, list[str]]:
    """``texts`` with every sentence that speaks to its reader taken out (a row left empty goes), and the
    texts that had such sentences."""
    fenced: list[str] = []

    def clean(rows: list) -> list:
        kept = []
        for row in rows:
            if not addressed(row.text):
                kept.append(row)
                continue
            fenced.append(row.text)
            if said := described(row.text):
                kept.append(Logged(start=row.start, end=row.end, text=said))
        return kept

    events, fresh, lines = clean(texts.events), clean(texts.fresh), clean(texts.lines)
    if not fenced:
        return texts, []
    return dataclasses.replace(texts, events=events, fresh=fresh, lines=lines), fenced


class Verifier:
    """Signals, weights, threshold and judge for one run; ``read`` gathers evidence, ``confidence`` decides."""

    def __init__(self, settings: Settings, embed: Embed, judge: Judge | None = None) -> None:
        self.settings = settings
        self.judge = judge if settings.verify.judge != "off" else None  # a judge that costs more than it adds
        self.signals = build_signals(settings, embed)
        self.journal = Journal(Path(settings.verify.journal).expanduser()) if settings.verify.journal else None

    @cached_property
    def calibration(self) -> Calibration:
        """The weights and threshold for the entailment model in use (resolved on first need)."""
        return calibration_for(self.settings, model_folder(self.settings.verify, self.settings.cache_dir))

    @property
    def weights(self) -> dict[str, float]:
        return self.calibration.weights

    @property
    def bias(self) -> float:
        return self.calibration.bias

    @property
    def threshold(self) -> float:
        return self.calibration.threshold

    def read(self, texts: SpanTexts) -> list[Evidence]:
        """Evidence from every registered signal (free: no Marlin call), read from what the texts describe:
        sentences that speak to their reader are taken out first (``instructions``), and said to have been."""
        clean, fenced = without_instructions(texts)
        evidence = [item for reader in self.signals for item in reader.read(clean)]
        if fenced:
            evidence.append(Evidence(kind=INSTRUCTIONS_KIND, text=f"not read as description: {fenced[0][:200]!r}",
                                     start=texts.span[0], end=texts.span[1], score=1.0))
        if self.journal is not None:
            self.journal.write(texts, features(evidence))
        return evidence

    @cached_property
    def _lexical(self) -> Lexical | None:
        return next((signal for signal in self.signals if isinstance(signal, Lexical)), None)

    def answered_by_line(self, event: str, line: str) -> bool:
        """Does a line said word, in full, an event that is a topic rather than a sight: one that names nobody
        doing anything ("homework due Friday", "the toast"), each of whose words the line says and none of which
        it denies ("your homework is due on Friday", "raise a glass to the happy couple")? Such an event is
        answered from what is said there, and says so. An event with a subject and its verb ("the referee blows
        the final whistle") is a sight, which speech only corroborates, and a line that speaks to its reader
        chooses nothing."""
        lexical = self._lexical
        if lexical is None or about_speech(event) or addressed(line) or lexical.aligner.names_a_clause(event):
            return False
        worded = lexical.aligner.align(event, line, True)
        return bool(worded.aligned) and not worded.missing and not worded.conflicts and worded.support >= WORDED

    def confidence(self, evidence: list[Evidence], speech_question: bool = False) -> float:
        return combined(features(evidence), self.calibration, speech_question, self.settings.verify.judge)

    def passes(self, confidence: float) -> bool:
        return confidence >= self.threshold
