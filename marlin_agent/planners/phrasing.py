"""A question in a user's words → the plain event sentence Marlin grounds best and NLI reads best.

"when does the cook whisk the eggs?" → "the cook whisks the eggs"; "when is the goal
scored" → "the goal is scored"; "show me the moments where the dog jumps" → "the dog
jumps". Only the wrapping is removed and the verb agreement restored; the user's own words
stay. The LLM planner can rewrite more freely.
"""

from __future__ import annotations

import re

_LEADING = re.compile(
    r"^\s*(?:please\s+)?(?:can you\s+|could you\s+)?(?:"
    r"(?:find|show(?:\s+me)?|locate|get|give me|tell me)\s+(?:(?:all\s+)?(?:the\s+)?(?:moments?|parts?|times?|clips?|"
    r"scenes?|bits?|points?|timestamps?|time\s?codes?)\s+(?:(?:when|where|that|in which|with|of)\s+)?)?"
    r"|(?:which|what)\s+(?:moment|part|scene|bit|clip|point|section|shot)\s+(?:of\s+the\s+(?:video|clip|footage)\s+)?"
    r"(?:shows?|has|contains|features)\s+"
    r"|(?:is|are|was|were)\s+there\s+(?:ever\s+)?(?:(?:a|any)\s+(?:moment|time|part|point)s?\s+(?:(?:when|where|that)\s+)?)?"
    r"|the\s+(?:moment|instant|point|time)\s+(?:(?:when|that)\s+)?(?=(?:the|a|an|he|she|it|they|we|you|someone|"
    r"somebody|anyone|my|our|his|her|their)\b))",
    re.IGNORECASE,
)
_WHEN = re.compile(r"^\s*(?:when|where|whereabouts|at what (?:time|point|timestamp|second|minute|moment)|"
                   r"what (?:time|timestamp|second|minute)|at which (?:point|moment|time|second)|"
                   r"in which (?:part|section|bit|moment) of the (?:video|clip|footage|recording))\s+(?:exactly\s+)?",
                   re.IGNORECASE)
# Where the event is looked for is not the event: "in the video, when does ...", "when in the video does", "the dog
# in the clip barks", "... happens in the video" (taken out before anything else is read).
_FRAMING = re.compile(r"(?:^|,?\s+)(?:in|during|throughout)\s+(?:the|this)\s+(?:video|clip|footage|recording)\b,?",
                      re.IGNORECASE)
# Who watches is not the event: "do we see the goalkeeper dive", "can you spot a bird land" ask for the dive, the
# landing.
_SEEING = re.compile(r"^(?:(?:we|you|i|one)\s+(?:can\s+|could\s+)?)?(?:see|spot|watch|notice|observe)\s+(?P<seen>.+)$",
                     re.IGNORECASE)
