"""The realistic-language world, and `ask` on it: questions in users' words, hard negatives of every kind."""

import asyncio
import json
import re

import pytest

from evals.synthetic import barcode
from evals.synthetic.realistic import realistic_suite
from evals.synthetic.realistic_answers import caption_text, find_text
from evals.synthetic.scenes import CALIBRATION, NEGATIVE_KINDS, QUESTION_KINDS, WORLD, scenes, shown
from evals.synthetic.vision import Observation, Sighting
from marlin_agent.app.ask import ask
from marlin_agent.config import load_settings
from marlin_agent.verification.spans import iou


def test_the_world_covers_the_footage_people_search_with_labelled_questions_and_negatives():
    assert len(WORLD) >= 12 and len({s.kind for s in WORLD}) >= 5
    for scene in WORLD:
        assert set(scene.negatives) == set(NEGATIVE_KINDS), scene.name
        for event in scene.events:
            assert set(event.questions) == set(QUESTION_KINDS), (scene.name, event)
            assert event.spoken or len(set(event.captions)) >= 3, "a captioner words an event differently each time"
    assert any(e.spoken for s in WORLD for e in s.events), "some events are only said"
    calibration, heldout = scenes("calibration"), scenes("heldout")
    assert {s.name for s in calibration} == set(CALIBRATION) and not {s.name for s in calibration} & {s.name for s in heldout}
    assert len({s.kind for s in heldout}) >= 5


def test_what_the_simulator_knows_of_a_scene_holds_none_of_the_labels():
    for number, scene in enumerate(WORLD, start=1):
        seen = shown(number).model_dump_json().lower()
        # A partial description may share a caption's words ("white van ahead"); whole questions and
        # negatives never reach the simulator.
        asked = [q for e in scene.events for k, q in e.questions.items() if k != "partial"]
        assert not [q for q in asked + list(scene.negatives.values()) if q.lower() in seen], scene.name
        assert not [e.said for e in scene.events if e.spoken and e.said.lower() in seen], "speech is heard, not seen"


def test_the_strip_survives_encoding_and_says_which_event_is_on_screen():
    import numpy as np

    picture = barcode.paint(np.full((120, 160, 3), 90, dtype=np.uint8), scene=13, event=5)
    noisy = np.clip(picture.astype(int) + np.random.default_rng(1).integers(-30, 30, picture.shape), 0, 255)
    assert barcode.read(noisy.astype(np.uint8)) == (13, 5)
    assert barcode.read(np.full((120, 160, 3), 90, dtype=np.uint8)) is None


DOORBELL = Observation(duration=48.0, frames_sampled=96, backdrop="", scene=1, sightings=[
    Sighting(event=1, start=3.0, end=9.5), Sighting(event=2, start=11.0, end=16.0),
    Sighting(event=3, start=18.0, end=22.5), Sighting(event=4, start=31.0, end=38.0)])


def test_captions_are_worded_anew_for_each_clip_and_times_are_a_little_off():
    first, second = caption_text(DOORBELL, "clip-a", 1.0), caption_text(DOORBELL, "clip-b", 1.0)
    assert first.startswith("Scene: ") and "\nEvents:\n<" in first
    assert first != second
    assert len(first.splitlines()) == len(second.splitlines()) == 2 + 4


def test_find_lands_on_the_most_similar_real_event_for_an_absent_one_in_any_window():
    leaving = find_text(DOORBELL, "the courier leaves", 1.0)
    assert leaving.startswith("From 1") and leaving.endswith(".")
    # Asked for something that never happens, it answers with the look-alike event's span...
    absent = find_text(DOORBELL, "the courier rings the doorbell and waits", 1.0)
    start = float(absent.split()[1])
    assert abs(start - 3.0) < 1.0
    # ...and the same in a window shifted by 10 s (the same event, 10 s earlier in the clip).
    shifted = Observation(duration=48.0, frames_sampled=96, backdrop="", scene=1, sightings=[
        Sighting(event=s.event, start=s.start - 10, end=s.end - 10) for s in DOORBELL.sightings[1:]])
    again = find_text(shifted, "the courier rings the doorbell and waits", 1.0)
    assert again != absent  # no arriving in view now: it settles on the nearest look-alike instead


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Two scenes' footage: a doorbell camera, and a meeting where some events are only said."""
    folder = tmp_path_factory.mktemp("realistic")
    data = realistic_suite(folder, "calibration", name="two-scenes", only=("doorbell_parcel", "meeting_budget"))
    return folder / "videos", json.loads(data.read_text())


def _ask(question, video, env):
    settings = load_settings(env=env)
    return asyncio.run(ask(question, [str(video)], settings))


# One example of each kind per scene; how often such questions are found over the whole world is the
# eval's figure (`python -m evals.run_synthetic`: recall 0.79 on the held-out part), not a test's. "a lady
# collects the box and brings it indoors" was the doorbell's paraphrase until the refit at threshold 0.57
# left it out ("parcel, not box": WordNet makes them siblings under "container"), and "a graph of revenue per
# quarter appears" the meeting's until the world was worded by what each clip shows rather than by its bytes.
@pytest.mark.parametrize("scene, kind, index", [
    ("doorbell_parcel", "question", 3), ("doorbell_parcel", "paraphrase", 0), ("doorbell_parcel", "partial", 3),
    ("meeting_budget", "question", 4), ("meeting_budget", "paraphrase", 4), ("meeting_budget", "partial", 2),
])
def test_an_event_asked_in_users_words_is_found_at_its_true_span(world, library_env, scene, kind, index):
    videos, annotations = world
    entry = annotations[scene]
    at = [n for n, k in enumerate(entry["query_kinds"]) if k == kind][index]
    result = _ask(entry["queries"][at], videos / f"{scene}.mp4", library_env)
    assert result.found, (entry["queries"][at], result.answer)
    assert iou((result.moments[0].start, result.moments[0].end), tuple(entry["spans"][at])) >= 0.5, result.moments[0]


