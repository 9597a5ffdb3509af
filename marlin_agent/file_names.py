"""File names made from text a caller or the footage chose (a schema title, a video title, a question).

Such text is data, never a path: separators, parent steps, leading dots, control characters and
names the system reserves are taken out, so the name lands in the folder it was meant for.
"""

from __future__ import annotations

import re
import unicodedata

_UNSAFE = re.compile(r"[^\w.-]+")
_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})
MAX_STEM = 80


def safe_stem(text: str, fallback: str) -> str:
    """``text`` as one file name stem: word characters, dots and dashes only; ``fallback`` when nothing is left."""
    stem = _UNSAFE.sub("_", unicodedata.normalize("NFKC", text)).strip("._-")
    stem = re.sub(r"\.{2,}", ".", stem)[:MAX_STEM].rstrip("._-")
    if not stem or stem.split(".")[0].lower() in _RESERVED:
        return fallback
    return stem