# Words that only say "it happens" go; "appears" and "shows up" stay, since they are the event
# itself ("a purple star appears"): an entailment model reads a bare noun phrase ("a purple
# star") as implied by almost any caption.
_TRAILING = re.compile(
    r"\s*(?:\b(?:happens?|happened|occurs?|occurred|takes? place))*\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_PLURAL_SUBJECTS = {"they", "we", "you", "i", "people", "players", "both", "two", "some", "several", "many"}
_PRONOUNS = {"he", "she", "it", "someone", "somebody", "anyone", "anybody", "everyone", "nobody", "one", "this",
             "that", "they", "we", "you", "i"}
_DETERMINERS = {"the", "a", "an", "my", "our", "your", "his", "her", "their", "its", "this", "that", "these",
                "those", "some", "any", "each", "every", "another", "both", "two", "three"}
# Words that follow the verb in event phrases: when one comes right after a word, that word
# is likely the verb ("the cook whisk | the eggs", "the bear come | out of").
_AFTER_VERB = _DETERMINERS | {"in", "into", "out", "off", "on", "onto", "up", "down", "over", "away", "back", "to",
                              "from", "at", "across", "through", "past", "around", "with", "by", "for", "under",
                              "about", "again", "her", "him", "them", "it", "us", "me", "itself", "himself", "herself",
                              "red", "green"}
# The auxiliaries a question may open with, each put back after its subject by ``undo_inversion``.
_AUXILIARIES = "does|do|did|is|are|was|were|has|have|had|will|would|can|could"
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is"}
_RELATIVES = {"who", "that", "which", "whose"}
# Words that open a clause a verb takes ("says | when the homework is due", "asks | where he is going"). Not "that",
# which as often tells a noun apart ("the car that | stops").
_CLAUSE_OPENERS = {"when", "where", "how", "what", "why", "whether", "if"}
_QUOTES = {'"', "'", "\u201c", "\u2018"}
_JOINING = {"and", "or"}
_BE_OR_HAVE = {"is", "are", "was", "were", "has", "have", "had"}
_PREPOSITIONS = {"on", "in", "at", "by", "near", "under", "over", "inside", "outside", "into", "onto", "through",
                 "across", "behind", "beside", "next", "from", "with", "around", "along", "past", "beneath", "above",
                 "below", "beyond", "against", "among", "between", "toward", "towards", "without", "of"}
# Words that say what the subject is like rather than what it does ("the red circle", "the big dog").
_DESCRIBING = {"red", "green", "blue", "yellow", "white", "black", "purple", "orange", "pink", "brown", "grey",
               "gray", "big", "small", "little", "large", "old", "young", "tall", "short", "long", "new", "first",
               "second", "last", "other", "striped", "spotted", "hooded", "masked", "armed", "wounded", "tired"}
# Common verbs that take a thing with no article after them ("buy bread", "play football", "drink water"): before
# the last word of a do-question, the verb.
_TAKES_AN_OBJECT = frozenset("""
buy sell eat drink play cook make bake serve pour spill drop carry bring take grab hold lift move push pull throw catch
kick hit score read write draw paint watch see wash clean fix pack load unload deliver order pay count sort stack
fill empty boil fry chop cut slice mix stir taste smell feed pick plant water collect share steal hide find lose win
leave enter reach board join visit
""".split())
_NUMBER = re.compile(r"^(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)$", re.IGNORECASE)
# Said of a subject after "is": "is the red circle visible", "is the door open".
_AFTER_VERB_ALSO = {"left", "right", "apart", "asleep", "awake", "forward", "backward", "backwards", "together",
                    "quickly", "slowly", "home", "around"}
# A word right after the verb, or none: the end of the phrase.
_TELLING = frozenset({"", *_AFTER_VERB, *_AFTER_VERB_ALSO})
_PREDICATES = {"visible", "present", "open", "closed", "shut", "empty", "full", "lit", "there", "here", "alone",
               "asleep", "awake", "gone", "away", "out", "off", "up", "down", "back", "still", "moving", "blank",
               "bright", "dark", "wet", "dry", "clear", "busy", "quiet", "silent"}
_PARTICIPLE = re.compile(r"^\w+(?:ed|en|ing|wn|un|ght|lt|ne|pt)$", re.IGNORECASE)
# Verbs that take what they end up as right after them ("the case bursts open", "the crowd goes wild",
# "the man gets knocked down"): before such a word, they are the verb and it is not.
_LINKING = {"get", "go", "become", "stay", "remain", "keep", "turn", "grow", "fall", "come", "seem", "look", "feel",
            "break", "burst", "swing", "fly", "spring", "slam", "blow", "pop", "split", "slide", "rip", "tear", "crack",
            "shake", "wriggle", "prise", "pry", "kick", "push", "pull", "snap", "run", "end"}
_COMPLEMENTS = {"open", "shut", "closed", "free", "loose", "apart", "wild", "quiet", "silent", "still", "dark", "mad",
                "dead", "flat", "wide", "clear", "empty", "full", "limp", "rigid", "tight", "sideways", "upright",
                "crazy", "berserk", "nuts", "pale", "blank", "bright", "cold", "hot", "wet", "dry", "missing", "red",
                "green", "white", "black"}
# Words ending in -ing that are not an -ing form ("the gate | swing shut", "the bell | ring").
_ING_NOT_PARTICIPLE = {"swing", "spring", "bring", "sing", "sting", "ring", "wring", "cling", "fling", "sling",
                       "string", "thing", "king", "wing", "ping", "ding"}
_NOT_PLURAL = {"this", "his", "its", "is", "was", "has", "does", "as", "us", "bus", "gas", "glass", "news", "lens",
               "series", "species", "canvas", "chaos", "atlas", "bonus", "campus", "circus", "virus", "yes"}
# Plurals no ending tells ("sheep" and "fish" are either, so they are left as they are).
_IRREGULAR_PLURALS = {"people": "person", "men": "man", "women": "woman", "children": "child", "mice": "mouse",
                      "geese": "goose", "teeth": "tooth", "feet": "foot", "policemen": "policeman",
                      "firemen": "fireman", "gentlemen": "gentleman"}
_IRREGULAR_PARTICIPLES = {"left", "made", "put", "set", "hit", "cut", "shut", "held", "led", "read", "caught",
                          "thrown", "shown", "seen", "done", "said", "sold", "told", "found", "won", "lost", "run",
                          "let", "split", "kept", "built", "sent", "spent", "struck", "stuck", "hung", "dug", "rung",
                          "sung", "flung", "swung", "stung", "wrung", "begun", "drunk", "sunk", "shrunk", "spun", "fed",
                          "bled", "met", "shot", "lit", "hurt", "bent", "lent", "cast", "cost", "bet", "quit", "sped"}


def _third_person(verb: str) -> str:
    lowered = verb.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lowered):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    return verb + "s"