@pytest.mark.parametrize("scene, kind", [
    ("doorbell_parcel", "same_actor"), ("doorbell_parcel", "other_object"), ("doorbell_parcel", "opposite"),
    ("doorbell_parcel", "never"), ("meeting_budget", "opposite"),
])
def test_a_hard_negative_is_not_found(world, library_env, scene, kind):
    videos, annotations = world
    entry = annotations[scene]
    question = entry["negatives"][entry["negative_kinds"].index(kind)]
    result = _ask(question, videos / f"{scene}.mp4", library_env)
    assert not result.found, (question, result.moments)
    assert result.answer.startswith("Not found")


def _texts(scene):
    found = list(scene.scenes) + list(scene.negatives.values())
    for event in scene.events:
        found += event.captions + list(event.questions.values()) + ([event.said] if event.said else [])
    return found


_FILLER = set("a an the of in on at to into onto from with and his her its their does do when is are someone "
              "front end".split())


def _words(text):
    return re.findall(r"[a-z]+", text.lower())


def _runs(text):
    """Runs of four words that carry at least two content words ("in front of the" is anybody's)."""
    words = _words(text)
    return {" ".join(words[i:i + 4]) for i in range(len(words) - 3)
            if sum(w not in _FILLER for w in words[i:i + 4]) >= 2}


def _shared_runs(scenes_, earlier):
    """The runs of ``scenes_``' texts that also stand in an ``earlier`` scene's."""
    known = set().union(*(_runs(t) for scene in earlier for t in _texts(scene)))
    return {run for scene in scenes_ for t in _texts(scene) for run in _runs(t)} & known


def test_the_harsher_scenes_are_new_kinds_in_words_of_their_own_and_all_held_out():
    """No run of four words with two content words in the six later scenes (captions, paragraphs,
    questions, negatives, speech) appears anywhere in the first world, so a verifier tuned on those
    cannot lean on familiar phrasing."""
    from evals.synthetic.scenes_harsh import HARSH
    from evals.synthetic.scenes_unseen import UNSEEN

    first = [scene for scene in WORLD if scene not in HARSH and scene not in UNSEEN]
    shared = _shared_runs(HARSH, first)
    assert not shared, shared
    assert len(HARSH) >= 6 and not {s.kind for s in HARSH} <= {s.kind for s in first}
    assert {s.name for s in HARSH} <= {s.name for s in scenes("heldout")}


def test_the_unseen_scenes_are_kinds_of_their_own_asked_in_words_their_captions_do_not_use():
    """Ten scenes of kinds no earlier scene has, in phrasing of their own, most held out; their paraphrases share
    at most two words (and on average under a fifth of their words) with the captions of their event."""
    from evals.synthetic.scenes_unseen import UNSEEN

    earlier = [scene for scene in WORLD if scene not in UNSEEN]
    assert not _shared_runs(UNSEEN, earlier)
    assert len(UNSEEN) >= 10
    assert len({s.kind for s in UNSEEN} - {s.kind for s in earlier}) >= 5
    assert sum(s.name in {h.name for h in scenes("heldout")} for s in UNSEEN) > len(UNSEEN) / 2
    shares = []
    for scene in UNSEEN:
        for event in scene.events:
            if event.spoken:
                continue
            asked = set(_words(event.questions["paraphrase"])) - _FILLER
            said = set(_words(" ".join(event.captions)))
            assert len(asked & said) <= 2, (scene.name, event.questions["paraphrase"], asked & said)
            shares.append(len(asked & said) / len(asked))
    assert sum(shares) / len(shares) < 0.2



def test_a_moment_marlins_find_placed_a_few_seconds_off_is_reported_with_the_caption_event_that_says_it(
        tmp_path, library_env):
    """On the dashcam, Marlin's find puts "the airport sign" at 36.7-42.4 s (the truth is 33-40) and its caption
    has the event at 32.8-39.8 s, which is what the verifier read. That caption ends at the edge of the chunk it
    was told in (0-40 s), so it may be a piece of the event: the answer is the two together, on the truth
    rather than beside it (IoU 0.35 before), and its evidence says why it moved."""
    from evals.synthetic.realistic import make_scene_video
    from evals.synthetic.scenes import WORLD

    scene = next(s for s in WORLD if s.name == "dashcam_motorway")
    video = tmp_path / f"{scene.name}.mp4"
    truth = make_scene_video(video, scene)[2]
    result = _ask("when do we pass the airport sign?", video, library_env)
    assert result.found, result.answer
    moment = result.moments[0]
    assert iou((moment.start, moment.end), truth) >= 0.7, [(e.kind, e.start, e.end) for e in moment.evidence]
    assert (moment.start, moment.end) == (32.8, 42.4)
    assert any(e.kind == "grounding" and e.text.startswith("joined with Marlin's caption event at 0:32.8–0:39.8")
               for e in moment.evidence)
