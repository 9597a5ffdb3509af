"""Sentence embeddings for search, from a named sentence-transformers model or a local folder."""

from __future__ import annotations

import threading

import numpy as np

from marlin_agent.errors import MissingDependency


class Embedder:
    """Loads the model on first use; vectors are L2-normalised float32 (cosine = dot product)."""

    def __init__(self, model: str) -> None:
        self.name = model
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise MissingDependency("Search and indexing", "library") from exc
                from transformers.utils import logging as transformers_logging

                # Its "Loading weights" bar would show on every command that searches or indexes.
                transformers_logging.disable_progress_bar()
                self._model = SentenceTransformer(self.name, device="cpu")
            return self._model

    @property
    def dim(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._load().encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)
