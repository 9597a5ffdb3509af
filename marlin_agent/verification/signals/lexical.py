"""Lexical alignment: which words of the asked event does a description say, and which does it deny?

Natural-logic entailment in miniature, over WordNet. The asked event's content words (who,
what they do, to what, and how it looks) are each aligned with the best word of the
description: the same word or a synonym supports it, and so does a more specific word (a
"cyclist" is a "rider"); a more general word supports it in part. A sibling under a close
common parent ("square" for "circle", "goalkeeper" for "striker", "corner kick" for "shot"),
an antonym ("closes" for "opens") or a negation counts against it. Where the hierarchy has no
link, a verb's definition may: "slap" is defined as hitting ("hit with something flat"), so it
says "hits". A key word with nothing aligned gives no support, which is what separates a near
miss from a paraphrase when embeddings and a small entailment model both see "the same scene".

It needs no model: only WordNet's files, and a few milliseconds per pair.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import ClassVar

from marlin_agent.config import Settings
from marlin_agent.domain import Evidence
from marlin_agent.verification.everyday_phrases import MOST_WORDS, POSSESSIVES
from marlin_agent.verification.features import Feature, Rule
from marlin_agent.verification.signals import Embed, SpanTexts, Timed, signal
from marlin_agent.verification.spans import iou
from marlin_agent.verification.wordnet import WordNet, open_wordnet

# Words that carry no event of their own: articles, pronouns, auxiliaries, prepositions.
STOPWORDS = frozenset("""
a an the this that these those there here it its it's they them their he him his she her hers we us our you your
i me my mine who whom whose which what when where why how whenever while during before after until since as
is are was were be been being am do does did doing done has have had having will would shall should can could
may might must of for per via in on at to from by with into onto upon over under out off up down about around
through across
along toward towards against between among behind beside near than then so and or but if because also just
very really quite too once again still yet ever some any each every all both either neither such own same
someone somebody something anyone anybody anything everyone everybody everything one ones time times moment
video clip footage scene camera shot view frame
""".split())
# Words that say little about which event it is: they weigh less than the words that do.
GENERIC = frozenset("""
appear appears appeared appearing happen happens happened happening occur occurs occurred take takes took taken
taking place get gets got getting go goes went going gone come comes came coming make makes made making see seen
show shows shown showing start starts started starting begin begins began begun beginning seem seems way thing things
person people man woman men women guy lady
""".split())
# Words for saying, verbs and nouns: when the description is a spoken line, the line itself is the saying (or the
# announcement, the remark: "platform announcement" asks for a line that names the platform).
SPEECH_WORDS = frozenset("""
say says said saying mention mentions mentioned announce announces announced explain explains explained tell tells
told talk talks talked speak speaks spoke state states stated remind reminds reminded ask asks asked shout shouts
announcement announcements statement statements remark remarks comment comments message messages reminder reminders
""".split())
# Directions a description can reverse without any content word differing ("behind" / "in front of").
# Only those that keep their landmark: "away from the house" and "toward the street" agree.
# ("in" also says where a thing is, "in red", so it is left out; "on" and "off" do too, "on the bend", so they
# reverse the event only as a verb's particle, below.)
_OPPOSITE_WAYS = {"into": {"out", "outside"}, "inside": {"outside", "out"}, "indoors": {"outdoors", "outside", "out"},
                  "out": {"into", "inside", "indoors"}, "outside": {"into", "inside", "indoors"},
                  "up": {"down"}, "down": {"up"}, "behind": {"front"}, "front": {"behind"},
                  "above": {"below", "under", "beneath"}, "below": {"above", "over"}, "under": {"over", "above"},
                  "on": {"off"}, "onto": {"off"}, "off": {"on", "onto"}}
# Words for one way: a description that says it one way does not reverse it for another word ("run out into the
# garden" goes outside, though "into" is also the way in).
_WAYS_OUT_AND_IN = (frozenset({"out", "outside", "outdoors"}), frozenset({"into", "inside", "indoors"}))
_SAME_WAY = {word: group for group in _WAYS_OUT_AND_IN for word in group}
# Directions that are a verb's particle ("rolls up", "gets on"): they reverse the event only after the same act.
_VERB_PARTICLES = frozenset({"up", "down", "on", "onto", "off"})
_FROM_TO = re.compile(r"\bfrom (?:the )?(\w+) to (?:the )?(\w+)")
# Where a move starts and where it ends, each with its landmark: "down from the windowsill", "onto the windowsill".
_OWNERS = r"(?:the|a|an|his|her|its|their|my|your|our) "
_SOURCE = re.compile(rf"\b(?:from|off|out of) (?:{_OWNERS})?(\w+)")
_GOAL = re.compile(rf"\b(?:onto|into|to|towards?) (?:{_OWNERS})?(\w+)")
# Words for the way a move goes, by the way's name: a particle ("walks in") or a preposition ("walks into the hall").
_WAY_OF = {"in": "in", "into": "in", "inside": "in", "indoors": "in", "out": "out", "outside": "out",
           "outdoors": "out", "away": "away", "off": "away", "on": "on", "onto": "on", "up": "up", "down": "down",
           "back": "back"}
# Verbs that say only that something goes, the way said by their particle ("gets on", "comes in", "goes out").
_PLAIN_GOING = frozenset("get go come move head".split())
# Words before a verb in the passive ("gets knocked down", "is carried off").
_PASSIVE = frozenset("is are was were be been being get gets got gotten getting".split())
# The two ways a body goes that deny each other whatever the verbs ("gets decked" / "gets back up").
_UP_AND_DOWN = frozenset({"up", "down"})
_BODILY_LEXNAMES = frozenset({29, 35, 38})  # WordNet's verb.body, verb.contact, verb.motion
# Particles of leaving or coming in, which any verb of moving says whatever its manner ("runs away" / "walks away";
# "off" only with no thing after it, which it is as often from: "jumps off the train").
_LEAVING_WAYS = frozenset({"away", "out", "in"})
# How far after a verb of moving the way it goes is looked for, and the words that end its clause first.
_WAY_REACH = 6
# Phrasal verbs that switch a machine on or off ("the floodlight turns on" / "the security light comes on"). Not "goes
# off": an alarm that goes off starts.
_SWITCHES = {
    "on": frozenset({(verb, "on") for verb in ("turn", "switch", "come", "go", "flick", "click", "power")}
                    | {("light", "up"), ("power", "up")}),
    "off": frozenset({(verb, "off") for verb in ("turn", "switch", "flick", "click", "power", "shut", "cut")}
                     | {("go", "out"), ("cut", "out"), ("power", "down")}),
}
_MACHINE_STEPS = 9
_CLAUSE_ENDS = frozenset("and then while as but before after when until where which who".split())
# Particles that change what a verb does ("switch on" / "switch off", "come in" / "come out").
_PARTICLES = frozenset("on off in out up down away back over onto into through around".split())
_OBJECT_PRONOUNS = frozenset("it him her them us me you".split())
_SEPARATED = frozenset("on off up down out in away back over".split())  # particles a thing may part from their verb
# Words that begin a thing: after a verb's particle they make the particle a preposition.
_DETERMINERS = frozenset("a an the this that these those his her its their my your our some".split())
# Words that deny the event itself ("carrying nothing" denies nothing).
NEGATIONS = frozenset({"not", "never", "n't"})
# After these a word names a thing, not an act ("the floor", "a fast serve", "into bags"), so its verb senses
# are not read ("floor" is not "knock down"). "to" is left out: "to let it rise".
_BEFORE_A_THING = frozenset("""
a an the this that these those his her its their my your our some any each every no two three four five
of on onto into in at from with by over under across through toward towards behind near per
""".split())
# After these a word is an act ("is poured", "to rise", "does not open").
_BEFORE_AN_ACT = frozenset("""
is are was were be been being am do does did will would shall should can could may might must to not n't never
""".split())

# For telling a clause from a topic (``names_a_clause``): words that make a clause wherever they stand (an
# auxiliary, "the lid is lifted"; "the box gets opened", "the man has a hat"), plural subjects whose verb is in its
# base form ("people leave"), and pronouns that are subjects ("she smiles").
_CLAUSE_MAKERS = _BEFORE_AN_ACT - {"to", "not", "n't", "never"} | frozenset("gets got has have had".split())
_PLURAL_SUBJECTS = frozenset("people men women children kids they we you i folk".split())
_SUBJECT_PRONOUNS = frozenset("he she it someone somebody everyone everybody nobody one".split())

# Verbs that lend their grammar to an act named as a thing: "take a tumble" is to tumble, "give a wipe" to wipe,
# "throws a jab" to jab, "lands a kick" to kick.
_LIGHT_VERBS = frozenset("""
take takes took taken taking give gives gave given giving make makes made making have has had having
throw throws threw thrown throwing land lands landed landing deliver delivers delivered delivering
""".split())
# ... and those that take it after a preposition: "connects with a big punch" is to punch.
_LIGHT_WITH = frozenset("connect connects connected connecting".split())
# Words that place the thing after them in an order ("the first cut", "the last bus"): said as what it is like, never
# as a thing of their own ("first" is also a rank, kin to a cake's "tier").
_ORDINALS = frozenset("first second third fourth fifth last next".split())
# Where a thing is taken from, after the thing: "lifts a case off the belt", "drags the bag from the belt".
_FROM = frozenset({"off", "from"})
# WordNet's verb frames that take a direct object ("Somebody ----s something", "Something ----s somebody", ...): a
# sense with none but these is never used without one ("drop": let fall, transitive only).
_OBJECT_FRAMES = frozenset({5, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 24, 25, 30, 31})
# Words after a verb that say it has no object: a preposition or particle, a clause's end ("cartons drop off the
# stack", "the glass breaks into pieces", "the man drops and rolls").
_NO_OBJECT_AFTER = _PARTICLES | _CLAUSE_ENDS | frozenset("from to at across along past toward towards by".split())
# WordNet's lexicographer files of a number of things (noun.group, noun.quantity): "a pair", "a trio".
_NUMBER_LEXNAMES = frozenset({14, 23})
# Words after which a describing word describes the one who wears it: "the boxer in red", "a man wearing white".
_WORN = frozenset("in wearing".split())
# WordNet's lexicographer files of things done or happening: noun.act, noun.event, noun.phenomenon, noun.process
# (not noun.communication: "gives the man a book").
_ACT_LEXNAMES = frozenset({4, 11, 19, 22})

_POS_WEIGHT = {"n": 1.0, "v": 1.0, "a": 0.6, "r": 0.3}
_GENERIC_WEIGHT = 0.25
_SENSES = 4  # senses per part of speech considered: rarer ones make spurious relations
_ANCESTOR_STEPS = 4  # a more specific word within this many steps supports
_GENERAL_STEPS = 4  # a more general one within this many, in part
_SIBLING_STEPS = 2  # siblings: both within this many steps of a common parent ...
_SIBLING_MIN_DEPTH = 5  # ... that is specific enough (not "entity", "act", "person")
# Verbs: two acts one step under the same specific act (its depth from a root verb at least this) say each
# other in part.
_VERB_KIN_DEPTH = 2
_VERB_KIN_CREDIT = 0.6
# A plain word for going one way ("leaves", "gets out") said by a verb of moving that goes that way ("pulls away").
_WAY_CREDIT = 0.75
# The state an act leaves its thing in, said right after the verb ("bursts open", "slams shut", "breaks free"): two
# acts that end in the same one say the same change, in part ("pops open" for "bursts open").
_RESULT_STATES = frozenset("open shut closed apart loose free".split())
# Kinds whose members exclude each other, by WordNet's lexicographer files (animals, shapes): two
# unrelated words from one of them name different things. Artifacts, places, plants and foods are
# left to the close-sibling test (a caption naming the tree is not denying the grass), and people
# too: "courier" and "delivery driver" name one person.
_CONCRETE_LEXNAMES = frozenset({5, 25})
# Words related by kind at most this many steps apart are never siblings: a robin is a bird.
_RELATED_KIND_STEPS = 8
# Things whose swap makes a near miss: artifacts, foods, plants, animals, body parts, substances,
# natural objects, shapes (not people: "courier" and "driver"; not acts or places, too loose).
_THING_KINDS = frozenset(("n", lexname) for lexname in (5, 6, 8, 13, 17, 20, 25, 27))
# How strongly each kind of denial counts (times the asked word's weight). The veto is at 0.7: an
# antonym, a member of an exclusive kind, the other way or a negation contradicts; close kin only
# weighs against (real captions swap "fog" for "smoke").
_CONFLICT_SCORES = {"antonym": 1.0, "exclusive": 0.8, "kin": 0.6}
# The same act done to another thing denies the event ("cut a ribbon" / "cut the wedding cake"): as strongly as
# a reversal. Only where the two things have no parent within two steps ("box" and "parcel" may be one thing).
_OTHER_OBJECT = 0.7
# A description that goes the other way denies the event as strongly ("from right to left", "switches on").
_OTHER_WAY = 0.7
_GOAL_REACH = 5  # words after the act within which "into" or "onto" names where it puts its thing
# WordNet's lexicographer files of things whose parts a compound names ("the car door", "the kitchen door"):
# noun.artifact and noun.location.
_OWNER_LEXNAMES = frozenset({6, 15})
_OBJECT_KIN_STEPS = 2
_SAME_ACT_CREDIT = 0.9
# WordNet pointers that link two words' meanings (derivation, similar-to, also-see, verb group, entailment,
# attribute, pertainym), each way; and those that derive one part of speech from another.
_LINKS_FROM = "+ & ^ $ * = \\"
_LINKS_TO = "+ & ^ $ * ="
_DERIVED = "+ \\ < ="
_WHOLE = "#p"  # part of: a hand is part of an arm
# Only a word's commonest senses make a conflict, or a link through more general words.
_CONFLICT_SENSES = 2
_MOST_RELATIONS = 262144
_HYPONYM_SENSES = 3
# A more general word supports only when it is not a near-root ("change", "act", "object").
_GENERAL_DEPTH = {"n": 4, "v": 1, "a": 0, "r": 0}
# A kind asked ("a shape", "a vehicle", "an animal") is said by anything of that kind, however far down, when
# the described word is in its commonest sense: a circle is a shape five steps down (an ellipse, a conic
# section, a plane figure, a figure). Not by near-roots ("entity", "object", "abstraction").
_KIND_STEPS = 10
_KIND_MIN_DEPTH = 3
_KIND_CREDIT = 0.75
# WordNet's verb trees start at general acts ("move", "arrive"); asked, one is said by a way of doing it a
# step or two down ("glides", "drifts", "pulls in"), though a root is too general to say anything itself.
_ROOT_VERB_STEPS = 2
_ROOT_VERB_CREDIT = 0.75
# Where a thing is in the picture, not a thing in it: "moves across the screen", "is on screen".
_FRAMING = re.compile(r"\b(?:across|on|onto|off|into|in|from|to) (?:the )?screen\b|\bon-screen\b")
# A verb's definition begins with the act it is a way of ("topple": "fall down, as if collapsing"; "steal":
# "take without the owner's consent"), a link WordNet's hierarchy often lacks. Words a definition opens with
# that say nothing of the act (causatives, "be") are read past. Two verbs defined as ways of one act are not
# read as saying each other: kicking and throwing both propel.
_GLOSS_LEAD = frozenset("to cause let make be become have do".split())
# Acts so general that being defined as a way of one says little ("move", "go", "change").
_GLOSS_TOO_GENERAL = GENERIC | frozenset("move travel change put give hold use act keep set bring run turn".split())
_ACT_NOUNS = frozenset({4, 11})  # noun.act, noun.event: nouns that name an act ("the crash", "the breakaway")
_GLOSS_MORE_SPECIFIC = 0.75  # the described act is defined as a way of the asked one ("topples", for "falls")
_GLOSS_MORE_GENERAL = 0.55  # the asked act is defined as a way of the described one ("takes", for "steals")
# Words after which a noun's definition says more about the thing it has named ("a glass with a flat bottom").
_GLOSS_KIND_ENDS = frozenset("""
of that which who whose with without for in on at used having to from by as or and especially usually typically
often when where than like
""".split())
# Support from a described word used in one of its rarer senses, the one the asked word names.
_RARE_SENSE_CREDIT = 0.8
# An asked thing named inside a described act read as one collocation ("the ball" in "dunks the ball"): said, though
# under 1.0 so that the act stays free to say the asked act.
_NAMED_IN_AN_ACT_CREDIT = 0.9
# A closed compound says its head word when the two share a kind at least this deep (a container, not an artifact).
_COMPOUND_KIND_DEPTH = 6
# An asked word in a rare sense the description names the kind of: said, but more generally.
_RARE_KIND_CREDIT = 0.55
# A person named by sex or age ("a man", "the woman") for one named by role ("the prowler", "an official"), or the
# other way: the same person may be both, though the words do not say so.
_PERSON_BY_LOOK_CREDIT = 0.55
_PERSON_LEXNAME = 18
_OPEN_COMPOUND_LEXNAMES = frozenset({6, 14, 18})  # noun.artifact, noun.group, noun.person
_ANIMAL_LEXNAME = 5
_ANIMAL_AND_PERSON = frozenset({_ANIMAL_LEXNAME, _PERSON_LEXNAME})  # noun.animal, noun.person
_PERSON_WORDS = frozenset("""
person persons people man men woman women guy guys lady ladies someone somebody anyone anybody
""".split())
_ARTIFACT_LEXNAME = 6
_LOOKS = ("adult", "male", "female", "juvenile")
_EXCLUSIVE_LOOKS = (("adult", "juvenile"), ("male", "female"))
_YOUNG = re.compile(r"\b(?:young|youthful)\b")
# Within this many steps of one of those: "a lady" (a woman, an adult), not "a nurse" (a professional, then an adult).
_LOOK_STEPS = 2
# A group of people and people named in the plural say each other in part ("the crowd" / "spectators"); WordNet
# files the group under groups and its members under persons, with nothing between.
_MEMBERS_CREDIT = 0.55
_PEOPLE = frozenset({"people", "folk", "folks"})


@dataclass(frozen=True, eq=False)
class Term:
    """A word or a WordNet collocation of a text; its senses depend on its words and on its place (``key``)."""

    text: str  # as written ("corner kick")
    by_pos: tuple[tuple[str, tuple[str, ...]], ...]  # (pos, synset ids), those its place in the text allows
    forms: frozenset[str]  # base forms
    weight: float
    act: bool = False  # used as a verb here ("the baker slices the loaf"): what the event does
    # Its rarer senses, beyond those ``by_pos`` holds, for the parts of speech its place allows: a described
    # word may be used in one of them when the asked word names exactly that ("works" the dough, "kneads").
    rare: frozenset[str] = frozenset()

    @cached_property
    def senses(self) -> dict[str, tuple[str, ...]]:
        return dict(self.by_pos)

    @cached_property
    def key(self) -> str:
        """The word and the parts of speech its place allows: "slices" the act and "slices" the things differ."""
        return self.text + "/" + "".join(pos for pos, _ in self.by_pos) + ("!" if self.act else "")


def _rare_synonym(asked: Term, said: Term) -> bool:
    """The asked word's commonest sense is one of the described word's rarer ones: "works" (the dough) is
    "kneads". Only that way round: the asked word says which sense is meant, a described word alone does not."""
    return any(ids[0] in said.rare for ids in asked.senses.values() if ids)


def _named_in_an_act(asked: Term, said: Term) -> bool:
    """The asked thing is a word of the described act's collocation after its verb: "the ball" in "dunks the ball",
    which WordNet lists as one lemma, so the thing would otherwise go unsaid."""
    return not asked.act and said.act and bool(asked.forms & set(said.text.lower().split()[1:]))


@dataclass
class Alignment:
    """How far a description says the asked event (``support``) and how far it denies it (``conflict``)."""

    support: float
    conflict: float
    aligned: list[tuple[str, str, float]] = field(default_factory=list)  # (asked word, description word, credit)
    conflicts: list[tuple[str, str, str]] = field(default_factory=list)  # (asked word, description word, why)
    missing: list[str] = field(default_factory=list)
    swap: float = 0.0  # 1 when an asked word nothing says has a described word of its kind in its place
    action: float | None = None  # how far the asked act ("slices") is said; None when the event names none
    thing: float | None = None  # how far the asked things (nouns) are said; None when the event names none
    swaps: list[tuple[str, str]] = field(default_factory=list)  # (asked word, described word)

    def explain(self) -> str:
        parts = [f"{said}, not {asked}" + (f" ({why})" if why in ("antonym", "negation") else "")
                 for asked, said, why in self.conflicts]
        parts += [f"{asked} = {said}" if asked == said or credit >= 0.99 else f"{asked} ~ {said}"
                  for asked, said, credit in self.aligned if credit > 0]
        parts += [f"{said} where {asked} was asked" for asked, said in self.swaps]
        parts += [f"nothing says {asked}" for asked in self.missing if asked not in {a for a, _ in self.swaps}]
        return "; ".join(parts) or "no content words to align"


def owned_words(text: str) -> list[tuple[str, bool]]:
    """The words of ``text``, each with whether it names an owner ("kid's" in "a kid's pens": the word after
    it names a thing)."""
    lowered = text.lower().replace("n't", " n't").replace("’", "'")
    return [(token[:-2], True) if token.endswith("'s") else (token, False)
            for token in re.findall(r"n't|[a-z0-9]+(?:[-'][a-z0-9]+)*", lowered)]


@lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    return tuple(word for word, _ in owned_words(text))


def words(text: str) -> list[str]:
    return list(_words(text))


def _said_share(credits: list[tuple[Term, float]], chosen: Callable[[Term], bool]) -> float | None:
    """How far the chosen asked words are said (their weighted credit); None when the event has none."""
    picked = [(credit, term.weight) for term, credit in credits if chosen(term)]
    return round(sum(c * w for c, w in picked) / sum(w for _, w in picked), 3) if picked else None


def _results(terms: tuple[Term, ...]) -> dict[Term, str]:
    """Each act followed straight away by the state it leaves its thing in ("bursts open"), and that state; an act
    read as one phrase with its state ("pops open") too."""
    found = {term: after.text for term, after in itertools.pairwise(terms) if term.act and after.text in _RESULT_STATES}
    for term in terms:
        *verb, state = term.text.split()
        if term.act and verb and state in _RESULT_STATES:
            found[term] = state
    return found


def _same_result(asked_terms: tuple[Term, ...], said_terms: tuple[Term, ...]) -> list[tuple[Term, Term]]:
    """Pairs of an asked act and a described one that end in the same state ("bursts open" / "pops open")."""
    said = _results(said_terms)
    return [(act, other) for act, state in _results(asked_terms).items()
            for other, other_state in said.items() if other_state == state]


def _interleaved(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    """Two readings' senses, commonest first by turns ("picks up the box": pick, pick up, ...), so that the second
    reading's commonest sense is not pushed past the ranks a relation reads."""
    return tuple(dict.fromkeys(sense for pair in itertools.zip_longest(first, second) for sense in pair if sense))


