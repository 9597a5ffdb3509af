"""Plain questions against richer captions, read by the lexical signal alone: ``python -m evals.plain_wording``.

The worlds' users ask in paraphrases and idioms; a plainer user asks "the car leaves" or "the cat eats" where a
captioner wrote "the hatchback pulls away" or "the kitten nibbles at its bowl". This probe puts such pairs, and as
many near misses in plain words ("the car leaves" against "the hatchback pulls into the space"), to the lexical
aligner over WordNet, and counts each pair read as said: its act (if it names one) and its things (if any) said
at 0.5 or more, and nothing denied at 0.5 or more. No Marlin, no entailment model, no fit: it shows which plain words
the reading rules link, not how the agent answers. The pairs were written for the probe, not drawn from a corpus;
``results/plain_wording.json`` holds the last run.
"""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

from marlin_agent.config import load_settings
from marlin_agent.verification.signals.lexical import Alignment, LexicalAligner
from marlin_agent.verification.wordnet import open_wordnet

# (asked, described): the same event, told plainly and by a captioner.
SAID = [
    ("the dog gets on the couch", "The terrier jumps up onto the sofa."),
    ("someone comes in", "A man walks through the front door into the hall."),
    ("the car leaves", "The hatchback pulls away from the kerb."),
    ("the man picks up the box", "A courier lifts the parcel off the step."),
    ("the woman puts the cup down", "She sets her mug on the table."),
    ("the plane takes off", "The jet lifts off the runway."),
    ("the kids go outside", "The children run out into the garden."),
    ("the bus stops", "The coach pulls up at the stop."),
    ("the man gets out of the car", "The driver climbs out of his van."),
    ("a person falls over", "A hiker trips and tumbles onto the path."),
    ("the light goes off", "The lamp switches off."),
    ("the door shuts", "The gate swings closed."),
    ("the crowd claps", "Spectators applaud from the stands."),
    ("the cat eats", "The kitten nibbles at its food bowl."),
    ("someone drops a glass", "A waiter lets a tumbler slip and it smashes."),
    ("the boy throws the ball", "A child tosses the football to his friend."),
    ("the woman opens the window", "She pushes the window open."),
    ("the car hits the wall", "The saloon crashes into a brick wall."),
    ("the man sits down", "A man takes a seat on the bench."),
    ("a dog runs away", "A spaniel bolts off across the field."),
    ("the girl waves", "A girl raises her hand and waves to the camera."),
    ("the truck backs up", "The lorry reverses into the yard."),
    ("the baby cries", "The infant starts wailing."),
    ("the man fixes the bike", "A mechanic repairs the bicycle wheel."),
    ("people leave the room", "The guests file out of the hall."),
    ("the goalkeeper catches the ball", "The keeper grabs the shot with both hands."),
    ("a fire starts", "Flames break out in the kitchen."),
    ("the horse jumps the fence", "The mare clears the hurdle."),
    ("the woman buys a coffee", "A customer pays for a latte at the counter."),
    ("the player scores", "The striker puts the ball in the net."),
    ("the man climbs the ladder", "A worker goes up the ladder."),
    ("the car turns left", "The car takes the left turn."),
    ("the bird flies away", "A pigeon takes off from the ledge."),
    ("someone knocks on the door", "A visitor raps on the front door."),
    ("the man cleans the window", "A window cleaner wipes the glass."),
    ("the kid rides a bike", "A boy pedals his bicycle down the path."),
    ("the dog barks", "The hound yaps at the postman."),
    ("two people shake hands", "The men greet each other with a handshake."),
    ("the woman loses her balance", "A skater wobbles and nearly falls."),
    ("the police arrive", "A patrol car pulls up outside."),
]
# (asked, described): a different event, told in the same plain words.
NEAR_MISSES = [
    ("the car leaves", "The hatchback pulls into the space."),
    ("the man gets out of the car", "The driver climbs into his van."),
    ("someone comes in", "A man walks out of the front door."),
    ("the cat eats", "The kitten sleeps by its food bowl."),
    ("the dog barks", "The dog sleeps on the mat."),
    ("the player scores", "The goalkeeper saves the shot."),
    ("the woman picks up the box", "The woman puts the box down."),
    ("a person falls over", "A hiker jumps over the stream."),
    ("the kids go outside", "The children come back inside."),
    ("the prowler runs off", "A guard runs off."),
    ("the teacher writes on the board", "A boy writes on the board."),
    ("the girl waves", "A boy waves to the camera."),
    ("the bus stops", "The bus speeds up."),
    ("the horse jumps the fence", "The horse refuses the fence."),
    ("the man opens the door", "The man closes the door."),
    ("the light comes on", "The light goes off."),
    ("the cat jumps onto the table", "The cat jumps down from the table."),
    ("the man sits down", "The man stands up."),
    ("the crowd cheers", "The crowd boos."),
    ("the dog catches the ball", "The dog drops the ball."),
    ("the car turns left", "The car turns right."),
    ("the woman buys a coffee", "A woman spills her coffee."),
    ("the boy climbs the tree", "The boy falls from the tree."),
    ("the baby laughs", "The baby cries."),
    ("a lorry arrives", "A lorry leaves."),
    ("the man gets on the bus", "The man gets off the bus."),
    ("the kitten plays with a ball", "The puppy plays with a ball."),
    ("the suitcase bursts open", "The suitcase is zipped shut."),
    ("the keeper catches the ball", "The striker kicks the ball."),
    ("someone drops a glass", "Someone fills a glass."),
]
LEVEL = 0.5


def read_as_said(alignment: Alignment) -> bool:
    """The act and the things, where the event names them, said at ``LEVEL`` or more, and nothing denied as much."""
    return all(share is None or share >= LEVEL for share in (alignment.action, alignment.thing)) and \
        alignment.conflict < LEVEL


def run(aligner: LexicalAligner) -> dict:
    rows, counts = [], {}
    for kind, pairs in (("said", SAID), ("near_miss", NEAR_MISSES)):
        read = 0
        for asked, described in pairs:
            alignment = aligner.align(asked, described)
            read += read_as_said(alignment)
            rows.append({"kind": kind, "asked": asked, "described": described, "read_as_said": read_as_said(alignment),
                         "why": alignment.explain()})
        counts[kind] = f"{read}/{len(pairs)}"
    return {"date": date.today().isoformat(), "level": LEVEL, "read_as_said": counts, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("evals/results"))
    args = parser.parse_args()
    settings = load_settings()
    report = run(LexicalAligner(open_wordnet(settings.verify.wordnet, settings.cache_dir)))
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "plain_wording.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["read_as_said"]))


if __name__ == "__main__":
    main()
