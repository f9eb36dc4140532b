"""A compiled matcher that finds every gazetteer entry in a text.

The gazetteers hold millions of keys (every street of France, every professional's name). Testing
them one by one against each note is out of the question; an Aho-Corasick automaton
(``pyahocorasick``, in C) finds all of them in one pass over the text, whatever their number.

* Matching is case- and accent-insensitive and tolerant of spacing: the text is folded with the same
  function as the keys (:func:`deid_ds.kb.normalize.fold`, length-preserving) and runs of whitespace are
  collapsed, with a map back to the original offsets.
* Token boundaries are checked: a key must not start or end inside a word (``Brest`` in ``Brestois``
  is not a match; ``d'Rennes`` is).
* :meth:`GazetteerMatcher.find` keeps the leftmost-longest non-overlapping matches;
  :meth:`GazetteerMatcher.find_all` returns every match, for labellers that resolve conflicts themselves.

Each key carries *what it is*: one or more :class:`Category` (table, kind, compound part, ambiguity).
The automaton stores a small integer per key (category-set id and key length), so that it saves and
loads as a flat binary file: the compiled matcher is cached next to the gazetteers (``matcher.bin`` and
``matcher.json``) and rebuilt only when the gazetteer tables change (their checksums, from the
manifest, are the cache key).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from deid_ds.errors import InputError
from deid_ds.io_utils import atomic_path, atomic_write_text
from deid_ds.kb.normalize import fold

MATCHER_FILE = "matcher.bin"
MATCHER_META = "matcher.json"
MATCHER_FORMAT = "deid-ds/matcher/1"
_LENGTH_BITS = 12  # keys longer than 4095 characters are not names or places
_MAX_KEY = (1 << _LENGTH_BITS) - 1
_WHITESPACE_RUN = re.compile(r"\s{2,}|[^\S ]")


@dataclass(frozen=True, slots=True)
class Category:
    """What a gazetteer key is: ``table`` (names, places, streets), its ``kind`` there, and flags."""

    table: str
    kind: str
    part: bool = False
    ambiguous: str | None = None


@dataclass(frozen=True, slots=True)
class Match:
    """A gazetteer key found in a text, with offsets into the original (unfolded) text."""

    start: int
    end: int
    key: str
    categories: tuple[Category, ...]

    @property
    def ambiguous(self) -> bool:
        """True when every reading of the key is ambiguous (a common word, a very short name)."""
        return all(c.ambiguous for c in self.categories)


def fold_for_matching(text: str) -> tuple[str, list[int] | None]:
    """The folded text, whitespace runs collapsed to one space, and the map back (``None``: identity)."""
    folded = fold(text)
    if not _WHITESPACE_RUN.search(folded):
        return folded, None
    pieces: list[str] = []
    index: list[int] = []
    position = 0
    for match in _WHITESPACE_RUN.finditer(folded):
        pieces.append(folded[position : match.start()])
        index.extend(range(position, match.start()))
        pieces.append(" ")
        index.append(match.start())
        position = match.end()
    pieces.append(folded[position:])
    index.extend(range(position, len(folded)))
    return "".join(pieces), index


class GazetteerMatcher:
    """Finds gazetteer keys in texts. Build with :meth:`build` or load with :func:`load_matcher`."""

    def __init__(self, automaton, category_sets: list[tuple[Category, ...]]) -> None:
        self._automaton = automaton
        self._category_sets = category_sets

    def __len__(self) -> int:
        return len(self._automaton)

    @classmethod
    def build(cls, entries) -> GazetteerMatcher:
        """Compile ``entries``, an iterable of ``(key, Category)``; keys must already be folded keys."""
        import ahocorasick

        by_key: dict[str, set[Category]] = {}
        for key, category in entries:
            if key and len(key) <= _MAX_KEY:
                by_key.setdefault(key, set()).add(category)
        set_ids: dict[tuple[Category, ...], int] = {}
        category_sets: list[tuple[Category, ...]] = []
        automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
        for key in sorted(by_key):
            categories = tuple(sorted(by_key[key], key=lambda c: (c.table, c.kind, c.part, c.ambiguous or "")))
            set_id = set_ids.get(categories)
            if set_id is None:
                set_id = set_ids[categories] = len(category_sets)
                category_sets.append(categories)
            automaton.add_word(key, (set_id << _LENGTH_BITS) | len(key))
        automaton.make_automaton()
        return cls(automaton, category_sets)

    def find_all(self, text: str) -> list[Match]:
        """Every key found in ``text`` at token boundaries (overlapping matches included)."""
        if not len(self._automaton):
            return []
        folded, index = fold_for_matching(text)
        n = len(folded)
        matches = []
        for end_inclusive, value in self._automaton.iter(folded):
            length = value & _MAX_KEY
            start = end_inclusive - length + 1
            end = end_inclusive + 1
            if start > 0 and folded[start - 1].isalnum():
                continue
            if end < n and folded[end].isalnum():
                continue
            original_start = index[start] if index is not None else start
            original_end = index[end_inclusive] + 1 if index is not None else end
            matches.append(Match(original_start, original_end, folded[start:end], self._category_sets[value >> _LENGTH_BITS]))
        matches.sort(key=lambda m: (m.start, -(m.end - m.start)))
        return matches

    def find(self, text: str) -> list[Match]:
        """Leftmost-longest, non-overlapping matches."""
        kept: list[Match] = []
        last_end = -1
        for match in self.find_all(text):
            if match.start >= last_end:
                kept.append(match)
                last_end = match.end
        return kept

    def save(self, path: Path) -> None:
        with atomic_path(path) as tmp:
            self._automaton.save(str(tmp))  # STORE_INTS: no serializer


# -- building from a knowledge base, with a cache ----------------------------------------------------------


def kb_entries(kb_dir: Path):
    """``(key, Category)`` of the name, place and street gazetteers of a built knowledge base."""
    from deid_ds.kb.build import read_table

    names = read_table(kb_dir, "names").to_pydict()
    for key, kind, part, ambiguous in zip(names["key"], names["kind"], names["part"], names["ambiguous"]):
        yield key, Category("names", kind, bool(part), ambiguous)
    places = read_table(kb_dir, "places").to_pydict()
    for key, kind, ambiguous in zip(places["key"], places["kind"], places["ambiguous"]):
        yield key, Category("places", kind, False, ambiguous)
    streets = read_table(kb_dir, "streets").to_pydict()
    for key, kind in zip(streets["key"], streets["kind"]):
        yield key, Category("streets", kind)


def _fingerprint(manifest: dict) -> str:
    tables = json.dumps(manifest["tables"], sort_keys=True)
    return hashlib.sha256(f"{MATCHER_FORMAT}\n{tables}".encode()).hexdigest()


def load_matcher(kb_dir: str | Path, *, rebuild: bool = False) -> GazetteerMatcher:
    """The compiled matcher of a built knowledge base: from its cache, or built (and cached) once."""
    import ahocorasick

    from deid_ds.kb.build import read_manifest

    kb_dir = Path(kb_dir)
    manifest = read_manifest(kb_dir)
    fingerprint = _fingerprint(manifest)
    meta_path, automaton_path = kb_dir / MATCHER_META, kb_dir / MATCHER_FILE
    if not rebuild and meta_path.is_file() and automaton_path.is_file():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            meta = {}
        if meta.get("fingerprint") == fingerprint:
            automaton = ahocorasick.load(str(automaton_path), lambda data: data)
            return GazetteerMatcher(automaton, [tuple(Category(*c) for c in s) for s in meta["category_sets"]])
    from deid_ds.kb.build import verify_tables

    verify_tables(kb_dir)
    matcher = GazetteerMatcher.build(kb_entries(kb_dir))
    matcher.save(automaton_path)
    meta = {
        "format": MATCHER_FORMAT,
        "fingerprint": fingerprint,
        "keys": len(matcher),
        "category_sets": [[[c.table, c.kind, c.part, c.ambiguous] for c in s] for s in matcher._category_sets],
    }
    atomic_write_text(meta_path, json.dumps(meta, ensure_ascii=False) + "\n")
    return matcher


__all__ = ["Category", "GazetteerMatcher", "InputError", "Match", "fold_for_matching", "load_matcher"]
