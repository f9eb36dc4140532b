"""Propagation: a name labelled once in a note is labelled wherever the note repeats it.

Once ``Dr Yann KERBRAT`` or the patient's ``Jeanne LE GALL`` has been found with a cue or the
metadata, ``KERBRAT`` alone in the signature and ``Mme Le Gall`` in the discussion are the same
people, though no cue says so there. The Rennes study does this for the patient's last name; it is
done here for both PATIENT and DOCTOR, from the spans the first resolution pass kept.

A word labelled as both PATIENT and DOCTOR in the note is not propagated (the doctor who shares the
patient's name). A repeated run made of one word only is propagated if it is written in capitals or
is not a common French word: ``Martin`` the surname and ``Pierre`` the given name are, ``Roche`` in
prose (a rock) is not, unless written ``ROCHE``.
"""

from __future__ import annotations

from deid_ds.kb.ambiguity import is_common_word
from deid_ds.label.addresses import INSTITUTION_HEADS, PLACE_ABBREVIATIONS
from deid_ds.label.candidate import Candidate, split_at_columns
from deid_ds.label.names import core_tokens, extend_name, runs_with
from deid_ds.label.view import UPPER, NoteView

PROPAGATED = ("PATIENT", "DOCTOR")
#: Words after which (with ``de``) a name is a place's (``CHU de [Brest]``, ``laboratoire de [Vannes]``).
_PLACE_HEADS = INSTITUTION_HEADS | PLACE_ABBREVIATIONS | {"laboratoire", "cabinet", "ville", "commune", "mairie"}
_DE = frozenset({"de", "d'", "d’"})


def propagate(view: NoteView, spans: list[Candidate]) -> list[Candidate]:
    """Candidates for the repetitions of the names in ``spans`` (the first pass's resolved spans)."""
    forms = _name_forms(view, spans)
    if not forms["PATIENT"] and not forms["DOCTOR"]:
        return []
    found: list[Candidate] = []
    # most runs of a note (capitalised words) share nothing with the names found
    for i, j in runs_with(view, forms["PATIENT"] | forms["DOCTOR"]):
        if _names_a_place(view, i):
            continue
        cores = core_tokens(view, i, j)
        for label in PROPAGATED:
            if forms[label].issuperset(cores):
                if len(cores) == 1:
                    k = next(k for k in range(i, j) if view.folded[k] == cores[0])
                    if view.shapes[k] != UPPER and is_common_word(view.words[k].lower()):
                        break
                end = extend_name(view, i, j)  # "LE MOIGNE S.": the initial after the surname belongs to it
                found.append(Candidate(view.starts[i], view.ends[end - 1], label, f"propagation:{label.lower()}", 0.75))
                break
    return split_at_columns(view.text, found)


def _names_a_place(view: NoteView, i: int) -> bool:
    """Whether the run at token ``i`` stands where a place is named (``CHU de Brest``, ``CH Morlaix``): a doctor
    called Brest or Morlaix does not make the hospital's town a person (the place rules label it)."""
    folded = view.folded
    k = i + 1 if folded[i] in _DE else i  # the run may hold its particle ("de Brest")
    if k > i:
        return folded[i - 1] in _PLACE_HEADS if i > 0 else False
    if i > 0 and folded[i - 1] in PLACE_ABBREVIATIONS:
        return True
    return i > 1 and folded[i - 1] in _DE and folded[i - 2] in _PLACE_HEADS


def _name_forms(view: NoteView, spans: list[Candidate]) -> dict[str, set[str]]:
    """The core words (two letters or more) of the PATIENT and of the DOCTOR spans, less those of both."""
    forms: dict[str, set[str]] = {label: set() for label in PROPAGATED}
    for span in spans:
        words = forms.get(span.label)
        if words is not None:
            words.update(core_tokens(view, view.index_at(span.start), view.index_before(span.end) + 1))
    shared = forms["PATIENT"] & forms["DOCTOR"]
    return {label: {w for w in words if len(w) >= 2} - shared for label, words in forms.items()}
