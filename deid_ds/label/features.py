"""Knowledge features of each token: what the weak labeller's own lookups say about it, for the tagger.

The tagger learns surface forms; the rules know that ``Kerbrat`` is a surname of the knowledge base,
that ``Plérin`` is a commune, that ``35000`` can be a postcode, that ``Marie`` is the patient's first
name. Giving the network those facts as per-token features (embedded and stacked with its other
embeddings: :mod:`deid_ds.ner.knowledge`) lets it weigh them in context instead of memorising names.

The features are computed by the labeller's own structures — the compiled gazetteer matcher and its
categories (:mod:`deid_ds.kb.matcher`), the street-type list of the street rules, the postcode test of
the ZIP rule, the French lexicon of the ambiguity marking, the number words of the date and phone rules
(:mod:`deid_ds.label._numbers`: a dictated ``zéro six`` or ``deux mille douze``), the patient-name matching of
:mod:`deid_ds.label.patient` — so that features and rules share one source of truth. They read what the
labeller already looked up for the note (:class:`~deid_ds.label.lookup.NoteLookup`: its gazetteer
matches, its folded words, the patient's names), so they cost set lookups per token and two regex
scans for the metadata's dates and phone, and are computed only for the tokens written out.

Pure: no torch, no Flair. :data:`FEATURES` is the fixed, ordered vocabulary a model stores.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import chain, compress, starmap

from deid_ds.io.metadata import read_birthdate, read_zip
from deid_ds.kb.ambiguity import is_common_word
from deid_ds.kb.normalize import fold
from deid_ds.label._numbers import NUMBER_WORDS, fold_word
from deid_ds.label.addresses import is_street_type
from deid_ds.label.lookup import NoteLookup
from deid_ds.label.view import DIGIT, INITIAL, LOWER, PUNCT, TITLE, UPPER, WordMemo, token_shape
from deid_ds.label.zips import valid_postcode
from deid_ds.model import PatientMetadata

#: Every feature a token may carry, in a fixed order (a model's input layer is indexed by it).
KB_FEATURES = (
    "kb:first",  # in the first-name list
    "kb:last",  # in the surname list
    "kb:pro",  # part of a health professional's full name (Annuaire Santé)
    "kb:name_part",  # a part of a compound name
    "kb:commune",  # inside a commune (or former commune, postal place) name, multi-token ones included
    "kb:site",  # inside a named site (hospital site, place)
    "kb:street",  # inside a street name of the BAN (voie, lieu-dit)
    "kb:ambiguous",  # in a gazetteer entry marked ambiguous (a common French word, a very short name)
)
LEXICON_FEATURES = (
    "street_type",  # rue, avenue, bd, av. (the street rules' list)
    "postcode",  # five digits with a French département prefix (the ZIP rule's test)
    "common_word",  # a French word of the lexicon (lower-cased), as the ambiguity marking reads it
    "number_word",  # a number written in words (deux, mille, quatre-vingt-dix, zéro), as the date and phone rules
)
METADATA_FEATURES = (
    "meta:first",  # one of the patient's given names (typo-tolerant, as the patient rule)
    "meta:last",  # one of the patient's last names
    "meta:birth",  # the birth year, or inside a date equal to the birthdate
    "meta:address",  # a word of the patient's address, city or postcode
    "meta:phone",  # inside a number equal to the patient's phone
)
SHAPE_FEATURES = (
    "shape:upper",
    "shape:title",
    "shape:initial",
    "shape:lower",
    "shape:digits",
    "shape:punct",
    "shape:mixed",  # letters and digits (12bis, A4)
    "len:1",
    "len:2-3",
    "len:4-6",
    "len:7+",
)
FEATURES = KB_FEATURES + LEXICON_FEATURES + METADATA_FEATURES + SHAPE_FEATURES

#: The Flair column of a token without any feature.
NO_FEATURE = "-"

_KB_FEATURE = {
    ("names", "firstname"): "kb:first",
    ("names", "lastname"): "kb:last",
    ("names", "fullname"): "kb:pro",
    ("places", "commune"): "kb:commune",
    ("places", "ancienne_commune"): "kb:commune",
    ("places", "acheminement"): "kb:commune",
    ("places", "site"): "kb:site",
    ("streets", "voie"): "kb:street",
    ("streets", "lieu-dit"): "kb:street",
    ("streets", "site"): "kb:street",
}
_SHAPE_FEATURE = {
    UPPER: "shape:upper",
    TITLE: "shape:title",
    INITIAL: "shape:initial",
    LOWER: "shape:lower",
    DIGIT: "shape:digits",
    PUNCT: "shape:punct",
}
_DIGITS = re.compile(r"\d")
_WORDS = re.compile(r"[^\W_]{2,}")
_DATE = re.compile(r"(?<!\d)(\d{1,2})[/.\- ](\d{1,2})[/.\- ](\d{4}|\d{2})(?!\d)")
#: What :data:`_DATE` matches are made of: digits and these separators (:func:`_dates_ending_with`).
_DATE_SEPARATORS = "/.- "
_DATE_STRETCH = re.compile(r"[\d/.\- ]*")
_PHONE = re.compile(r"(?<![\d])\+?\d[\d \u00a0.\-]{7,18}\d(?!\d)")
#: A token that is a number written in words: one number word or a hyphenated compound of them (the tokenizer
#: keeps ``quatre-vingt-dix`` and ``soixante-et-onze`` whole), the date and phone rules' own vocabulary.
_NUMBER_TOKEN = re.compile(NUMBER_WORDS, re.IGNORECASE)
#: Number words that are not ``number_word``: ``une`` writes no date nor phone number (``vingt et une`` is no day),
#: and is an article in every sentence.
_NOT_NUMBER_WORDS = frozenset({"une"})


def _length(word: str) -> str:
    n = len(word)
    return "len:1" if n == 1 else "len:2-3" if n <= 3 else "len:4-6" if n <= 6 else "len:7+"


def _word_features(word: str) -> frozenset[str]:
    """The features a token has whatever its context: shape, length, street type, postcode, common word, number
    written in words."""
    shape = token_shape(word)
    feats = {"shape:mixed" if shape == DIGIT and not word.isdigit() else _SHAPE_FEATURE[shape], _length(word)}
    if is_street_type(fold(word)):
        feats.add("street_type")
    if shape == DIGIT and valid_postcode(word):
        feats.add("postcode")
    if shape in (LOWER, TITLE, UPPER) and is_common_word(word.lower(), accents_known=shape != UPPER):
        feats.add("common_word")
    if is_number_word(word):
        feats.add("number_word")
    return frozenset(feats)


def is_number_word(word: str) -> bool:
    """Whether a token is a French number written in words (``Zéro``, ``mille``, ``dix-huit``, ``vingt-et-un``) as
    the date and phone rules read them (:data:`deid_ds.label._numbers.NUMBER_WORDS`), ``une`` excepted.

    ``un`` and ``neuf`` are kept although also an article and an adjective: they write dates and phone numbers
    (``trente et un``, ``zéro un``, ``deux mille neuf``); the tagger weighs the feature with the context."""
    return _NUMBER_TOKEN.fullmatch(word) is not None and fold_word(word) not in _NOT_NUMBER_WORDS


def _token_range(starts: Sequence[int], ends: Sequence[int], start: int, end: int) -> range:
    """The tokens lying inside the text span ``[start, end)``."""
    return range(bisect_left(starts, start), bisect_right(ends, end))


#: Each feature's bit: a token's features are or-ed into one int as they are found (no set per token), turned
#: into its column once per distinct combination (:data:`_COLUMN_OF`).
_BIT = {name: 1 << i for i, name in enumerate(FEATURES)}


def _bits(names: Iterable[str]) -> int:
    """The bits of a set of feature names."""
    bits = 0
    for name in names:
        bits |= _BIT[name]
    return bits


class _Columns(dict):
    """The column (:func:`feature_column`) of each combination of feature bits, made on first use: a corpus'
    tokens show a few hundred combinations."""

    def __missing__(self, bits: int) -> str:
        value = self[bits] = feature_column(tuple(sorted(name for name, bit in _BIT.items() if bits & bit)))
        return value


_COLUMN_OF = _Columns()
#: The features of a word whatever its context (:func:`_word_features`) as bits, and as a column (most
#: tokens have no other feature); both memoised, words repeat from note to note.
_WORD_BITS = WordMemo(lambda word: _bits(_word_features(word)), 1 << 16)
_WORD_COLUMN = WordMemo(lambda word: _COLUMN_OF[_WORD_BITS[word]], 1 << 16)


def feature_columns(lookup: NoteLookup, ranges: Iterable[tuple[int, int]] | None = None) -> list[str]:
    """The knowledge-feature column (:func:`feature_column`) of each token of ``ranges``, in order.

    ``ranges`` are ``[first, end)`` token ranges of the note, sorted and disjoint (the sentences written to
    the training files); every token of the note when None. The note's ``lookup`` is the labeller's
    (:meth:`WeakLabeller.labelling`): its gazetteer matches (``kb:*``; none without a knowledge base), its
    folded words and the patient's metadata and names (``meta:*``; none without metadata).

    A token's features are its word's (shape, lexicon: :func:`_word_features`), the patient's facts that its
    word is (a name, a word of the address: :func:`_patient_word_features`) and what lies at its place (a
    gazetteer match, the birthdate, the phone: :func:`_gazetteer_features`, :func:`_metadata_places`). Most
    tokens have only the first, whose column is memoised per word; the others' features are found as bits
    (:data:`_BIT`), token by token.
    """
    words = lookup.view.words
    n = len(words)
    if ranges is None:
        tokens: Sequence[int] = range(n)
        position: Sequence[int] = tokens
    else:
        ranges = list(ranges)
        tokens = list(chain.from_iterable(starmap(range, ranges)))
        position = [-1] * n  # each token's place among ``tokens`` (-1: not written)
        written = 0
        for first, end in ranges:
            position[first:end] = range(written, written + end - first)
            written += end - first
    kept_words = list(map(words.__getitem__, tokens))
    columns = list(map(_WORD_COLUMN.__getitem__, kept_words))
    found = _gazetteer_features(lookup, position)
    if lookup.patient is not None:
        facts = _patient_facts(lookup.patient)
        _metadata_places(lookup, facts, found)
        _patient_word_features(lookup, facts, tokens, kept_words, found)
    for k, bits in found.items():
        p = position[k]
        if p >= 0:
            columns[p] = _COLUMN_OF[_WORD_BITS[words[k]] | bits]
    return columns


def _gazetteer_features(lookup: NoteLookup, position: Sequence[int]) -> dict[int, int]:
    """The ``kb:*`` feature bits of the written tokens (``position[k] >= 0``): the gazetteer's matches over them."""
    starts, ends = lookup.view.starts, lookup.view.ends
    found: dict[int, int] = {}
    for match in lookup.matches:
        bits = _match_bits(match.categories)
        if bits:
            for k in _token_range(starts, ends, match.start, match.end):
                if position[k] >= 0:
                    found[k] = found.get(k, 0) | bits
    return found


