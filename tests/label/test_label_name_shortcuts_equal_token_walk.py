"""The per-note shortcuts of the name rules give what the token-by-token definitions give.

:class:`NoteView` precomputes its gaps and line joins, :mod:`deid_ds.label.names` finds name runs with
one regex over a letter per token, and :class:`PatientNames` sets most words aside before its typo
test. Each is checked here against the plain walk it replaces, on generated notes and names.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.label.cues import NOT_NAME
from deid_ds.label.names import (
    MAX_NAME_TOKENS,
    core_flags,
    core_words,
    is_particle,
    iter_name_runs,
    name_end,
    never_in_name,
    runs_with,
)
from deid_ds.label.patient import PatientNames
from deid_ds.label.view import CORE, INITIAL, INNER, STOP, TITLE, UPPER, NoteView, run_end
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.tokens import tokenize
from tests.conftest import name_notes


def view_of(text: str) -> NoteView:
    return NoteView(text, tokenize(text))


def word_kind(view: NoteView, j: int) -> int:
    """The kind of token ``j`` alone: a particle written without accents is inner (``Lê`` is a name), a word of
    NOT_NAME or :func:`never_in_name` stops, an initial is inner, a capitalised word is core."""
    f, w = view.folded[j], view.words[j]
    if is_particle(f) and f == w.lower():
        return INNER
    if f in NOT_NAME or never_in_name(w):
        return STOP
    shape = view.shapes[j]
    return INNER if shape == INITIAL else CORE if shape in (UPPER, TITLE) else STOP


def walked_name_end(view: NoteView, i: int) -> int:
    """name_end as the token walk of run_end, with the per-token kind it documents (and ``A`` between two names in
    capitals read as the preposition: a stop)."""

    def kind(j: int, first: bool) -> int:
        if (
            view.words[j] == "A"
            and 0 < j < len(view) - 1
            and view.shapes[j - 1] == view.shapes[j + 1] == UPPER
            and word_kind(view, j - 1) == word_kind(view, j + 1) == CORE
            and view.joined(j - 1)
            and view.joined(j)
        ):
            return STOP
        return word_kind(view, j)

    return run_end(view, i, MAX_NAME_TOKENS, kind)


@settings(max_examples=300, deadline=None)
@given(name_notes())
def test_gaps_and_joins_are_the_text_between_tokens(text: str) -> None:
    view = view_of(text)
    n = len(view)
    for i in range(max(-n, -2), n + 2):  # negative indices count from the end, as list indices do
        gap = "" if i + 1 >= n else text[view.ends[i] : view.starts[i + 1]]
        assert view.gap(i) == gap
        joined = i + 1 < n and (gap == "" or gap.isspace()) and "\n" not in gap and "\t" not in gap
        assert view.joined(i) is joined


@settings(max_examples=300, deadline=None)
@given(name_notes())
def test_name_runs_are_the_token_walk(text: str) -> None:
    view = view_of(text)
    n = len(view)
    for i in range(n + 1):
        assert name_end(view, i) == walked_name_end(view, i)
    walked, i = [], 0
    while i < n:
        end = walked_name_end(view, i)
        if end == i:
            i += 1
            continue
        walked.append((i, end))
        i = end
    assert iter_name_runs(view) == walked
    flags = core_flags(view)
    assert flags == [word_kind(view, j) == CORE for j in range(n)]
    for words in ({"gall"}, {"morvan", "jeanne"}, {"de"}, set()):
        expected = [(i, j) for i, j in walked if any(flags[k] and view.folded[k] in words for k in range(i, j))]
        assert runs_with(view, words) == expected


def test_name_runs_stop_at_seven_tokens_and_line_breaks() -> None:
    view = view_of(
        "Marie Claire Anne de La Tour d'Auvergne Dupont\nJ. Morvan\nAnne Marie Claire Sophie Louise Paule Jeanne Dupont"
    )
    assert [view.words[i:j] for i, j in iter_name_runs(view)] == [
        ["Marie", "Claire", "Anne", "de", "La", "Tour"],
        ["d'", "Auvergne", "Dupont"],
        ["J.", "Morvan"],
        ["Anne", "Marie", "Claire", "Sophie", "Louise", "Paule", "Jeanne"],
        ["Dupont"],
    ]


NAMES = ["LE GALL-PRIGENT", "Jean-Pierre", "Morvan", "Kerbrat", "Marie Anne", "DUPONT", "Léa", "Ab"]


@st.composite
def typos(draw) -> str:
    """A folded name word with up to two edits (a deletion, an insertion, a substitution)."""
    word = draw(
        st.sampled_from(["morvan", "kerbrat", "prigent", "gall", "dupont", "jean", "pierre", "anne", "marie", "lea"])
    )
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(word)))
        letter = draw(st.sampled_from("aeikmnoprt-"))
        edit = draw(st.sampled_from(["delete", "insert", "substitute"]))
        if edit == "delete" and at < len(word):
            word = word[:at] + word[at + 1 :]
        elif edit == "insert":
            word = word[:at] + letter + word[at:]
        elif at < len(word):
            word = word[:at] + letter + word[at + 1 :]
    if draw(st.booleans()):  # a compound (LE GALL-PRIGENT), maybe of a typo, maybe with a stray hyphen
        word = (
            draw(st.sampled_from(["", "-", "gall-", "jean-", "le-", "x-"]))
            + word
            + draw(st.sampled_from(["", "-", "-prigent", "-pierre", "-x"]))
        )
    return word


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(NAMES), st.sampled_from(NAMES), st.lists(typos(), max_size=30))
def test_names_among_is_kind_on_every_word(last: str, first: str, words: list[str]) -> None:
    words += [
        "-",
        "--",
        "-gall-",
        "jean--pierre",
        "anne-marie",
        "marie-x",
    ]  # compounds, and hyphens with no part at all
    names = PatientNames.from_metadata(PatientMetadata(lastname=last, firstname=first))
    expected = {
        w
        for w in words
        if PatientNames.from_metadata(PatientMetadata(lastname=last, firstname=first)).kind(w) is not None
    }
    assert names.names_among(set(words)) == expected


def test_core_words_are_the_distinct_core_tokens() -> None:
    view = view_of("Mme Jeanne LE GALL, née le 3 janvier, voit le Dr Morvan et Jeanne")
    assert core_words(view) == {"jeanne", "gall", "morvan"}
