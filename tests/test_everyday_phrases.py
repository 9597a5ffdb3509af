"""Everyday phrases WordNet 3.0 lacks are read as the sense they mean, and read nothing else into a caption."""

from __future__ import annotations

from pathlib import Path

import pytest

from marlin_agent.verification.everyday_phrases import Phrase, everyday_phrases
from marlin_agent.verification.signals.lexical import LexicalAligner
from marlin_agent.verification.wordnet import WordNet, find_folder

pytestmark = pytest.mark.skipif(find_folder(None, Path("/nonexistent")) is None,
                                reason="WordNet's files are installed by .ci/run (Debian's wordnet-base)")


@pytest.fixture(scope="module")
def wordnet() -> WordNet:
    return WordNet(find_folder(None, Path("/nonexistent")))


@pytest.fixture(scope="module")
def aligner(wordnet) -> LexicalAligner:
    return LexicalAligner(wordnet)


def test_every_phrase_in_the_table_names_a_sense_wordnet_has(wordnet):
    assert wordnet.missing_phrase_senses() == []
    for lemma, pos in everyday_phrases():
        assert wordnet.lookup(lemma, pos), lemma


def test_a_sense_another_wordnet_lacks_is_left_out_not_an_error(wordnet):
    """A folder of another WordNet than 3.0 may number senses otherwise: the phrase keeps what it has."""
    odd = WordNet(wordnet.folder, phrases={("eat_pavement", "v"): Phrase((("tumble", "v", 99),), first=True),
                                           ("leg_it", "v"): Phrase((("run", "v", 1), ("run", "v", 99)), first=True)})
    assert odd.lookup("eat_pavement", "v") == ()
    assert odd.lookup("leg_it", "v")[0] == wordnet.lookup("run", "v")[0]
    assert odd.missing_phrase_senses() == ["eat_pavement: tumble.v.99", "leg_it: run.v.99"]


def test_a_phrase_means_its_everyday_sense_first_unless_the_table_puts_it_after_wordnets_own(wordnet):
    """"Leg it" is running off before it is walking (WordNet's only sense); "ding" stays a bell's sound first
    and is a knock only after it."""
    leg_it = [wordnet.synset(s).words for s in wordnet.lookup("leg_it", "v")]
    assert "run" in leg_it[0] and "leg_it" in leg_it[-1]
    ding = [wordnet.synset(s).words for s in wordnet.lookup("ding", "v")]
    assert "ding" in ding[0] and "bump" in ding[1]


def test_a_thing_is_first_what_cameras_show(wordnet):
    """A drone is an aircraft before it is a bee; WordNet lists it fourth."""
    assert "pilotless_aircraft" in wordnet.synset(wordnet.lookup("drone", "n")[0]).words


def test_a_table_without_phrases_leaves_wordnet_as_it_is(wordnet):
    plain = WordNet(wordnet.folder, phrases={})
    assert plain.lookup("eat_pavement", "v") == ()
    assert plain.lookup("leg_it", "v") == wordnet.lookup("leg_it", "v")[-1:]


@pytest.mark.parametrize(("asked", "said", "pair"), [
    ("a lad eats pavement", "A boy falls hard off his skateboard.", ("eats pavement", "falls")),
    ("the whole room knocks back some bubbly", "The guests drink champagne.", ("knocks back", "drink")),
    ("the dog legs it", "The dog runs away across the field.", ("legs it", "runs away")),
    ("the skater loses his footing", "The skater falls on the ramp.", ("loses his footing", "falls")),
    ("the pair take a twirl", "The couple dance in the middle of the room.", ("take a twirl", "dance")),
    ("the man in blue beats the count", "The boxer in blue gets up before ten.", ("beats the count", "gets up")),
    ("the lady hops out", "A woman gets out of the car.", ("hops out", "gets out")),
    ("the courier leaves a parcel", "A man leaves a box by the door.", ("parcel", "box")),
    ("the truck backs up", "The lorry reverses into the yard.", ("backs up", "reverses")),
    ("the thief does a runner", "The man runs away down the street.", ("does a runner", "runs away")),
    ("the woman bursts into tears", "The woman cries at the table.", ("bursts into tears", "cries")),
    ("the man in trainers jogs past", "A man in sneakers runs by.", ("trainers", "sneakers")),
    ("the girl opens her lunchbox", "The girl opens her lunch box.", ("lunchbox", "lunch box")),
    ("a kid takes a tumble in the park", "A little boy falls over on the grass.", ("takes a tumble", "falls over")),
    ("the car crashes", "The car smashes into a lamppost.", ("crashes", "smashes into")),
    ("the man checks his phone", "The man looks at his mobile.", ("phone", "mobile")),
    ("a stray makes a run for it", "A sheep escapes from the pen.", ("makes a run for it", "escapes from")),
    ("the boxer in red throws a punch", "The boxer in red throws a right hook.", ("throws a punch", "throws a right hook")),
    ("someone's luggage splits", "A bag pops open on the belt.", ("splits", "pops open")),
    ("the man opens the bag", "The bag pops open.", ("opens", "pops open")),
    ("the singer stage-dives", "The singer leaps into the crowd.", ("stage-dives", "leaps")),
    ("two riders break away", "Two riders attack off the front.", ("break away", "attack off the front")),
    ("a motorist dings a post while backing up", "Backing into a bay, a grey car knocks into a post.",
     ("dings", "knocks")),
    ("the guests show up", "The guests arrive at the house.", ("show up", "arrive at")),
    ("the courier turns up", "A courier arrives at the door.", ("turns up", "arrives at")),
    ("the baby bawls", "The baby cries in her cot.", ("bawls", "cries")),
    ("the boxer hits the canvas", "The boxer falls to the floor.", ("hits the canvas", "falls")),
])
def test_slang_and_idioms_are_said_by_the_plain_words_a_caption_uses(aligner, asked, said, pair):
    alignment = aligner.align(asked, said)
    assert any((a, s) == pair for a, s, _ in alignment.aligned), alignment.explain()
    assert alignment.conflict == 0, alignment.explain()


def test_an_everyday_phrase_is_read_before_the_light_verb_it_starts_with(aligner):
    """"Takes a spill" is a fall, not spilling something; "takes a look" is still looking (WordNet's own)."""
    spill = aligner.align("the cyclist takes a spill", "The cyclist tumbles off the bike.")
    assert ("takes a spill", "tumbles") in [(a, s) for a, s, _ in spill.aligned], spill.explain()


@pytest.mark.parametrize(("asked", "said"), [
    ("the skater eats pavement", "The skater eats a sandwich on the bench."),
    ("the lad legs it", "The lad stretches his legs."),
    ("the couple take a twirl", "The couple take a photo."),
    ("the van peels out", "The van parks by the kerb."),
    ("the man rocks up", "The man rocks the baby to sleep."),
    ("the car bumps a pillar", "The car backs into a parking bay."),  # backing into a space is parking
    ("the courier shows up", "The courier shows the parcel to the camera."),
])
def test_a_phrase_is_not_said_by_the_literal_words_it_is_made_of(aligner, asked, said):
    alignment = aligner.align(asked, said)
    assert alignment.action in (None, 0.0), alignment.explain()


def test_a_phrase_denies_what_its_meaning_denies(aligner):
    """The engine "kicking into life" is starting: a caption where it stops says the opposite; a courier who shows
    up is arriving, not leaving."""
    assert aligner.align("the engine kicks into life", "The engine stops.").conflict >= 0.7
    assert aligner.align("the courier shows up", "The courier leaves.").conflict >= 0.7
