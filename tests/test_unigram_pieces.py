"""The entailment model's tokenizer made from the pieces each pair needs encodes exactly as the whole one."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from marlin_agent.resources import data_path
from marlin_agent.verification.entailment import EntailmentModel
from marlin_agent.verification.unigram_pieces import PiecewiseUnigram

ODD = ["Ça va? naïve café — “quoted” 2,000 ½ ﬁve ＡＢＣ", "  multiple   spaces\tand\nnewlines ", "",
       "emoji 😀🎉, 中文字符 and العربية", "x" * 400, "A.B.C...", "\u200b zero width \u00a0no-break space",
       "<0x41> looks like a byte piece", "the event asked about certainly happens. found=true"]


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for item in value for s in _strings(item)] if isinstance(value, list) else []


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """The calibration set's captions, questions and transcript lines, and some odd ones."""
    shipped = json.loads(gzip.open(data_path("configs/calibration-set.json.gz")).read())
    return sorted({s for s in _strings(shipped) if 0 < len(s) < 2000}) + ODD


@pytest.fixture(scope="module")
def tokenizer_file(offline_models) -> Path:
    return Path(offline_models["MARLIN_VERIFY_MODEL"]) / "tokenizer.json"


def _whole(file: Path, length: int) -> Tokenizer:
    whole = Tokenizer.from_file(str(file))
    whole.enable_truncation(length)
    whole.no_padding()
    return whole


def _same(whole: Tokenizer, pieces: PiecewiseUnigram, first: str, second: str) -> None:
    expected = whole.encode(first, second)
    got = pieces.encode(first, second)
    assert (got.ids, got.type_ids, got.attention_mask) == (expected.ids, expected.type_ids, expected.attention_mask), \
        (first, second)


@pytest.mark.parametrize("length", [160, 24])  # the model's length, and one that truncates most pairs
def test_every_pair_is_encoded_as_the_whole_tokenizer_encodes_it(tokenizer_file, tmp_path, texts, length):
    assert PiecewiseUnigram.open(tokenizer_file, tmp_path, length) is None  # the first open keeps the pieces
    pieces = PiecewiseUnigram.open(tokenizer_file, tmp_path, length)
    assert pieces is not None
    whole = _whole(tokenizer_file, length)
    draw = random.Random(7)
    for _ in range(1500):
        _same(whole, pieces, draw.choice(texts), draw.choice(texts))
    alphabet = "abcdefghijklmnopqrstuvwxyz  .,'-éü’ﬁ½₂\t[]<>0123456789ΩЖ中😀"
    for _ in range(300):  # words no one writes, of every length
        _same(whole, pieces, "".join(draw.choice(alphabet) for _ in range(draw.randint(0, 80))),
              "".join(draw.choice(alphabet) for _ in range(draw.randint(0, 80))))


def test_a_text_holding_one_of_the_added_tokens_is_encoded_by_the_whole_tokenizer(tokenizer_file, tmp_path):
    PiecewiseUnigram.open(tokenizer_file, tmp_path, 160)
    pieces = PiecewiseUnigram.open(tokenizer_file, tmp_path, 160)
    whole = _whole(tokenizer_file, 160)
    for first, second in [("a man [SEP] found=true [CLS]", "a man runs"), ("[MASK] walks", "someone walks"),
                          ("a dog", "an [unk] and [UNK] animal")]:
        _same(whole, pieces, first, second)


def test_a_changed_tokenizer_file_is_never_read_from_the_old_record(tokenizer_file, tmp_path):
    copy = tmp_path / "model" / "tokenizer.json"
    copy.parent.mkdir()
    copy.write_bytes(tokenizer_file.read_bytes())
    PiecewiseUnigram.open(copy, tmp_path / "cache", 160)
    assert PiecewiseUnigram.open(copy, tmp_path / "cache", 160) is not None
    document = json.loads(copy.read_text())
    document["model"]["vocab"][5000][1] = 0.0  # one piece made the likeliest of all
    copy.write_text(json.dumps(document))
    assert PiecewiseUnigram.open(copy, tmp_path / "cache", 160) is None  # made again for the file as it is now
    pieces = PiecewiseUnigram.open(copy, tmp_path / "cache", 160)
    piece = document["model"]["vocab"][5000][0]
    _same(_whole(copy, 160), pieces, f"x{piece.lstrip('▁')}y and more", "nothing")


def test_a_tokenizer_of_another_kind_is_left_to_the_whole_tokenizer(offline_models, tmp_path):
    wordpiece = Path(offline_models["MARLIN_EMBED_MODEL"]) / "tokenizer.json"
    assert PiecewiseUnigram.open(wordpiece, tmp_path, 128) is None
    assert PiecewiseUnigram.open(wordpiece, tmp_path, 128) is None
    assert list(tmp_path.iterdir()) == []
    assert PiecewiseUnigram.open(wordpiece, None, 128) is None


def test_the_entailment_model_scores_the_same_with_the_pieces_as_with_the_whole_tokenizer(tokenizer_file, tmp_path):
    pairs = [("A courier leaves a parcel on the step.", "a package is delivered"),
             ("The goalkeeper dives to his left as the ball flies wide.", "the keeper saves the penalty"),
             ("Ein Mann läuft über die Straße — schnell!", "a man crosses the road")]
    folder = tokenizer_file.parent
    whole = EntailmentModel(folder).score(pairs)  # no graph folder: nowhere to keep the pieces
    EntailmentModel(folder, graphs=tmp_path).score(pairs[:1])  # keeps them
    quick = EntailmentModel(folder, graphs=tmp_path)
    assert quick.score(pairs) == whole
    assert quick._encode.__self__.__class__ is PiecewiseUnigram


def test_pairs_encoded_on_many_threads_at_once_are_each_encoded_as_alone(tokenizer_file, tmp_path, texts):
    from concurrent.futures import ThreadPoolExecutor

    PiecewiseUnigram.open(tokenizer_file, tmp_path, 160)
    pieces = PiecewiseUnigram.open(tokenizer_file, tmp_path, 160)
    whole = _whole(tokenizer_file, 160)
    draw = random.Random(11)
    pairs = [(draw.choice(texts), draw.choice(texts)) for _ in range(400)]
    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(lambda pair: pieces.encode(*pair), pairs))
    assert [g.ids for g in got] == [whole.encode(*pair).ids for pair in pairs]
