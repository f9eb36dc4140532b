"""What the labeller looks up for one note, kept for whoever reads the note next.

Labelling a note folds it, folds each of its words (:class:`NoteView`), runs the gazetteer matcher
over it and takes the patient's names from the metadata. The knowledge features
(:mod:`deid_ds.label.features`) need exactly these facts; rather than a second matcher pass and a
second fold of every word, they read the labeller's :class:`NoteLookup` of the note
(:meth:`deid_ds.label.labeller.WeakLabeller.labelling` returns it with the spans). One lookup per note,
built once, read by the labelling functions and the features alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from deid_ds.kb.normalize import fold
from deid_ds.label.patient import PatientNames
from deid_ds.label.view import NoteView
from deid_ds.model import PatientMetadata


@dataclass(frozen=True)
class NoteLookup:
    """One note's text and tokens with what the knowledge says of them.

    ``view`` holds the tokens, their shapes and folded forms; ``folded`` is the note's text folded;
    ``matches`` every gazetteer match of the note (:meth:`GazetteerMatcher.find_all`; empty without a
    knowledge base); ``patient`` the metadata used (None without it, or with ``--no-metadata``) and
    ``names`` the patient's names (:meth:`PatientNames.from_metadata`, whose memo of name tests is
    shared by the patient's notes).
    """

    text: str
    view: NoteView
    folded: str
    matches: list
    patient: PatientMetadata | None
    names: PatientNames | None

    @classmethod
    def of(cls, text: str, view: NoteView, matcher=None, patient: PatientMetadata | None = None) -> NoteLookup:
        """The lookup of a note: one fold of its text, one matcher pass (none without ``matcher``)."""
        folded = fold(text)
        matches = matcher.find_all(text, folded) if matcher is not None else []
        return cls(text, view, folded, matches, patient, PatientNames.from_metadata(patient))

    @classmethod
    def of_offsets(
        cls, text: str, starts: list[int], ends: list[int], matcher=None, patient: PatientMetadata | None = None
    ) -> NoteLookup:
        """:meth:`of` for tokens given as two offset lists (the segmenter's form)."""
        return cls.of(text, NoteView.of_offsets(text, starts, ends), matcher, patient)
