"""Everyday phrases for what cameras see that WordNet 3.0 lacks, or lists only in a sense footage rarely shows.

People ask the way they talk: a skater "eats pavement", a guest "knocks back" a glass, a car "dings" a post, the
conveyor "kicks into life". Captions say "falls", "drinks", "bumps", "starts". WordNet 3.0 (2006) has no entry for
the first, files "knock back" only as "cost", "ding" only as a bell, and so nothing links the question to the caption.
This table gives each phrase the WordNet sense it means, so that every rule built on WordNet (synonyms, kinds, ways,
siblings that deny) reads it as it reads any word.

One line per phrase: ``phrase = sense [sense ...]``, the phrase as the lexicon lists its lemmas (a verb's first word
in its dictionary form, "one's" for his, her, their...), a sense as ``lemma.pos.NN``, the NN-th commonest sense of
that lemma in WordNet ("tumble.v.01": fall down, as if collapsing). ``=`` puts the senses before WordNet's own (the
phrase's everyday meaning comes first: "leg it" is running off, not walking); ``+=`` after them ("ding" stays a bell's
sound first). Only meanings a speaker of everyday English would give without context: a phrase that often means
something else in front of a camera ("split", "bounce", "clock") is left out.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

_TABLE = """
# falling and getting up
eat pavement = tumble.v.01
eat the pavement = tumble.v.01
eat dirt = tumble.v.01
eat concrete = tumble.v.01
faceplant = tumble.v.01
face-plant = tumble.v.01
wipe out = tumble.v.01
bail = tumble.v.01
stack it = tumble.v.01
bite the dust = tumble.v.01
come a cropper = tumble.v.01
go flying = tumble.v.01
take a spill = tumble.v.01
take a tumble = tumble.v.01
take a fall = tumble.v.01
go head over heels = tumble.v.01
fall flat on one's face = tumble.v.01
take a header = tumble.v.01
take a nosedive = tumble.v.01
come unstuck = tumble.v.01
go sprawling = tumble.v.01
trip over = trip.v.01
trip up = trip.v.01
fall over = tumble.v.01
topple over = topple.v.01
lose one's footing = tumble.v.01
lose one's balance = tumble.v.01
hit the ground = tumble.v.01
hit the floor = tumble.v.01
hit the canvas = tumble.v.01
beat the count = get_up.v.01
get back up = get_up.v.01
pick oneself up = get_up.v.01
get to one's feet = get_up.v.01
take a seat = sit_down.v.01
grab a seat = sit_down.v.01
take a knee = kneel.v.01
come round += come_to.v.04
hit the dirt += lie_down.v.01
hit the deck += lie_down.v.01
# arriving
show up = arrive.v.01
turn up = arrive.v.01
rock up = arrive.v.01
pitch up = arrive.v.01
roll in = arrive.v.01
blow in = arrive.v.01
swing by = drop_by.v.01
nip in = enter.v.01
duck in = enter.v.01
nip out = pop_out.v.03
hang about = loiter.v.01
make an entrance = enter.v.01
burst in = enter.v.01
storm in = enter.v.01
breeze in = enter.v.01
waltz in = enter.v.01
# leaving, running off
leg it = run.v.01 run_away.v.01
do a runner = run_away.v.01
peg it = run_away.v.01
hightail it = hightail.v.01
hotfoot it = hotfoot.v.01
bug out = run_away.v.01
make a break for it = run_away.v.01
make a dash for it = run_away.v.01
make a run for it = run_away.v.01
slope off = slip_away.v.01
shoot off = leave.v.01
clear off = leave.v.01
push off = leave.v.01
head off = leave.v.01
head out = leave.v.01
hit the road = leave.v.01
duck out = leave.v.01
storm off = leave.v.01
storm out = leave.v.01
make tracks = leave.v.01
beat it = leave.v.01
make oneself scarce = leave.v.01
wander off = leave.v.01
speed off = leave.v.01
drive off += leave.v.01
zoom off = leave.v.01
race off = leave.v.01
peel out = leave.v.01
make for = head.v.01
make a beeline for = head.v.01
# getting in and out
hop in = get_in.v.01
hop on = get_on.v.02
hop off = get_off.v.01
jump in = get_in.v.01
jump out = get_out.v.01
pile in = get_in.v.01
pile out = get_out.v.01
bail out = get_out.v.01
# eating and drinking
knock back = drink.v.01
sink a pint = drink.v.02
neck a pint = drink.v.02
down a pint = drink.v.02
chug += drink.v.01
raise a glass = drink.v.03
raise one's glass = drink.v.03
wet one's whistle = drink.v.01
chow down = eat.v.01
grab a bite = eat.v.01
stuff one's face = eat.v.01
scarf down = eat.v.01
get stuck in += eat.v.01
scoff = eat.v.01
top up = fill.v.01
fuel up = refuel.v.02
nuke = microwave.v.01
# dancing
take a twirl = dance.v.01
cut a rug = dance.v.01
bust a move = dance.v.01
throw shapes = dance.v.01
throw some shapes = dance.v.01
hit the dance floor = dance.v.01
strut one's stuff = dance.v.01
get jiggy = dance.v.01
# fighting and hitting
land a punch = punch.v.01
throw a punch = punch.v.01
throw a hook = punch.v.01
throw a right hook = punch.v.01
throw a left hook = punch.v.01
throw a jab = punch.v.01
throw an uppercut = punch.v.01
have a scrap = fight.v.01
get into a scrap = fight.v.01
connect with = hit.v.03 hit.v.01
trade blows = fight.v.01
trade punches = fight.v.01
exchange blows = fight.v.01
come to blows = fight.v.01
square up = fight.v.01
sucker-punch = punch.v.01
# vehicles and machines
ding += bump.v.01
reverse = back.v.02
back up = back_up.v.02
crash = crash.v.01 collide.v.03
crash into = collide.v.03 hit.v.02
smash into = collide.v.03 hit.v.02
slam into = collide.v.03 hit.v.02
plough into = collide.v.03 hit.v.02
plow into = collide.v.03 hit.v.02
t-bone = collide.v.03
hang a left = turn.v.01
hang a right = turn.v.01
spin out = skid.v.01
burn rubber = accelerate.v.01
step on it = accelerate.v.01
pick up the pace = accelerate.v.01
pick up speed = accelerate.v.01
hit the brakes = brake.v.01
slam on the brakes = brake.v.01
jam on the brakes = brake.v.01
stamp on the brakes = brake.v.01
u-turn = turn.v.01
do a u-turn = turn.v.01
pull a u-turn = turn.v.01
floor it = accelerate.v.01
gun it = accelerate.v.01
put one's foot down = accelerate.v.01
kick into life = start.v.09
splutter into life = start.v.09
sputter into life = start.v.09
cough into life = start.v.09
roar into life = start.v.09
burst into life = start.v.09
spring into life = start.v.09
spring to life = start.v.09
roar to life = start.v.09
sputter to life = start.v.09
come to life += start.v.09
fire up = start.v.08
boot up = start.v.08
power up = start.v.08
power down = close.v.01
grind to a halt = stop.v.01
judder to a halt = stop.v.01
screech to a halt = stop.v.01
# putting, taking, catching
pat down = frisk.v.02
chuck in = put.v.01
bung in = put.v.01
bung += put.v.01
nick = steal.v.01
help oneself to = take.v.08
make off with = steal.v.01
walk off with = steal.v.01
# looking
scope out = inspect.v.01
case the joint = inspect.v.01
take a gander = look.v.01
have a gander = look.v.01
have a look around = look.v.01
give the once-over = inspect.v.01
# cheering, celebrating
go wild = cheer.v.02
put one's hands together = applaud.v.01
high-five = slap.v.01
pop the cork = open.v.01
tear open = open.v.01
pop open = burst.v.01 open.v.01
burst open = burst.v.01 open.v.01
split open = burst.v.01 open.v.01
rip open = open.v.01
rip into = open.v.01
take a selfie = photograph.v.01
snap a selfie = photograph.v.01
# sport
find the net = score.v.01
bag a goal = score.v.01
slot home = score.v.01
slot it home = score.v.01
slam dunk = dunk.v.02
dunk the ball = dunk.v.02
catch a wave = surf.v.01
take a dip = swim.v.01
hit the slopes = ski.v.01
drop the gloves = fight.v.01
attack off the front = break_away.v.01
go off the front = break_away.v.01
go clear = break_away.v.01
# sleeping
crash out = fall_asleep.v.01
catch some rays = sunbathe.v.01
# weather
chuck it down = rain.v.01
bucket down = rain.v.01
tip down = rain.v.01
pelt down = rain.v.01
pour down += rain.v.01
# feelings, and the body
burst into tears = cry.v.02
bawl = cry.v.02
burst out laughing = laugh.v.01
fall about laughing = laugh.v.01
crack up = laugh.v.01
chuck up = vomit.v.01
do one's business = defecate.v.01
# birds
take wing = fly.v.01
# on stage
stage-dive = jump.v.01
stage dive = jump.v.01
# things
trolley += handcart.n.01
luggage trolley = handcart.n.01
selfie = photograph.n.01
smartphone = cellular_telephone.n.01
mobile = cellular_telephone.n.01
hoodie = sweatshirt.n.01
package = box.n.01
parcel = box.n.01
drone = drone.n.04
lunchbox = dinner_pail.n.01
lunch box = dinner_pail.n.01
e-scooter = motor_scooter.n.01
electric scooter = motor_scooter.n.01
jet ski = water_scooter.n.01
wheelie bin = ashcan.n.01
trainer += gym_shoe.n.01
buggy += baby_buggy.n.01
people carrier = minivan.n.01
kiddo = child.n.01
hooded figure = person.n.01
shadowy figure = person.n.01
masked figure = person.n.01
dark figure = person.n.01
lone figure = person.n.01
postie = mailman.n.01
binman = garbage_man.n.01
moggy = domestic_cat.n.01
moggie = domestic_cat.n.01
"""

_SENSE = re.compile(r"^([a-z][a-z_'-]*)\.([nvar])\.(\d\d)$")
POSSESSIVES = frozenset("my your his her its our their".split())
MOST_WORDS = 5  # the longest phrase in the table, in words


class Phrase(NamedTuple):
    """One line of the table: the senses it gives its phrase (lemma, part of speech, rank), and whether they come
    before WordNet's own."""

    senses: tuple[tuple[str, str, int], ...]
    first: bool


@cache
def everyday_phrases() -> dict[tuple[str, str], Phrase]:
    """The table as ``(lemma, pos) -> Phrase``; a lemma in WordNet's spelling ("eat_pavement")."""
    table: dict[tuple[str, str], Phrase] = {}
    for line in _TABLE.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        phrase, sign, targets = re.split(r"\s*(\+?=)\s*", line, maxsplit=1)
        senses = []
        for target in targets.split():
            matched = _SENSE.match(target)
            if matched is None:
                raise ValueError(f"not a WordNet sense: {target!r} (for {phrase!r})")
            senses.append((matched[1], matched[2], int(matched[3])))
        pos = {sense[1] for sense in senses}
        if len(pos) != 1:
            raise ValueError(f"{phrase!r}: its senses are of more than one part of speech")
        lemma = phrase.replace(" ", "_")
        if len(lemma.split("_")) > MOST_WORDS:
            raise ValueError(f"{phrase!r} is longer than {MOST_WORDS} words")
        table[(lemma, pos.pop())] = Phrase(tuple(senses), first=sign == "=")
    return table