_REFLEXIVES = frozenset("myself yourself himself herself itself ourselves yourselves themselves".split())


def _places_the_next(tokens: list[str], at: int) -> bool:
    """``tokens[at]`` is an ordinal before the word it orders ("the first cut")."""
    return tokens[at] in _ORDINALS and at + 1 < len(tokens) and tokens[at + 1] not in STOPWORDS


def _as_listed(words: list[str]) -> list[str]:
    """Words with an owner or a reflexive as WordNet's lemmas and the everyday phrases spell them ("one's",
    "oneself")."""
    return ["one's" if word in POSSESSIVES else "oneself" if word in _REFLEXIVES else word for word in words]


def _is_thing(term: Term) -> bool:
    """A thing the event names ("the pallet of tyres"): a noun that is not its act and weighs as a content
    word. (A word WordNet does not know, a name, counts in ``lexical`` as written, not as a kind of thing.)"""
    return not term.act and term.weight >= 0.5 and "n" in term.senses


def _leaving(particle: str, then: list[str]) -> bool:
    """A particle of leaving or coming in (before the words ``then``): "off" only where no thing follows it, since
    "runs off" (down the road) is leaving and "jumps off the train" getting down from something."""
    return particle in _LEAVING_WAYS or particle == "off" and not (then[:1] and then[0] in _DETERMINERS)


def _following(text_words: list[str], head: str) -> list[str] | None:
    """The words after the first place ``head`` stands in the text (None where it does not)."""
    head_words = head.split()
    for at in range(len(text_words) - len(head_words) + 1):
        if text_words[at: at + len(head_words)] == head_words:
            return text_words[at + len(head_words):]
    return None


def _object_words(text_words: list[str], act: str) -> set[str]:
    """The words of what an act is done to, named right after it: "cut | a ribbon |", "lifts | a pallet of tyres |",
    "throws | his gum shield |" (through "of", up to the next word that names nothing). Nothing for an act not done
    to a thing named next ("walks in", "falls off the bike")."""
    rest = _following(text_words, act)
    if not rest or rest[0] not in _DETERMINERS:
        return set()
    found: set[str] = set()
    for word in rest:
        if word in _DETERMINERS or (word == "of" and found):
            continue
        if word in STOPWORDS:
            break
        found.add(word)
    return found


def _goal_words(text_words: list[str], act: str) -> set[str]:
    """The words of where an act puts its thing, named after "into" or "onto" in its clause: "puts the loaf | into
    the oven |", "puts it | into the loaf tin |". Nothing for an act with no such goal."""
    rest = _following(text_words, act) or []
    for at, word in enumerate(rest[:_GOAL_REACH]):
        if word in _CLAUSE_ENDS:
            break
        if word in ("into", "onto"):
            return _object_words(rest[at:], word)
    return set()


def _partner(term: Term, said_terms, relations) -> Term | None:
    """The described term that says ``term`` best (None for a description with no terms)."""
    return max(said_terms, key=lambda other: relations[(term, other)][0], default=None)


def _of_what(text_words: list[str], head: str) -> tuple[str, str] | None:
    """("for", "harbour") for "a sign for the harbour": the word after ``head``, "of" or "for", and the first word
    past its determiners."""
    rest = _following(text_words, head)
    named = [word for word in rest[1:] if word not in _DETERMINERS] if rest else []
    return (rest[0], named[0]) if rest and rest[0] in ("of", "for") and named else None


def _reversals(asked: str, said: str, same_act: Callable[[str, str], bool]) -> list[tuple[str, str, str]]:
    """(asked, described, why) for a description that goes the other way or denies the event."""
    found = []
    way = _reversed_way(asked, said, same_act)
    if way:
        found.append((way[0], way[1], "the other way"))
    if any(w in NEGATIONS for w in words(said)) != any(w in NEGATIONS for w in words(asked)):
        found.append(("(as asked)", "negated", "negation"))
    return found


def _places(text: str) -> tuple[set[str], set[str]]:
    """The places a move in ``text`` leaves and reaches ("down from the windowsill", "onto the table")."""
    lowered = text.lower()
    return set(_SOURCE.findall(lowered)), set(_GOAL.findall(lowered))


def _reversed_way(asked: str, said: str, same_act: Callable[[str, str], bool]) -> tuple[str, str] | None:
    """(asked direction, described direction) when the description goes the other way. A particle ("up",
    "down") goes with its verb: "lies down" after "hops onto the couch" is another act, not "hops up" reversed."""
    asked_words, said_words = words(asked), words(said)
    for there, back in _FROM_TO.findall(asked.lower()):
        if (back, there) in _FROM_TO.findall(said.lower()):
            return f"from {there} to {back}", f"from {back} to {there}"
    # One place left in the one, reached in the other ("jumps down from the windowsill" / "leaps onto it").
    (asked_from, asked_to), (said_from, said_to) = _places(asked), _places(said)
    for turned, way in (((asked_from & said_to) - said_from - asked_to, ("from", "to")),
                        ((said_from & asked_to) - asked_from - said_to, ("to", "from"))):
        if turned:
            place = sorted(turned)[0]
            return f"{way[0]} {place}", f"{way[1]} {place}"
    said_set = set(said_words)
    for at, word in enumerate(asked_words):
        if word in said_set or _SAME_WAY.get(word, frozenset()) & said_set:
            continue
        for place, other in enumerate(said_words):
            if other not in _OPPOSITE_WAYS.get(word, ()):
                continue
            if word in _VERB_PARTICLES and not (at and place and same_act(asked_words[at - 1], said_words[place - 1])):
                continue
            return word, other
    return None


