"""The per-note token facts the name rules read give what their plain forms give.

:class:`NoteView` folds and shapes tokens through bounded dict memos (:class:`WordMemo`) instead of
slicing the folded text; the name kinds come from a memo per word and the line starts from a search in
``joins``. Each is checked against the form it stands for; :class:`Candidate` against the dataclass of
its fields (the labeller's two-pass resolution: ``test_resolve_policy``).
"""

from __future__ import annotations

import dataclasses
import pickle
from itertools import compress
from operator import not_

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.kb.normalize import fold
from deid_ds.label import names
from deid_ds.label.candidate import Candidate
from deid_ds.label.view import NoteView, WordMemo, _shape
from deid_ds.segmentation.tokens import tokenize
from tests.conftest import name_notes


def test_word_memo_is_its_function_and_stays_bounded() -> None:
    calls: list[str] = []
    memo = WordMemo(lambda w: calls.append(w) or w.upper(), 3)
    assert [memo[w] for w in "abab"] == ["A", "B", "A", "B"] and calls == ["a", "b"]
    for w in "cdefg":
        assert memo[w] == w.upper()
        assert len(memo) <= 3


@settings(max_examples=300, deadline=None)
@given(name_notes(("ÉLODIE", "Œuvre")))
def test_view_tokens_are_the_slices_of_the_folded_text(text: str) -> None:
    tokens = tokenize(text)
    view = NoteView(text, tokens)
    folded = fold(text)
    assert view.folded == [folded[s:e] for s, e in tokens]
    assert view.shapes == [_shape(w) for w in view.words]
    # the kinds as they were built before: the word's kind, else the shape's; lower case at line starts
    letters = list(map(names._KIND_OF_WORD.get, view.folded, map(names._KIND_OF_SHAPE.get, view.shapes)))
    for k in compress(range(len(letters)), map(not_, [False, *view.joins[:-1]])):
        letters[k] = letters[k].lower()
    assert names.name_kinds(view) == "".join(letters)
    assert names.core_flags(view) == [k in "Cc" for k in names.name_kinds(view)]


@pytest.mark.parametrize("joins", [[], [False], [True, False], [False, False], [True, True, False, True, False, False]])
def test_line_starts_are_the_tokens_after_a_break(joins: list[bool]) -> None:
    assert names._line_starts(joins) == list(compress(range(len(joins)), map(not_, [False, *joins[:-1]])))


#: A frozen slots dataclass of Candidate's fields (the data model's convention for immutable records).
_Generated = dataclasses.make_dataclass(
    "_Generated",
    [(f.name, f.type, dataclasses.field(default=f.default)) for f in dataclasses.fields(Candidate)],
    frozen=True,
    slots=True,
)


def test_candidate_is_a_frozen_slots_dataclass() -> None:
    for args, kwargs in (
        ((1, 4, "DOCTOR", "context:title"), {}),
        ((1, 4, "ZIP", "pattern:zip", 0.9, True), {}),
        ((), {"start": 2, "end": 3, "label": "DATE", "source": "pattern:date", "needs_context": True}),
    ):
        c, g = Candidate(*args, **kwargs), _Generated(*args, **kwargs)
        assert repr(c) == repr(g).replace("_Generated", "Candidate")
        assert dataclasses.astuple(c) == dataclasses.astuple(g)
        assert c == Candidate(*args, **kwargs) and hash(c) == hash(Candidate(*args, **kwargs))
        assert pickle.loads(pickle.dumps(c)) == c
        assert dataclasses.replace(c, end=9).end == 9
        with pytest.raises(dataclasses.FrozenInstanceError):
            c.start = 0  # type: ignore[misc]
        assert not hasattr(c, "__dict__")
    with pytest.raises(TypeError):
        Candidate(1, 2, "DATE")  # type: ignore[call-arg]


HEADING_WORDS = [
    "Secrétariat",
    "secretaires medicales",
    "Internes",
    "INTERNE",
    "Praticiens hospitaliers",
    "Chefs de clinique",
    "Équipe soignante",
    "cadre de santé",
    "sages-femmes",
    "Attachés",
    "Dr",
    "Jeanne",
    "LE GALL",
    ":",
    "-",
    "et",
]
BLANKS = ["", " ", "  ", "\t", "\u00a0", " \t "]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(BLANKS), st.sampled_from(HEADING_WORDS)), min_size=0, max_size=3),
    st.sampled_from(BLANKS),
)
def test_the_heading_line_test_holds_for_every_heading_line(pieces: list[tuple[str, str]], tail: str) -> None:
    from deid_ds.label.cues import STAFF_HEADING
    from deid_ds.label.people import _HEADING_LINE

    line = fold("".join(blank + word for blank, word in pieces) + tail)
    if STAFF_HEADING.fullmatch(line.strip()):
        assert _HEADING_LINE.fullmatch(" " + line + " ", 1, len(line) + 1)  # the folded line break on either side


def test_the_rule_starts_hold_every_token_a_context_rule_starts_from() -> None:
    from deid_ds.label.cues import CIVILITIES, PROFESSIONAL_TITLES
    from deid_ds.label.people import _ROLE_SEPARATORS, _rule_starts

    text = "Dr Morvan, interne — Mme LE GALL ( secrétaire ) M. Kerbrat – cadre ; Pr. A. Roussel - IDE\nMonsieur"
    view = NoteView(text, tokenize(text))
    wanted = [
        i
        for i, (w, f) in enumerate(zip(view.words, view.folded))
        if f in PROFESSIONAL_TITLES or f in CIVILITIES or w in _ROLE_SEPARATORS
    ]
    assert wanted and set(wanted) <= set(_rule_starts(view))
    assert all(fold(separator) in {",", "-", "("} for separator in _ROLE_SEPARATORS)


def test_the_notes_of_one_patient_share_their_names() -> None:
    from deid_ds.label.patient import PatientNames
    from deid_ds.model import PatientMetadata

    first = PatientNames.from_metadata(PatientMetadata(lastname="LE GALL-PRIGENT", firstname="Jeanne Marie"))
    again = PatientNames.from_metadata(
        PatientMetadata(lastname="LE GALL-PRIGENT", firstname="Jeanne Marie", zip="35000")
    )
    assert first is again and first == PatientNames.of_names("LE GALL-PRIGENT", "Jeanne Marie")
    assert first.kind("legall") is None and first.kind("prigent") == "last" and first.kind("jeane") == "first"
    assert first.kind("jeanne") == "first" and PatientNames.from_metadata(PatientMetadata(lastname="Morvan")) != first
