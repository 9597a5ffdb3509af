"""A model loaded once, on first use, by whichever thread asks first: the one way the project's models load.

The embedder, the entailment model and Whisper each open a file that takes a second or more to load and
is then shared by every thread of the process. Loading is theirs (``_open``); when and how often it
happens is this class's: once, under a lock, so a load already under way (a warm-up thread's, say) is
waited for rather than repeated, and ``load()`` lets a caller pay it now rather than at the first use.
A model built from one file remembers that file's stamp, so a long-lived process can tell it changed.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Generic, TypeVar

from marlin_agent.errors import MissingDependency
from marlin_agent.model_store import file_stamp

T = TypeVar("T")


class LoadedOnce(ABC, Generic[T]):
    """Subclasses say how the model opens (``_open``); ``_load()`` returns it, opened once."""

    def __init__(self) -> None:
        self._loaded: T | None = None
        self._lock = threading.Lock()
        self._file: Path | None = None
        self._stamp: tuple[int, int, int] | None = None

    @abstractmethod
    def _open(self) -> T:
        """Open the model (called once, under the lock); the subclass's one job."""

    def load(self) -> None:
        """Load the model now rather than at its first use (a load under way elsewhere is waited for)."""
        self._load()

    def _load(self) -> T:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    def _opened_from(self, file: Path) -> None:
        """Remember the file the model was opened from, as it is on disk now (see ``is_current``)."""
        self._file, self._stamp = file, file_stamp(file)

    def is_current(self) -> bool:
        """Not loaded yet, or loaded from a file that is still the same on disk."""
        return self._file is None or file_stamp(self._file) == self._stamp


def tokenizer_type(feature: str):
    """The ``tokenizers`` package's ``Tokenizer``; ``MissingDependency`` naming ``feature`` without it."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise MissingDependency(feature, "library") from exc
    return Tokenizer