class LexicalAligner:
    """Aligns asked events with descriptions over one WordNet; memoised, thread-safe for reads."""

    def __init__(self, wordnet: WordNet) -> None:
        self.wordnet = wordnet
        self.terms = lru_cache(maxsize=8192)(self._terms)
        # A question's candidates share most descriptions (the video's other events): align each pair once.
        self.align = lru_cache(maxsize=16384)(self._align)
        self._relations: dict[tuple[str, str], tuple[float, str | None]] = {}
        self._reaches: dict[str, frozenset[str]] = {}
        self._kinds: dict[str, frozenset[tuple[str, int]]] = {}
        self._ancestors = lru_cache(maxsize=65536)(self._ancestors_uncached)
        self._links = lru_cache(maxsize=262144)(self._links_uncached)

    # --- terms -------------------------------------------------------------------------

    def _collocation(self, parts: list[str]) -> tuple[str, dict[str, tuple[str, ...]]] | None:
        """WordNet's entry for a run of words ("corner kicks" → corner_kick, "drops off" → drop_off)."""
        senses: dict[str, tuple[str, ...]] = {}
        for pos in ("n", "v"):
            heads = (self.wordnet.base_forms(parts[-1], "n") or [parts[-1]]) if pos == "n" else \
                (self.wordnet.base_forms(parts[0], "v") or self.wordnet.possible_forms(parts[0], "v"))
            for head in heads:
                lemma = "_".join([*parts[:-1], head]) if pos == "n" else "_".join([head, *parts[1:]])
                found = self.wordnet.lookup(lemma, pos)
                if found:
                    senses[pos] = found[:_SENSES]
                    break
        return ("_".join(parts), senses) if senses else None

    def _moving_into(self, parts: list[str]) -> tuple[str, dict[str, tuple[str, ...]]] | None:
        """A verb and "into" / "onto" read as its phrasal verb with "in" / "on" ("drops into the half-pipe" says
        "drops in", "gets into the car" "gets in"): WordNet lists the phrasal verb with the bare particle only.
        Its verb senses only ("walks into" is not the noun "walk-in"), and the verb's own: "into" always has where
        after it."""
        if len(parts) != 2 or parts[1] not in ("into", "onto"):
            return None
        found = self._collocation([parts[0], parts[1][:-2]])
        if found is None or "v" not in found[1]:
            return None
        literal = self.wordnet.senses(parts[0], "v")[:_SENSES]
        return "_".join(parts), {"v": tuple(dict.fromkeys([*literal, *found[1]["v"]]))}

    def _tokens(self, text: str) -> tuple[list[str], set[int]]:
        """The words of ``text`` (a hyphenated word WordNet does not know as its parts: "count-in" is
        "count in"; "round" before "the" is "around"), and the positions of owners among them."""
        tokens: list[str] = []
        owned: set[int] = set()
        listed = owned_words(text)
        for at, (token, owner) in enumerate(listed):
            if token == "round" and at and listed[at + 1: at + 2] and listed[at + 1][0] in _DETERMINERS:
                token = "around"  # "runs round the sheep": the preposition, not a round of drinks
            if "-" in token and not any(self.wordnet.senses(token, pos, 1) for pos in "nvar"):
                tokens += [part for part in token.split("-") if part]
            else:
                tokens.append(token)
            if owner:
                owned.add(len(tokens) - 1)
        return self._particle_to_its_verb(tokens, owned)

    def _particle_to_its_verb(self, tokens: list[str], owned: set[int]) -> tuple[list[str], set[int]]:
        """A phrasal verb parted by a short named thing is read joined: "switches the lamp on" as "switches on the
        lamp", "takes his coat off", "knocks the vase over". Not where the particle is a preposition before another
        thing ("knocks a mug off the table"), and only for a verb and particle WordNet lists together."""
        for at in range(len(tokens) - 3):
            if tokens[at] in STOPWORDS or tokens[at + 1] not in _DETERMINERS:
                continue
            for size in (1, 2):
                particle = at + 2 + size
                if particle >= len(tokens) or tokens[particle] not in _SEPARATED or \
                        any(word in STOPWORDS for word in tokens[at + 2: particle]) or \
                        tokens[particle + 1: particle + 2] and tokens[particle + 1] in _DETERMINERS:
                    continue
                found = self._collocation([tokens[at], tokens[particle]])
                if found is None or "v" not in found[1]:
                    continue
                moved = [*tokens[:at + 1], tokens[particle], *tokens[at + 1: particle], *tokens[particle + 1:]]
                shifted = {spot + 1 if at < spot < particle else spot for spot in owned}
                return moved, shifted
        return tokens, owned

    def names_a_clause(self, event: str) -> bool:
        """Does ``event`` say someone does something, a verb with its subject ("the referee blows the whistle",
        "cartons drop off the stack", "the lid is lifted"), rather than name a topic ("the final whistle",
        "homework due Friday", "hiring engineers", "warning signs")?"""
        said = _words(event)
        for before, word in zip(("", *said), said, strict=False):
            if word in _CLAUSE_MAKERS:
                return True
            if not before or before.endswith("ing") or before in _BEFORE_A_THING or not self.wordnet.senses(word, "v"):
                continue
            bases, subject = set(self.wordnet.base_forms(word, "v")), self.wordnet.base_forms(before, "n")
            if word.endswith("s") and word not in bases and (subject or before in _SUBJECT_PRONOUNS):
                return True  # "blows" after "the referee", not "signs" after "new"
            if word in bases and (before in _PLURAL_SUBJECTS or subject and before not in subject):
                return True  # "cartons drop", "people leave"
        return False

    def _terms(self, text: str) -> tuple[Term, ...]:
        tokens, owners = self._tokens(_FRAMING.sub(" ", text.lower()))
        terms: list[Term] = []
        starts: list[int] = []
        at = 0
        while at < len(tokens):
            before = "the" if at - 1 in owners else tokens[at - 1] if at else ""
            done = self._light_verb(tokens, at)
            if done is not None:
                terms += done[0]
                starts += [at] * len(done[0])
                at += done[1]
                continue
            term, size = self._collocation_term(tokens[at: at + MOST_WORDS + 1], before)
            if term is None:
                term, size = self._word_term(tokens[at], before), 1
                if term is not None and _places_the_next(tokens, at) and "a" in term.senses:
                    term = dataclasses.replace(term, by_pos=(("a", term.senses["a"]),), act=False, rare=frozenset())
            if term is not None:
                terms.append(self._as_used(term, tokens, at + size))
                starts.append(at)
            at += size
        return self._away_with_its_verb(self._act_after_subject(self._subject_before_its_act(terms, starts)), starts)

    def _as_used(self, term: Term, tokens: list[str], after: int) -> Term:
        """A verb in "-s" with its senses that take no object first where nothing it could act on follows ("the rope
        snaps": breaks, not snaps a thing; "the glass drops to the floor": falls, not lets fall)."""
        verbs = term.senses.get("v")
        if not verbs or " " in term.text or (after < len(tokens) and tokens[after] not in _NO_OBJECT_AFTER) \
                or not term.text.endswith("s") or self._plain_form(term.text):
            return term  # a verb in "-s" only: not a participle ("are stolen"), nor "shut" in "snaps shut"
        ordered = self._without_object(verbs)
        if ordered == tuple(verbs):
            return term
        by_pos = tuple((pos, ordered if pos == "v" else ids) for pos, ids in term.by_pos)
        return dataclasses.replace(term, by_pos=by_pos)

    def _without_object(self, senses: Sequence[str]) -> tuple[str, ...]:
        """``senses`` with those WordNet says may be used without an object first, in their order."""
        def takes_one(sense: str) -> bool:
            frames = self.wordnet.synset(sense).frames
            return bool(frames) and frames <= _OBJECT_FRAMES
        return tuple(sorted(senses, key=takes_one))

    @staticmethod
    def _away_with_its_verb(terms: tuple[Term, ...], starts: list[int]) -> tuple[Term, ...]:
        """An act and the "away" right after it are one term, as a phrasal verb WordNet lists is ("hobbles away",
        "flies away"): the way goes with its verb, and is said where a description goes that way."""
        found: list[Term] = []
        for at, term in enumerate(terms):
            if found and term.text == "away" and starts[at] == starts[at - 1] + 1 and found[-1].act \
                    and " " not in found[-1].text:
                found[-1] = dataclasses.replace(found[-1], text=f"{found[-1].text} away")
                continue
            found.append(term)
        return tuple(found)

    def _subject_before_its_act(self, terms: list[Term], starts: list[int]) -> list[Term]:
        """A word in "-s" read as an act right before another act is the plural noun it also is, the subject's head:
        "the stage lights | go out" (not "lights" the act), "fog cannons | blast". Nothing between them: "kicks and
        runs" are two acts. So is one that opens the text before a verb in its plain form, which then is the act:
        "Boxes tumble from the pallet" (a verb in "-s" wants a subject before it; "tumble" agrees with "boxes")."""
        found = list(terms)
        for at, (term, following) in enumerate(itertools.pairwise(terms)):
            if not (term.act and " " not in term.text and term.text.endswith("s") and "n" in term.senses
                    and starts[at + 1] == starts[at] + 1):
                continue
            opens = starts[at] == 0 and not following.act and self._plain_verb(following)
            if following.act or opens:
                found[at] = dataclasses.replace(term, act=False,
                                                by_pos=tuple((pos, ids) for pos, ids in term.by_pos if pos != "v"))
            if opens:
                found[at + 1] = dataclasses.replace(following, act=True)
        return found

    def _plain_verb(self, term: Term) -> bool:
        """A verb in its plain form ("tumble", "go out"), as it follows a plural subject."""
        return "v" in term.senses and term.weight > _GENERIC_WEIGHT and self._plain_form(term.text.split()[0])

    def _plain_form(self, word: str) -> bool:
        """``word`` is a verb's dictionary form ("tumble", not "tumbles" or "tumbled")."""
        return word in self.wordnet.base_forms(word, "v")

    def _act_after_subject(self, terms: list[Term]) -> tuple[Term, ...]:
        """With no word read as the act, a verb in "-s" right after a singular first thing is the act: "the cat
        eats", "the player scores" (each also a plural noun: food, tallies). Only with no other act: "the stage lights
        go out" keeps "go out", while "the stage lights" alone is read the same way (a description that says the
        lights says the word either way). A plural subject is left alone ("cartons slide" reads either way)."""
        if any(term.act for term in terms):
            return tuple(terms)
        if terms and (split := self._subject_and_act(terms[0])):
            return (*split, *terms[1:])
        if len(terms) < 2:
            return tuple(terms)
        subject, word = terms[0], terms[1]
        if "n" not in subject.senses or "v" not in word.senses or " " in word.text or word.weight <= _GENERIC_WEIGHT \
                or not word.text.endswith("s") or self._plain_form(word.text) \
                or subject.text not in self.wordnet.base_forms(subject.text, "n"):
            return tuple(terms)
        return (subject, dataclasses.replace(word, act=True), *terms[2:])

    @cached_property
    def _doers(self) -> frozenset[str]:
        """What can do an act: living things, vehicles, machines."""
        return frozenset({*(self.wordnet.senses(word, "n", 1)[0] for word in ("organism", "device", "machine")),
                          *self.wordnet.senses("conveyance", "n")})  # a means of transport in one of its senses

    def _subject_and_act(self, term: Term) -> tuple[Term, Term] | None:
        """A compound noun read where a thing and its act stand, with no other act in the text: "the car parks", "the
        bus stops", "the truck stops" (not a car park, a bus stop): its first word the thing, one that can act (a living
        thing, a vehicle, a machine), its second, a verb in "-s", the act."""
        first, *rest = term.text.split()
        if len(rest) != 1 or set(term.senses) != {"n"} or not rest[0].endswith("s"):
            return None
        verb, noun = rest[0], self.wordnet.senses(first, "n", 1)
        if self._plain_form(verb) or not self.wordnet.base_forms(verb, "v") or not noun \
                or not self._doers & set(self._ancestors(noun[0], _KIND_STEPS)):
            return None  # "the corner kicks": a corner kicks nothing
        thing, act = self._word_term(first, "the"), self._word_term(verb, first)
        return (thing, dataclasses.replace(act, act=True)) if thing and act else None

    def _light_verb(self, tokens: list[str], at: int) -> tuple[list[Term], int] | None:
        """A verb that says little but takes an act named as a thing ("takes a tumble", "gives a sharp blast",
        "gives the bench a wipe", "makes a save"): the act is the thing's verb, and the light verb says nothing.
        (Terms and how many words they cover, or None when ``tokens[at]`` starts no such phrase.)"""
        whom = None
        if tokens[at] in _LIGHT_WITH and tokens[at + 1: at + 2] == ["with"]:
            article = at + 2
        elif tokens[at] not in _LIGHT_VERBS or self._starts_a_phrase(tokens, at):
            return None
        else:
            article = at + 1
            if (len(tokens) > at + 3 and tokens[at + 1] in _DETERMINERS and tokens[at + 1] not in ("a", "an")
                    and tokens[at + 3] in ("a", "an")):
                whom = self._word_term(tokens[at + 2], tokens[at + 1])  # whom or what it is given: "the bench"
                article = at + 3
        if tokens[article: article + 1] not in (["a"], ["an"]):
            return None
        # "a tumble"; "a sharp blast": one describing word may come between
        described = None
        noun = article + 1
        if noun < len(tokens) and not self._names_an_act(tokens[noun]):
            if tokens[noun] in STOPWORDS or not self.wordnet.senses(tokens[noun], "a", 1):
                return None
            described, noun = self._word_term(tokens[noun], "a"), noun + 1
        if noun >= len(tokens) or not self._names_an_act(tokens[noun]):
            return None
        act = self._word_term(tokens[noun], "to")  # read as the verb it is ("to tumble")
        return [t for t in (whom, described, act) if t is not None], noun + 1 - at

    def _starts_a_phrase(self, tokens: list[str], at: int) -> bool:
        """Whether an everyday phrase starts at ``tokens[at]`` ("takes a spill", "takes a twirl"): the phrase says
        more than its light verb and noun would."""
        return any(self._is_phrase(tokens[at: at + size]) for size in range(2, MOST_WORDS + 1)
                   if at + size <= len(tokens))

    def _is_phrase(self, part: list[str]) -> bool:
        """Whether ``part``, its first word as a verb in any form, is one of the everyday phrases ("does a runner",
        whose "does" would otherwise be passed over as an auxiliary)."""
        return any(self.wordnet.is_phrase("_".join([verb, *_as_listed(part[1:])]))
                   for verb in self.wordnet.possible_forms(part[0], "v"))

    def _names_an_act(self, word: str) -> bool:
        """A noun whose commonest sense is something done or happening and that is a verb too ("tumble", "wipe",
        "blast"), unlike what is made or had ("a cake", "a bag")."""
        if word in STOPWORDS or not (self.wordnet.senses(word, "v", 1) or self._phrasal_verb_of(word)):
            return False
        nouns = self.wordnet.senses(word, "n", 1)
        return bool(nouns) and self.wordnet.synset(nouns[0]).lexname in _ACT_LEXNAMES

    def _phrasal_verb_of(self, word: str) -> str | None:
        """The phrasal verb a noun is written from, closed up or hyphenated ("breakaway": break away, "wipeout":
        wipe out, "pile-up": pile up), as WordNet or the everyday phrases list it; None for any other word."""
        for particle in _PARTICLES:
            verb = word.removesuffix(particle).removesuffix("-")
            if len(verb) > 2 and verb != word and self.wordnet.senses(f"{verb}_{particle}", "v", 1):
                return f"{verb}_{particle}"
        return None

    def _collocation_term(self, run: list[str], before: str) -> tuple[Term | None, int]:
        """The longest WordNet collocation or everyday phrase (up to five words) at the start of ``run`` (the word
        after it included, to read it by), and its length. An owner is "one's" as the lexicon lists it ("loses his
        footing" is "lose one's footing", "picks himself up" "pick oneself up")."""
        if len(run) > 2 and run[1] in _OBJECT_PRONOUNS and run[2] in _PARTICLES:
            # A phrasal verb parted by a pronoun for its thing is the phrasal verb: "picks it up", "turns it off",
            # "knocks him down". Named by its verb and particle, as the adjacent form is.
            found = self._collocation([run[0], run[2]])
            if found and "v" in found[1]:
                senses = {"v": found[1]["v"]}
                forms = frozenset({found[0], *(self.wordnet.synset(s).words[0] for s in senses["v"][:1])})
                return self._placed(f"{run[0]} {run[2]}", senses, forms, _POS_WEIGHT["v"], before), 3
        for size in range(MOST_WORDS, 1, -1):
            part = run[:size]
            if len(part) < size or "n't" in part or \
                    part[0] in STOPWORDS and part[0] not in ("off", "up") and not self._is_phrase(part):
                continue
            listed = _as_listed(part)
            found = self._collocation(listed) or (listed != part and self._collocation(part)) \
                or self._moving_into(part)
            if found:
                senses = dict(found[1])
                forms = frozenset(self.wordnet.synset(s).words[0] for ids in senses.values() for s in ids[:1])
                if part[-1] in STOPWORDS and part[-1] not in _PARTICLES:
                    # A verb and a particle that gives no direction ("budget for") still says the verb, and before a
                    # thing it is a preposition ("runs for the train", "slips by the pool"): either reading may say it.
                    forms |= frozenset(self.wordnet.base_forms(part[0], "v"))
                    if "v" in senses and run[size: size + 1] and run[size] in _DETERMINERS:
                        senses["v"] = tuple(dict.fromkeys([*senses["v"], *self.wordnet.senses(part[0], "v")[:_SENSES]]))
                elif "v" in senses and part[-1] in _PARTICLES and run[size: size + 1] and run[size] in _DETERMINERS:
                    # A particle before a thing is often its preposition: "drop off the stack" is the verb "drop"
                    # and where from, as much as the phrasal "drop off" (deliver, doze). Either reading may say it.
                    senses["v"] = _interleaved(self.wordnet.senses(part[0], "v")[:_SENSES], senses["v"])
                    forms |= frozenset(self.wordnet.base_forms(part[0], "v"))
                return self._placed(" ".join(part), senses, forms | {found[0]},
                                    max(_POS_WEIGHT[p] for p in senses), before), size
        return None, 0

    def _word_term(self, token: str, before: str) -> Term | None:
        if token in STOPWORDS or token in NEGATIONS or token.isdigit():
            return None
        every = {pos: tuple(self.wordnet.senses(token, pos)) for pos in ("n", "v", "a", "r")}
        if not every["v"] and every["n"] and (phrasal := self._phrasal_verb_of(token)) and self._names_an_act(token):
            # an act named by the phrasal verb it is written from: "the breakaway" is breaking away
            every["v"] = tuple(self.wordnet.senses(phrasal, "v"))
        senses = {pos: ids[:_SENSES] for pos, ids in every.items() if ids}
        forms = frozenset({token, *(f for pos in senses for f in self.wordnet.base_forms(token, pos))})
        if token in GENERIC:
            weight = _GENERIC_WEIGHT
        elif senses:
            weight = max(_POS_WEIGHT[p] for p in senses)
        else:
            weight = 0.8  # a word WordNet does not know (a name, a brand): it must match as written
        term = self._placed(token, senses, forms, weight, before)
        rare = frozenset(s for pos in term.senses for s in every[pos][_SENSES:])
        return dataclasses.replace(term, rare=rare) if rare else term

    def _placed(self, text: str, senses: dict[str, tuple[str, ...]], forms: frozenset[str], weight: float,
                before: str) -> Term:
        """A term with the senses its place allows, marked when it is the act ("slices" after "the baker")."""
        if before in _BEFORE_A_THING and senses.keys() - {"v", "r"}:
            # An act named as a thing ("the crash", "a tumble") is still the act: its verb senses stay.
            named_act = before in _DETERMINERS and " " not in text and self._names_an_act(text)
            senses = {pos: ids for pos, ids in senses.items() if pos != "r" and (pos != "v" or named_act)}
        return Term(text=text, by_pos=tuple(senses.items()), forms=forms, weight=weight,
                    act=self._is_act(text, senses, weight, before))

    def _is_act(self, text: str, senses: dict[str, tuple[str, ...]], weight: float, before: str) -> bool:
        if "v" not in senses or weight <= _GENERIC_WEIGHT:
            return False
        if before in _DETERMINERS and re.search(r"(?:ed|en)$", text):
            return False  # a participle after "the" says what the thing is like: "the hooded figure", "the parked car"
        if before in _BEFORE_AN_ACT or set(senses) == {"v"}:
            return True
        if before in _BEFORE_A_THING:
            return False
        # An inflected verb ("slices", "poured"), not a noun that only looks like one ("seed" is not "see" + "ed").
        first = text.split()[0]
        inflected = any(form != first for form in self.wordnet.base_forms(first, "v"))
        return inflected and not self.wordnet.lookup(first, "n")

    # --- relations between two terms --------------------------------------------------------

    def _links_uncached(self, synset_id: str, symbols: str) -> frozenset[str]:
        """The synsets ``synset_id`` points at by any of ``symbols`` (WordNet's pointer symbols, space-separated)."""
        return frozenset(self.wordnet.synset(synset_id).related(*symbols.split()))

    def _ancestors_uncached(self, synset_id: str, steps: int) -> dict[str, int]:
        return self.wordnet.hypernyms(synset_id, steps)

    def _relation(self, asked: Term, said: Term) -> tuple[float, str | None]:
        key = (asked.key, said.key)
        if key not in self._relations:
            if _named_in_an_act(asked, said):
                self._relations[key] = (_NAMED_IN_AN_ACT_CREDIT, None)
            elif _rare_synonym(asked, said):
                self._relations[key] = (_RARE_SENSE_CREDIT, None)
            else:  # words whose reaches do not meet are unrelated, without reading every pair of senses
                met = asked.forms & said.forms or self._reach(asked) & self._reach(said)
                found = self._relation_uncached(asked, said) if met else (0.0, None)
                self._relations[key] = self._unlinked(asked, said, found) if not found[0] else found
        return self._relations[key]

    def _unlinked(self, asked: Term, said: Term, found: tuple[float, str | None]) -> tuple[float, str | None]:
        """Support for two words WordNet's links do not support one by the other (``found``: what they said), from
        what else tells one is the other."""
        if found == (0.0, None) and self._rare_kind(asked, said):
            found = (_RARE_KIND_CREDIT, None)
        if not found[0] and (rare := self._kin_in_a_rare_sense(asked, said)):
            found = (rare, None)  # a bag is luggage in its sixth sense, not a sibling of it
        if found == (0.0, None):
            found = (self._defined_credit(asked, said), None)
        if found == (0.0, None) and self._compound_head(asked, said):
            found = (_KIND_CREDIT, None)
        if found == (0.0, None) and self._compound_head(said, asked):  # "the case", for the suitcase
            found = (_GLOSS_MORE_GENERAL, None)
        if found == (0.0, None) and (head := self._open_compound_head(said)) is not None:
            # "a married couple" is a couple, which says "the pair", though WordNet files it under marriage
            credit = self._relation(asked, head)[0]
            found = (min(credit, _KIND_CREDIT), None) if credit >= 0.5 else found
        if found == (0.0, None) and (self._role_and_look(asked, said) or self._animal_by_role(asked, said)):
            found = (_PERSON_BY_LOOK_CREDIT, None)
        if found == (0.0, None):
            found = self._by_looks(asked, said)
        if found == (0.0, None) and (len({self._people(asked), self._people(said)} - {None}) == 2
                                     or self._group_and_member(asked, said)):
            found = (_MEMBERS_CREDIT, None)
        return found

    def _reach(self, term: Term) -> frozenset[str]:
        """Everything a relation between two words goes through, so two words whose reaches do not meet are
        unrelated: their senses, ancestors within four steps, linked and opposite senses, and the
        exclusive kinds of their commonest noun senses."""
        if term.key not in self._reaches:
            found: set[str] = set()
            for pos, ids in term.senses.items():
                for rank, sense in enumerate(ids):
                    found |= set(self._ancestors(sense, _KIND_STEPS if pos == "n" and rank == 0 else _ANCESTOR_STEPS))
                    found |= self._links(sense, _LINKS_FROM) | self._links(sense, _DERIVED) | self._links(sense, "!")
                    found |= self._links(sense, _WHOLE)
                    lexname = self.wordnet.synset(sense).lexname
                    if pos == "n" and rank < _CONFLICT_SENSES and lexname in _CONCRETE_LEXNAMES:
                        found.add(f"lexname:{lexname}")
            self._reaches[term.key] = frozenset(found)
        return self._reaches[term.key]

    def _relation_uncached(self, asked: Term, said: Term) -> tuple[float, str | None]:
        """(support 0..1, conflict reason or None) between an asked term and a described one."""
        if asked.forms & said.forms:
            return 1.0, None
        best, conflict = 0.0, None
        for pos, asked_ids in asked.senses.items():
            said_ids = said.senses.get(pos, ())
            for rank, a in enumerate(asked_ids):
                links = self._links(a, _LINKS_FROM)
                antonyms = self._links(a, "!")
                for other_rank, s in enumerate(said_ids):
                    if s == a:
                        return 1.0, None
                    if pos == "n" and self._animal_or_person_by_insult(asked_ids, a, said_ids, s):
                        continue
                    credit = self._credit(a, s, pos, rank, other_rank, links, said.act)
                    if credit:
                        best = max(best, credit)
                    elif s in antonyms and min(rank, other_rank) == 0:
                        conflict = "antonym"
                    elif conflict in (None, "kin") and not (pos == "n" and asked.act and said.act):
                        # two acts are not denied by what their words name as things ("hides" / "ducks": no skin,
                        # no bird)
                        conflict = self._siblings(a, s, pos, rank, other_rank) or conflict
        if best < 0.8 and self._derived(asked, said):
            best = 0.8
        return best, (conflict if best < 0.5 else None)

    def _animal_or_person_by_insult(self, asked_ids, a: str, said_ids, s: str) -> bool:
        """A person's sense of a word for an animal, or the other way round: "a fox" is a shifty person only in its
        third sense, so a caption's fox is no person ("a person climbs the fence" / "a fox climbs the fence")."""
        return any({self.wordnet.synset(sense).lexname, self.wordnet.synset(ids[0]).lexname} == _ANIMAL_AND_PERSON
                   for sense, ids in ((a, asked_ids), (s, said_ids)))

    def _credit(self, a: str, s: str, pos: str, rank: int, other_rank: int, links: set[str],
                said_act: bool) -> float:
        """Support for asked sense ``a`` from described sense ``s`` (their ranks among each word's senses;
        ``said_act``: the described word is the act there, not a noun that has verb senses too, "a circle")."""
        # Rare senses make spurious links ("circle", a group of people, ~ "left", the political wing): one of
        # the two must be its word's commonest sense, and neither far down the list.
        if max(rank, other_rank) >= _HYPONYM_SENSES or min(rank, other_rank) > 0:
            return 0.0
        if s in links or a in self._links(s, _LINKS_TO):
            return 0.8
        if pos == "n" and (self._defined_as(a, s) or self._defined_as(s, a)):
            return _GLOSS_MORE_SPECIFIC  # a word defined as the other: "bloke" (a boy or man), for "man"
        if s in self._links(a, _WHOLE) and rank == other_rank == 0:
            return 0.55  # the whole the asked part belongs to: an arm raised, for a hand up
        if pos == "n" and a in self._links(s, _WHOLE) and self._names_its_whole(s, a):
            return 0.55  # a part named with the asked whole: the bicycle wheel repaired, for the bike
        if pos == "v" and rank == other_rank == 0 and self._one_way_of(a, s):
            return _VERB_KIN_CREDIT  # two ways of one specific act: gets away / runs off (both flee)
        steps = self._ancestors(s, _KIND_STEPS if pos == "n" else _ANCESTOR_STEPS).get(a)  # None: not above s
        if steps is not None and steps <= _ANCESTOR_STEPS and self.wordnet.depth(a) >= _GENERAL_DEPTH[pos]:
            return 0.9 if steps <= 2 else 0.75  # the description is more specific: a cyclist is a rider
        if pos == "v" and said_act and steps is not None and steps <= _ROOT_VERB_STEPS:
            return _ROOT_VERB_CREDIT  # a way of the general act asked: glides, for moves
        if pos == "n" and other_rank == 0 and steps is not None and self.wordnet.depth(a) >= _KIND_MIN_DEPTH:
            return _KIND_CREDIT  # the kind asked: a circle, for a shape
        if s in self._ancestors(a, _GENERAL_STEPS) and self.wordnet.depth(s) >= _GENERAL_DEPTH[pos]:
            return 0.55  # more general, but not a near-root word: a player, for the striker; a bird, for the robin
        if pos == "n" and self.wordnet.synset(a).words[0] in self._defined_kind(s):
            return _GLOSS_MORE_SPECIFIC  # defined as a kind of the asked thing: a kitten (young domestic cat), a cat
        return 0.0

    def _names_its_whole(self, part: str, whole: str) -> bool:
        """A compound for a part that begins with a word for its whole ("bicycle wheel", "car door"). A part alone
        ("her hand") does not say the whole ("her arm up")."""
        first, *rest = self.wordnet.synset(part).words[0].split("_")
        return bool(rest) and whole in self.wordnet.senses(first, "n", _SENSES)

    @cached_property
    def _animal(self) -> str:
        return self.wordnet.senses("animal", "n", 1)[0]

    def _by_role(self, sense: str) -> bool:
        """An animal named by what it is to people ("stray", "pet": under "animal" or "domestic animal" only), not
        by its kind ("dog" is a canine too)."""
        parents = self._links(sense, "@")
        return bool(parents) and all(self._animal in self._ancestors(parent, 1) for parent in parents)

    def _animal_by_role(self, asked: Term, said: Term) -> bool:
        """One word names an animal by what it is to people ("a stray", "the pet"), the other by its kind ("a single
        sheep", "the dog"): the same animal may be both, though the words do not say so."""
        one, other = asked.senses.get("n", ())[:1], said.senses.get("n", ())[:1]
        if not one or not other or asked.act or said.act or self._by_role(one[0]) == self._by_role(other[0]):
            return False
        kind = other[0] if self._by_role(one[0]) else one[0]
        return self._animal in self._ancestors(kind, _KIND_STEPS)

    def _defined_as(self, sense: str, other: str) -> bool:
        """``sense``'s whole definition is a word or a choice of words ("a boy or man"), one of them a word of
        ``other``: the dictionary says the one is the other, though neither sits under the other."""
        gloss = re.split(r"[;:(]", self.wordnet.synset(sense).gloss.lower())[0].strip()
        choices = [re.sub(r"^(?:a|an|the)\s+", "", part.strip()) for part in re.split(r"\s+or\s+|,\s*", gloss)]
        if not choices or any(" " in choice for choice in choices):
            return False
        return bool(set(choices) & set(self.wordnet.synset(other).words))

    def _defined_kind(self, sense: str) -> frozenset[str]:
        """The thing a noun sense's definition says it is a kind of, where WordNet files it elsewhere: the last word
        before the definition goes on to say more ("young domestic cat" → cat, "a glass with a flat bottom" → glass;
        nothing for "any of several breeds of dog", whose kind comes after "of")."""
        gloss = re.split(r"[;:(,]", self.wordnet.synset(sense).gloss.lower())[0]
        lead = []
        for word in re.findall(r"[a-z]+", gloss):
            if word in _GLOSS_KIND_ENDS or word.endswith(("ing", "ed")):  # "a vehicle carrying many passengers"
                break
            lead.append(word)
        if not lead or lead[-1] in STOPWORDS or lead[-1] in GENERIC:
            return frozenset()
        return frozenset({lead[-1], *self.wordnet.base_forms(lead[-1], "n")})

    def _genera(self, sense: str) -> frozenset[str]:
        """The acts a verb sense's definition says it is a way of: its first verb ("fall down, as if
        collapsing" → fall) and, after a definition of a word or two, the verbs it offers as alternatives
        ("fall or come down violently" → fall, come; "move away or escape suddenly" → move, escape). None when
        the definition names the word itself ("throw a glance at": a light verb, not a genus)."""
        synset = self.wordnet.synset(sense)
        gloss = synset.gloss.lower()
        said = re.findall(r"[a-z]+", gloss)
        if any(word in said for word in synset.words if "_" not in word):
            return frozenset()
        parts = gloss.split(" or ")
        lead = [w for w in re.findall(r"[a-z]+", parts[0]) if w not in _GLOSS_LEAD]
        found = {lead[0]} if lead and self.wordnet.lookup(lead[0], "v") else set()
        if len(lead) <= 2:
            for part in parts[1:]:
                first = re.findall(r"[a-z]+", part)[:1]
                if first and first[0] not in _GLOSS_LEAD and self.wordnet.lookup(first[0], "v"):
                    found.add(first[0])
        return frozenset(found)

    def _act_sense(self, term: Term) -> str | None:
        """The act a term names in its commonest sense: its verb, or for a noun of an act the verb it comes
        from ("the crash"; not "the thief")."""
        if self._as_act(term) and term.senses.get("v"):
            return term.senses["v"][0]
        noun = term.senses.get("n", ())[:1]
        if noun and self.wordnet.synset(noun[0]).lexname in _ACT_NOUNS:
            return next((v for v in self._links(noun[0], "+") if v.startswith("v:")), None)
        return None

    def _as_act(self, term: Term) -> bool:
        """A word that can be read as a verb where it stands: the act, a verb's inflection ("falls"), or a
        word with no noun sense (not "the main group", "a purple circle")."""
        first = term.text.split()[0]
        return term.act or "n" not in term.senses or \
            any(form != first for form in self.wordnet.base_forms(first, "v"))

    def _defined_credit(self, asked: Term, said: Term) -> float:
        """Support read from definitions, where no link or hierarchy relates the two words: the described act is
        defined as a way of the asked one ("topples": fall), or the asked one as a way of the described one
        ("steals": take). Each word in its commonest sense, the genus named as written: a word's rarer senses
        and its synonyms' definitions link nearly anything to anything."""
        said_senses = said.senses.get("v", ())[:1]
        if not said_senses or asked.weight <= _GENERIC_WEIGHT or not self._as_act(said):
            return 0.0
        a = self._act_sense(asked)
        if a is None or said_senses[0] in self._links(a, "!"):
            return 0.0
        # A phrasal verb defined by its own verb is a way of that verb ("fall over": fall forward and down), and a
        # way of it said is said: "tumbles" (fall down, as if collapsing) for "falls over".
        head = frozenset(self.wordnet.base_forms(asked.text.split()[0], "v")) if " " in asked.text else frozenset()
        named = asked.forms | (head & self._genera(a))
        if said.weight > _GENERIC_WEIGHT and (self._genera(said_senses[0]) - _GLOSS_TOO_GENERAL) & named:
            return _GLOSS_MORE_SPECIFIC
        # A general word may describe a specific act ("takes", for "steals"), though it says little itself.
        return _GLOSS_MORE_GENERAL if self._genera(a) & said.forms else 0.0

    def _one_way_of(self, a: str, s: str) -> bool:
        """Two verbs one step under the same act, when that act is itself specific (not "move", "travel",
        "change"): "escape" and "abscond" under "flee", "shred" and "rip" under "tear"."""
        if s in self._links(a, "!") or a in self._links(s, "!"):
            return False  # switching on is not switching off, though both are switching
        shared = set(self._links(a, "@")) & set(self._links(s, "@"))
        return any(self.wordnet.depth(parent) >= _VERB_KIN_DEPTH for parent in shared)

    def _compound_head(self, asked: Term, said: Term) -> bool:
        """The described word is a closed compound whose head is the asked word ("suitcase" for "case",
        "floodlight" for "light"), and the two are things of one close kind in some sense of the asked word (both
        containers, or both people: "goalkeeper" for "keeper"; not "carpet" for "pet")."""
        word, other = asked.text, said.text
        if " " in word or len(word) < 3 or not other.endswith(word) or len(other) - len(word) < 3 \
                or not self.wordnet.lookup(other[: -len(word)], "n"):
            return False
        compound = said.senses.get("n", ())[:1]
        if not compound:
            return False
        if self.wordnet.synset(compound[0]).lexname == _PERSON_LEXNAME and any(
                self.wordnet.synset(sense).lexname == _PERSON_LEXNAME for sense in self.wordnet.senses(word, "n")):
            return True  # both people: "the keeper" may be the goalkeeper, "the man" the policeman
        near = {a for a in self._ancestors(compound[0], 2) if self.wordnet.depth(a) >= _COMPOUND_KIND_DEPTH}
        return any(near & set(self._ancestors(sense, 2)) for sense in self.wordnet.senses(word, "n"))

    def _open_compound_head(self, term: Term) -> Term | None:
        """The last word of a collocation WordNet lists as a person, a group or a made thing ("married couple",
        "police car"), as a word of its own, when the collocation is of the kind that word commonly names: such a
        compound is a kind of its head ("a hot dog", a person who shows off in its first sense, is no dog). Not
        animals, plants or food, whose compounds often are not ("a sea lion", "a guinea pig")."""
        words = term.text.split()
        compound = term.senses.get("n", ())[:1]
        if len(words) < 2 or not compound or (lexname := self.wordnet.synset(compound[0]).lexname) \
                not in _OPEN_COMPOUND_LEXNAMES:
            return None
        head = self._word_term(words[-1], "the")
        first = head.senses.get("n", ())[:1] if head is not None else ()
        return head if first and self.wordnet.synset(first[0]).lexname == lexname else None

    @cached_property
    def _look_senses(self) -> dict[str, str]:
        """WordNet's people by sex or age ("adult", "male", "female", "juvenile"): their person senses."""
        return {word: next(s for s in self.wordnet.senses(word, "n") if self.wordnet.synset(s).lexname ==
                           _PERSON_LEXNAME) for word in _LOOKS}

    @cached_property
    def _looks(self) -> dict[str, str]:
        """Each person by sex or age, with the one it excludes."""
        found = self._look_senses
        return {found[word]: found[other] for pair in _EXCLUSIVE_LOOKS for word, other in (pair, pair[::-1])}

    def _person(self, term: Term) -> tuple[str, frozenset[str]] | None:
        """For a person noun in its commonest sense: "look" when it names one by sex or age ("a man", "the girl"),
        else "role" ("the thief", "an official", "the teacher"); and the sexes and ages it says, near or far (a
        teacher is an adult). None for anything else."""
        nouns = term.senses.get("n", ())[:_CONFLICT_SENSES]
        if term.act or not nouns or self.wordnet.synset(nouns[0]).lexname != _PERSON_LEXNAME \
                or any(self.wordnet.synset(other).lexname == _ARTIFACT_LEXNAME for other in nouns[1:]):
            return None  # nor a word that is as often a made thing: a conveyor (who conveys; a belt)
        near = self._looks.keys() & ({nouns[0]} | set(self._ancestors(nouns[0], _LOOK_STEPS)))
        says = self._looks.keys() & ({nouns[0]} | set(self._ancestors(nouns[0], _KIND_STEPS)))
        if near and _YOUNG.search(self.wordnet.synset(nouns[0]).gloss):
            # WordNet files a boy under males only ("a youthful male person"), a girl under women ("a young woman"):
            # the definition says the age.
            says = (says - {self._look_senses["adult"]}) | {self._look_senses["juvenile"]}
        return ("look" if near else "role"), frozenset(says)

    @cached_property
    def _social_group(self) -> str:
        return self.wordnet.senses("social_group", "n", 1)[0]

    def _people(self, term: Term) -> str | None:
        """How a noun names people together: "group" for a group of people in its commonest sense ("the crowd", "the
        team", "the audience") or a word for a number of anything that also names people ("the pair"), "members"
        for persons named in the plural ("spectators", "the fans"), "people" for the plain word; else None. Any two
        of the three say each other in part."""
        nouns = term.senses.get("n", ())
        if term.act or not nouns or " " in term.text:
            return None
        if term.text in _PEOPLE:
            return "people"
        if term.text not in self.wordnet.base_forms(term.text, "n") and any(
                self.wordnet.synset(sense).lexname == _PERSON_LEXNAME for sense in nouns[:_CONFLICT_SENSES]):
            return "members"
        if self._social_group in self._ancestors(nouns[0], _ANCESTOR_STEPS):
            return "group"
        # a word for a number of anything that is also one for people ("the happy pair", "the duo")
        if self.wordnet.synset(nouns[0]).lexname in _NUMBER_LEXNAMES and any(
                self._social_group in self._ancestors(sense, _ANCESTOR_STEPS) for sense in nouns[1:3]):
            return "group"
        return None

    def _members(self, term: Term) -> set[str]:
        """What a noun's group is made of in any of its senses, by WordNet's member links ("a group of sheep or
        goats": sheep; WordNet lists that flock fifth)."""
        senses = (*term.senses.get("n", ()), *(sense for sense in term.rare if sense.startswith("n:")))
        return {member for sense in senses for member in self._links(sense, "%m")}

    def _group_and_member(self, asked: Term, said: Term) -> bool:
        """One word names a group of what the other names, or two groups have members of one kind: "the flock" for
        "the sheep" (and back), "a flock" for "the herd" (both of sheep), "the pack" for "the dogs". The member in
        its commonest sense or a kind of it within a few steps: a flock of birds is a flock of pigeons, in part."""
        asked_nouns, said_nouns = asked.senses.get("n", ())[:1], said.senses.get("n", ())[:1]
        if not asked_nouns or not said_nouns or asked.act or said.act:
            return False
        asked_members, said_members = self._members(asked), self._members(said)
        asked_kinds = {asked_nouns[0], *self._ancestors(asked_nouns[0], _ANCESTOR_STEPS)}
        said_kinds = {said_nouns[0], *self._ancestors(said_nouns[0], _ANCESTOR_STEPS)}
        return bool(asked_kinds & said_members or said_kinds & asked_members or asked_members & said_members)

    def _role_and_look(self, asked: Term, said: Term) -> bool:
        """One word names a person by role, the other by sex or age ("the prowler" / "the man in the hoodie"), and
        neither says a sex or an age the other excludes (a teacher, an adult, is no kid)."""
        one, other = self._person(asked), self._person(said)
        if one is None or other is None or one[0] == other[0]:
            return False
        return not self._excludes(one[1], other[1])

    def _excludes(self, looks: frozenset[str], others: frozenset[str]) -> bool:
        """A sex or an age in ``looks`` excludes one in ``others`` (an adult, a kid; a man, a girl)."""
        return bool({self._looks[look] for look in looks} & others)

    def _by_looks(self, asked: Term, said: Term) -> tuple[float, str | None]:
        """Two people named by sex or age, where WordNet files them apart: "a boy" says "a kid" (a young person, and
        male too), "a kid" says "a boy" only in part (the kid may be a girl); a sex or an age the other excludes
        denies it ("a kid" / "a man")."""
        one, other = self._person(asked), self._person(said)
        if one is None or other is None or one[0] != "look" or other[0] != "look" or not one[1] or not other[1]:
            return 0.0, None
        if self._excludes(one[1], other[1]):
            return 0.0, "exclusive"
        if one[1] <= other[1]:
            return _KIND_CREDIT, None
        return (_PERSON_BY_LOOK_CREDIT, None) if other[1] <= one[1] else (0.0, None)

    def _rare_kind(self, asked: Term, said: Term) -> bool:
        """One of the asked word's rarer senses is, one step down, a kind of what the described word names in
        its commonest sense: the description says which sense the user meant ("the ace", against "an
        unreturnable serve": an ace is a serve only in its sixth sense). A kind of it, not the same sense:
        "kneads" said does not make "the baker works late" ask for kneading."""
        parents = {parent for rare in asked.rare for parent in self._links(rare, "@ @i")}
        return any(ids and ids[0] in parents for ids in said.senses.values())

    def _kin_in_a_rare_sense(self, asked: Term, said: Term) -> float:
        """A described word in one of its rarer senses is, one step down, a kind of what the asked word names in its
        commonest ("a bag", a travelling bag, for "the luggage": ``_KIND_CREDIT``), or one step up, what it is a
        kind of ("a case", for "the luggage": ``_GLOSS_MORE_GENERAL``). The asked word says which sense is meant."""
        nouns = asked.senses.get("n", ())[:1]
        rare = {sense for sense in said.rare if sense.startswith("n:")}
        if not nouns or not rare or said.act:  # "waves" the act is not the WAVES (a women's naval reserve)
            return 0.0
        if any(nouns[0] in self._links(sense, "@ @i") for sense in rare):
            return _KIND_CREDIT
        return _GLOSS_MORE_GENERAL if self._links(nouns[0], "@ @i") & rare else 0.0

    def _derived(self, asked: Term, said: Term) -> bool:
        """Across parts of speech, derivation still links words ("celebration" / "celebrate")."""
        theirs = {s for ids in said.senses.values() for s in ids}
        return any(self._links(a, _DERIVED) & theirs
                   for ids in asked.senses.values() for a in ids)

    @cached_property
    def _colours(self) -> set[str]:
        """WordNet's "color" (the visual property), under which every named colour sits."""
        return set(self.wordnet.senses("color", "n", 1))

    def _siblings(self, a: str, s: str, pos: str, rank: int, other_rank: int) -> str | None:
        """Two different things of one kind: "exclusive" when the kind's members exclude each other (a
        circle and a square, a fox and a deer, red and green), "kin" for close siblings that real
        language sometimes swaps (a truck for a forklift, fog for smoke); None otherwise."""
        if pos == "a":  # adjectives: satellites of one head (the colours, the sizes)
            if max(rank, other_rank) >= _CONFLICT_SENSES:
                return None
            heads = (self._links(a, "&") | {a}) & (self._links(s, "&") | {s})
            return "exclusive" if heads else None
        if pos != "n":  # verbs' hierarchies are too shallow to tell a different act from another word for it
            return None
        if a in self._ancestors(s, _RELATED_KIND_STEPS) or s in self._ancestors(a, _RELATED_KIND_STEPS):
            return None
        if a in self._links(s, _WHOLE) or s in self._links(a, _WHOLE):
            return None  # a porch is part of the house, not another building
        first, second = self.wordnet.synset(a), self.wordnet.synset(s)
        if self._by_role(a) or self._by_role(s):
            return None  # a stray, a pet: what an animal is to people, which any kind of animal may be
        if max(rank, other_rank) < _CONFLICT_SENSES and (
                first.lexname == second.lexname and first.lexname in _CONCRETE_LEXNAMES
                or self._colours & set(self._ancestors(a, 3)) & set(self._ancestors(s, 3))):
            return "exclusive"  # white is not yellow, whichever kind of colour each is
        if rank or other_rank:  # close siblings by each word's commonest sense only ("chart" is not "diagram")
            return None
        up_a = self._ancestors(a, _SIBLING_STEPS)
        up_s = self._ancestors(s, _SIBLING_STEPS)
        shared = (set(up_a) & set(up_s)) - {a, s}
        return "kin" if any(self.wordnet.depth(parent) >= _SIBLING_MIN_DEPTH for parent in shared) else None

    # --- alignment -------------------------------------------------------------------------

    @staticmethod
    def _best_partner(term: Term, said_terms, relations, used) -> tuple[float, str, str | None, str]:
        """(credit, the described word that says ``term`` best, why a word denies it or None, that word)."""
        best, best_word, reason, against = 0.0, "", None, ""
        for other in said_terms:
            credit, why = relations[(term, other)]
            if credit > best:
                best, best_word = credit, other.text
            # A described word that already says one asked word cannot deny another (but an antonym can).
            if why and reason is None and (other not in used or why == "antonym"):
                reason, against = why, other.text
        return best, best_word, reason, against

    def _align(self, asked: str, said: str, spoken: bool = False) -> Alignment:
        """How far ``said`` (a description of a moment, or with ``spoken`` a line said) says ``asked``."""
        asked_terms, said_terms = self.terms(asked), self.terms(said)
        if spoken:
            asked_terms = tuple(t for t in asked_terms if t.text not in SPEECH_WORDS)
        total = sum(t.weight for t in asked_terms)
        if not asked_terms or total == 0:
            return Alignment(support=0.0, conflict=0.0)
        result = Alignment(support=0.0, conflict=0.0)
        relations = {(a, s): self._relation(a, s) for a in asked_terms for s in said_terms}
        if len(self._relations) > _MOST_RELATIONS:  # a long-lived process keeps the recent ones
            self._relations.clear()
        switched = self._switched(asked_terms, said_terms)
        self._read_in_place(asked, asked_terms, said, said_terms, relations, switched)
        self._denials_of_one_thing(asked, asked_terms, said, said_terms, relations)
        # A described word that already says one asked word cannot deny another ("goal" is the net, not the ball).
        used = {s for (a, s), (credit, _) in relations.items() if credit >= 0.5}
        # A described word that is an asked thing itself does not say the act too: "the drive" is the driveway
        # asked for, not also a way of "pulls into".
        taken = {s for (a, s), (credit, _) in relations.items() if credit >= 1.0 and not a.act}
        credit_sum, conflict, credits = 0.0, 0.0, []
        for term in asked_terms:
            free = [s for s in said_terms if not (term.act and s in taken) or relations[(term, s)][0] >= 1.0]
            best, best_word, reason, against = self._best_partner(term, free, relations, used)
            credit_sum += best * term.weight
            credits.append((term, best))
            if best > 0:
                result.aligned.append((term.text, best_word, round(best, 2)))
            elif term.weight >= 0.5:
                result.missing.append(term.text)
            if best < 0.5 and reason is not None and term.weight >= 0.5:
                result.conflicts.append((term.text, against, reason))
                conflict = max(conflict, term.weight * _CONFLICT_SCORES[reason])
        if credit_sum > 0:  # a description about something else reverses nothing
            for denial in _reversals(asked, said, self._same_act(asked_terms, said_terms, relations)):
                result.conflicts.append(denial)
                conflict = max(conflict, _OTHER_WAY)
        if credit_sum > 0 and (turned := next((pair for pair, same in switched if not same), None)):
            result.conflicts.append((turned[0].text, turned[1].text, "the other way"))
            conflict = max(conflict, _OTHER_WAY)
        result.swaps = self._swaps(asked_terms, said_terms, relations, used)
        for denial, score in self._others(asked, said, asked_terms, said_terms, relations, used, credits):
            result.conflicts.append(denial)
            conflict = max(conflict, score)
        result.swap = 1.0 if result.swaps else 0.0
        result.support = round(credit_sum / total, 3)
        result.action = _said_share(credits, lambda term: term.act)
        result.thing = _said_share(credits, _is_thing)
        result.conflict = round(min(1.0, conflict), 3)
        return result

    def _others(self, asked: str, said: str, asked_terms, said_terms, relations, used,
                credits) -> list[tuple[tuple[str, str, str], float]]:
        """Denials of the event by who or what it is about: the act done to another thing, an asked thing said as
        another thing's, or an animal where a person was asked (each with its weight as a conflict)."""
        found = []
        said_any = any(credit > 0 for _, credit in credits)
        other = self._done_to_another(asked, said, said_terms, relations, used, credits) if said_any else None
        other = other or self._another_ones(asked, said_terms, relations, credits) \
            or self._another_in_frame(asked, said, said_terms, relations, used, credits)
        if other:
            found.append(((*other, "another thing"), _OTHER_OBJECT))
        if said_any and (beast := self._an_animal_for_a_person(asked, asked_terms, said, said_terms)):
            found.append(((*beast, "exclusive"), _CONFLICT_SCORES["exclusive"]))
        unsaid = [term for term, credit in credits if credit < 0.5]
        if said_any and (turned := self._gone_the_other_way(asked, unsaid, said, said_terms)):
            found.append(((*turned, "the other way"), _OTHER_WAY))
        return found

    def _an_animal_for_a_person(self, asked: str, asked_terms, said: str, said_terms) -> tuple[str, str] | None:
        """(person asked, animal said) when the event is a person's ("a person climbs the fence", "the prowler") and
        the description names an animal and no person at all ("a fox climbs the fence"): what a camera tells apart
        first. A generic word for a person weighs too little to be denied by a word, so it is read here."""
        def lexname(term: Term) -> int | None:
            nouns = term.senses.get("n", ())[:1]
            return self.wordnet.synset(nouns[0]).lexname if nouns and not term.act else None

        people = [w for w in words(asked) if w in _PERSON_WORDS] + \
            [t.text for t in asked_terms if lexname(t) == _PERSON_LEXNAME]
        if not people or any(lexname(t) == _ANIMAL_LEXNAME for t in asked_terms) \
                or any(lexname(t) == _PERSON_LEXNAME for t in said_terms) or _PERSON_WORDS & set(words(said)):
            return None
        animal = next((t.text for t in said_terms if lexname(t) == _ANIMAL_LEXNAME), None)
        return (people[0], animal) if animal else None

    def _read_in_place(self, asked: str, asked_terms, said: str, said_terms, relations, switched) -> None:
        """Raise ``relations`` where two acts say each other by what follows them, not by the words themselves:
        the same end state ("bursts open" / "pops open"), or going the way asked ("leaves" / "pulls away")."""
        raised = [(pair, _VERB_KIN_CREDIT) for pair in _same_result(asked_terms, said_terms)]
        raised += [(pair, _WAY_CREDIT) for pair in self._gone_that_way(asked, asked_terms, said, said_terms)]
        raised += [(pair, _WAY_CREDIT) for pair, same in switched if same]
        raised += [((act, other), _VERB_KIN_CREDIT) for act in self._taken_off(asked, asked_terms)
                   for other in self._taken_off(said, said_terms) if act != other]
        for pair, credit in raised:
            if relations[pair][0] < credit:
                relations[pair] = (credit, None)

    def _denials_of_one_thing(self, asked: str, asked_terms, said: str, said_terms, relations) -> None:
        """Drop from ``relations`` the denials of a describing word by one that describes another thing: "the yellow
        card" is not denied by "a white player", nor "the red car" by "a man in a blue shirt"."""
        asked_things, said_things = self._describing(asked, asked_terms), self._describing(said, said_terms)
        for (a, s), (credit, why) in relations.items():
            if why in ("exclusive", "antonym") and a in asked_things and s in said_things \
                    and not self._one_thing(asked_things[a], said_things[s], relations):
                relations[(a, s)] = (credit, None)

    def _taken_off(self, text: str, terms) -> list[Term]:
        """Acts that take a thing off or from somewhere by carrying, lifting or pulling it, the thing named between
        the act and the way ("hauls his luggage off", "lifts a heavy case off the belt", "drags the bag from the
        belt"): two of them say each other in part, whatever else each says about how. Not throwing or kicking
        (what is propelled goes off on its own), nor an act with no thing ("jumps off the wall")."""
        words = list(_words(text))
        found = []
        for term in terms:
            verb = term.text.split()[0]
            if not term.act or verb not in words:
                continue
            at = words.index(verb)
            if words[at + 1: at + 2] and words[at + 1] in _DETERMINERS \
                    and _FROM & set(words[at + 2: at + 6]) and self._carries(term):
                found.append(term)
        return found

    def _carries(self, term: Term) -> bool:
        """The act moves a thing by carrying, lifting, pulling or taking it away, in one of its two commonest
        senses (WordNet's "move" that displaces, or "remove"; not "propel")."""
        for sense in term.senses.get("v", ())[:2]:
            up = self._ancestors(sense, _ANCESTOR_STEPS)
            if self._displacing & up.keys() and not self._propelling & up.keys():
                return True
        return False

    @cached_property
    def _displacing(self) -> set[str]:
        moving = {sense for sense in self.wordnet.senses("displace", "v") if "move" in self.wordnet.synset(sense).words}
        return moving | {self.wordnet.senses("remove", "v", 1)[0]}  # move (displace): cause to move to a new place

    @cached_property
    def _propelling(self) -> set[str]:
        return set(self.wordnet.senses("propel", "v", 1))

    def _describing(self, text: str, terms) -> dict[Term, set[Term]]:
        """Each describing word of ``text`` (a colour, a size) and the things it describes there: the thing right
        after it ("a white player"), or the one it is worn by ("the boxer in red throws"). A describing word whose
        thing is not plain ("a red and white bus", "the red one") is left out: it may describe anything."""
        words = list(_words(text))
        placed: list[tuple[int, Term]] = []
        cursor = 0
        for term in terms:
            first = term.text.split()[0]
            if first in words[cursor:]:
                cursor = words.index(first, cursor)
                placed.append((cursor, term))
                cursor += 1
        things = [(at, term) for at, term in placed if "n" in term.senses and not term.act and " " not in term.text]
        found: dict[Term, set[Term]] = {}
        for at, term in placed:
            if "a" not in term.senses or term.act:
                continue
            if at and words[at - 1] in _WORN:
                thing = next((t for spot, t in reversed(things) if spot < at), None)
            else:
                thing = next((t for spot, t in things if spot == at + 1), None)
            if thing is not None and thing is not term:
                found.setdefault(term, set()).add(thing)
        return found

    def _one_thing(self, asked: set[Term], said: set[Term], relations) -> bool:
        """Whether two describing words may describe one thing: their things say each other, one is worn by the
        other ("the man in red" / "a man in a blue shirt"), or both are things of one kind that WordNet does not
        link ("the red bag" / "a blue suitcase"). Not a person and a thing ("the yellow card" / "a white player"),
        nor clothing and something else ("the red car" / "a man in a blue shirt")."""
        for a in asked:
            for s in said:
                credit = relations[(a, s)][0] if (a, s) in relations else self._relation(a, s)[0]
                if credit >= 0.5 or self._worn(a, s) or self._worn(s, a):
                    return True
                kinds = [(self.wordnet.synset(t.senses["n"][0]).lexname, self._is_clothing(t)) for t in (a, s)]
                if kinds[0] == kinds[1]:
                    return True
        return False

    def _is_clothing(self, term: Term) -> bool:
        nouns = term.senses.get("n", ())[:1]
        return bool(nouns) and bool(self._clothing & self._ancestors(nouns[0], _KIND_STEPS).keys())

    def _worn(self, wearer: Term, worn: Term) -> bool:
        """``worn`` names clothing and ``wearer`` a person in their commonest senses."""
        people = wearer.senses.get("n", ())[:1]
        return bool(people) and self.wordnet.synset(people[0]).lexname == _PERSON_LEXNAME and self._is_clothing(worn)

    @cached_property
    def _clothing(self) -> set[str]:
        return set(self.wordnet.senses("clothing", "n", 1))

    @cached_property
    def _way_acts(self) -> dict[str, frozenset[str]]:
        """Each way a move can go (``_WAY_OF``'s names) and WordNet's plain verbs for going that way."""
        def senses(*words: str) -> frozenset[str]:
            return frozenset(self.wordnet.senses(word, "v", 1)[0] for word in words)
        # Arriving is coming in, on or up ("walks onto the stage", "pulls up outside"); alighting is getting out.
        return {"away": senses("leave", "depart", "go_away", "flee", "scarper"),
                "out": senses("exit", "leave", "alight"), "in": senses("enter", "arrive"), "on": senses("arrive"),
                "up": senses("arrive"), "back": senses("return"), "down": senses("descend")}

    @cached_property
    def _moving(self) -> frozenset[str]:
        """The kinds of moving oneself: travelling ("walks", "drives") and moving the body to another place, the
        kind WordNet puts jumping under ("jumps up onto", "bolts off")."""
        jump = self.wordnet.senses("jump", "v", 1)[0]
        return frozenset({self.wordnet.senses("travel", "v", 1)[0],
                          *(sense for sense, steps in self._ancestors(jump, 1).items() if steps == 1)})

    def _moves(self, word: str) -> bool:
        """A verb for moving oneself in one of its commonest senses ("walks", "jumps", "climbs"; not "puts")."""
        return any(sense in self._moving or self._moving & self._ancestors(sense, _ANCESTOR_STEPS).keys()
                   for base in self.wordnet.base_forms(word, "v") for sense in self.wordnet.senses(base, "v", 3))

    def _ways_by_sense(self, term: Term) -> set[str]:
        """The ways an act is a plain word for going by its commonest senses ("leaves": away, out; "enters": in;
        "arrives": in, on, up)."""
        return self._ways_of(set(term.senses.get("v", ())[:2]))

    def _ways_of(self, senses: set[str]) -> set[str]:
        """The ways whose plain verbs for going are among ``senses``."""
        return {way for way, targets in self._way_acts.items() if targets & senses}

    def _phrasal_kind_of_going(self, term: Term) -> set[str]:
        """The ways a described phrasal verb goes that is, in one of its two commonest senses, a kind of a plain
        word for going: "takes off" (depart, a way of leaving): away; "files out" (a way of exiting): out; "pulls
        in" (a way of arriving): in. Only a phrasal verb, whose particle already says it goes: WordNet also puts
        lingering under leaving. Only described: asked, a specific way of leaving ("walks out") is not said by
        another ("slips off")."""
        if " " not in term.text:
            return set()
        return self._ways_of({parent for sense in term.senses.get("v", ())[:2] for parent in self._links(sense, "@")})

    def _ways_asked(self, term: Term, asked_words: list[str]) -> set[str]:
        """The ways an asked act is a plain word for going: by its commonest senses, or a plain verb of going and its
        particle ("gets on": on, "comes in": in, "runs away": away), or any verb of moving with a particle of leaving
        or coming in, part of its collocation or the word after it ("rushes out", "flies away")."""
        ways = self._ways_by_sense(term)
        verb, *particle = term.text.split()
        after = _following(asked_words, verb) or []
        if not particle and after[:1] and _leaving(after[0], after[1:]):
            particle = after[:1]
        if len(particle) == 1 and particle[0] in _WAY_OF and (
                set(self.wordnet.base_forms(verb, "v") or [verb]) & _PLAIN_GOING
                or _leaving(particle[0], after[1:] if after[:1] == particle else []) and self._moves(verb)):
            ways.add(_WAY_OF[particle[0]])
        return ways

    def _ways_said(self, said_words: list[str], mover: Term, acts: set[str]) -> set[str]:
        """The ways a described act goes: a plain word for going by its senses ("departs": away), or a verb of
        moving by its particle or a word for a way later in its clause ("walks through the front door into the
        hall": in; "jumps up onto the sofa": up, on)."""
        ways = self._ways_by_sense(mover) | self._phrasal_kind_of_going(mover)
        verb = mover.text.split()[0]
        if verb not in said_words or not self._moves(verb):
            return ways
        ways |= {_WAY_OF[word] for word in mover.text.split()[1:] if word in _WAY_OF}
        return ways | self._ways_in_clause(said_words, said_words.index(verb), acts)

    def _phrasal_ways(self, senses: Sequence[str]) -> set[str]:
        """The ways the phrasal verbs among these senses' words go ("knock_down": down)."""
        phrasal = (word.split("_") for sense in senses for word in self.wordnet.synset(sense).words)
        return {_WAY_OF[parts[1]] for parts in phrasal if len(parts) == 2 and parts[1] in _WAY_OF}

    def _undergone(self, text_words: list[str], term: Term) -> set[str]:
        """The ways an act in the passive sends what undergoes it, by its particle, the way said later in its clause
        or a phrasal verb for it among its commonest senses' words: "gets knocked down", "is put into the oven",
        "gets decked" (knock down): down, in, down. None for an act that is not in the passive."""
        first, *particle = term.text.split()
        at = text_words.index(first) if first in text_words else -1
        if at < 1 or text_words[at - 1] not in _PASSIVE or first.endswith("ing") or "v" not in term.senses:
            return set()  # "is put", "gets hit": a participle like its base form is still one after "is" or "gets"
        if particle:
            return {_WAY_OF[word] for word in particle if word in _WAY_OF}
        return self._ways_in_clause(text_words, at) or self._phrasal_ways(term.senses.get("v", ())[:3])

    @staticmethod
    def _ways_in_clause(text_words: list[str], at: int, acts: set[str] = frozenset()) -> set[str]:
        """The ways said after the verb at ``at``, up to the end of its clause or another act ("is put | into the hot
        oven": in; "walks through the front door into the hall": in)."""
        ways = set()
        for word in text_words[at + 1:][:_WAY_REACH]:
            if word in _CLAUSE_ENDS or word in acts:
                break
            if word in _WAY_OF:
                ways.add(_WAY_OF[word])
        return ways

    def _ways_named(self, term: Term) -> set[str]:
        """The way the act a noun names goes, by the particle it ends in or its verb's phrasal words: "the
        knockdown" (down), "the breakaway" (away), "the walkout" (out). Only for a noun whose commonest sense is an
        act or an event."""
        nouns = term.senses.get("n", ())[:1]
        if term.act or not nouns or self.wordnet.synset(nouns[0]).lexname not in _ACT_NOUNS:
            return set()
        word = term.text.replace("-", "")
        ways = {_WAY_OF[way] for way in _WAY_OF if word.endswith(way) and len(word) - len(way) >= 3
                and self.wordnet.senses(word[: -len(way)], "v", 1)}
        return ways | self._phrasal_ways([v for v in self._links(nouns[0], "+") if v.startswith("v:")])

    def _gone_that_way(self, asked: str, asked_terms, said: str, said_terms) -> list[tuple[Term, Term]]:
        """Pairs of an asked act that is a plain word for going one way ("leaves", "gets out", "comes in") and a
        described verb of moving that goes that way ("pulls away", "climbs out", "walks in"): a way of doing it.
        An act in the passive goes the way it sends what undergoes it: "gets decked" is going down, and "is knocked
        down" says "falls"; a noun for an act the way its word says ("the knockdown": down)."""
        asked_words, said_words = words(asked), words(said)
        asked_ways = [(term, self._ways_asked(term, asked_words) | self._undergone(asked_words, term)) if term.act
                      else (term, self._ways_named(term)) for term in asked_terms]
        if not any(ways for _, ways in asked_ways):
            return []
        return [(term, mover) for mover, ways in self._movers_ways(said_words, said_terms)
                for term, asked in asked_ways if asked & ways]

    def _movers_ways(self, said_words: list[str], said_terms) -> list[tuple[Term, set[str]]]:
        """Each described act and the ways it goes: by its senses, its particle or its clause, or as a passive."""
        movers = [term for term in said_terms if term.act]
        acts = {term.text.split()[0] for term in movers}
        return [(mover, self._ways_said(said_words, mover, acts - {mover.text.split()[0]})
                 | self._undergone(said_words, mover)) for mover in movers]

    def _gone_the_other_way(self, asked: str, asked_terms, said: str, said_terms) -> tuple[str, str] | None:
        """(asked act, described act) when an asked act no word says goes down and the description only up, or the
        other way round: "the man in blue gets decked" (knocked down) / "the blue boxer gets back up". A description
        that goes both ways ("gets up and sits down again"), or says the act itself ("pulls up a chair and sits"),
        denies nothing here."""
        asked_words, said_words = words(asked), words(said)
        asked_ways = {way: term for term in asked_terms for way in (
            self._ways_asked(term, asked_words) | self._posture(term)
            | (self._undergone(asked_words, term) if self._bodily(term) else set()) if term.act
            else self._ways_named(term)) if way in _UP_AND_DOWN}
        said_ways = {way: mover for mover, ways in self._movers_ways(said_words, said_terms)
                     for way in ways | self._posture(mover) if way in _UP_AND_DOWN}
        if len(asked_ways) != 1 or len(said_ways) != 1 or asked_ways.keys() == said_ways.keys():
            return None
        return next(iter(asked_ways.values())).text, next(iter(said_ways.values())).text

    @cached_property
    def _postures(self) -> dict[str, frozenset[str]]:
        """WordNet's plain acts of getting up and of getting down (rising to one's feet, standing up; lying or sitting
        down), by the way they go. Only these: "up" in "pulls up a chair" or "picks up the box" is no way at all."""
        def senses(*lemmas: str) -> frozenset[str]:
            return frozenset(self.wordnet.senses(lemma, "v", 1)[0] for lemma in lemmas)
        return {"up": senses("get_up", "stand_up"), "down": senses("lie_down", "sit_down")}

    def _bodily(self, term: Term) -> bool:
        """An act of moving or touching by one of its commonest senses ("decked": knocked down), not one of naming or
        calling ("time is called": WordNet's "call up" is a telephone call, no way up)."""
        return any(self.wordnet.synset(sense).lexname in _BODILY_LEXNAMES for sense in term.senses.get("v", ())[:3])

    def _posture(self, term: Term) -> set[str]:
        """The way an act goes if it is getting up or getting down by its commonest senses ("gets back up": up)."""
        senses = set(term.senses.get("v", ())[:2])
        return {way for way, postures in self._postures.items() if postures & senses}

    @cached_property
    def _machines(self) -> frozenset[str]:
        return frozenset(self.wordnet.senses(word, "n", 1)[0] for word in ("device", "equipment", "appliance"))

    def _names_a_machine(self, terms) -> bool:
        """A thing that is switched on and off: a device or equipment in one of its two commonest senses ("the
        floodlight", "the lamp", "the alarm", "the radio")."""
        return any(self._machines & self._ancestors(sense, _MACHINE_STEPS).keys()
                   for term in terms if _is_thing(term) for sense in term.senses["n"][:_CONFLICT_SENSES])

    def _switched(self, asked_terms, said_terms) -> list[tuple[tuple[Term, Term], bool]]:
        """Pairs of an asked act and a described one that switch a machine on or off ("turning on" / "comes on",
        "switches off" / "goes out"), each with whether they switch it the same way. Only where both texts name a
        machine: a man who comes on stage or goes out of the room switches nothing."""
        asked, said = [(t, self._switch(t)) for t in asked_terms], [(t, self._switch(t)) for t in said_terms]
        if not any(way for _, way in asked) or not any(way for _, way in said) \
                or not (self._names_a_machine(asked_terms) and self._names_a_machine(said_terms)):
            return []
        return [((a, s), a_way == s_way) for a, a_way in asked if a_way for s, s_way in said if s_way]

    def _switch(self, term: Term) -> str | None:
        """"on" or "off" for an act that switches something that way ("turns on", "comes on", "lights up", "goes
        out"), else None."""
        parts = term.text.split()
        if not term.act or len(parts) != 2:
            return None
        verbs = set(self.wordnet.base_forms(parts[0], "v") or [parts[0]])
        return next((way for way, phrases in _SWITCHES.items()
                     if any((verb, parts[1]) in phrases for verb in verbs)), None)

    @staticmethod
    def _same_act(asked_terms, said_terms, relations) -> Callable[[str, str], bool]:
        """Whether an asked word and a described one are the same act (one word, or terms that say each other),
        each read as the act where it stands: "a pencil case off his desk" / "his pencil case on the desk" turns no
        act around."""
        def same(asked_word: str, said_word: str) -> bool:
            asked_acts = [a for a in asked_terms if a.act and asked_word in a.text.split()]
            said_acts = [s for s in said_terms if s.act and said_word in s.text.split()]
            if asked_word == said_word and asked_acts and said_acts:
                return True
            return any(relations[(a, s)][0] >= 0.5 for a in asked_acts for s in said_acts)
        return same

    def _swaps(self, asked_terms, said_terms, relations, used) -> list[tuple[str, str]]:
        """Asked things nothing says, where the description has an unaligned thing of the same kind in
        their place (WordNet's lexicographer file: a "pallet of tyres" asked, "a pallet of cartons" said).
        Weaker than a conflict: a paraphrase can name another thing too."""
        swaps = []
        for term in asked_terms:
            if term.weight < 0.5 or any(relations[(term, other)][0] > 0 for other in said_terms):
                continue
            kinds = self._thing_kinds(term) & _THING_KINDS
            for other in said_terms:
                if other in used or other.weight < 0.5:
                    continue
                if kinds & self._thing_kinds(other):
                    swaps.append((term.text, other.text))
                    break
        return swaps

    def _done_to_another(self, asked: str, said: str, said_terms, relations, used, credits) -> tuple[str, str] | None:
        """(asked thing, described thing) when the same act (a verb said word for word or by a synonym) is done to
        another thing: "cut a ribbon" / "cut the wedding cake", "lifts a pallet of tyres" / "lifts a pallet of
        cartons". A thing the act is done to that no word says, where the described act is done to a thing no asked
        word names and which is not kin to the asked one."""
        asked_words, said_words = words(asked), words(said)
        unsaid = [term for term, credit in credits if credit == 0 and _is_thing(term)]
        others = [term for term in said_terms if term not in used and _is_thing(term)]
        for act, _ in credits:
            partner = _partner(act, said_terms, relations)
            if partner is None or "v" not in act.senses or relations[(act, partner)][0] < _SAME_ACT_CREDIT:
                continue
            for read in (_object_words, _goal_words):
                asked_object, said_object = read(asked_words, act.text), read(said_words, partner.text)
                done_to = [term for term in unsaid if set(term.text.split()) <= asked_object]
                instead = [term for term in others if set(term.text.split()) <= said_object]
                if done_to and instead and not any(self._object_kin(a, s) for a in done_to for s in instead):
                    return done_to[0].text, instead[0].text
        return None

    def _another_ones(self, asked: str, said_terms, relations, credits) -> tuple[str, str] | None:
        """(asked word, described compound) when an asked thing is said only by a compound that makes it another
        thing's: "the garage door" / "the car door" (a door, but a car's). The asked word before the thing names
        whose it is and nothing says it; the compound's first word names a made thing or a place that is no kin of
        it ("the car door" / "the van door" may be one door)."""
        text = " ".join(words(asked))
        credit = dict(credits)
        for owner, thing in itertools.pairwise([term for term, _ in credits]):
            if credit[owner] > 0 or credit[thing] < 0.5 or not _is_thing(owner) or f"{owner.text} {thing.text}" \
                    not in text:
                continue
            partner = _partner(thing, said_terms, relations)
            first = partner.text.split()[0]
            said_owner = next(iter(self.terms(first)), None) if " " in partner.text and first != thing.text else None
            if said_owner is not None and _is_thing(said_owner) and self._made_or_place(owner) \
                    and self._made_or_place(said_owner) and self._apart(owner, said_owner):
                return owner.text, partner.text
        return None

    def _another_in_frame(self, asked: str, said: str, said_terms, relations, used, credits) -> tuple[str, str] | None:
        """(asked thing, described thing) when a thing said word for word is said of another thing: "a sign for the
        harbour" / "a sign for the airport", "the door of the garage" / "the door of the car". What follows "of" or
        "for" in the event nothing says; the description names there a thing no asked word names, no kin of it."""
        asked_words, said_words = words(asked), words(said)
        credit = dict(credits)
        for head, _ in credits:
            if credit[head] < _SAME_ACT_CREDIT or not _is_thing(head):
                continue
            partner = _partner(head, said_terms, relations)
            asked_after, said_after = _of_what(asked_words, head.text), _of_what(said_words, partner.text)
            if asked_after is None or said_after is None or asked_after[0] != said_after[0]:
                continue
            whose = next((term for term, c in credits if c == 0 and _is_thing(term) and term.text == asked_after[1]),
                         None)
            instead = next((term for term in said_terms if term not in used and _is_thing(term)
                            and term.text == said_after[1]), None)
            if whose and instead and self._apart(whose, instead):
                return whose.text, instead.text
        return None

    def _apart(self, asked: Term, said: Term) -> bool:
        """Two things neither word says and that are no kin (see ``_object_kin``): one cannot be the other."""
        return not self._object_kin(asked, said) and self._relation(asked, said)[0] == 0

    def _made_or_place(self, term: Term) -> bool:
        """A noun whose commonest sense is a made thing or a place ("garage", "car", "kitchen"; not "glass")."""
        nouns = term.senses.get("n", ())
        return bool(nouns) and self.wordnet.synset(nouns[0]).lexname in _OWNER_LEXNAMES

    def _object_kin(self, asked: Term, said: Term) -> bool:
        """Two things close enough that one may be a captioner's word for the other: a parent within two steps of
        both ("box" and "parcel": containers), or one's definition naming the other ("lawn": a field of mowed grass)."""
        def nouns(term: Term) -> tuple[str, ...]:
            return term.senses.get("n", ())[:_CONFLICT_SENSES]
        near = [self._ancestors(sense, _OBJECT_KIN_STEPS) for sense in nouns(asked)]
        if any(parent in up for sense in nouns(said) for parent in self._ancestors(sense, _OBJECT_KIN_STEPS)
               for up in near):
            return True
        def named(term: Term, other: Term) -> bool:
            return any(form in set(words(self.wordnet.synset(sense).gloss)) for sense in nouns(term)
                       for form in other.forms)
        return named(asked, said) or named(said, asked)

    def _thing_kinds(self, term: Term) -> frozenset[tuple[str, int]]:
        """The lexicographer files of a term's commonest noun senses (what kind of thing it names)."""
        if term.key not in self._kinds:
            self._kinds[term.key] = frozenset(("n", self.wordnet.synset(s).lexname)
                                              for s in term.senses.get("n", ())[:_CONFLICT_SENSES])
        return self._kinds[term.key]


