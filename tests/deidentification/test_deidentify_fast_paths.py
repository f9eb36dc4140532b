"""The shortcuts that make ``deidentify`` fast give what the plain definitions give (docs/benchmarks.md,
*deidentify*): each is checked here against the straightforward computation it replaces."""

from __future__ import annotations

import dataclasses
import random
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from deid_ds.deidentification.identifiers import FLEXIBLE_FROM, value_pattern
from deid_ds.deidentification.leaks import (
    _SAINT_BEFORE,
    _SAINTS,
    _WORD,
    FUZZY_MIN,
    LEAK_FIELDS,
    _count_in_reading,
    needles_for,
)
from deid_ds.deidentification.other_views import _phrase
from deid_ds.deidentification.overlap import SUBSTRING_FROM, NoteOriginals, normalise
from deid_ds.deidentification.regions import decode, decode_text
from deid_ds.kb.ambiguity import is_common_word
from deid_ds.kb.normalize import fold_mapped, fold_text
from deid_ds.model import PatientMetadata

PATIENT = PatientMetadata(
    firstname="Marie-Hélène", lastname="Kerdraon", birthdate="1961-04-12", city="Quimper", zip="29000"
)


@pytest.mark.parametrize(
    "html",
    [
        '<p title="Jean Kerdraon">x</p>',
        '<p title="Du&shy;pont &amp; Kerdr&#97;on &eacute;">x</p>',
        '<a href="?n=Kerdr%61on&copy2">x</a>',  # a legacy reference without ";" before letters
        '<p title="Du\u200bpont &unknown; &#x4B;">x</p>',
    ],
)
def test_a_region_read_without_its_offsets_reads_as_decoded(html):
    start, end = html.index('"') + 1, html.rindex('"')
    assert decode_text(html, start, end) == decode(html, start, end).text


def _given_back_plainly(originals: NoteOriginals, surrogate: str) -> bool:
    """The test as written before the tokens were indexed by prefix."""
    if " ".join(normalise(surrogate).split()) in originals.wholes:
        return True
    words = _WORD.findall(normalise(surrogate))
    letters, word_set = "".join(words), set(words)
    return any(t in word_set or (len(t) >= SUBSTRING_FROM and t in letters) for t in originals.tokens)


def test_a_surrogate_gives_back_an_entity_exactly_when_the_plain_test_says_so():
    rng = random.Random(5)
    syllables = ["ker", "dra", "on", "le", "gall", "jean", "pierre", "quim", "per", "brest", "ma", "rie", "é"]
    entities = [("PATIENT", " ".join("".join(rng.choices(syllables, k=3)) for _ in range(2))) for _ in range(40)]
    originals = NoteOriginals.of([*entities, ("VILLE", "Quimper"), ("DATE", "12/04/1961")])
    surrogates = ["".join(rng.choices(syllables, k=rng.randint(1, 5))).title() for _ in range(2000)]
    surrogates += ["Quimper", "QUIMPERLÉ", "12/04/1961", "Jean-Pierre Le Gall", ""]
    verdicts = [originals.given_back(s) for s in surrogates]
    assert verdicts == [_given_back_plainly(originals, s) for s in surrogates]
    assert any(verdicts) and not all(verdicts)


def test_a_patients_needles_are_prepared_once_and_cannot_be_changed():
    needles = needles_for(PATIENT)
    assert needles_for(PatientMetadata(**dataclasses.asdict(PATIENT))) is needles
    with pytest.raises(dataclasses.FrozenInstanceError):
        needles.phone = "299000000"  # type: ignore[misc]