def _match_bits(categories: tuple) -> int:
    """The ``kb:*`` features of a gazetteer match's categories as bits, memoised per category set.

    A note has dozens of matches and the matcher a few hundred category sets, shared by every match
    (:meth:`GazetteerMatcher.find_all`): a set's features are computed once. Keyed by identity (a
    category's hash is computed in Python), the entry holding the set so that its id is not reused.
    """
    entry = _MATCH_BITS.get(id(categories))
    if entry is None or entry[0] is not categories:
        names = {_KB_FEATURE.get((c.table, c.kind)) for c in categories}
        if any(c.part for c in categories):
            names.add("kb:name_part")
        if all(c.ambiguous for c in categories):  # Match.ambiguous
            names.add("kb:ambiguous")
        names.discard(None)
        if len(_MATCH_BITS) >= 1 << 16:
            _MATCH_BITS.clear()
        entry = _MATCH_BITS[id(categories)] = (categories, _bits(names))
    return entry[1]


_MATCH_BITS: dict[int, tuple[tuple, int]] = {}
_ADDRESS, _BIRTH, _PHONE_BIT = _BIT["meta:address"], _BIT["meta:birth"], _BIT["meta:phone"]


def _patient_word_features(
    lookup: NoteLookup, facts: tuple, tokens: Sequence[int], kept_words: list[str], found: dict[int, int]
) -> None:
    """The ``meta:*`` features the written ``tokens`` (their words: ``kept_words``) have by being one of the
    patient's names (typo-tolerant, as the patient rule: :class:`PatientNames`), a word of the address or
    city, the postcode or the birth year.

    Each test is first asked of the distinct words (set operations), and the tokens are only walked for
    the facts some word holds: most notes' words are none of the patient's.
    """
    names, folded = lookup.names, lookup.view.folded
    kept_folded = list(map(folded.__getitem__, tokens))
    distinct = set(kept_folded)
    place_words, zip_code, birth, _ = facts
    year = birth[:4]
    marks: list[tuple[Iterable[int], int]] = [(_among(kept_folded, distinct & place_words), _ADDRESS)]
    if zip_code:
        marks.append((_among(kept_words, {zip_code}), _ADDRESS))
    if year.isdigit():
        marks.append((_among(kept_words, {year}), _BIRTH))
    if names is not None:
        bare = set(map(_strip_name, distinct))
        named = names.names_among(bare)  # the patient's names among the words, typos included
        # a word that ``_strip_name`` changes is in no stripped form (they neither start nor end so)
        wanted = (distinct & named) | {word for word in distinct - bare if _strip_name(word) in named}
        for p in _among(kept_folded, wanted):
            if kept_words[p][:1].isalpha():
                k = tokens[p]
                found[k] = found.get(k, 0) | _BIT["meta:" + names.kind(_strip_name(kept_folded[p]))]
    for places, bit in marks:
        for p in places:
            k = tokens[p]
            found[k] = found.get(k, 0) | bit


