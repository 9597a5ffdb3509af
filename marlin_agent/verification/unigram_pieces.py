"""A Unigram tokenizer that opens in milliseconds: each encoding is made by a model of only the pieces that
occur in its texts.

Building a ``tokenizers`` Unigram model of a large vocabulary (DeBERTa-v3's 128,000 pieces) takes 0.2-0.4 s
on this kind of machine and holds the interpreter lock throughout, so loading it on a thread of its own stalls
every other thread of a cold command for that long. A Unigram segmentation of a word only ever uses pieces that
are substrings of that word, so a model of the vocabulary's pieces found in the texts at hand, with the
vocabulary's lowest score kept (unknown characters are scored below it) and the special tokens at their own
ids, segments those texts exactly as the whole model does; its ids are mapped back to the vocabulary's.

The vocabulary is kept beside the optimised graphs in Python's ``marshal`` form (read in ~20 ms) and made
again when the tokenizer file changes. A text in which one of the tokenizer's added tokens appears, and a
tokenizer this does not cover (another model, byte fallback), is encoded by the whole tokenizer as before.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_agent.loaded_model import tokenizer_type

_FORMAT = 1
_MOST_SPECIALS = 64  # the special pieces a reduced model keeps at their own ids


@dataclass(frozen=True)
class Encoded:
    ids: list[int]
    attention_mask: list[int]
    type_ids: list[int]


def _stamp(file: Path) -> list[int]:
    found = file.stat()
    return [found.st_size, found.st_mtime_ns]


def _vocabulary_file(tokenizer_file: Path, cache: Path) -> Path:
    digest = hashlib.sha256(str(tokenizer_file.resolve()).encode()).hexdigest()[:24]
    return cache / f"unigram-{digest}.marshal"


def pair_tokenizer(tokenizer, length: int):
    """``tokenizer`` set to encode pairs as the entailment model reads them: cut to ``length``, unpadded (a
    tokenizer.json saved with fixed padding would undo the free length)."""
    tokenizer.enable_truncation(length)
    tokenizer.no_padding()
    return tokenizer


def _specials(document: dict) -> int | None:
    """How many pieces at the head of the vocabulary are special (unknown, separators...), or None when the
    tokenizer is not a Unigram this covers."""
    model = document.get("model") or {}
    if model.get("type") != "Unigram" or model.get("byte_fallback") or not model.get("vocab"):
        return None
    ids = [t["id"] for t in document.get("added_tokens", []) if t["id"] < len(model["vocab"])]
    last = max([model.get("unk_id") or 0, *ids])
    return last + 1 if last < _MOST_SPECIALS else None


def _write_vocabulary(tokenizer_file: Path, cache: Path) -> None:
    """Keep what the pieces need of ``tokenizer_file`` in ``cache``: nothing when it is not a Unigram this covers."""
    document = json.loads(tokenizer_file.read_text(encoding="utf-8"))
    if (specials := _specials(document)) is None:
        return
    model = document["model"]
    vocab = model["vocab"]
    shell = {**document, "model": {**model, "vocab": vocab[:specials]}}
    pieces = [piece for piece, _ in vocab]
    scores = [float(score) for _, score in vocab]
    record = (_FORMAT, _stamp(tokenizer_file), json.dumps(shell), pieces, scores,
              {piece: n for n, piece in enumerate(pieces)}, [t["content"] for t in document.get("added_tokens", [])],
              min(range(len(scores)), key=scores.__getitem__), max(map(len, pieces)), specials, model.get("unk_id"))
    cache.mkdir(parents=True, exist_ok=True)
    target = _vocabulary_file(tokenizer_file, cache)
    temporary = target.with_name(f".{target.name}.{os.getpid()}")
    temporary.write_bytes(marshal.dumps(record))
    os.replace(temporary, target)


class PiecewiseUnigram:
    """Encodes text pairs like the whole tokenizer (truncated to ``length``, unpadded), from a reduced model per
    pair; thread-safe (a tokenizer shell per encoding in progress, kept for the next)."""

    def __init__(self, tokenizer_file: Path, record: tuple, length: int) -> None:
        (_, _, self._shell, self._pieces, self._scores, self._ids, self._added, self._lowest, self._longest,
         self._specials, self._unk_id) = record
        self._file, self._length = tokenizer_file, length
        self._shells: queue.SimpleQueue = queue.SimpleQueue()  # each in use by one encoding at a time
        self._whole: Any = None
        self._whole_lock = threading.Lock()

    @classmethod
    def open(cls, tokenizer_file: Path, cache: Path | None, length: int) -> PiecewiseUnigram | None:
        """The quick tokenizer, or None when it cannot be had (no cache, a tokenizer it does not cover, a record
        written for another version of the file: written now for next time)."""
        if cache is None:
            return None
        try:
            record = marshal.loads(_vocabulary_file(tokenizer_file, cache).read_bytes())
            if record[0] == _FORMAT and record[1] == _stamp(tokenizer_file):
                return cls(tokenizer_file, record, length)
        except (OSError, ValueError, EOFError, TypeError, IndexError):
            pass
        try:
            _write_vocabulary(tokenizer_file, cache)
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a read-only cache or an odd file: the whole tokenizer serves, as it always could
        return None

    def _tokenizer(self):
        try:
            return self._shells.get_nowait()
        except queue.Empty:
            return pair_tokenizer(tokenizer_type("Verification").from_str(self._shell), self._length)

    def _whole_tokenizer(self):
        with self._whole_lock:
            if self._whole is None:
                self._whole = pair_tokenizer(tokenizer_type("Verification").from_file(str(self._file)), self._length)
            return self._whole

    def _words(self, shell, text: str) -> list[str] | None:
        normalized = shell.normalizer.normalize_str(text) if shell.normalizer is not None else text
        if any(token in text or token in normalized for token in self._added):
            return None
        if shell.pre_tokenizer is None:
            return [normalized]
        return [word for word, _ in shell.pre_tokenizer.pre_tokenize_str(normalized)]

    def encode(self, first: str, second: str) -> Encoded:
        shell = self._tokenizer()
        try:
            return self._encode(shell, first, second)
        finally:
            self._shells.put(shell)

    def _encode(self, shell, first: str, second: str) -> Encoded:
        from tokenizers.models import Unigram

        words = [self._words(shell, first), self._words(shell, second)]
        if words[0] is None or words[1] is None:
            whole = self._whole_tokenizer().encode(first, second)
            return Encoded(list(whole.ids), list(whole.attention_mask), list(whole.type_ids))
        found = set(range(self._specials))
        found.add(self._lowest)
        ids, longest = self._ids, self._longest
        for word in words[0] + words[1]:
            for start in range(len(word)):
                for end in range(start + 1, min(len(word), start + longest) + 1):
                    at = ids.get(word[start:end])
                    if at is not None:
                        found.add(at)
        # The specials first, at their own ids; then the pieces, whose reduced ids are mapped back below.
        kept = sorted(found)
        shell.model = Unigram([(self._pieces[n], self._scores[n]) for n in kept], self._unk_id, False)
        encoding = shell.encode(first, second)
        return Encoded([kept[n] if n < len(kept) else n for n in encoding.ids], list(encoding.attention_mask),
                       list(encoding.type_ids))
