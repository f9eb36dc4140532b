"""Finding the direct identifiers with fewer regex scans gives what the plain scans give (docs/benchmarks.md,
*deidentify*): the cue patterns tried only where a cue may start, the checksummed NIR pattern starting with its
first digit, and the patterns not run on a text without what their matches hold."""

from __future__ import annotations

import html as html_module

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification import identifiers as ids
from deid_ds.deidentification.identifiers import (
    Identifier,
    find_identifiers,
    find_values,
    luhn_digit,
    nir_key,
    value_pattern,
)
from deid_ds.deidentification.regions import INVISIBLE_RE
from deid_ds.segmentation.html_text import html_to_text

SAMPLE = "data/notes.parquet"


def _plain(text: str) -> list[Identifier]:
    """:func:`find_identifiers` as written before: every pattern scanned over the whole folded text."""
    if not ids._HAS_NUMBER.search(text):
        return []
    folded = ids._folded(text)
    kept = [m.span("val") for m in ids._KEPT.finditer(folded)]
    found: list[Identifier] = []
    cued = ids._ANY_CUE.search(folded) is not None
    for kind, pattern in ids._CUED.items() if cued else ():
        found += filter(None, (ids.cued_identifier(kind, m, kept) for m in pattern.finditer(folded)))
    for m in ids._CUE_AFTER.finditer(folded) if cued else ():
        kind = ids._AFTER_KINDS.get(m["cue"], m["cue"].upper())
        start, end = m.span("val")
        if ids._acceptable(kind, m["val"]) and not ids._inside(start, end, kept):
            found.append(Identifier(start, end, kind, "cue"))
    for m in ids._BARE_NIR.finditer(folded):
        if ids.is_valid_nir(m["val"]) and not ids._inside(*m.span("val"), kept):
            found.append(Identifier(*m.span("val"), "NIR", "checksum"))
    for m in ids._BARE_RPPS.finditer(folded):
        if ids.is_valid_rpps(m["val"]) and not ids._inside(*m.span("val"), kept):
            found.append(Identifier(*m.span("val"), "RPPS", "checksum"))
    for m in ids._BARE_IBAN.finditer(folded):
        found += filter(None, [ids.iban_identifier(folded, *m.span("val"), kept)])
    if cued and "\n" in text:
        every_position = list(range(len(folded) + 1))  # the header lines from a cue search at every position
        found += [i for i in ids._columns(text, folded, every_position) if not ids._inside(i.start, i.end, kept)]
    return ids.resolve(found)


def _nir(body: str) -> str:
    return f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:13]} {nir_key(body)}"


_RPPS = "1000345678" + luhn_digit("1000345678")
_IBAN = "FR76 3000 6000 0112 3456 7890 189"  # its checksum holds
_PIECES = [
    *("IPP", "N° IPP", "NIP", "n° de séjour", "N° de dossier", "Dossier", "NDA", "INS-NIR", "INS", "NIR", "N°SS"),
    *("RPPS", "ID.PS", "ADELI", "matricule", "Numéro d'examen", "n° patient", "identifiant", "Identifiant RPPS"),
    *("FINESS", "N° FINESS", "SIRET", "siren", "Réf. dossier", "épisode", "carte vitale", "sécurité sociale"),
    *(" ", " ", ":", " : ", "\t", "\n", "  ", "|", "(", ")", "-", ".", "/", "°", "no", "n", "i.p.p", "\u00ad"),
    *("80092945", "2675 2240", "B21-01234", "12/03/2021", "2021", "123456789", "8" + _RPPS, _RPPS, "10"),
    *(_nir("1841275123456"), _nir("2840629123456").replace(" ", ""), _nir("18412" + "2A" + "123456"), "Dupont"),
    *("Séjour", "venue", "titre de séjour", "CNI", "passeport", "n° adhérent", "Mutuelle", "n° de contrat", "AME"),
    *("IBAN", "RIB", _IBAN, _IBAN.replace(" ", ""), "BE68 5390 0754 7034", "2024", "X4RTBPFW4", "12AB34567"),
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_the_identifiers_of_a_text_are_those_the_plain_scans_find(text):
    assert find_identifiers(text) == _plain(text)


@pytest.mark.parametrize("kind", sorted(ids._CUES))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_cue_starts_where_the_hint_finds_one(kind, data):
    cue = data.draw(st.from_regex(ids._CUES[kind], fullmatch=True))
    before = data.draw(st.sampled_from(["", " ", "(", "\n", ": "]))
    assert len(before) in ids.cue_starts(before + cue)


_IBAN_PIECES = ["fr", "be", "x", "76", "3000", "0112", "30006", "12345678901", " ", "-", "a"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_IBAN_PIECES), max_size=30))
def test_the_iban_pattern_from_its_check_digits_matches_as_the_plain_one(pieces):
    text = "".join(pieces)
    assert [(m.start() - 2, m.end()) for m in ids._BARE_IBAN_FAST.finditer(text)] == [
        m.span() for m in ids._BARE_IBAN.finditer(text)
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["1", "2", "7", "8", "4", "0", "9", " ", ".", "-", "a", "2a", "b", "x1"]), max_size=40))
def test_the_nir_pattern_from_its_first_digit_matches_as_the_plain_one(pieces):
    text = "".join(pieces)
    assert [m.span() for m in ids._BARE_NIR_FAST.finditer(text)] == [m.span() for m in ids._BARE_NIR.finditer(text)]