def _strip_name(word: str) -> str:
    """A folded word as the patient-name test reads it: without the periods, hyphens and apostrophes around it."""
    return word.strip(".-'’")


def _among(values: list[str], wanted: set[str]) -> Iterable[int]:
    """The positions of ``values`` that are in ``wanted`` (none looked for when it is empty)."""
    return compress(range(len(values)), map(wanted.__contains__, values)) if wanted else ()


def _metadata_places(lookup: NoteLookup, facts: tuple, found: dict[int, int]) -> None:
    """``meta:birth`` on the tokens of a date equal to the birthdate, ``meta:phone`` on those of the patient's
    phone number (every token of the note: :func:`feature_columns` keeps the written ones)."""
    text, starts, ends = lookup.text, lookup.view.starts, lookup.view.ends
    _, _, birth, phone = facts
    year, month, day = birth[:4], birth[5:7], birth[8:10]
    places: list[tuple[int, int, int]] = []
    if year.isdigit() and month.isdigit() and day.isdigit():
        for m in _dates_ending_with(text, year[2:]):
            d, mo, y = m.groups()
            if (y == year or y == year[2:]) and int(d) == int(day) and int(mo) == int(month):
                places.append((m.start(), m.end(), _BIRTH))
    # only where the text can hold the number (most notes do not)
    if len(phone) == 9 and phone in _without_phone_separators(text):
        for m in _PHONE.finditer(text):
            if "".join(_DIGITS.findall(m.group())).endswith(phone):
                places.append((m.start(), m.end(), _PHONE_BIT))
    for start, end, bit in places:
        for k in _token_range(starts, ends, start, end):
            found[k] = found.get(k, 0) | bit


