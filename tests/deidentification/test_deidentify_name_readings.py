"""A name span read once with its roles (:func:`read_name`) reads as it does read afresh, whatever the note's memory
says of a relative's given name (docs/benchmarks.md, *deidentify*)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification import names
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.pools import load_pools
from deid_ds.kb.normalize import fold_key
from deid_ds.model import PatientMetadata

PATIENTS = [
    PatientMetadata(),
    PatientMetadata(firstname="Jean-Yves", lastname="LE DU"),
    PatientMetadata(firstname="Ndeye", lastname="Martin"),
]
_WORDS = ["Jean", "JEAN", "Yves", "LE", "Le", "DU", "Du", "GALL", "de", "la", "Tour", "J.", "Y", "Ndeye", "Martin"]
_WORDS += ["Marie-Hélène", "MARTIN", "d'Arc", "Custódio", "YK", "CL", "Mme", "O'Neil", "Ti"]
_NAMES = st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from([" ", "-", " ", ". ", "/", "  "])), max_size=4)


def _fresh(ctx: Context, text: str, label: str, forced: str | None) -> list[tuple]:
    groups = names._groups(text, names._surname_of(ctx, label))
    names._assign_roles(groups, ctx, label, forced)
    return _plain(groups)


def _plain(groups) -> list[tuple]:
    return [(g.role, [(w.start, w.end, w.text, w.particle, w.initial) for w in g.words]) for g in groups]


@pytest.mark.parametrize("patient", PATIENTS, ids=["none", "le du", "martin"])
@settings(max_examples=150, deadline=None)
@given(
    pieces=_NAMES,
    label=st.sampled_from(["PATIENT", "DOCTOR"]),
    forced=st.sampled_from([None, "first", "last"]),
    relative=st.booleans(),
)
def test_a_name_read_once_reads_as_read_afresh(patient, pieces, label, forced, relative):
    text = "".join(word + gap for word, gap in pieces).strip()
    ctx = Context(Keyring(b"k" * 32), load_pools(None), "patient:P", patient)
    if relative:  # the note writes each of its words alone as a relative's given name
        for word in names._TOKEN.findall(text):
            ctx.memory[names.RELATIVE_GIVEN.format(label=label, key=fold_key(word))] = True
    once, again = names.read_name(ctx, text, label, forced), names.read_name(ctx, text, label, forced)
    assert _plain(once) == _plain(again) == _fresh(ctx, text, label, forced)


def test_a_word_written_alone_is_a_given_name_only_in_the_note_that_says_so():
    plain = Context(Keyring(b"k" * 32), load_pools(None), "patient:P", PatientMetadata())
    says = Context(Keyring(b"k" * 32), load_pools(None), "patient:P", PatientMetadata())
    says.memory[names.RELATIVE_GIVEN.format(label="PATIENT", key="zorglub")] = True
    assert [g.role for g in names.read_name(plain, "Zorglub", "PATIENT")] == ["last"]
    assert [g.role for g in names.read_name(says, "Zorglub", "PATIENT")] == ["first"]
    assert [g.role for g in names.read_name(plain, "Zorglub", "PATIENT")] == ["last"]