@pytest.mark.parametrize(
    "text",
    [
        "Séjour 22012345",
        "Venue : V2022-88123",
        "CNI n° 123456789012",
        "C.N.I. 123456789012",
        "carte nationale d'identité : 123456789012",
        "pièce d'identité 123456789012",
        "Passeport X4RTBPFW4",
        "titre de séjour 1234567890",
        "carte de résident 1234567890",
        "permis de conduire 12AB34567",
        "AME n° 1234567890",
        "adhérent n° 12345678",
        "Mutuelle n° 12345678",
        "AMC n° 12345678",
        "mutuelle MGEN\ncontrat n° 12345678",
        "IBAN FR76 3000 6000 0112 3456 7890 189",
        "RIB 30006 00001 12345678901 89",
        "relevé d'identité bancaire : FR76 3000 6000 0112 3456 7890 189",
        "coordonnées bancaires FR76 3000 6000 0112 3456 7890 189",
    ],
)
def test_each_cue_that_starts_with_a_word_of_its_own_is_found_through_the_hint(text):
    assert find_identifiers(text) == _plain(text) != []


def test_the_sample_notes_identifiers_are_those_the_plain_scans_find():
    texts = []
    for html in pq.read_table(SAMPLE, columns=["html"]).column("html").to_pylist():
        parsed = html_to_text(html)
        texts += [parsed.text, INVISIBLE_RE.sub("", html_module.unescape(parsed.html))]  # the two of note_identifiers
    found = [find_identifiers(text) for text in texts]
    assert found == [_plain(text) for text in texts]
    assert sum(map(len, found)) >= 30  # the sample names identifiers: the comparison is not of empty lists


_NUMBER_CHARS = ["1", "2", "3", "0", " ", ".", "-", "/", "a", "B", "\u0130", "\u0131", "\u017f", "\u212a", "_", "é"]
_NUMBER_TEXT = st.lists(st.sampled_from(_NUMBER_CHARS), max_size=40).map("".join)


@settings(max_examples=500, deadline=None)
@given(_NUMBER_TEXT, st.text(alphabet="0123", min_size=1, max_size=12))
def test_a_number_is_found_where_its_pattern_finds_it(text, value):
    squeezed = text.translate(ids._NO_SEPARATORS)
    expected = [m.span() for m in value_pattern(value).finditer(text)]
    assert ids._number_spans(text, squeezed, value) == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("IPP 80092945, repris 8009 2945 et 80.09.29.45 ; 800929451 non", "80092945"),
        ("1 84 12 75 123 456 78 / 184127512345678", "184127512345678"),
        ("26752240-26752240 x26752240 26752240\u212a", "26752240"),
        ("2675  2240 2675 2240", "26752240"),  # two separators are not one
        ("1234567 1234567", "1234567"),  # short: written as it is only
    ],
)
def test_a_number_is_found_as_its_pattern_finds_it(text, value):
    squeezed = text.translate(ids._NO_SEPARATORS)
    assert ids._number_spans(text, squeezed, value) == [m.span() for m in value_pattern(value).finditer(text)]
    assert find_values(text, {value: "IPP"}) == [
        Identifier(*m.span(), "IPP", "repeat") for m in value_pattern(value).finditer(ids._folded(text))
    ]