def _counted_plainly(text, needles):
    """The leak count of names as written before distinct words were compared once (word by word)."""
    counts = {f: {"exact": 0, "fuzzy": 0} for f in LEAK_FIELDS}
    folded = fold_text(text)
    for name, parts in needles.names.items():
        saints_too = not parts.isdisjoint(_SAINTS)
        for match in _WORD.finditer(folded):
            word = match.group()
            if not saints_too and _SAINT_BEFORE.search(folded, max(0, match.start() - 7), match.start()):
                continue
            if word in parts:
                counts[name]["exact"] += 1
            elif (
                len(word) >= FUZZY_MIN
                and any(
                    len(part) >= FUZZY_MIN and Levenshtein.distance(word, part, score_cutoff=1) <= 1 for part in parts
                )
                and not is_common_word(word, accents_known=False)
            ):
                counts[name]["fuzzy"] += 1
    for name, pattern in needles.patterns.items():
        counts[name]["exact"] += sum(1 for _ in pattern.finditer(folded))
    return counts


@pytest.mark.parametrize(
    "text",
    [
        "Mme Marie-Hélène KERDRAON, née le 12/04/1961 à Quimper (29000). Kerdraon revue, Kerdaon aussi.",
        "Clinique Sainte-Marie, Saint-Helene ; HELENE et MARIE ; matin, marine, Kerdraonn, Kerdrao.",
        "Rien ici. Le 12 avril 1961, 1961-04-12, 12041961 ; 29 000 QUIMPER ; kerdraon kerdraon kerdraon",
    ],
)
def test_the_leak_count_is_the_word_by_word_count(text):
    needles = needles_for(PATIENT)
    counts = {f: {"exact": 0, "fuzzy": 0} for f in LEAK_FIELDS}
    _count_in_reading(text, needles, counts)
    assert counts == _counted_plainly(text, needles)
    assert sum(c["exact"] + c["fuzzy"] for c in counts.values()) > 0


@settings(max_examples=300, deadline=None)
@given(
    value=st.text("0123456789", min_size=2, max_size=12),
    text=st.text("0123456789 .-/_aZ\u0130\u0131\u017f\u212a\u00e9", max_size=40),
    cut=st.integers(0, 40),
)
def test_a_number_is_found_where_the_caseless_pattern_finds_it(value, text, cut):
    """A digits-only known value's pattern, compiled without IGNORECASE, matches where the IGNORECASE one does."""
    body = r"[ .\-/]?".join(value) if len(value) >= FLEXIBLE_FROM else value  # the definition, IGNORECASE
    plain = re.compile(rf"(?<![A-Za-z0-9])(?:{body})(?![A-Za-z0-9])", re.IGNORECASE)
    spaced = " ".join(value)  # the value written with separators, somewhere in the text
    haystack = text[:cut] + spaced + text[cut:] + value
    fast = value_pattern(value)
    assert plain.flags & re.IGNORECASE and not fast.flags & re.IGNORECASE
    assert [m.span() for m in fast.finditer(haystack)] == [m.span() for m in plain.finditer(haystack)]


@pytest.mark.parametrize(
    "mine",
    [
        [("PATIENT", "Jean KERDRAON"), ("VILLE", "Quimper")],  # among the patient's: the patient's object itself
        [("PATIENT", "Jean  Kerdraon"), ("STR", "12 rue de Brest")],  # a spelling and a street of its own
        [("VILLE", "Quimper"), ("STR", "12 rue de Brest")],  # one of the patient's, one of its own (only it worked out)
        [],
    ],
)
def test_a_notes_originals_are_its_patients_and_its_own(mine):
    scope = (("DATE", "12/04/1961"), ("DOCTOR", "Dr Le Ny"), ("PATIENT", "Jean KERDRAON"), ("VILLE", "Quimper"))
    joined = NoteOriginals.of_note(scope, mine)
    assert joined == NoteOriginals.of([*scope, *mine])
    assert joined.given_back("Kerdraon") and joined.given_back("Le Ny") and not joined.given_back("Dupont")
    assert joined.given_back("Brest") == any("Brest" in text for _, text in mine)


def test_folded_text_holds_no_typographic_apostrophe():
    """The other views' phrase patterns leave ``’`` out of their separators: folding makes it ``'``."""
    every_character = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000)
    assert "’" in every_character and "’" not in fold_mapped(every_character)[0]
    assert _phrase("le ny").fullmatch(fold_mapped("Le’Ny")[0])
