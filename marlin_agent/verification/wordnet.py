"""Princeton WordNet 3.0, read straight from its database files: lemmas, senses and relations.

The lexical signal needs a few questions answered fast and offline: is this word a synonym,
a more general or more specific word, a sibling ("circle" / "square") or an antonym of that
one? WordNet's own files answer them without loading anything: ``index.<pos>`` is sorted, so
a lemma is found by binary search, and every synset sits at its byte offset in
``data.<pos>``. Both are memory-mapped, so a process pays nothing until a word is looked up.

Everyday phrases WordNet 3.0 lacks, or lists only in a sense footage rarely shows ("eat pavement", "leg it"),
are looked up as the WordNet senses they mean (``everyday_phrases``), before or after the word's own.

Where the files come from (first that has them): the configured folder (``[verify] wordnet``,
env ``MARLIN_WORDNET``), the cache, Debian's ``wordnet-base`` (``/usr/share/wordnet``), an
nltk_data copy, else one download of the nltk_data archive into the cache. With none of these
the error names all of them at once.
"""

from __future__ import annotations

import io
import mmap
import threading
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from marlin_agent.errors import ModelUnavailable
from marlin_agent.model_store import download_failure
from marlin_agent.verification.everyday_phrases import Phrase, everyday_phrases

POS = ("n", "v", "a", "r")
_FILE_POS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
REQUIRED = tuple(f"{kind}.{name}" for kind in ("index", "data") for name in _FILE_POS.values())
SYSTEM_FOLDERS = (Path("/usr/share/wordnet"), Path("/usr/local/share/wordnet"), Path("/opt/homebrew/share/wordnet"),
                  Path.home() / "nltk_data" / "corpora" / "wordnet", Path("/usr/share/nltk_data/corpora/wordnet"))
ARCHIVE_URL = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/wordnet.zip"
_DOWNLOAD_TIMEOUT = 30.0

