"""Sentence embeddings for search on ONNX Runtime: a hub model's ONNX export, or a local folder.

No torch: a sentence-transformers model exported to ONNX gives the same vectors (to float
rounding) from onnxruntime and tokenizers, which the library already needs for verification.
A model is a folder with one ``.onnx`` file (``model.onnx`` or ``onnx/model.onnx`` first),
``tokenizer.json`` and ``config.json``; ``1_Pooling/config.json``, when present, says how
token vectors become a sentence vector (mean of the tokens by default, as all-MiniLM does).

Verification also compares a short question with the runs of words of a longer description
("blue square" inside "a blue square moves from left to right"): ``runs`` pools those from
the description's own token vectors, one pass per description rather than one per run.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from marlin_agent.errors import ModelUnavailable
from marlin_agent.loaded_model import LoadedOnce, tokenizer_type
from marlin_agent.media.content_id import content_id
from marlin_agent.model_store import local_model, resolve_model
from marlin_agent.onnx_session import open_session

# What a hub name is fetched as: the ONNX export sentence-transformers repositories carry.
HUB_FILES = ["config.json", "tokenizer.json", "onnx/model.onnx"]
HUB_OPTIONAL = ["1_Pooling/config.json"]
_MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length; longer text is cut, as sentence-transformers does
_BATCH = 64
# Texts whose vectors are kept (384 floats each for MiniLM: about 12 MB). Verification cuts the same
# descriptions into the same runs of words for every candidate near them and every question about their
# video; a long-lived process (the MCP server, the Python API) meets the same queries again.
_REMEMBERED = 8192
# Descriptions whose runs of words are kept (a few dozen vectors each).
_RUNS_REMEMBERED = 512


def word_runs(text: str, sizes: tuple[int, ...]) -> list[tuple[int, int]]:
    """(first word, last word + 1) of every run of ``sizes`` consecutive words (split at white space)."""
    count = len(text.split())
    return list(dict.fromkeys((at, at + size) for size in sizes for at in range(0, count - size + 1)))


def _onnx_file(folder: Path) -> Path | None:
    for preferred in (folder / "model.onnx", folder / "onnx" / "model.onnx"):
        if preferred.is_file():
            return preferred
    return next(iter(sorted(folder.rglob("*.onnx"))), None)


class Embedder(LoadedOnce):
    """Loads the model on first use; vectors are L2-normalised float32 (cosine = dot product)."""

    def __init__(self, model: str, cache: Path, graphs: Path | None = None) -> None:
        """``model``: a hub name or a local folder; ``cache``: where hub models are kept; ``graphs``: where
        the optimised graph is kept between runs (None: optimise on every load)."""
        super().__init__()
        self.name = model
        self.cache = cache
        self.graphs = graphs
        self._dim: int | None = None
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._runs: OrderedDict[tuple[str, tuple[int, ...]], np.ndarray] = OrderedDict()
        self._memo_lock = threading.Lock()
        self._runs_lock = threading.Lock()

    def folder(self) -> Path:
        return resolve_model(self.name, self.cache, HUB_FILES, HUB_OPTIONAL, what="embedding model",
                             env_var="MARLIN_EMBED_MODEL")

    def _open(self):
        read_tokenizer = tokenizer_type("Search and indexing").from_file  # before the slow load: fail fast
        folder = self.folder()
        model_file = _onnx_file(folder)
        if model_file is None or not (folder / "tokenizer.json").is_file():
            raise ModelUnavailable(
                f"{folder} holds no ONNX embedding model",
                hint="It needs a .onnx file (model.onnx or onnx/model.onnx) and tokenizer.json; "
                     "sentence-transformers exports one with `model.save(..., backend='onnx')`.")
        pooling = folder / "1_Pooling" / "config.json"
        mode = json.loads(pooling.read_text()) if pooling.is_file() else {}
        self._cls = bool(mode.get("pooling_mode_cls_token")) and not mode.get("pooling_mode_mean_tokens")
        session = open_session(model_file, self.graphs, what="embedding model")
        self._opened_from(model_file)
        self._inputs = {i.name for i in session.get_inputs()}
        tokenizer = read_tokenizer(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(_MAX_TOKENS)
        tokenizer.enable_padding()
        self._tokenizer = tokenizer
        return session

    def identity(self) -> str:
        """What the model is, whichever folder or name reaches it: a digest of its ONNX file and tokenizer. A
        copy in another folder, or the same model fetched by its hub name, is the same model to an index."""
        folder = self.folder()
        files = [f for f in (_onnx_file(folder), folder / "tokenizer.json") if f is not None and f.is_file()]
        digests = "|".join(content_id(f, self.cache) for f in files)
        return "content:" + hashlib.blake2b(digests.encode(), digest_size=12).hexdigest()

    def identity_if_here(self) -> str | None:
        """``identity`` when the model is on this machine already; None rather than a download."""
        return self.identity() if self.local_folder() is not None else None

    def local_folder(self) -> Path | None:
        """The model's folder if it is on this machine already (no download)."""
        return local_model(self.name, self.cache, HUB_FILES)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension"]).shape[1])
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        """One vector per text; texts met recently are not embedded again."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        with self._memo_lock:
            known = {text: self._memo[text] for text in unique if text in self._memo}
        new = [text for text in unique if text not in known]
        if new:
            known.update(zip(new, [row.copy() for row in self._embed_all(new)], strict=True))
        with self._memo_lock:
            for text in unique:
                self._memo[text] = known[text]
                self._memo.move_to_end(text)
            while len(self._memo) > _REMEMBERED:
                self._memo.popitem(last=False)
        return np.stack([known[text] for text in texts])

    def runs(self, texts: list[str], sizes: tuple[int, ...]) -> list[np.ndarray]:
        """For each text, the vectors of the text and of each of its runs of ``sizes`` words (``word_runs``
        order), the text's vector first. A run's vector is the mean of its tokens' vectors in one pass over
        the whole text, so each word is read in its context; an export that pools for itself (or by its
        first token) has no token vectors to pool, and its runs are embedded as texts of their own."""
        keys = [(text, tuple(sizes)) for text in texts]
        # One caller at a time: candidates verified side by side share most descriptions, and each pass uses
        # every core already, so waiting for the other caller's vectors beats computing them again.
        with self._runs_lock:
            known = {key: self._runs[key] for key in dict.fromkeys(keys) if key in self._runs}
            new = [key[0] for key in dict.fromkeys(keys) if key not in known]
            if new:
                known.update(((text, tuple(sizes)), vectors)
                             for text, vectors in zip(new, self._pool_runs(new, sizes), strict=True))
            for key in dict.fromkeys(keys):
                self._runs[key] = known[key]
                self._runs.move_to_end(key)
            while len(self._runs) > _RUNS_REMEMBERED:
                self._runs.popitem(last=False)
        return [known[key] for key in keys]

    def _pool_runs(self, texts: list[str], sizes: tuple[int, ...]) -> list[np.ndarray]:
        """One pass per text, alone: the int8 exports quantise a batch with one scale, so a text's vectors
        would otherwise depend on the texts it happened to be batched with (and an answer on timing)."""
        session = self._load()
        found = []
        for text in texts:
            (encoding,), mask, tokens = self._forward(session, [text])
            if tokens.ndim == 2 or self._cls:
                found.append(self.embed([text, *(" ".join(text.split()[a:b]) for a, b in word_runs(text, sizes))]))
                continue
            words = _token_words(text, encoding.offsets, encoding.special_tokens_mask)
            pooled = [tokens[0][mask[0] == 1].mean(axis=0)]
            for first, last in word_runs(text, sizes):
                chosen = (words >= first) & (words < last)
                pooled.append(tokens[0][chosen].mean(axis=0) if chosen.any() else pooled[0])
            found.append(_unit(np.stack(pooled)))
        return found

    def _embed_all(self, texts: list[str]) -> np.ndarray:
        session = self._load()
        # Batches of similar length pad less: sort, embed, and put the vectors back in order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.empty((len(texts), 0), dtype=np.float32)
        for at in range(0, len(texts), _BATCH):
            chosen = order[at: at + _BATCH]
            batch = self._embed_batch(session, [texts[i] for i in chosen])
            if vectors.shape[1] == 0:
                vectors = np.empty((len(texts), batch.shape[1]), dtype=np.float32)
            vectors[chosen] = batch
        return vectors

    def _forward(self, session, texts: list[str]):
        """(encodings, attention mask, the model's output: token vectors, or sentence vectors for an export
        that pools for itself)."""
        encoded = self._tokenizer.encode_batch(texts)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": np.array([e.ids for e in encoded], dtype=np.int64), "attention_mask": mask,
                 "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64)}
        return encoded, mask, session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]

    def _embed_batch(self, session, texts: list[str]) -> np.ndarray:
        _, mask, tokens = self._forward(session, texts)
        if tokens.ndim == 2:  # an export that pools for itself
            pooled = tokens
        elif self._cls:
            pooled = tokens[:, 0]
        else:  # the mean of the real (unpadded) tokens
            weights = mask[..., None].astype(np.float32)
            pooled = (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return _unit(pooled)


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a dot product is then the cosine), as float32."""
    return (vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def _token_words(text: str, offsets: list[tuple[int, int]], special: list[int]) -> np.ndarray:
    """For each token, the index of the white-space word it was cut from (-1 for special and padding tokens)."""
    ends = [match.end() for match in re.finditer(r"\S+", text)]
    words = np.full(len(offsets), -1, dtype=np.int64)
    at = 0
    for index, ((start, end), is_special) in enumerate(zip(offsets, special, strict=True)):
        if is_special or end <= start:
            continue
        while at < len(ends) - 1 and start >= ends[at]:
            at += 1
        words[index] = at
    return words


_shared: OrderedDict[tuple[str, str, str], Embedder] = OrderedDict()
_sharing = threading.Lock()
_KEPT = 4  # models kept loaded per process; a process that meets more (a test run) drops the oldest


def shared_embedder(model: str, cache: Path, graphs: Path | None = None) -> Embedder:
    """One embedder per model for the process: a long-lived process (the MCP server, the Python API, a
    resident command) loads it once. One whose file changed on disk since is loaded again."""
    local = Path(model).expanduser()
    # A local folder is the same model whichever cache is configured; a hub name is one per cache.
    key = (str(local.resolve()) if local.is_dir() else model, "" if local.is_dir() else str(cache), str(graphs))
    with _sharing:
        embedder = _shared.get(key)
        if embedder is None or not embedder.is_current():
            embedder = _shared[key] = Embedder(model, cache, graphs)
        _shared.move_to_end(key)
        while len(_shared) > _KEPT:
            _shared.popitem(last=False)
        return embedder
