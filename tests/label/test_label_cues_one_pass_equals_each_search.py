"""The labeller's cues found in one pass per note are exactly those each cue's own search finds."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.kb.normalize import fold
from deid_ds.label import cues

_PIECES = sorted(
    {
        w
        for p in cues.DOCTOR_PHRASES + cues.PATIENT_PHRASES + cues.CITY_PHRASES + cues.RECIPIENT_PHRASES
        + cues.RELATIVE_PHRASES
        for w in re.findall(r"[a-z'\-.]+", p)
    }
) + [
    "son", "sa", "ses", "leur", "fille", "époux", "Médecin", "Née", "a", "le 3 mars 2021", "par",
    " ", " ", "\u00a0", "\n", "\t",
    ":", " : ", "-", "(e)", "'", "’", "(", "«", "Dr", "Jean", ",", "é", "_", "0",
]  # fmt: skip


def check(text: str) -> None:
    folded = fold(text)
    padded = " " + folded
    one_pass = cues._known_cue_hits.__wrapped__(folded)
    assert list(one_pass) == list(cues._KNOWN_CUES)
    for pattern, hits in one_pass.items():
        assert hits == cues._cue_hits(pattern, padded, None)
        served = list(cues.cue_matches(pattern, folded, text))
        # a pattern that is not one of the known cues (an equivalent one) takes the plain search
        assert served == list(cues.cue_matches(re.compile("(?:" + pattern.pattern + ")"), folded, text))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Dicté par Dr Jean MARTIN\nMédecin traitant : Dr Paul\nsa fille, Mme Anne\nNée à Brest\nFait à Rennes par Dr X",
        "Nom d'usage : LE GALL\nPrénom(s) : Anne\nÀ l'intention de\nDocteur Y\nson époux: Jean\ndestinataires : Z",
        "(medecin traitant) «nee a Brest» -chu de Rennes /cc: X, née le 3 mars 2021 à Brest",
    ],
)
def test_one_pass_cue_hits_are_each_cues_own(text: str) -> None:
    check(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=20).map("".join))
def test_one_pass_cue_hits_are_each_cues_own_on_generated_text(text: str) -> None:
    check(text)


def test_every_phrase_starts_with_a_letter_of_its_cue() -> None:
    for pattern, letters in cues._KNOWN_CUES.items():
        assert letters and all(len(letter) == 1 and letter.isalpha() for letter in letters), pattern.pattern
