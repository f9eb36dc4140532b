"""The patient's address is found in a note's folded text without compiling a pattern per patient
(:func:`deid_ds.label.patient.find_words`): the spans are exactly those of the regex the rule used to
compile for each address, ``(?<!\\w)w1[\\s,.'’-]+w2…(?!\\w)``, kept here as the reference."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from deid_ds.label.patient import address_from_metadata, find_words
from deid_ds.model import PatientMetadata


def pattern_spans(folded: str, words: tuple[str, ...]) -> list[tuple[int, int]]:
    pattern = re.compile(r"(?<!\w)" + r"[\s,.'’-]+".join(map(re.escape, words)) + r"(?!\w)")
    return [m.span() for m in pattern.finditer(folded)]


#: Words made of few letters, so that they repeat, overlap and touch in the generated texts.
WORDS = st.text(alphabet="ab1_é", min_size=1, max_size=3)
#: Text around them: the same letters, the separators, and characters that are neither (``/``, ``:``).
TEXT = st.text(alphabet="ab1_é ,.'’-\n\t/:\u00a0", max_size=60)


@settings(max_examples=500, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=3), st.lists(TEXT, min_size=1, max_size=5), st.data())
@example(["ab"], ["ab ab_ab-ab"], None)
@example(["a", "a"], ["a a a a.a"], None)
def test_the_words_are_found_where_the_pattern_finds_them(words, pieces, data) -> None:
    # the words themselves, joined by generated text, so that most examples hold some occurrences
    text = pieces[0]
    for piece in pieces[1:]:
        text += data.draw(st.sampled_from(words)) + piece if data is not None else piece
    words = tuple(words)
    assert find_words(text, words) == pattern_spans(text, words)


def test_an_address_in_a_note_is_a_street_span() -> None:
    patient = PatientMetadata(address="12, Rue des Lilas")
    folded = "domicile : 12 rue des lilas. vu au 12 rue des lilasbis, 112 rue des lilas"
    spans = [(c.start, c.end) for c in address_from_metadata(folded, patient)]
    assert [folded[s:e] for s, e in spans] == ["12 rue des lilas"]
    assert spans == pattern_spans(folded, ("12", "rue", "des", "lilas"))