def _dates_ending_with(text: str, digits: str) -> Iterator[re.Match[str]]:
    """The matches of :data:`_DATE` in ``text`` (``finditer``'s) in the stretches that hold ``digits``: any match
    whose year ends with them, without a search of the whole note.

    A match is made of digits and date separators only, so ``finditer`` finds the same ones in each maximal
    stretch of such characters as in the whole text (the characters around a stretch are neither, as the
    look-behind and look-ahead read them); the stretches holding ``digits`` are the only ones searched.
    """
    searched = 0
    at = text.find(digits)
    while at >= 0:
        start = at
        while start > searched and (text[start - 1] in _DATE_SEPARATORS or text[start - 1].isdecimal()):
            start -= 1
        end = _DATE_STRETCH.match(text, at).end()
        yield from _DATE.finditer(text, start, end)
        searched = end
        at = text.find(digits, end)


def _without_phone_separators(text: str) -> str:
    """``text`` without the characters :data:`_PHONE` allows between digits: a number it finds is a run of digits
    there."""
    return text.replace(" ", "").replace("\u00a0", "").replace(".", "").replace("-", "")


@lru_cache(maxsize=256)
def _patient_facts(patient: PatientMetadata) -> tuple[frozenset[str], str, str, str]:
    """What the ``meta:*`` features compare the words with: the folded words of the patient's address and city
    (no common word, three letters or more), the postcode, the birthdate (ISO) and the phone's last nine digits.
    The same for every note of a patient: kept for the next ones."""
    place_words = {fold(w) for w in _WORDS.findall(" ".join(filter(None, (patient.address, patient.city))))}
    zip_code = read_zip(patient.zip) or ""
    birthdate = read_birthdate(patient.birthdate)  # the one reader of deid_ds.io.metadata: any exported form
    phone = "".join(_DIGITS.findall(patient.phone or ""))[-9:]
    return (
        frozenset(w for w in place_words if len(w) > 2 and not is_common_word(w)),
        zip_code,
        birthdate.isoformat() if birthdate else "",
        phone,
    )


def feature_column(features: tuple[str, ...]) -> str:
    """A token's features as one Flair column: names joined with ``|``, ``-`` for none."""
    return "|".join(features) if features else NO_FEATURE


def parse_feature_column(value: str) -> tuple[str, ...]:
    """The feature names of a Flair column (:func:`feature_column`'s inverse)."""
    return () if value in ("", NO_FEATURE) else tuple(value.split("|"))


def note_feature_columns(
    text: str, starts: Sequence[int], ends: Sequence[int], matcher=None, patient: PatientMetadata | None = None
) -> list[str]:
    """:func:`feature_columns` of every token of a note not labelled beforehand (its own lookup:
    :meth:`NoteLookup.of_offsets`). ``matcher`` is the labeller's (``WeakLabeller.matcher``; None without a
    knowledge base); ``patient`` the note's metadata (None, as with ``--no-metadata``)."""
    return feature_columns(NoteLookup.of_offsets(text, list(starts), list(ends), matcher, patient))


def token_features(
    text: str, starts: Sequence[int], ends: Sequence[int], matcher=None, patient: PatientMetadata | None = None
) -> list[tuple[str, ...]]:
    """The sorted feature names of each token of a note (tokens given as text offsets)."""
    return [parse_feature_column(column) for column in note_feature_columns(text, starts, ends, matcher, patient)]