# Morphy's detachment rules (WordNet's own morphological processor), by part of speech.
_SUFFIXES = {
    "n": (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y"),
          ("s", "")),
    "v": (("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""), ("s", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}


@dataclass(frozen=True)
class Synset:
    """One sense: its words and its pointers as (symbol, target synset id)."""

    id: str  # "<pos>:<offset>"; adjective satellites count as "a"
    pos: str
    lexname: int
    words: tuple[str, ...]
    pointers: tuple[tuple[str, str, int, int], ...]  # (symbol, target id, source word no., target word no.)
    gloss: str = ""  # the definition, without its examples: "fall down, as if collapsing" (topple)
    by_symbol: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)  # symbol -> target ids
    frames: frozenset[int] = frozenset()  # a verb's sentence frames (WordNet's numbers: 1 "Something ----s", ...)

    def related(self, *symbols: str) -> list[str]:
        return [target for symbol in symbols for target in self.by_symbol.get(symbol, ())]


def _holding(place: Path) -> Path | None:
    """``place`` (or its ``dict`` subfolder) when it holds WordNet's database files."""
    for candidate in (place, place / "dict"):
        if all((candidate / name).is_file() for name in REQUIRED):
            return candidate
    return None


def find_folder(configured: str | None, cache: Path) -> Path | None:
    """The first folder holding WordNet's database files, or None."""
    places = [Path(configured).expanduser()] if configured and configured != "auto" else []
    places += [cache / "wordnet", *SYSTEM_FOLDERS]
    return next((found for found in map(_holding, places) if found is not None), None)


def resolve_wordnet(configured: str | None, cache: Path, *, download: bool = True) -> Path:
    """WordNet's folder: found locally, or fetched once into ``cache/wordnet``."""
    if configured and configured != "auto" and _holding(Path(configured).expanduser()) is None:
        raise ModelUnavailable(f"the WordNet folder {configured} does not hold WordNet's database files "
                               f"({', '.join(REQUIRED)})", hint="Check MARLIN_WORDNET ([verify] wordnet).")
    found = find_folder(configured, cache)
    if found is not None:
        return found
    if download:
        try:
            return _download(cache / "wordnet")
        except OSError as exc:
            why = f"could not be downloaded: {download_failure(exc)}"
    else:
        why = "was not downloaded"
    raise ModelUnavailable(
        f"WordNet (used to tell synonyms from near misses) is not in the cache ({cache / 'wordnet'}) and {why}",
        hint="While connected, `marlin-agent models pull` fetches every model at once; or install Debian's "
             "wordnet-base (apt install wordnet-base), or set MARLIN_WORDNET to a folder with WordNet 3.0's "
             "dict files.")


def _download(target: Path) -> Path:
    import urllib.request

    with urllib.request.urlopen(ARCHIVE_URL, timeout=_DOWNLOAD_TIMEOUT) as response:  # noqa: S310 (fixed https URL)
        payload = response.read()
    partial = target.with_name(target.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        for member in archive.namelist():
            name = Path(member).name
            if name in REQUIRED or name.endswith(".exc"):
                (partial / name).write_bytes(archive.read(member))
    if not all((partial / name).is_file() for name in REQUIRED):
        raise OSError("the archive lacks WordNet's database files")
    partial.replace(target) if not target.exists() else None
    return target


class WordNet:
    """Lookups over one WordNet folder and the everyday phrases it lacks; thread-safe, files mapped on first use."""

    def __init__(self, folder: Path, phrases: dict[tuple[str, str], Phrase] | None = None) -> None:
        self.folder = folder
        self.phrases = everyday_phrases() if phrases is None else phrases
        self._phrase_lemmas = frozenset(lemma for lemma, _ in self.phrases)
        self._maps: dict[str, mmap.mmap] = {}
        self._lock = threading.Lock()
        self._exceptions: dict[str, dict[str, tuple[str, ...]]] | None = None
        self.synset = lru_cache(maxsize=65536)(self._synset)
        self.lookup = lru_cache(maxsize=65536)(self._lookup)
        self.depth = lru_cache(maxsize=65536)(self._depth)
        self._forms = lru_cache(maxsize=65536)(self._base_forms)

    def _map(self, name: str) -> mmap.mmap:
        with self._lock:
            if name not in self._maps:
                with (self.folder / name).open("rb") as handle:
                    self._maps[name] = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            return self._maps[name]

    def _lookup(self, lemma: str, pos: str) -> tuple[str, ...]:
        """Synset ids of ``lemma`` (lowercase, ``_`` for spaces) as ``pos``, most frequent sense first; an everyday
        phrase's senses before or after WordNet's own, as its line in the table says."""
        own = self._listed(lemma, pos)
        phrase = self.phrases.get((lemma, pos))
        if phrase is None:
            return own
        # A sense this folder lacks (another WordNet than 3.0, whose senses the table numbers) is left out.
        meant = [found for sense in phrase.senses if (found := self._ranked(*sense))]
        return tuple(dict.fromkeys([*meant, *own] if phrase.first else [*own, *meant]))

    def _ranked(self, lemma: str, pos: str, rank: int) -> str | None:
        """The synset id of ``lemma``'s ``rank``-th commonest sense as ``pos`` (from 1), None where it has fewer."""
        ids = self._listed(lemma, pos)
        return ids[rank - 1] if len(ids) >= rank else None

    def missing_phrase_senses(self) -> list[str]:
        """The table's senses this folder does not have ("tumble.v.01"), with the phrase that means them."""
        return [f"{lemma}: {word}.{pos}.{rank:02d}" for (lemma, _), phrase in self.phrases.items()
                for word, pos, rank in phrase.senses if self._ranked(word, pos, rank) is None]

    def is_phrase(self, lemma: str) -> bool:
        """Whether ``lemma`` is one of the everyday phrases WordNet lacks or lists in another sense."""
        return lemma in self._phrase_lemmas

    def _listed(self, lemma: str, pos: str) -> tuple[str, ...]:
        """WordNet's own synset ids of ``lemma`` as ``pos`` (its index file's line)."""
        data = self._map(f"index.{_FILE_POS[pos]}")
        key = lemma.encode() + b" "
        lo, hi = 0, len(data)
        while lo < hi:  # binary search over lines: find the first line >= key
            mid = (lo + hi) // 2
            start = data.rfind(b"\n", 0, mid) + 1
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            line = data[start:end]
            if line.startswith(b"  ") or line < key:
                lo = end + 1
            else:
                hi = start
        end = data.find(b"\n", lo)
        line = data[lo: len(data) if end < 0 else end]
        if not line.startswith(key):
            return ()
        fields = line.decode().split()
        pointer_count = int(fields[3])
        sense_count = int(fields[2])
        offsets = fields[6 + pointer_count:6 + pointer_count + sense_count]
        return tuple(f"{pos}:{offset}" for offset in offsets)

    def _synset(self, synset_id: str) -> Synset:
        pos, offset = synset_id.split(":")
        data = self._map(f"data.{_FILE_POS[pos]}")
        start = int(offset)
        end = data.find(b"\n", start)
        line, _, gloss = data[start:end].decode().partition(" | ")
        fields = line.split()
        lexname, word_count = int(fields[1]), int(fields[3], 16)
        words = tuple(fields[4 + 2 * i].split("(")[0].lower() for i in range(word_count))
        at = 4 + 2 * word_count
        pointers = []
        for _ in range(int(fields[at])):
            symbol, target, target_pos, source_target = fields[at + 1: at + 5]
            target_pos = "a" if target_pos == "s" else target_pos
            pointers.append((symbol, f"{target_pos}:{target}", int(source_target[:2], 16),
                             int(source_target[2:], 16)))
            at += 4
        grouped: dict[str, list[str]] = defaultdict(list)
        for symbol, target, _, _ in pointers:
            grouped[symbol].append(target)
        # A verb's frames follow its pointers: a count, then "+ frame word" for each (word 00: all its words).
        frames = frozenset(int(fields[at + 3 + 3 * i]) for i in range(int(fields[at + 1]))) if pos == "v" \
            else frozenset()
        return Synset(id=synset_id, pos=pos, lexname=lexname, words=words, pointers=tuple(pointers),
                      gloss=gloss.split(";")[0].strip(),
                      by_symbol={symbol: tuple(targets) for symbol, targets in grouped.items()}, frames=frames)

    def _exception_forms(self, pos: str) -> dict[str, tuple[str, ...]]:
        with self._lock:
            if self._exceptions is None:
                self._exceptions = {}
                for kind, name in _FILE_POS.items():
                    table: dict[str, tuple[str, ...]] = {}
                    path = self.folder / f"{name}.exc"
                    if path.is_file():
                        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                            parts = line.split()
                            if len(parts) >= 2:
                                table[parts[0]] = tuple(parts[1:])
                    self._exceptions[kind] = table
            return self._exceptions[pos]

    def base_forms(self, word: str, pos: str) -> list[str]:
        """The dictionary forms of an inflected ``word`` as ``pos`` that WordNet knows (morphy)."""
        return list(self._forms(word, pos))

    def _base_forms(self, word: str, pos: str) -> tuple[str, ...]:
        return tuple(form for form in self.possible_forms(word, pos) if self.lookup(form, pos))

    def possible_forms(self, word: str, pos: str) -> list[str]:
        """Every dictionary form morphy's rules give ``word`` as ``pos``, listed or not: "legs" may be "leg" in
        "leg it" though WordNet has no verb "leg" alone."""
        word = word.lower().replace(" ", "_")
        forms = list(self._exception_forms(pos).get(word, ()))
        forms.append(word)
        for suffix, ending in _SUFFIXES[pos]:
            if word.endswith(suffix) and len(word) > len(suffix) + 1:
                forms.append(word[: len(word) - len(suffix)] + ending)
        return list(dict.fromkeys(forms))

    def senses(self, word: str, pos: str, limit: int | None = None) -> list[str]:
        """Synset ids for ``word`` as ``pos`` (any inflection), most frequent first."""
        found: list[str] = []
        for form in self.base_forms(word, pos):
            found += [s for s in self.lookup(form, pos) if s not in found]
        return found[:limit] if limit else found

    def hypernyms(self, synset_id: str, depth: int) -> dict[str, int]:
        """Every ancestor within ``depth`` steps (class and instance links), with its distance."""
        seen: dict[str, int] = {synset_id: 0}
        frontier = [synset_id]
        for step in range(1, depth + 1):
            frontier = [parent for s in frontier for parent in self.synset(s).related("@", "@i")
                        if parent not in seen]
            for parent in frontier:
                seen[parent] = step
        return seen

    def _depth(self, synset_id: str) -> int:
        """Steps from the synset to the top of its hierarchy by the shortest hypernym path."""
        return _depth(self, synset_id)


def _depth(wordnet: WordNet, synset_id: str) -> int:
    steps, frontier, seen = 0, [synset_id], {synset_id}
    while frontier and steps < 25:
        parents = [p for s in frontier for p in wordnet.synset(s).related("@", "@i") if p not in seen]
        if not parents:
            return steps
        seen.update(parents)
        frontier = parents
        steps += 1
    return steps


_opened: dict[str, WordNet] = {}
_opening = threading.Lock()


def open_wordnet(configured: str | None, cache: Path) -> WordNet:
    """The WordNet for these settings, resolved once and kept for the process (it is read-only)."""
    with _opening:
        folder = resolve_wordnet(configured, cache)
        key = str(folder.resolve())
        if key not in _opened:
            _opened[key] = WordNet(folder)
        return _opened[key]
