"""File names made from text a caller or the footage chose (a schema title, a video title, a question).

Such text is data, never a path: separators, parent steps, leading dots, control characters and
names the system reserves are taken out, so the name lands in the folder it was meant for.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

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


# File names on Linux are bytes; Python carries the bytes that are not UTF-8 as lone surrogates
# (U+DC80..U+DCFF), which no JSON document, Arrow table or UTF-8 file can hold. In text such a
# name is written with each of those as the six characters ``\udcXX``, and read back the same way.
_SURROGATE = re.compile("[\udc80-\udcff]")
_ESCAPED = re.compile(r"\\udc([89a-f][0-9a-f])")


def has_undecodable(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def escaped(text: str) -> str:
    """``text`` (a path or a message naming one) as valid UTF-8: undecodable bytes spelled ``\\udcXX``."""
    return _SURROGATE.sub(lambda m: f"\\udc{ord(m.group()) & 0xFF:02x}", text) if _SURROGATE.search(text) else text


def escaped_strings(value: object) -> object:
    """``value`` (a JSON-shaped document) with every string :func:`escaped`: a last net before output."""
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, dict):
        return {escaped(str(k)): escaped_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escaped_strings(v) for v in value]
    return value


def path_text(path: object) -> str:
    """A path as text a document can hold; :func:`text_path` gives the same path back."""
    return escaped(str(path))


def text_path(text: str) -> Path:
    """The path :func:`path_text` wrote (plain paths are unchanged)."""
    return Path(_ESCAPED.sub(lambda m: chr(0xDC00 | int(m.group(1), 16)), text) if "\\udc" in text else text)