@signal
class Lexical:
    """``lexical``: the share of the asked event's words the best description over the span says;
    ``lexical_conflict``: how strongly that description denies one of them (a sibling, an antonym, the
    other way, the same act done to another thing: "lifts a pallet of cartons" where tyres were asked);
    ``lexical_swap``: an asked word nothing says has a word of its kind in its place (a softer sign of a
    near miss, for the weights to judge); ``lexical_action``: how far the act the event names is said (the
    baker and the loaf, but "forms" where "slices" was asked, is another moment of the same scene);
    ``lexical_thing``: how far the things it names are said; ``lexical_none``: no asked word is said at
    all; ``lexical_best``: whether this span says it better than anything else in the video (0.5 + half
    the margin), since a grounding model lands on the most similar event when the asked one is not there."""

    # A key word denied vetoes: an antonym (1.0), a member of an exclusive kind (0.8), the other way, a
    # negation or the act done to another thing (0.7); close kin (0.6) only weighs against. So does a
    # description that says none of the asked words: whatever a small model reads into it, nothing there is
    # what was asked.
    features: ClassVar[tuple[Feature, ...]] = (
        Feature("lexical"), Feature("lexical_conflict", veto=0.7), Feature("lexical_swap"), Feature("lexical_best"),
        Feature("lexical_none", veto=1.0, rules=frozenset({Rule.UNWORDED})),
        Feature("lexical_action", rules=frozenset({Rule.ACT})),
        Feature("lexical_thing", rules=frozenset({Rule.THINGS})))

    def __init__(self, settings: Settings, embed: Embed) -> None:
        self.settings = settings
        self._aligner: LexicalAligner | None = None

    @property
    def aligner(self) -> LexicalAligner:
        if self._aligner is None:
            self._aligner = aligner_for(open_wordnet(self.settings.verify.wordnet, self.settings.cache_dir))
        return self._aligner

    def _best(self, event: str, rows: list[Timed], spoken: bool) -> tuple[Alignment, Timed] | None:
        scored = [(self.aligner.align(event, row.text, spoken), row) for row in rows]
        return max(scored, key=lambda pair: (pair[0].support - pair[0].conflict, pair[0].support), default=None)

    def read(self, texts: SpanTexts) -> list[Evidence]:
        here = texts.described
        best = self._best(texts.asked, here, texts.about_speech)
        if best is None:
            return []
        alignment, row = best
        # Other wordings of the same event (the index's caption and a fresh one) may each say a part of it,
        # and any of them may deny it ("opens" where the other said "is raised").
        span = (row.start, row.end)
        wordings = [r.text for r in here if r is not row and iou((r.start, r.end), span) >= 0.5]
        if wordings:
            together = self.aligner.align(texts.asked, " . ".join([row.text, *wordings]), texts.about_speech)
            denial = max((self.aligner.align(texts.asked, text, texts.about_speech) for text in wordings),
                         key=lambda other: other.conflict)
            conflict = max(alignment, denial, key=lambda other: other.conflict)
            said_here = {asked for asked, _, credit in alignment.aligned if credit >= 0.99}
            if conflict is denial and denial.conflicts and all(why == "kin" and asked in said_here
                                                               for asked, _, why in denial.conflicts):
                # This description says the very word another wording of the moment names a close kin of
                # ("fog" here, "smoke" there): one moment worded apart, not a denial.
                conflict = alignment
            elif conflict is denial and _words(row.text) == _words(texts.asked):
                # The event is, word for word, what Marlin described here (the agent checking Marlin's own
                # caption of a neighbouring event): another wording's "denial" is then two readings of one
                # moment worded apart ("forklift" / "lift truck"). It weighs as close kin does, never vetoes.
                conflict = Alignment(support=denial.support, conflict=min(denial.conflict, _CONFLICT_SCORES["kin"]),
                                     conflicts=denial.conflicts)
            richer = together if together.support > alignment.support else alignment
            alignment = Alignment(support=richer.support, conflict=conflict.conflict, aligned=richer.aligned,
                                  conflicts=conflict.conflicts, missing=richer.missing, swap=richer.swap,
                                  swaps=richer.swaps, action=richer.action, thing=richer.thing)
        why = f'"{row.text}"' + (f" (and {len(wordings)} other wording(s))" if wordings else "") + \
            f": {alignment.explain()}"
        found = [Evidence(kind="lexical", text=why, start=row.start, end=row.end, score=alignment.support)]
        if alignment.conflict > 0:
            found.append(Evidence(kind="lexical_conflict", text=why, start=row.start, end=row.end,
                                  score=alignment.conflict))
        if alignment.swap > 0:
            found.append(Evidence(kind="lexical_swap", text=why, start=row.start, end=row.end,
                                  score=alignment.swap))
        if alignment.action is not None:
            found.append(Evidence(kind="lexical_action", text=why, start=row.start, end=row.end,
                                  score=alignment.action))
        if alignment.thing is not None:
            found.append(Evidence(kind="lexical_thing", text=why, start=row.start, end=row.end,
                                  score=alignment.thing))
        if alignment.support == 0 and alignment.missing:
            found.append(Evidence(kind="lexical_none", text=why, start=row.start, end=row.end, score=1.0))
        mine_rows = {id(r) for r in here}  # by identity: rows are compared field by field otherwise
        elsewhere = self._best(texts.asked, [r for r in texts.events if id(r) not in mine_rows], texts.about_speech)
        mine = alignment.support - alignment.conflict
        theirs = elsewhere[0].support - elsewhere[0].conflict if elsewhere else 0.0
        rival = (f'best elsewhere: "{elsewhere[1].text}" at {elsewhere[1].start:.1f}–{elsewhere[1].end:.1f} s'
                 if elsewhere else "nothing else in the video")
        found.append(Evidence(kind="lexical_best", text=rival, start=texts.span[0], end=texts.span[1],
                              score=round(min(1.0, max(0.0, 0.5 + (mine - theirs) / 2)), 3)))
        return found


_aligners: dict[int, LexicalAligner] = {}


def aligner_for(wordnet: WordNet) -> LexicalAligner:
    """One aligner (and its memo) per WordNet for the process."""
    return _aligners.setdefault(id(wordnet), LexicalAligner(wordnet))
