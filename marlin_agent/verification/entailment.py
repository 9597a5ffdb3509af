"""An entailment (NLI) cross-encoder on ONNX Runtime: does this premise say the hypothesis?

Verification asks whether what Marlin says happens at a span (a caption event, a spoken
line) *means* the event asked about. Embedding similarity cannot tell synonyms from
opposites ("the door opens" / "the door closes" sit in one band); an NLI model reads the
pair together and answers entailment, contradiction or neither.

A model is a folder holding one ``.onnx`` file, its ``tokenizer.json`` and a ``config.json``
whose ``id2label`` names the outputs (three-way entailment/neutral/contradiction, or two-way
entailment/not-entailment). Two optional keys there describe exports that differ from the
usual cross-encoder: ``marlin_pair_order`` (``premise_first``, the default, or
``hypothesis_first``) and ``marlin_max_length`` (where a pair is cut; by default where the
export was fixed, else 512 tokens). Each pair runs at its own length (see ``onnx_session``).
A hub name is downloaded once into the cache (only the files named above); with no hub and no
cache the error says so at once.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from marlin_agent.config import Settings, VerifySettings
from marlin_agent.errors import ModelUnavailable
from marlin_agent.loaded_model import LoadedOnce, tokenizer_type
from marlin_agent.model_store import resolve_model
from marlin_agent.onnx_session import open_session, original_length
from marlin_agent.verification.unigram_pieces import PiecewiseUnigram, pair_tokenizer

_CACHE_PAIRS = 4096
# Pairs are short (20-40 tokens), too short for two threads to share one well: one thread each, as many
# pairs at once as there are cores, is faster (8 pairs: about 105 ms against 157 on two cores). Each pair
# still runs alone, so its score never depends on the others.
_PAIRS_AT_ONCE = max(1, min(4, os.cpu_count() or 1))
_MAX_TOKENS = 512  # DeBERTa-v3's trained length, for an export that names none


@dataclass(frozen=True)
class Entailment:
    entailment: float
    contradiction: float  # 0 for a two-way model: it cannot tell contradiction from "not said"


def _label_index(labels: dict[int, str], *words: str) -> int | None:
    for index, label in labels.items():
        name = label.lower()
        if any(name.startswith(w) for w in words):
            return index
    return None


class EntailmentModel(LoadedOnce):
    """Loaded on first use; thread-safe; remembers recent pairs (verification asks the same ones often)."""

    def __init__(self, folder: Path, name: str | None = None, graphs: Path | None = None) -> None:
        """``graphs``: where the optimised graph is kept between runs (None: optimise on every load)."""
        super().__init__()
        self.folder = folder
        self.name = name or folder.name
        self.graphs = graphs
        self._scoring = threading.Lock()
        self._memo: OrderedDict[tuple[str, str], Entailment] = OrderedDict()

    def _open(self):
        read_tokenizer = tokenizer_type("Verification").from_file  # before the slow load: fail fast
        files = sorted(self.folder.rglob("*.onnx"))
        config_file = self.folder / "config.json"
        if not files or not (self.folder / "tokenizer.json").is_file() or not config_file.is_file():
            raise ModelUnavailable(f"{self.folder} is not an entailment model folder",
                                   hint="It needs one .onnx file, tokenizer.json and config.json.")
        config = json.loads(config_file.read_text(encoding="utf-8"))
        labels = {int(k): v for k, v in config.get("id2label", {}).items()}
        self._entail = _label_index(labels, "entail")
        self._contradict = _label_index(labels, "contradict")
        if self._entail is None:
            raise ModelUnavailable(f"{config_file} names no entailment label in id2label",
                                   hint="Use an NLI model (labels entailment / contradiction / neutral).")
        self._hypothesis_first = config.get("marlin_pair_order") == "hypothesis_first"
        session = open_session(files[0], self.graphs, threads=1 if _PAIRS_AT_ONCE > 1 else 2,
                               what="verification model")
        self._opened_from(files[0])
        self._inputs = {i.name for i in session.get_inputs()}
        length = int(config.get("marlin_max_length") or original_length(session) or _MAX_TOKENS)
        # A large Unigram vocabulary takes a few tenths of a second to build, with every other thread stalled:
        # the pieces each pair needs are enough (unigram_pieces), once their record is kept beside the graphs.
        quick = PiecewiseUnigram.open(self.folder / "tokenizer.json", self.graphs, length)
        self._encode = quick.encode if quick is not None else \
            pair_tokenizer(read_tokenizer(str(self.folder / "tokenizer.json")), length).encode
        return session

    def _run(self, pair: tuple[str, str]) -> Entailment:
        """One pair alone, at its own length. Alone, because the int8 exports quantise each batch with
        one scale: a pair's score would then depend on the pairs it happened to be batched with."""
        session = self._load()
        premise, hypothesis = pair
        encoded = self._encode(*((hypothesis, premise) if self._hypothesis_first else (premise, hypothesis)))
        feeds = {"input_ids": np.array([encoded.ids], dtype=np.int64),
                 "attention_mask": np.array([encoded.attention_mask], dtype=np.int64),
                 "token_type_ids": np.array([encoded.type_ids], dtype=np.int64)}
        logits = session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0][0]
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        return Entailment(entailment=float(probs[self._entail]),
                          contradiction=float(probs[self._contradict]) if self._contradict is not None else 0.0)

    def _run_all(self, pairs: list[tuple[str, str]]) -> list[Entailment]:
        """Every pair, alone, on as many threads at once as there are cores. The threads are this call's own
        (daemons, joined before it returns): no pool outlives a call, so a forked or exiting process has
        nothing to wait for."""
        workers = min(_PAIRS_AT_ONCE, len(pairs))
        if workers < 2:
            return [self._run(pair) for pair in pairs]
        self._load()  # once, before the threads
        scored: list[Entailment | None] = [None] * len(pairs)
        failures: list[BaseException] = []

        def work(first: int) -> None:
            try:
                for at in range(first, len(pairs), workers):
                    scored[at] = self._run(pairs[at])
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(n,), daemon=True, name="entailment") for n in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise failures[0]
        return scored  # type: ignore[return-value]

    def score(self, pairs: list[tuple[str, str]]) -> list[Entailment]:
        """(premise, hypothesis) pairs → how far each premise entails / contradicts its hypothesis."""
        # One caller at a time: candidates verified side by side ask about the same events of their video,
        # and each call uses every core already, so waiting for the other's scores beats computing them again.
        with self._scoring:
            todo = list(dict.fromkeys(pair for pair in pairs if pair not in self._memo))
            self._memo.update(zip(todo, self._run_all(todo), strict=True))
            found = [self._memo[pair] for pair in pairs]
            while len(self._memo) > _CACHE_PAIRS:
                self._memo.popitem(last=False)
            return found


_loaded: OrderedDict[str, EntailmentModel] = OrderedDict()
_KEPT = 4
_loading = threading.Lock()


def model_folder(settings: VerifySettings, cache: Path) -> Path:
    """The configured model's folder under ``cache`` (downloaded once): config, tokenizer, one ONNX file."""
    return resolve_model(settings.model, cache / "models", ["config.json", "tokenizer.json", settings.model_file],
                         what="verification model", env_var="MARLIN_VERIFY_MODEL")


def entailment_model(settings: Settings) -> EntailmentModel:
    """The configured model, resolved (downloaded once) and kept for the process: it is read-only, and a
    long-lived process (the MCP server, the Python API, a resident command) should not load it per
    question. One whose file changed on disk since is loaded again."""
    with _loading:
        folder = model_folder(settings.verify, settings.cache_dir)
        key = f"{folder.resolve()}\0{settings.graphs_dir}"
        if key not in _loaded or not _loaded[key].is_current():
            _loaded[key] = EntailmentModel(folder, settings.verify.model, graphs=settings.graphs_dir)
        _loaded.move_to_end(key)
        while len(_loaded) > _KEPT:  # a process that meets many configurations (a test run) drops the oldest
            _loaded.popitem(last=False)
        return _loaded[key]