def describes(word: str) -> bool:
    """A word that says what a thing is like ("red", "big"), not what it is."""
    return word.lower() in _DESCRIBING


def singular(word: str) -> str:
    """A plural noun's singular, by its ending ("shapes" → "shape", "boxes" → "box", "lorries" → "lorry"), or
    as it is irregular ("people" → "person", "children" → "child")."""
    if word.lower() in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word.lower()]
    noun = re.sub(r"(?:(?<=[sxz])|(?<=[cs]h))es$", "", word[:-3] + "y" if word.endswith("ies") else word)
    return noun[:-1] if noun == word else noun


def with_article(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def one_of(noun: str) -> str:
    """One of what a noun names: "goals" → "a goal", "dog" → "a dog"."""
    return with_article(singular(noun) if looks_plural(noun) else noun)


def looks_plural(word: str) -> bool:
    """A plural noun by its ending ("lanes", "players"), not one that ends in s anyway ("dress", "bus") nor a
    possessive ("the man's", "the players'"), which says nothing of how many the subject is."""
    lowered = word.lower()
    return lowered in _IRREGULAR_PLURALS or (re.search(r"[^s']s$", lowered) is not None and lowered not in _NOT_PLURAL)


def _takes_complement(word: str, following: str) -> bool:
    """ "burst | open", "get | knocked": a verb with what its subject ends up as right after it."""
    participle = following in _IRREGULAR_PARTICIPLES or re.match(r"^\w+ed$", following) is not None
    return word in _LINKING and (following in _COMPLEMENTS or participle)


def _past_modifier(words: list[str], at: int) -> int:
    """Past a preposition and the noun phrase after it ("by | the window |"), from ``at``."""
    at += 1
    while at < len(words) and words[at].lower() in _DETERMINERS:
        at += 1
    while at + 1 < len(words) and words[at].lower() in _DESCRIBING:
        at += 1
    return at + 1


def _past_relative(words: list[str], at: int) -> int:
    """Past a relative clause that tells the subject apart ("who | is wearing | a red hat |"), from ``at``: its
    verb (with "is" or "has", the word after too) and the noun phrase it takes."""
    at += 1
    if words[at].lower() in _BE_OR_HAVE and at + 1 < len(words):
        at += 1
    after = words[at + 1].lower() if at + 1 < len(words) else ""
    if after in _DETERMINERS or after in _DESCRIBING:
        return _past_modifier(words, at)  # "who is wearing | a red hat |"
    following = words[at + 2].lower() if at + 2 < len(words) else ""
    # "the dog that barks | runs away": nothing taken, the main verb next; "who sells flowers | waves": one word taken.
    return at + 1 if following in _TELLING else at + 2


def verb_position(words: list[str]) -> int | None:
    """Where the verb is in "<subject> <verb> ...", after a do-question lost its auxiliary."""
    return _verb_before_its_object(words, _scanned_verb_position(words))


def _scanned_verb_position(words: list[str]) -> int | None:
    """The first word after the subject that a verb's usual followers follow (see ``verb_position``)."""
    if not words:
        return None
    if words[0].lower() in _PRONOUNS:
        return 1 if len(words) > 1 else None
    start = 1 if words[0].lower() in _DETERMINERS else 0
    at = start + 1
    while at < len(words):
        word = words[at].lower()
        if word in _PREPOSITIONS:  # the subject goes on: "the girl by the window | falls asleep"
            at = _past_modifier(words, at)
            continue
        if word in _RELATIVES and at + 1 < len(words):  # "the boy who is wearing a red hat | falls off his bike"
            at = _past_relative(words, at)
            continue
        if _doing(word) and at + 1 < len(words):  # "the woman wearing a red coat | crosses": a do-question's verb
            at = _past_relative(words, at - 1)  # is never its -ing form; this one tells the subject apart
            continue
        if word in _JOINING:  # "the cat and | the dog play": it joins two of whatever is on either side
            at += 1
            continue
        following = words[at + 1].lower() if at + 1 < len(words) else ""
        # "come running", "keep walking": the word before an -ing form is the verb; "say when", "explain how", 'say
        # "well done"': the word before a clause or a quote it takes.
        telling = following in _TELLING or following in _CLAUSE_OPENERS or following[:1] in _QUOTES or (
            following.endswith("ing") and following not in _ING_NOT_PARTICIPLE)
        if _takes_complement(word, following) or (telling and not looks_plural(word) and word not in _DESCRIBING):
            return at
        at += 1
    # No telling word after it: the word after the head noun ("the car | change lanes").
    return start + 1 if start + 1 < len(words) else None


def _verb_before_its_object(words: list[str], at: int | None) -> int | None:
    """The verb where ``verb_position`` took the last word for want of a word after it (or a number after it): a
    common verb before it takes it as its object ("the woman | buy | bread", "the train | leave | platform two"),
    where a word before the last that is no common verb leaves the last word the verb ("the bus driver | wave")."""
    if at is None or not all(_NUMBER.match(word) for word in words[at + 1:]):
        return at  # "leave | platform two": a number names the thing before it
    for before in range(at - 1, 0, -1):
        word = words[before].lower()
        if word in _TAKES_AN_OBJECT and words[before - 1].lower() not in _DETERMINERS | _DESCRIBING:
            return before
        if word not in _JOINING and looks_plural(word) or word in _DETERMINERS | _PREPOSITIONS | _RELATIVES:
            return at
    return at


def _be_position(words: list[str]) -> int:
    """Where "is" goes in a be-question's words: before a participle or what is said of the subject
    ("the goal | scored", "the blue square | on screen", "the red circle | visible"), else at the end."""
    at = 1 if words and words[0].lower() in _DETERMINERS else 0
    at += 1
    def said_of(word: str) -> bool:
        participle = (word in _IRREGULAR_PARTICIPLES or _PARTICIPLE.match(word)) and word not in _DESCRIBING
        return bool(participle) or word in _PREDICATES

    while at < len(words):
        word = words[at].lower()
        if word in _PREPOSITIONS:
            # "the girl by the window | seen": the phrase belongs to the subject when what is said follows it.
            after = _past_modifier(words, at)
            if after < len(words) and said_of(words[after].lower()):
                return after
            return at
        if _doing(word) and word not in ("being", "having") and at + 1 < len(words):
            # "the woman carrying bags | kicked": an -ing form with a thing after it tells the subject apart when
            # what is said of the subject follows; else it is what is said ("the dog | running around").
            for after in range(at + 1, min(len(words), at + 5)):
                later = words[after].lower()
                if later in _PREPOSITIONS:
                    break
                if said_of(later) and not _doing(later):
                    return after
        if said_of(word):
            return at
        if word in _DESCRIBING and (at == len(words) - 1 or words[at + 1].lower() in _PREPOSITIONS):
            return at  # "is the light | red", "was the car | red for long": said of it, after its noun
        at += 1
    return len(words)


def undo_inversion(auxiliary: str, rest: str) -> str:
    words = rest.split()
    aux = auxiliary.lower()
    if aux in ("is", "are", "was", "were"):
        verb = "is" if aux in ("is", "was") else "are"
        if words and words[0].lower() == "there":  # "is there a dog on the sofa" → "there is a dog on the sofa"
            return " ".join([words[0], verb, *words[1:]])
        # "is the goal scored" → "the goal is scored": the auxiliary goes after the subject.
        at = _be_position(words)
        if at == len(words):
            return rest  # "when is the first dance": nothing is said of it but that it is there
        return " ".join(words[:at] + [verb] + words[at:])
    if aux in ("has", "have", "had"):  # "has a square appeared" → "a square has appeared"
        at = _be_position(words)
        return rest if at == len(words) else " ".join(words[:at] + [aux] + words[at:])
    if aux in ("will", "would", "can", "could"):  # "will the bus arrive": the bus arrives
        aux = "does"
    if aux in ("does", "did"):
        verbs = _verbs(words)
        at = verbs[0] if verbs else None
        subject = {w.lower() for w in words[: at or 0]}
        # Whether the subject is plural is its head's to say, not a phrase that tells it apart ("the woman who
        # sells flowers", "the man with two dogs", "the woman carrying bags").
        head = next((i for i in range(1, at or 0) if words[i].lower() in _PREPOSITIONS | _RELATIVES
                     or _doing(words[i])), at)
        if at is None or subject & (_PLURAL_SUBJECTS | {"and"}) or any(looks_plural(w) for w in words[1:head]):
            return rest
        return " ".join(_third_person(word) if i in verbs else word for i, word in enumerate(words))
    return rest  # do: the base form is already right


def _verbs(words: list[str]) -> list[int]:
    """Where the verbs are in "<subject> <verb> ...": one, or two joined by "and" / "or" ("the dog | jump | and |
    bark |", "the man | fix | the tyre and | drive | away"). A noun phrase is never joined this way: "the cat and the
    dog" has a determiner after "and"."""
    at = verb_position(words)
    if at is None:
        return []
    if at >= 3 and words[at - 1].lower() in _JOINING and words[at - 2].lower() not in _DETERMINERS | _DESCRIBING:
        return [at - 2, at]
    joined = next((i for i in range(at + 1, len(words) - 1) if words[i].lower() in _JOINING), None)
    if joined is None:
        return [at]
    second = words[joined + 1].lower()
    following = words[joined + 2].lower() if joined + 2 < len(words) else ""
    # "jump | and | bark", "jump up | and | bark", "fix the tyre | and | drive away": the word after "and" is a
    # second verb where nothing names a thing there and what follows it is what follows a verb ("buy bread and
    # milk" joins two things).
    particles_only = all(word.lower() in _AFTER_VERB - _DETERMINERS for word in words[at + 1: joined])
    if second in _DETERMINERS | _PRONOUNS | _DESCRIBING or looks_plural(second) or not (
            particles_only or following and following in _TELLING or _doing(following)):
        return [at]
    return [at, joined + 1]


def _seen(text: str) -> str:
    """What is seen, as an event: "the goalkeeper dive" → "the goalkeeper dives", "the dog jumping" → "the dog is
    jumping"."""
    words = text.split()
    at = verb_position(words)
    if at is None or (at == len(words) - 1 and words[at - 1].lower() in _DESCRIBING | _DETERMINERS):
        return text  # a thing alone: "a red car"
    if _doing(words[at]):  # "the dog | jumping"
        at -= 1
    elif not (at + 1 < len(words) and _doing(words[at + 1]) and words[at].lower() not in _LINKING):
        return undo_inversion("does", text)
    return " ".join([*words[: at + 1], "are" if looks_plural(words[at]) else "is", *words[at + 1:]])


def _doing(word: str) -> bool:
    lowered = word.lower()
    return lowered.endswith("ing") and lowered not in _ING_NOT_PARTICIPLE


def unframed(question: str) -> str:
    """``question`` without where the event is looked for ("in the video, when does ...", "the dog in the clip")."""
    return re.sub(r"\s+", " ", _FRAMING.sub(" ", question)).strip()


def event_description(question: str) -> str:
    """The event a question asks about, as a plain declarative sentence."""
    # Only the punctuation goes first: "appear" or "happen" at the end is the verb the inversion
    # needs to find ("does the red circle appear"), and is dropped after it.
    text = re.sub(r"\s*[?.!]+\s*$", "", _LEADING.sub("", unframed(question)))
    asked = _WHEN.match(text)
    if asked:
        text = text[asked.end():]
        inverted = re.match(rf"^({_AUXILIARIES})\s+(.+)$", text, re.IGNORECASE)
        if inverted:
            text = undo_inversion(inverted.group(1), inverted.group(2))
    elif re.match(rf"^(?:{_AUXILIARIES})\s+\w+\s", text, re.IGNORECASE):
        # A yes-or-no question asks for the same moment: "does anyone fall over", "is the dog ever on the sofa".
        text = undo_inversion(*text.split(None, 1))
    text = re.sub(r"\s+ever\b", "", text, flags=re.IGNORECASE)  # "is the dog ever on the sofa": the same moment
    if seen := _SEEING.match(text):
        text = _seen(seen["seen"])
    text = _TRAILING.sub("", text).strip()
    if things := re.match(r"^(?:any|some)\s+(\w+)$", text, re.IGNORECASE):  # "are there any cars": a car
        text = one_of(things[1])
    return text or question.strip()
