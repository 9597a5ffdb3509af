"""How Marlin says that nothing happens.

Marlin describes every chunk, so a chunk where nothing happens still gets an event ("the empty
scene stays unchanged", "The light grey backdrop stays empty."). Such a line is not a happening:
the planners never answer it as what happens before or after something, never count it, and
extraction does not offer it to a model as something that happened — nor a scene paragraph's
sentence that says the same, beside events that do happen.
"""

from __future__ import annotations

import re

_IDLE = re.compile(
    r"\b(?:stays?|remains?|is|are|looks?|goes)\s+(?:completely\s+|still\s+|otherwise\s+)?"
    r"(?:empty|quiet|unchanged|bare|clear|vacant|idle|deserted|static)\b"
    r"|\bnothing\s+(?:happens|moves|changes|else\s+happens)\b|\bno\s+(?:one|motion|movement|activity|action)\b"
    r"|^\s*(?:an?|the)\s+(?:\w+\s+){0,3}(?:empty|quiet|still|static)\s+(?:scene|backdrop|frame|street|room|shot)\b",
    re.IGNORECASE)
# A clause joined on may say something does happen ("the street stays empty until a car passes").
_ANOTHER_CLAUSE = re.compile(r"\b(?:while|as|until|when|before|after|then|but|and)\b", re.IGNORECASE)


def idle(text: str) -> bool:
    """Does a caption event say only that nothing happens ("The light grey backdrop stays empty.")? It is not
    a happening: never what happens before or after something, never counted, never a "when"."""
    return bool(_IDLE.search(text)) and not _ANOTHER_CLAUSE.search(text)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CLAUSE_JOIN = re.compile(r"\s*(?:,|;|\b(?:and|but|while|as|until|when|then)\b)\s*", re.IGNORECASE)
_DENIAL = re.compile(r"^(?:no|not\s+a|nobody|nothing)\b", re.IGNORECASE)


def _idle_clause(clause: str) -> bool:
    return bool(_IDLE.search(clause) or _DENIAL.search(clause.strip()))


def without_idle_sentences(paragraph: str) -> str:
    """``paragraph`` without its sentences that only say nothing happens ("Nothing moves and no objects enter
    the frame."): true of its own chunk, they read as true of the whole video beside another chunk's events."""
    kept = [s for s in _SENTENCE_END.split(paragraph.strip())
            if not all(_idle_clause(c) for c in _CLAUSE_JOIN.split(s.rstrip(".!?")) if c.strip())]
    return " ".join(kept)
