"""A compiled matcher that finds every gazetteer entry in a text.

The gazetteers hold millions of keys (every street of France, every professional's name). Testing
them one by one against each note is out of the question, and a character-level automaton over
millions of keys takes gigabytes. The matcher is a *flattened token trie*: every key is a sequence of
tokens (runs of letters and digits of its folded form), each token has an integer id, and each key is
stored as a 64-bit polynomial hash of its id sequence in one sorted numpy array. Matching a text
tokenises it the same way and looks up the hashes of all its token n-grams (up to the longest key) at
once with a binary search: one pass, vectorised, whatever the number of keys, and a national index
that loads in about a second.

* Matching is case- and accent-insensitive (the text is folded with the same length-preserving function
  as the keys, :func:`deid_ds.kb.normalize.fold`), and tolerant of spacing: the tokens of a key may be
  separated in the text by any run of spaces, hyphens or apostrophes (``Saint Brieuc``,
  ``Saint-Brieuc``, ``LE  GALL``, ``D'ALMEIDA``), but not by other punctuation.
* Matches are whole tokens: ``Brest`` is not found in ``Brestois``, ``Rennes`` is found in ``d'Rennes``.
* :meth:`GazetteerMatcher.find` keeps the leftmost-longest non-overlapping matches;
  :meth:`GazetteerMatcher.find_all` returns every match, for labellers that resolve conflicts themselves.

Each key carries *what it is*: one or more :class:`Category` (table, kind, compound part, ambiguity).
The compiled index is cached next to the gazetteers (``matcher.npz`` and ``matcher.json``) and rebuilt
only when the gazetteer tables change (their checksums, from the manifest, are the cache key).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import zipfile
from dataclasses import dataclass
from itertools import accumulate, compress
from pathlib import Path

import numpy as np

from deid_ds.errors import InputError
from deid_ds.io.files import atomic_path, atomic_write_text
from deid_ds.kb.manifest import file_entry, matches_entry, read_manifest, read_table, verify_tables
from deid_ds.kb.normalize import fold

MATCHER_FILE = "matcher.npz"
MATCHER_META = "matcher.json"
MATCHER_FORMAT = "deid-ds/matcher/2"
MAX_TOKENS = 16  # a longer key is not a name, a place or a street
_TOKEN = re.compile(r"[^\W_]+")
_TOKEN_SPLIT = re.compile(r"([^\W_]+)")  # split() keeps the tokens: gap, token, gap, ..., gap
_JOINER = re.compile(r"[\s'-]+")  # what may separate the tokens of a key in a text
_PRIME = np.uint64(0x100000001B3)  # FNV-1a's 64-bit prime: an odd multiplier for the polynomial hash
_PRIME_INT = int(_PRIME)
_MASK = (1 << 64) - 1
_FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # the archive's member dates: the same matcher, the same bytes
#: What reading a damaged ``matcher.npz`` can raise (a truncated or altered archive, a bad array header).
_DAMAGED = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


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


def key_tokens(key: str) -> list[str]:
    """The tokens of a folded key (``"l'abergement-de-varey"`` → ``["l", "abergement", "de", "varey"]``)."""
    return _TOKEN.findall(key)


class GazetteerMatcher:
    """Finds gazetteer keys in texts. Build with :meth:`build` or load with :func:`load_matcher`."""

    def __init__(
        self,
        vocabulary: dict[str, int],
        hashes: np.ndarray,
        lengths: np.ndarray,
        set_ids: np.ndarray,
        category_sets: list[tuple[Category, ...]],
    ) -> None:
        self._vocabulary = vocabulary
        self._hashes = hashes
        self._lengths = lengths
        self._set_ids = set_ids
        self._category_sets = category_sets
        self._max_tokens = int(lengths.max()) if len(lengths) else 0
        self._single = self._single_token_keys()

    def _single_token_keys(self) -> list[tuple[Category, ...] | None]:
        """The categories of the one-token key of each token id (None where the token alone is no key).

        A one-token key's hash is its token id (``0 * prime + id``), so these are all found with one
        binary search here, once per process, and a note's tokens are then looked up in a Python list
        instead of the index: three in four of a note's matches are single tokens.
        """
        size = len(self._vocabulary) + 1
        if not len(self._hashes):
            return [None] * size
        token_ids = np.arange(size, dtype=np.uint64)
        positions = np.minimum(self._hashes.searchsorted(token_ids), len(self._hashes) - 1)
        single = (self._hashes[positions] == token_ids) & (self._lengths[positions] == 1)
        set_of = np.full(size, len(self._category_sets), dtype=np.int64)  # the last entry of `sets` below: None
        set_of[single] = self._set_ids[positions[single]]
        sets = [*self._category_sets, None]
        return list(map(sets.__getitem__, set_of.tolist()))

    def __len__(self) -> int:
        return len(self._hashes)

    @classmethod
    def build(cls, entries) -> GazetteerMatcher:
        """Compile ``entries``, an iterable of ``(key, Category)``; keys are folded keys.

        Built for millions of keys in bounded memory: categories are bits of an integer mask, and keys
        are reduced to their hash as soon as they are read (``saint-brieuc`` and ``saint brieuc`` are
        one key: the same tokens).
        """
        codes: dict[Category, int] = {}
        masks: dict[str, int] = {}
        for key, category in entries:
            if key:
                code = codes.get(category)
                if code is None:
                    code = codes[category] = len(codes)
                masks[key] = masks.get(key, 0) | (1 << code)
        vocabulary: dict[str, int] = {}
        by_hash: dict[int, tuple[int, int]] = {}
        for key, mask in masks.items():
            tokens = _TOKEN.findall(key)
            if not tokens or len(tokens) > MAX_TOKENS:
                continue
            value = 0
            for token in tokens:
                token_id = vocabulary.get(token)
                if token_id is None:
                    token_id = vocabulary[token] = len(vocabulary) + 1
                value = (value * _PRIME_INT + token_id) & _MASK
            previous = by_hash.get(value)
            by_hash[value] = (mask | (previous[0] if previous else 0), len(tokens))
        del masks
        by_code = sorted(codes, key=codes.__getitem__)
        set_index: dict[int, int] = {}
        category_sets: list[tuple[Category, ...]] = []
        hashes = np.fromiter(sorted(by_hash), dtype=np.uint64, count=len(by_hash))
        lengths = np.empty(len(hashes), dtype=np.uint8)
        set_ids = np.empty(len(hashes), dtype=np.uint32)
        for i, value in enumerate(hashes.tolist()):
            mask, length = by_hash[value]
            set_id = set_index.get(mask)
            if set_id is None:
                members = [by_code[bit] for bit in range(mask.bit_length()) if mask >> bit & 1]
                set_id = set_index[mask] = len(category_sets)
                category_sets.append(tuple(sorted(members, key=lambda c: (c.table, c.kind, c.part, c.ambiguous or ""))))
            lengths[i] = length
            set_ids[i] = set_id
        return cls(vocabulary, hashes, lengths, set_ids, category_sets)

    def find_all(self, text: str, folded: str | None = None) -> list[Match]:
        """Every key found in ``text`` (overlapping matches included), sorted by start, longest first.

        ``folded`` is ``fold(text)`` when the caller already has it (the labeller folds each note once).

        Most tokens of a note are in no key (three in four on the benchmark's), so the text is cut
        once by a regex into tokens and the gaps between them, the tokens are looked up with one
        C-level ``map``, and Python only walks the known ones: single-token keys come from a list (see
        :meth:`_single_token_keys`), and the n-grams of chains of known tokens joined by spaces,
        hyphens or apostrophes are hashed and looked up in the index with one binary search per note.
        """
        if not len(self._hashes):
            return []
        if folded is None:
            folded = fold(text)
        parts = _TOKEN_SPLIT.split(folded)  # gap, token, gap, token, ..., gap: token i is parts[2 * i + 1]
        ids = list(map(self._vocabulary.get, parts[1::2]))
        single, fullmatch = self._single, _JOINER.fullmatch
        found: list[tuple[int, int, tuple[Category, ...]]] = []  # (first token, -token count, categories)
        linked: list[int] = []  # tokens i, known, that continue known token i - 1 (only a joiner between)
        previous = -2
        for i in compress(range(len(ids)), ids):
            categories = single[ids[i]]
            if categories is not None:
                found.append((i, -1, categories))
            if i == previous + 1 and ((gap := parts[2 * i]) == " " or fullmatch(gap) is not None):
                linked.append(i)
            previous = i
        if linked and self._max_tokens > 1:
            found += self._longer_keys(ids, linked)
        if not found:
            return []
        found.sort()
        offsets = list(accumulate(map(len, parts)))  # offsets[2 * i]: start of token i, [2 * i + 1]: its end
        matches = []
        for first, count, categories in found:
            begin, end = offsets[2 * first], offsets[2 * (first - count) - 1]
            matches.append(Match(begin, end, folded[begin:end], categories))
        return matches

    def _longer_keys(self, ids: list[int], linked: list[int]) -> list[tuple[int, int, tuple[Category, ...]]]:
        """``(first token, -token count, categories)`` of the keys of two tokens or more in the chains.

        ``linked`` lists the tokens that continue the one before them; every n-gram of a chain is
        hashed as :meth:`build` hashes keys (``h = h * prime + id`` modulo 2**64), and all are looked
        up at once.
        """
        wanted: list[int] = []
        where: list[tuple[int, int]] = []
        max_tokens = self._max_tokens
        chains: list[list[int]] = []
        for i in linked:
            if chains and chains[-1][-1] == i - 1:
                chains[-1].append(i)
            else:
                chains.append([i - 1, i])
        for chain in chains:
            chain_ids = [ids[i] for i in chain]
            for a in range(len(chain) - 1):
                value = chain_ids[a]
                for b in range(a + 1, min(len(chain), a + max_tokens)):
                    value = (value * _PRIME_INT + chain_ids[b]) & _MASK
                    wanted.append(value)
                    where.append((chain[a], b - a + 1))
        hashes, lengths, set_ids, category_sets = self._hashes, self._lengths, self._set_ids, self._category_sets
        positions = np.minimum(hashes.searchsorted(np.array(wanted, dtype=np.uint64)), len(hashes) - 1)
        found = []
        for value, (first, count), position, key in zip(wanted, where, positions.tolist(), hashes[positions].tolist()):
            if key == value and lengths[position] == count:  # Python ints: exact over all 64 bits
                found.append((first, -count, category_sets[set_ids[position]]))
        return found

    def find(self, text: str) -> list[Match]:
        """Leftmost-longest, non-overlapping matches."""
        kept: list[Match] = []
        last_end = -1
        for match in self.find_all(text):
            if match.start >= last_end:
                kept.append(match)
                last_end = match.end
        return kept

    def save(self, path: Path) -> list:
        """Write the index (numpy ``.npz``); returns the category sets, for the JSON side file.

        The same matcher gives the same bytes (the archive's dates are fixed): a matcher compiled again
        from the same tables still matches the sha256 the manifest recorded.
        """
        vocabulary = np.array(sorted(self._vocabulary, key=self._vocabulary.__getitem__), dtype=object)
        arrays = {
            "hashes": self._hashes,
            "lengths": self._lengths,
            "set_ids": self._set_ids,
            "vocabulary": np.asarray("\n".join(vocabulary)),
        }
        with atomic_path(path) as tmp:
            with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
                for name, array in arrays.items():
                    with archive.open(zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_DATE), "w") as member:
                        np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
        return [[[c.table, c.kind, c.part, c.ambiguous] for c in s] for s in self._category_sets]

    @classmethod
    def load(cls, path: Path, category_sets: list) -> GazetteerMatcher:
        with np.load(path, allow_pickle=False) as data:
            words = str(data["vocabulary"]).split("\n") if data["vocabulary"].size and str(data["vocabulary"]) else []
            vocabulary = {word: i for i, word in enumerate(words, 1)}
            return cls(
                vocabulary,
                data["hashes"],
                data["lengths"],
                data["set_ids"],
                [tuple(Category(*c) for c in s) for s in category_sets],
            )


# -- building from a knowledge base, with a cache ----------------------------------------------------------


def kb_entries(kb_dir: Path):
    """``(key, Category)`` of the name, place and street gazetteers of a built knowledge base."""
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


def _current_cache_meta(kb_dir: Path, manifest: dict) -> dict | None:
    """The matcher cache's metadata when the cache is there, was compiled from the tables of ``manifest``
    (see :func:`_fingerprint`) and is the file recorded (its size and sha256: in the manifest when
    ``build-kb`` compiled it, else in ``matcher.json``), else None: the cache is compiled again."""
    meta_path, index_path = kb_dir / MATCHER_META, kb_dir / MATCHER_FILE
    if not (meta_path.is_file() and index_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("format") != MATCHER_FORMAT:
        return None
    if meta.get("fingerprint") != _fingerprint(manifest):
        return None
    recorded = manifest.get("matcher") or meta.get("file")
    if not isinstance(recorded, dict) or not matches_entry(index_path, recorded):
        return None
    return meta


def compile_matcher(kb_dir: str | Path, manifest: dict) -> dict:
    """Compile the matcher of the tables in ``kb_dir`` (those ``manifest`` describes) and cache it there.

    Returns what the manifest records of ``matcher.npz`` (:func:`deid_ds.kb.manifest.file_entry`).
    ``build-kb`` calls it on the tables it has just written, before its manifest exists.
    """
    kb_dir = Path(kb_dir)
    matcher = GazetteerMatcher.build(kb_entries(kb_dir))
    return _save_cache(kb_dir, matcher, manifest)


def _save_cache(kb_dir: Path, matcher: GazetteerMatcher, manifest: dict) -> dict:
    index_path = kb_dir / MATCHER_FILE
    category_sets = matcher.save(index_path)
    entry = file_entry(index_path)
    meta = {
        "format": MATCHER_FORMAT,
        "fingerprint": _fingerprint(manifest),
        "keys": len(matcher),
        "file": entry,
        "category_sets": category_sets,
    }
    atomic_write_text(kb_dir / MATCHER_META, json.dumps(meta, ensure_ascii=False) + "\n")
    return entry


def ensure_matcher_cache(kb_dir: str | Path) -> None:
    """Compile and cache the matcher unless a current cache exists, without keeping it in memory.

    A parent process that only hands notes to workers calls this before starting them, so that they
    load the cache instead of all compiling it at once — and the parent does not hold a national-size
    matcher (~200 MB, most of a second to load) it never uses.
    """
    kb_dir = Path(kb_dir)
    manifest = read_manifest(kb_dir)
    if _current_cache_meta(kb_dir, manifest) is None:
        _say_if_altered(kb_dir, manifest)
        load_matcher(kb_dir, rebuild=True)


def _say_if_altered(kb_dir: Path, manifest: dict) -> None:
    """One line on stderr when the matcher ``build-kb`` recorded is there but is not the file recorded."""
    index_path = kb_dir / MATCHER_FILE
    if manifest.get("matcher") and index_path.exists():
        print(
            f"deid-ds: {index_path} does not match {kb_dir / 'manifest.json'} (altered or damaged): "
            "compiled again from the gazetteers",
            file=sys.stderr,
        )


def load_matcher(kb_dir: str | Path, *, rebuild: bool = False) -> GazetteerMatcher:
    """The compiled matcher of a built knowledge base: from its cache, or built (and cached) once.

    The cache is used only when it is the file recorded (size and sha256, see :func:`_current_cache_meta`):
    a matcher altered or damaged after the build would find other keys than the tables hold, or none.
    Such a cache is compiled again from the tables (checked against the manifest: a table that does not
    match is refused with one line), with a line on stderr; when the knowledge base cannot be written
    (read-only), the matcher compiled is used without being cached.
    """
    kb_dir = Path(kb_dir)
    manifest = read_manifest(kb_dir)
    index_path = kb_dir / MATCHER_FILE
    meta = None if rebuild else _current_cache_meta(kb_dir, manifest)
    if meta is not None:
        try:
            return GazetteerMatcher.load(index_path, meta["category_sets"])
        except _DAMAGED:
            meta = None
    if not rebuild:
        _say_if_altered(kb_dir, manifest)
    verify_tables(kb_dir)
    matcher = GazetteerMatcher.build(kb_entries(kb_dir))
    try:
        _save_cache(kb_dir, matcher, manifest)
    except OSError:  # a read-only knowledge base: use the matcher without caching it
        pass
    return matcher


__all__ = [
    "Category",
    "GazetteerMatcher",
    "InputError",
    "Match",
    "compile_matcher",
    "ensure_matcher_cache",
    "key_tokens",
    "load_matcher",
]
