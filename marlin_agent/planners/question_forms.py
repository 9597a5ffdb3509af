"""What kind of question was asked: the form, the event it is about, and the event it is relative to.

"when does the dog jump" asks for a time; "every time the dog jumps" for all of them; "how many
cars ran the light" for a number; "what happens after the goal" for what follows another event;
"the last time the gate opened" for one end of the list; "how long does the kettle boil" for a
length. Each form is answered differently, so reading it wrong answers a different question —
worse than saying so. These rules read the common English forms; a question they place in a form
the agent cannot answer (why, who, what colour ...) is said plainly, never answered as "when".
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from marlin_agent.planners.phrasing import (
    _third_person,
    describes,
    event_description,
    looks_plural,
    one_of,
    singular,
    undo_inversion,
    unframed,
    verb_position,
    with_article,
)

Form = Literal["when", "every", "count", "first", "last", "before", "after", "between", "duration", "unsupported"]
FORMS: tuple[str, ...] = Form.__args__  # type: ignore[attr-defined]


class QuestionPlan(BaseModel):
    """A question read into its parts; ``target`` is what to find, ``anchor`` what it is relative to."""

    form: Form
    target: str | None = Field(None, description="The event asked about, as a plain sentence; None for "
                               "'what happens after X' (anything that follows).")
    anchor: str | None = Field(None, description="The event a before/after/between question is relative to.")
    anchor_end: str | None = Field(None, description="The second anchor of a 'between' question.")
    reason: str | None = Field(None, description="Why the question cannot be answered in this form (unsupported).")
    ordinal: int | None = Field(None, ge=2, description="For 'first': which occurrence is asked for (2 for the "
                                "second time, 3 for the third); None for the first itself.")


_I = re.IGNORECASE
_PAST = {"ran", "went", "came", "saw", "took", "got", "left", "hit", "fell", "flew", "drove", "rode", "threw",
         "caught", "made", "put", "set", "won", "lost", "crossed"}
# The auxiliaries a question opens its clause with ("does the dog jump", "is the door open").
_AUX = r"(?:does|do|did|is|are|was|were)"
_INVERTED = re.compile(r"^(?:does|do|did|is|are|was|were|will|can)\s", _I)
_ANYTHING = r"(?:(?:what|which)(?:\s+(?:else|shape|thing|event|one|object|colou?r))?|anything|something|which events?)"
_HAPPENS = (r"(?:happens?|happened|occurs?|occurred|goes on|is going on|comes?|came|follows?|followed|appears?|"
            r"appeared|precedes?|preceded|takes? place|(?:is|was|gets) (?:shown|said|heard)|do(?:es)? \w+ do|"
            r"did \w+ do)")
_BETWEEN = re.compile(rf"^{_ANYTHING}\s+{_HAPPENS}?\s*between\s+(?P<a>.+?)\s+and\s+(?P<b>.+)$", _I)
# "what happens after the kick-off and before the goal", "from the kick-off until the goal": the same two ends.
_FROM_UNTIL = re.compile(rf"^{_ANYTHING}\s+{_HAPPENS}?\s*(?:after\s+(?P<a>.+?)\s+(?:and|but)\s+before|(?:from|after|"
                         r"since)\s+(?P<a2>.+?)\s+(?:until|till)|from\s+(?P<a3>.+?)\s+to)\s+(?P<b>.+)$", _I)
# "what follows the goal", "what led up to the crash", "what happens in the run-up to the goal".
_FOLLOWS = re.compile(rf"^{_ANYTHING}\s+(?:{_HAPPENS}\s+)?(?P<rel>follows?|followed|precedes?|preceded|"
                      r"leads?\s+up\s+to|led\s+up\s+to|in\s+the\s+(?:lead|run)[-\s]up\s+to|in\s+the\s+aftermath\s+of)\s+"
                      r"(?P<anchor>.+)$", _I)
# ("what happened to the ball after the kick": whatever it happened to, what follows the kick)
_OPEN_RELATION = re.compile(rf"^{_ANYTHING}\s+(?:{_HAPPENS}\s+)?(?:to\s+(?:the\s+|a\s+)?\w+\s+)?(?:next\s+)?"
                            r"(?:right\s+|just\s+|immediately\s+)?(?P<rel>after|before|following|prior to|once)\s+"
                            r"(?P<anchor>.+)$", _I)
_RELATION = re.compile(r"^(?P<target>.+?)\s+(?:right\s+|just\s+|immediately\s+|shortly\s+)?"
                       r"(?P<rel>after|before|following|prior to)\s+(?P<anchor>.+)$", _I)
_IN_ALL = r"(?:in\s+total|altogether|in\s+all)"
_COUNT = re.compile(r"^how\s+(?:many|often)\s+(?:(?:separate|different|distinct|individual)\s+)?(?:times\s+)?"
                    rf"(?:{_IN_ALL}\s+)?(?P<rest>.+?)(?:\s+{_IN_ALL})?$", _I)
# Words after a counted thing that go on naming it ("shots on target", "cars in the car park"), not its verb.
_THING_GOES_ON = frozenset({"on", "in", "at", "of", "with", "from", "by", "near", "inside", "outside", "under"})
# "how many laps does the runner complete": things, then who does what to them.
_THINGS_DONE = re.compile(r"^(?P<things>\w+)\s+(?P<aux>does|do|did)\s+(?P<clause>.+)$", _I)
# "how long does the man spend on the ladder": how long he is there.
_SPENDS = re.compile(r"^how\s+(?:long|much\s+time|many\s+(?:seconds|minutes))\s+(?:does|do|did)\s+(?P<who>.+?)\s+"
                     r"spend\s+(?P<where>(?:on|in|at|inside|outside|under|near|by|beside|behind|with|in\s+front\s+of)\s.+)$",
                     _I)
# "how long does it take for the kettle to boil": the kettle boiling, measured.
_TAKES = re.compile(r"^how\s+long\s+(?:does|did|will)\s+it\s+take\s+(?:for\s+)?(?P<who>.+?)\s+to\s+(?P<act>.+)$", _I)
_EVERY = re.compile(r"^(?:(?:find|show(?:\s+me)?|list|give me|get)\s+)?(?:every|each|all(?:\s+the)?)\s+"
                    r"(?:time|times|moments?|occurrences?|instances?)\s+(?:when\s+|where\s+|that\s+|of\s+)?"
                    r"(?P<rest>.+)$|^whenever\s+(?P<rest2>.+)$|^(?:(?:find|show(?:\s+me)?|list|give me|get)\s+)?the\s+"
                    r"(?:times|moments|occurrences|instances)\s+(?:when\s+|where\s+|that\s+)?(?P<rest3>.+)$", _I)
# "at what times does the dog bark", "what are all the times the dog barks": every one.
_WHAT_TIMES = re.compile(rf"^(?:at\s+)?(?:what|which)\s+(?:times|moments)\s+(?P<aux>{_AUX})\s+"
                         r"(?P<rest>.+)$|"
                         r"^what\s+are\s+(?:all\s+)?the\s+(?:times|moments)\s+(?:when\s+|that\s+)?(?P<rest2>.+)$", _I)
# One table of ordinals, read in questions and said in answers ("the third time").
ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_ORDINALS = {**{word: n for n, word in enumerate(ORDINAL_WORDS, 1)}, "earliest": 1, "last": 0, "final": 0,
             "latest": 0, "most recent": 0}
_WHICH = rf"(?P<which>{'|'.join(_ORDINALS)}|\d+(?:st|nd|rd|th))"
_FIRST_LAST = re.compile(r"^(?:when\s+(?:is|was)\s+|(?:find|show(?:\s+me)?)\s+|what\s+happens\s+)?"
                         rf"(?:the\s+)?{_WHICH}\s+(?:time|moment|occurrence)\s+(?:when\s+|that\s+)?(?P<rest>.+)$", _I)
# "when does the car stop for the last time", "the dog barks the second time".
_FOR_THE_NTH_TIME = re.compile(rf"^(?P<rest>.+?)\s+(?:for\s+)?the\s+{_WHICH}\s+time$", _I)
_FIRST_LAST_VERB = re.compile(rf"^when\s+(?P<aux>{_AUX})\s+(?P<rest>.+?)\s+(?P<which>first|last)\s+"
                              r"(?P<verb>\w+)(?P<tail>.*)$", _I)
# "which shape appears first", "which car arrives last": the first (or last) time one does.
_WHICH_ONE_FIRST = re.compile(r"^(?:which|what)\s+(?P<thing>(?!one\b|event\b|thing\b)\w+)\s+(?P<verb>\w+s)\s+"
                              r"(?P<which>first|last)\s*$", _I)
_DURATION = re.compile(rf"^(?:for\s+)?how\s+(?:long|many\s+(?:seconds|minutes))\s+(?P<rest>{_AUX}\s+.+?)"
                       r"(?P<lasts>\s+(?:last|take|go on|keep going|(?:stay|remain)(?:\s+(?:on\s+screen|"
                       r"in\s+view|in\s+(?:the\s+)?(?:shot|frame|picture)|visible))?))?(?:\s+for)?\s*[?.!]*$", _I)
# "count the times a player scores", "count how often the dog barks": a count asked as an order.
_COUNT_ORDER = re.compile(r"^(?:(?:count|tally)\s+(?:up\s+)?(?:(?:the\s+)?(?:number\s+of\s+)?times\s+|how\s+(?:many\s+"
                          r"times|often)\s+|every\s+time\s+|each\s+time\s+)|(?:the\s+)?number\s+of\s+times\s+)"
                          r"(?:that\s+|when\s+)?(?P<rest>.+)$", _I)
# "count the goals", "count the cars that run the light": one of them, counted.
_COUNT_THINGS = re.compile(r"^(?:count|tally)\s+(?:up\s+)?(?:the\s+|all\s+the\s+)?(?P<things>\w+)"
                           r"(?P<rest>(?:\s+\S+)*)$", _I)
# "which happens first, the dog barking or the door opening": two events compared, not one found.
_WHICH_FIRST = re.compile(r"^(?:which|what)\s+(?:one\s+)?(?:happens|happened|comes|came|is)\s+(?:first|earlier|"
                          r"sooner|last|later)\b", _I)
# "what does the woman do (or say) after the courier leaves": what follows, whoever does it.
_DO_RELATION = re.compile(r"^what\s+(?:does|do|did)\s+.+?\s+(?:do|say|shout|sing)\s+(?:right\s+|just\s+)?"
                          r"(?P<rel>after|before)\s+(?P<anchor>.+)$", _I)
# What a question may be wrapped in: "could you tell me", "I want to know"; ", if at all" after it.
_ASKING = re.compile(r"^\s*(?:please\s+)?(?:(?:can|could|would) you\s+(?:please\s+)?)?(?:tell me\s+|do you know\s+|"
                     r"i\s+(?:want|would like|'d like|need)\s+to\s+(?:know|see|find out)\s+)?", _I)
# "when, if ever, does the dog jump", "how many times, roughly, does it bark": an aside between commas.
_ASIDE = re.compile(r",\s*(?:if\s+ever|if\s+at\s+all|roughly|approximately|about|exactly|more\s+or\s+less|in\s+total|"
                    r"altogether)\s*,\s*", _I)
# "at any point does the dog leave the room", "is the light on at any point": the same moment.
_AT_ANY_POINT = re.compile(r"^at\s+any\s+(?:point|time|stage|moment)\s*,?\s*|\s+at\s+any\s+(?:point|time|stage|moment)"
                           r"(?=\s*[?.!]*$)", _I)
_IF_AT_ALL = re.compile(r",?\s+if\s+(?:at\s+all|ever|any|so|it\s+does|they\s+do)\s*[?.!]*$", _I)
_UNSUPPORTED = re.compile(r"^(?P<word>why|who|whose|which (?:one|person)|what colou?r|how much|how far|how fast|"
                          r"where is|where are|what (?:is|was|are|were) the|what kind)\b", _I)
# Questions no form answers, each with what to ask instead: answered as "when", they would answer another question.
# "when does the dog not bark": Marlin describes what is there, never a stretch where something is not.
_NOT_HAPPENING = re.compile(r"^(?:when|how\s+(?:many\s+times|often))\s+(?:(?:doesn't|don't|didn't|isn't|aren't|wasn't|"
                            rf"weren't)\b|{_AUX}\s+(?:(?:the|a|an|his|her|their|my|our)\s+)?"
                            r"(?:\w+\s+){0,2}?(?:not|never)\b)", _I)
_NOT_CONTRACTED = re.compile(r"\b(does|do|did|is|are|was|were)n't\b", _I)
_NOT = re.compile(r"\s+(?:not|never)\b", _I)
# "how long after the kick-off is the first goal", "how much time passes between the two goals".
_GAP = re.compile(r"^how\s+(?:long|much\s+time|many\s+(?:seconds|minutes))\s+(?:(?:is\s+it|is\s+there|passes|"
                  r"elapses|goes\s+by)\s+)?(?:after|before|between|from)\s", _I)
# "what happens at the end", "what was the first thing he did": a point of the video, not an event.
_AT_A_POINT = re.compile(rf"^(?:{_ANYTHING}\s+{_HAPPENS}\s+(?:at|in|near|towards?)\s+the\s+(?:very\s+)?(?:end|start|"
                         r"beginning|middle|finish)|what\s+(?:is|was)\s+the\s+(?:first|last|final|next)\s+thing)\b", _I)
# "how many circles and squares appear": two counts at once.
_TWO_COUNTS = re.compile(r"^how\s+many\s+\w+s\s+(?:and|or)\s+\w+s\b", _I)
# "what happens before and after the crash": two questions at once.
_BOTH_SIDES = re.compile(rf"^{_ANYTHING}\s+(?:{_HAPPENS}\s+)?(?:right\s+|just\s+)?(?:before\s+and\s+after|"
                         r"after\s+and\s+before|around)\s", _I)
# "when does the bus arrive and when does it leave", "..., and what does she write": two questions in one.
_TWO_QUESTIONS = re.compile(rf"^.+?(?:,\s*|\s)and\s+(?:when|what|how|where|why|who)\s+(?:{_AUX}|happens|many|long)\b",
                            _I)
# An anchor that points back at something said before ("what happens after that"): there is nothing to find.
_POINTING_BACK = frozenset({"that", "this", "it", "then", "them", "those", "these"})
# "the second goal", "the last car": the n-th occurrence of a goal, of a car; not a name ("the second half").
_NTH_THING = re.compile(rf"^the\s+{_WHICH}\s+(?P<noun>\w+)(?P<rest>.*)$", _I)
_NAMED_BY_ORDER = frozenset({"half", "aid", "floor", "class", "hand", "place", "person", "minute", "second", "thing",
                             "one", "ones", "row", "lady", "team", "string", "division", "name", "time", "moment"})
# "all the goals", "each goal": every occurrence of one.
_EVERY_THING = re.compile(r"^(?:(?:find|show(?:\s+me)?|list|give\s+me|get)\s+)?(?:every|each|all(?:\s+(?:of\s+)?the)?)"
                          r"\s+(?P<things>\w+)(?P<rest>(?:\s+\S+)*)$", _I)
# "what happens when X" asks for the moment of X itself; "when" stays a time question.
_WHAT_HAPPENS_WHEN = re.compile(rf"^{_ANYTHING}\s+{_HAPPENS}\s+(?:when|as|while|during)\s+(?P<rest>.+)$", _I)
# "when the man falls, what does the woman do": the same moment, asked the other way round.
_WHEN_THEN_WHAT = re.compile(r"^(?:when|as)\s+(?P<rest>[^,]+),\s*(?:what|who)\b", _I)


def _clean(text: str) -> str:
    return re.sub(r"\s*[?.!]+\s*$", "", text.strip())


def _event(text: str) -> str:
    """An event phrase, in the plain declarative form the rest of the agent grounds and verifies."""
    text = _clean(text)
    if _INVERTED.match(text):
        return event_description(f"when {text}")
    return event_description(text)


def _counted(rest: str) -> str:
    """One occurrence of what "how many <rest>" counts: "times does a car stop" → "a car stops",
    "shapes cross the screen" → "a shape crosses the screen" (each occurrence is verified alone)."""
    rest = re.sub(r"\s+(?:are|were|is|was)\s+there\b", "", _clean(rest), flags=_I)  # "circles are there": circles
    if _INVERTED.match(rest):
        return _event(rest)
    if match := _THINGS_DONE.match(rest):
        # "laps does the runner complete": the runner completes a lap (one counted thing per occurrence).
        clause = match["clause"].split()
        at = verb_position(clause)
        if at is not None and looks_plural(match["things"]):
            done = undo_inversion(match["aux"], " ".join(clause)).split()
            return " ".join([*done[: at + 1], with_article(singular(match["things"])), *done[at + 1:]])
    words = rest.split()
    # "red shapes appear": what the things are like comes with them.
    at = next((i for i in (1, 2) if i < len(words) and looks_plural(words[i]) and all(map(describes, words[:i]))), 0)
    if at:
        words = [" ".join(words[: at + 1]), *words[at + 1:]]
    if words and looks_plural(words[0]):
        noun = " ".join([*words[0].split()[:-1], singular(words[0].split()[-1])])
        if len(words) == 1 or words[1].lower() in _THING_GOES_ON:
            # "how many circles (are there)", "how many shots on target": one of them, each one counted
            return " ".join([with_article(noun), *words[1:]])
        verb = words[1]
        if verb.lower() in ("are", "were", "have"):
            verb = {"are": "is", "were": "was", "have": "has"}[verb.lower()]
        elif not re.search(r"(?:ed|[^s]s)$", verb, _I) and verb.lower() not in _PAST:
            verb = _third_person(verb)
        return " ".join([with_article(noun), verb, *words[2:]])
    return event_description(rest)


def read_question(question: str) -> QuestionPlan:
    """The form of ``question`` and the events in it (rule-based; the LLM planner uses the same plan)."""
    asked = unframed(question.lower() if question.isupper() else question)  # "WHEN DOES THE DOG JUMP"
    text = _clean(_IF_AT_ALL.sub("", _clean(_ASKING.sub("", _ASIDE.sub(" ", _AT_ANY_POINT.sub("", asked))))))
    if not text:
        return QuestionPlan(form="when", target=question.strip())
    # "every time X, and how many times": the every form carries the count already.
    text = re.sub(r",?\s*(?:and\s+)?how many times(?:\s+(?:it|that|this)\s+\w+)?\s*$", "", text, flags=_I)
    # In this order: an anchored form ("between", "what happens after") before the forms that
    # measure an event, and "X after Y" last, since its pattern would take most questions.
    for form in (_cannot, _anchored, _measured, _unsupported, _relative):
        if plan := form(text):
            return plan
    target = event_description(text)
    return _nth_thing(target) or QuestionPlan(form="when", target=target)


def _relation_word(word: str) -> str:
    return "before" if re.match(r"(?:before|prior to|precede|lead|led|in the (?:lead|run))", word, _I) else "after"


_CAN_TELL = ("I can tell when something happens, every time it happens, how many times, what happens before or after "
             "something, the first or last time, and how long it lasts")


_CANNOT = (
    (_NOT_HAPPENING, "this asks when something does not happen; I find the moments it does, and say \"not found\" "
                     "when there are none"),
    (_GAP, 'this asks how much time lies between two events; ask "what happens between X and Y", whose answer '
           "gives when each of them happens"),
    (_AT_A_POINT, "this asks what happens at a point of the video rather than when an event happens; name an event "
                  'and ask when it happens, or what happens before or after it'),
    (_BOTH_SIDES, 'this asks two things at once; ask "what happens before X", then "what happens after X"'),
    (_TWO_QUESTIONS, "this asks two questions at once; ask each on its own"),
    (_TWO_COUNTS, "this asks for two counts at once; ask how many of each there are"),
)


def _affirmed(text: str) -> str:
    """A negated question asked the other way: "when doesn't the dog bark" -> "when does the dog bark"."""
    return _NOT.sub("", _NOT_CONTRACTED.sub(r"\1", text))


def _cannot(text: str) -> QuestionPlan | None:
    """A question that reads like a form but asks something none answers, said with what to ask instead (a
    negated one names the event whose moments it does find: "the dog barks", not "the dog not barks")."""
    for pattern, reason in _CANNOT:
        if pattern.match(text):
            asked = _affirmed(text) if pattern is _NOT_HAPPENING else text
            return QuestionPlan(form="unsupported", target=_event(asked), reason=reason)
    return None


def _nth_thing(target: str) -> QuestionPlan | None:
    """ "the second goal", "the last car passes": the n-th (or last) occurrence of a goal, of a car passing."""
    match = _NTH_THING.match(target)
    if match is None or match["noun"].lower() in _NAMED_BY_ORDER:
        return None
    return _nth(match["which"], f"{with_article(match['noun'])}{match['rest']}")


def _anchored(text: str) -> QuestionPlan | None:
    if match := _BETWEEN.match(text):
        return QuestionPlan(form="between", anchor=_event(match["a"]), anchor_end=_event(match["b"]))
    if match := _FROM_UNTIL.match(text):
        return QuestionPlan(form="between", anchor=_event(match["a"] or match["a2"] or match["a3"]),
                            anchor_end=_event(match["b"]))
    if match := _OPEN_RELATION.match(text) or _DO_RELATION.match(text) or _FOLLOWS.match(text):
        if _clean(match["anchor"]).lower() in _POINTING_BACK:
            return QuestionPlan(form="unsupported", target=_event(text),
                                reason=f'"{match["anchor"]}" points back at something said before; name the event, '
                                       'as in "what happens after the goal"')
        return QuestionPlan(form=_relation_word(match["rel"]), anchor=_event(match["anchor"]))
    if match := _WHAT_HAPPENS_WHEN.match(text) or _WHEN_THEN_WHAT.match(text):
        return QuestionPlan(form="when", target=_event(match["rest"]))
    return None


def _measured(text: str) -> QuestionPlan | None:
    if match := _SPENDS.match(text):
        return QuestionPlan(form="duration", target=_event(f"is {match['who']} {match['where']}"))
    if match := _TAKES.match(text):
        return QuestionPlan(form="duration", target=_event(f"does {match['who']} {match['act']}"))
    if match := _DURATION.match(text):
        # "does the red square stay on screen" asks how long it is there: "appear" stands in for the verb
        # that only says so, which the inversion needs and the event then drops.
        rest = f"{match['rest']} appear" if match["lasts"] else match["rest"]
        return QuestionPlan(form="duration", target=_event(rest))
    if match := _COUNT.match(text) or _COUNT_ORDER.match(text):
        return QuestionPlan(form="count", target=_counted(match["rest"]))
    if match := _COUNT_THINGS.match(text):
        return QuestionPlan(form="count", target=_one_of(match["things"], match["rest"]))
    if match := _FIRST_LAST.match(text) or _FOR_THE_NTH_TIME.match(text):
        return _nth(match["which"], _event(re.sub(r"^when\s+(?=(?:does|do|did|is|was)\s)", "", match["rest"],
                                                  flags=_I)))
    match = _FIRST_LAST_VERB.match(text)
    if match and (match["aux"].lower() in ("does", "do", "did") or len(match["rest"].split()) > 1):
        # ("when is the last goal scored": "last" says which goal, read below as the last of a thing)
        aux = match["aux"].lower()
        aux = aux if aux in ("is", "are", "was", "were") else "does"
        return QuestionPlan(form=match["which"].lower(),
                            target=_event(f"{aux} {match['rest']} {match['verb']}{match['tail']}"))
    if match := _WHICH_ONE_FIRST.match(text):
        return QuestionPlan(form=match["which"].lower(), target=f"{with_article(match['thing'])} {match['verb']}")
    if match := _EVERY.match(text):
        return QuestionPlan(form="every", target=_event(match["rest"] or match["rest2"] or match["rest3"]))
    if match := _WHAT_TIMES.match(text):
        rest = match["rest"]
        return QuestionPlan(form="every", target=_event(f"{match['aux']} {rest}" if rest else match["rest2"]))
    if match := _EVERY_THING.match(text):
        return QuestionPlan(form="every", target=_one_of(match["things"], match["rest"]))
    return None


def _one_of(things: str, rest: str) -> str:
    """One of the things named ("goals" → "a goal"), with what is said of them ("cars that run the light")."""
    return f"{one_of(things)}{rest}"


def _nth(which: str, target: str) -> QuestionPlan:
    """The first, last or n-th time ``target`` happens ("second", "3rd")."""
    word = which.lower()
    n = int(re.sub(r"\D", "", word)) if word[0].isdigit() else _ORDINALS[word]
    if n == 0:
        return QuestionPlan(form="last", target=target)
    return QuestionPlan(form="first", target=target, ordinal=n if n > 1 else None)


def ordinal_word(n: int) -> str:
    """How an answer names the n-th occurrence: "second", "third", ... "ninth", then "10th", "21st"."""
    if n < len(ORDINAL_WORDS):
        return ORDINAL_WORDS[n - 1]
    return f"{n}{'th' if n % 100 in (11, 12, 13) else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _unsupported(text: str) -> QuestionPlan | None:
    if _WHICH_FIRST.match(text):
        return QuestionPlan(form="unsupported", target=_event(text),
                            reason="this compares two events; ask when each one happens, or what happens before "
                                   "one of them, and I will tell you")
    if match := _UNSUPPORTED.match(text):
        word = match["word"].lower()
        return QuestionPlan(form="unsupported", target=_event(text),
                            reason=f'this looks like a "{word}" question; {_CAN_TELL}')
    return None


def _relative(text: str) -> QuestionPlan | None:
    """When X happens after (or before) Y: X, looked for on one side of Y."""
    if match := _RELATION.match(text):
        target = re.sub(r"^when\s+", "", match["target"], flags=_I)
        # "when is the car following the van": after "is", "following" is what the car is doing.
        progressive = match["rel"].lower() == "following" and re.match(r"^(?:is|are|was|were)\s", target, _I)
        if target.split()[0].lower() not in ("what",) and not progressive:
            return QuestionPlan(form=_relation_word(match["rel"]), target=_event(target),
                                anchor=_event(match["anchor"]))
    return None
