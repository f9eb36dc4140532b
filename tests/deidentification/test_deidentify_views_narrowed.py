"""A note's other views searched with only what their texts can hold give the edits they gave searched for everything
(docs/benchmarks.md, *deidentify*): :meth:`Replacer.narrowed` tests each phrase, the name words, each pattern's hint,
the phone and each direct identifier once on the note's searched texts joined, and leaves out only what none holds."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification import other_views
from deid_ds.deidentification.batch import read_spans_by_document
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.document import deidentify_document
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.other_views import Replacer, view_edits
from deid_ds.deidentification.pools import load_pools
from deid_ds.io.notes import open_notes
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.html_text import html_to_text

PATIENT = PatientMetadata(
    firstname="Élodie",
    lastname="Le Gall",
    birthdate="1961-04-12",
    address="12 rue de Kerdraon",
    zip="29200",
    city="Pont-l'Abbé",
    phone="02 98 76 54 32",
    email="elodie.legall@orange.fr",
)
#: (label, original, replacement) of the note's spans, as replaced in its text.
KNOWN = [
    ("DOCTOR", "Jean-Yves LE NY", "Paul Morel"),
    ("VILLE", "Quimper", "Brest"),
    ("DATE", "12/04/1961", "03/05/1961"),
]
IDENTIFIERS = {"185042912345678": "NIR", "80092945": "IPP"}


def _data_url(text: str) -> str:
    return "data:text/plain;base64," + base64.b64encode(text.encode()).decode()


_VALUES = [
    *("Le Gall", "LE&nbsp;GALL", "elodie", "Élodie", "Jean-Yves Le Ny", "le ny", "Quimper", "quimper", "Kerdraon"),
    *("12/04/1961", "12 avril 1961", "19610412", "29200", "29 200", "Pont-l%27Abb%C3%A9", "02.98.76.54.32"),
    *("+33 2 98 76 54 32", "elodie.legall@orange.fr", "1 85 04 29 123 456 78", "IPP 80092945", "8009 2945", "x"),
    *("right", "100%", "c", "Du&shy;pont", "%4C%65%20%47%61%6C%6C", "Ker&#8203;draon"),
    *(
        "E\u0301lodie",
        "\uff2c\uff25 \uff27\uff21\uff2c\uff2c",
        "Qu\u0301imper",
    ),  # NFD, fullwidth: folding moves offsets
]
_VALUE = st.sampled_from(_VALUES)
_ATTRIBUTE = st.tuples(st.sampled_from(["title", "alt", "href", "data-x", "content"]), _VALUE, st.booleans()).map(
    lambda t: f'{t[0]}="{t[1]}"' if t[2] else f"{t[0]}={t[1].replace(' ', '')}"
)
_PIECE = st.one_of(
    st.sampled_from(["<p>", "</p>", "<br>", "Jean", " ", "<td class='c'>", "</td>", "<!-- Le Gall -->"]),
    st.sampled_from(["<script>var n = 'Le Gall';</script>", "<!DOCTYPE html>", "</p Quimper>", "<?xml Le Gall?>"]),
    _VALUE.map(lambda v: f"<title>{v}</title>"),
    _VALUE.map(lambda v: f"<style>p{{content:'{v}'}}</style>"),
    _VALUE.map(lambda v: f'<img src="{_data_url(v + " suite")}">'),
    _VALUE.map(lambda v: f'<a href="{_data_url("note de " + v)}">x</a>'),
    st.lists(_ATTRIBUTE, min_size=1, max_size=3).map(lambda a: f"<span {' '.join(a)}>"),
)
_HTML = st.lists(_PIECE, max_size=25).map("".join)


def _replacer(mode: str, identifiers: bool) -> Replacer:
    ctx = Context(Keyring(b"narrowed views test key, 32 bytes"), load_pools(None), "patient:1", PATIENT)
    return Replacer(KNOWN, ctx, mode, "[{label}]", IDENTIFIERS if identifiers else None)


def _everything(self, texts, foldings):
    return self


@settings(max_examples=300, deadline=None)
@given(_HTML, st.sampled_from(["surrogate", "mask"]), st.booleans(), st.sampled_from(["deidentify", "blank"]))
def test_the_views_searched_narrowed_give_the_edits_searched_for_everything(html, mode, identifiers, policy):
    parsed = html_to_text(html)
    narrowed = view_edits(parsed, _replacer(mode, identifiers), policy)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Replacer, "narrowed", _everything)
        everything = view_edits(parsed, _replacer(mode, identifiers), policy)
    assert narrowed == everything


def test_a_note_narrowed_still_finds_what_its_views_hold():
    """The test above is no empty comparison: the views of such a note have edits of every source."""
    html = (
        '<title>Le Gall</title><span title="Jean-Yves Le Ny" data-x="02.98.76.54.32" alt="8009 2945">'
        f'<a href="mailto:elodie.legall@orange.fr">x</a><img src="{_data_url("vue par Quimper")}"><p>texte</p>'
    )
    edits = view_edits(html_to_text(html), _replacer("surrogate", True))
    assert {e.source for e in edits} >= {"view:metadata", "view:span", "view:identifier"}
    assert any(e.original == "vue par Quimper" for e in edits)


def test_a_note_without_any_value_in_its_views_keeps_none_to_search():
    parsed = html_to_text('<p class="c" style="x">texte</p><td align=right>Jean</td>')
    texts = ["c", "x", "right"]
    narrow = _replacer("surrogate", True).narrowed(texts, [other_views.fold_mapped(t) for t in texts])
    assert (narrow.phrases, narrow.patterns, narrow.phone, narrow.identifiers, narrow.any_word) == (
        [],
        [],
        None,
        {},
        False,
    )
    assert view_edits(parsed, _replacer("surrogate", True)) == []


def test_the_sample_notes_are_deidentified_alike():
    notes = [n for batch in open_notes("data/notes.parquet").iter_batches(512) for n in batch]
    spans = read_spans_by_document("data/gold.parquet")
    keyring, pools = Keyring(b"narrowed views test key, 32 bytes"), load_pools(None)

    def documents():
        return [
            (o.html, o.error)
            for n in notes
            for o in [
                deidentify_document(
                    html_to_text(n.html),
                    spans.get(n.id_document, []),
                    Context(keyring, pools, f"patient:{n.id_patient}", n.patient),
                    "surrogate",
                )
            ]
        ]

    narrowed = documents()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Replacer, "narrowed", _everything)
        assert documents() == narrowed


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=6))
def test_a_notes_texts_folded_at_once_fold_as_each_on_its_own(texts):
    assert other_views._foldings(texts) == [other_views.fold_mapped(text) for text in texts]
