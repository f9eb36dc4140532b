"""The labelling functions, declared as data: what each is called, proposes and needs, in the order they run.

The labeller used to call its rules in a hard-coded sequence; here they are a list of records
(:data:`FUNCTIONS`), so that they can be listed (``deid-ds weak-label --rules``), switched off by name
(:attr:`deid_ds.label.labeller.LabelConfig.disabled`, ``--disable-rule``) and counted by name in the
weak-label report. Each family's patterns and code stay in its own module (``dates``, ``phones``,
``emails``, ``zips``, ``people``, ``patient``, ``addresses``, ``propagate``); a record only says how the
labeller calls it.

The list runs the functions in the order the labeller always has: the conflict policy does not depend
on it (:mod:`deid_ds.label.resolve` ranks by a total order), but the candidates come out as they always
did (:meth:`WeakLabeller.candidates`). A function may read the candidates
of earlier ones (``reads``: city rules start from postcodes); a disabled function proposes nothing, but
the functions that read it still get its candidates, so that switching one off removes its own spans and
leaves the others' rules as they were (resolution may still let another candidate win where it lost, and
the propagation no longer repeats the names only a disabled function found).

Each function's candidates carry sources (``Candidate.source``) that no other function gives, so the
spans a function kept are counted from the ``source`` column the weak-label output already has
(:func:`function_of_source`), at no cost to labelling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from deid_ds.errors import InputError
from deid_ds.label.addresses import (
    cities,
    foreign_postcodes,
    gazetteer_places,
    gazetteer_streets,
    lines_between_street_and_zip,
    names_a_place,
    places_before_zip,
    streets,
)
from deid_ds.label.candidate import COLUMN_GAP, Candidate, split_at_columns
from deid_ds.label.dates import find_dates
from deid_ds.label.emails import find_emails
from deid_ds.label.lookup import NoteLookup
from deid_ds.label.patient import PatientNames, address_from_metadata, confirm_with_metadata, patient_names
from deid_ds.label.people import (
    dictation_initials,
    directory_names,
    doctor_context,
    lower_case_names,
    name_lines,
    patient_context,
    staff_lists,
)
from deid_ds.label.phones import find_phones
from deid_ds.label.tables import table_cells
from deid_ds.label.view import NoteView
from deid_ds.label.zips import confirm_zips, find_zips
from deid_ds.model import PatientMetadata

#: What a function may need besides the note's text and tokens (shown by ``--rules``).
MATCHER = "kb"  # the knowledge base's gazetteer matches (without a KB: none, and it finds nothing)
PATIENT = "metadata"  # the note's patient metadata (without it, or with --no-metadata: it finds nothing)
KEPT = "kept spans"  # the spans kept by the first resolution (the propagation only)


@dataclass
class NoteInputs:
    """What the labelling functions of one note are given: the note's lookup, and each function's candidates once
    computed.

    The lookup (:class:`NoteLookup`) holds the note's text, tokens, folded text, gazetteer matches (empty without a
    matcher), patient metadata and names; its fields are read here under their own names. :meth:`candidates_of`
    returns an earlier function's candidates, computing them if that function is disabled.
    """

    lookup: NoteLookup
    found: dict[str, list[Candidate]] = field(default_factory=dict)
    text: str = field(init=False, repr=False)
    view: NoteView = field(init=False, repr=False)
    folded: str = field(init=False, repr=False)
    matches: list = field(init=False, repr=False)
    patient: PatientMetadata | None = field(init=False, repr=False)
    names: PatientNames | None = field(init=False, repr=False)
    #: whether the note has a column gap at all (:func:`split_at_columns`): most have none, and each function's
    #: candidates are then kept as they are, without a test of each
    columns: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        lookup = self.lookup
        self.text, self.view, self.folded, self.matches = lookup.text, lookup.view, lookup.folded, lookup.matches
        self.patient, self.names = lookup.patient, lookup.names
        self.columns = COLUMN_GAP in self.text

    def candidates_of(self, name: str) -> list[Candidate]:
        """The candidates of function ``name`` on this note (computed once)."""
        found = self.found.get(name)
        if found is None:
            function = BY_NAME[name]
            found = function.propose(self)
            if self.columns:
                found = split_at_columns(self.text, found)
            self.found[name] = found
        return found


@dataclass(frozen=True)
class LabellingFunction:
    """One named labelling function: the labels it proposes, what it needs, and how the labeller calls it.

    ``sources`` are the ``Candidate.source`` values its candidates carry (a trailing ``:`` stands for a
    prefix), none shared with another function.
    """

    name: str
    labels: tuple[str, ...]
    sources: tuple[str, ...]
    description: str
    propose: Callable[[NoteInputs], list[Candidate]] = field(repr=False, compare=False)
    needs: tuple[str, ...] = ()  # MATCHER, PATIENT, KEPT
    reads: tuple[str, ...] = ()  # the earlier functions whose candidates it takes

    def needs_text(self) -> str:
        """What it needs, in words (for ``--rules``): ``kb; reads zips`` (the candidates of ``zips``)."""
        reads = [f"reads {', '.join(self.reads)}"] if self.reads else []
        return "; ".join([*self.needs, *reads]) or "-"


def _patient_names(note: NoteInputs) -> list[Candidate]:
    return patient_names(note.view, note.names) if note.names is not None else []


def _confirmed_by_metadata(note: NoteInputs) -> list[Candidate]:
    if note.patient is None:
        return []
    # the candidates the metadata can confirm (e-mails, phones, dates, postcodes), in the order proposed
    read = [c for name in ("emails", "phones", "dates", "zips") for c in note.candidates_of(name)]
    return confirm_with_metadata(note.text, read, note.patient)


def _cities(note: NoteInputs) -> list[Candidate]:
    dates = [d for d in note.candidates_of("dates") if not d.needs_context]
    zips = note.candidates_of("zips") + note.candidates_of("foreign_postcodes")
    # numbered streets and named places only: "rue de la Gare à Brest" in prose may be a way to the station
    numbered = [
        s
        for s in note.candidates_of("streets")
        if s.source == "address:street" and (note.text[s.start].isdigit() or names_a_place(note.view, s.start))
    ]
    return cities(note.view, zips, dates, note.folded, numbered)


def _confirmed_zips(note: NoteInputs) -> list[Candidate]:
    return confirm_zips(note.candidates_of("zips"), note.candidates_of("cities") + note.candidates_of("communes"))


#: Every labelling function, in the order the labeller runs them.
FUNCTIONS: tuple[LabellingFunction, ...] = (
    LabellingFunction(
        "emails",
        ("EMAIL",),
        ("pattern:email", "pattern:email_obfuscated"),
        "e-mail addresses, also written with [at] or (dot)",
        lambda note: find_emails(note.text),
    ),
    LabellingFunction(
        "phones",
        ("PHONE",),
        (
            "pattern:phone_fr",
            "pattern:phone_intl_fr",
            "pattern:phone_intl",
            "pattern:phone_extension",
            "pattern:phone_words",
        ),
        "French and international phone numbers, extensions (poste, DECT, bip), numbers dictated in words",
        lambda note: find_phones(note.text, note.folded),
    ),
    LabellingFunction(
        "dates",
        ("DATE",),
        (
            "pattern:date_numeric",
            "pattern:date_written",
            "pattern:date_monthyear_num",
            "pattern:date_daymonth_num",
            "pattern:date_year",
            "pattern:date_words",
            "pattern:date_numeric_odd",
            "pattern:date_glued",
            "pattern:date_range",
        ),
        "numeric and written dates (also in words, glued or oddly separated), range ends, months with a year, "
        "years (a bare year only when confirmed)",
        lambda note: find_dates(note.text),
    ),
    LabellingFunction(
        "zips",
        ("ZIP",),
        ("pattern:zip_cedex", "pattern:zip_city", "pattern:zip_paren", "pattern:zip_address", "pattern:zip_bare"),
        "five-digit postcodes in an address or before a city (a bare number only when confirmed)",
        lambda note: find_zips(note.text),
    ),
    LabellingFunction(
        "directory",
        ("DOCTOR",),
        ("gazetteer:directory", "gazetteer:name_line"),
        "full names of health professionals found in the Annuaire Santé; lines that are a name alone (staff lists)",
        lambda note: directory_names(note.view, note.matches) + name_lines(note.view, note.matches),
        needs=(MATCHER,),
    ),
    LabellingFunction(
        "doctor_context",
        ("DOCTOR",),
        (
            "context:title",
            "context:phrase",
            "context:role",
            "context:recipient",
            "context:signature",
            "context:salutation",
            "context:lower_case_title",
        ),
        "names after Dr/Pr, professional phrases (médecin traitant...), before a role, under a recipient header;"
        " lower-case names after a title",
        lambda note: (
            doctor_context(note.view, note.folded, note.matches)
            + lower_case_names(note.view, note.names, note.matches, doctor=True)
        ),
    ),
    LabellingFunction(
        "staff_lists",
        ("DOCTOR",),
        ("context:staff_list",),
        "names listed under a staff heading (Internes, Secrétariat...)",
        lambda note: staff_lists(note.view, note.folded),
    ),
    LabellingFunction(
        "table_columns",
        ("PATIENT", "DOCTOR", "DATE"),
        ("context:table_column", "context:table_date"),
        "cells under NOM/PRÉNOM and birth-date column titles of fixed-width and HTML tables"
        " (DOCTOR in a table of roles or RPPS numbers)",
        lambda note: table_cells(note.text),
    ),
    LabellingFunction(
        "dictation_initials",
        ("DOCTOR",),
        ("pattern:dictation_initials",),
        "the initials of a dictation reference (JM/AB)",
        lambda note: dictation_initials(note.text),
    ),
    LabellingFunction(
        "patient_context",
        ("PATIENT", "DOCTOR"),
        (
            "context:identity",
            "context:relative",
            "context:civility",
            "context:civility_directory",
            "context:lower_case_civility",
        ),
        "names in identity fields, after kinship words and civilities (a DOCTOR when the directory knows it),"
        " lower-case ones included",
        lambda note: (
            patient_context(
                note.view, note.folded, {(c.start, c.end) for c in note.candidates_of("directory")}, note.matches
            )
            + lower_case_names(note.view, note.names, note.matches, doctor=False)
        ),
        reads=("directory",),
    ),
    LabellingFunction(
        "patient_names",
        ("PATIENT",),
        ("metadata:name", "patient:lastname", "patient:firstname", "patient:firstname_unknown_last"),
        "runs of the patient's own names (typos included), from the metadata",
        _patient_names,
        needs=(PATIENT,),
    ),
    LabellingFunction(
        "metadata_confirmed",
        ("ZIP", "DATE", "PHONE", "EMAIL"),
        ("metadata:zip", "metadata:birthdate", "metadata:phone", "metadata:email"),
        "postcodes, birth years, phones and e-mails equal to the patient's",
        _confirmed_by_metadata,
        needs=(PATIENT,),
        reads=("emails", "phones", "dates", "zips"),
    ),
    LabellingFunction(
        "patient_address",
        ("STR",),
        ("patient:address",),
        "the patient's own address (street or lieu-dit) from the metadata, case and accents ignored",
        lambda note: address_from_metadata(note.folded, note.patient),
        needs=(PATIENT,),
    ),
    LabellingFunction(
        "streets",
        ("STR",),
        ("address:street", "address:postbox", "address:place", "address:lieu_dit"),
        "street addresses announced by a street type (rue, avenue, lieu-dit...), post boxes, buildings, staircases, "
        "lieux-dits between an address cue and a postcode or on their own line between a street and its postcode",
        lambda note: (
            lines_between_street_and_zip(note.view, streets(note.view), note.candidates_of("zips"))
            + places_before_zip(note.view, note.candidates_of("zips"))
        ),
        reads=("zips",),
    ),
    LabellingFunction(
        "gazetteer_streets",
        ("STR",),
        ("gazetteer:street",),
        "street names of the BAN",
        lambda note: gazetteer_streets(note.view, note.matches, note.candidates_of("zips")),
        needs=(MATCHER,),
        reads=("zips",),
    ),
    LabellingFunction(
        "foreign_postcodes",
        ("ZIP",),
        ("address:zip_foreign",),
        "postcodes of a foreign address (1000 Bruxelles, 4000-123 Porto, 00100 Rome, Italie)",
        lambda note: foreign_postcodes(note.view),
    ),
    LabellingFunction(
        "cities",
        ("VILLE",),
        (
            "address:city_after_zip",
            "address:city_before_zip",
            "context:city",
            "context:dateline",
            "address:arrondissement",
            "address:city_after_street",
        ),
        "cities next to a postcode, after a cue (née à...), in datelines (Rennes, le 3 mars), before an arrondissement,"
        " after a numbered street (12 rue de Siam à Brest)",
        _cities,
        reads=("zips", "dates", "foreign_postcodes", "streets"),
    ),
    LabellingFunction(
        "communes",
        ("VILLE",),
        ("gazetteer:commune",),
        "communes of the BAN",
        lambda note: gazetteer_places(note.view, note.matches, note.candidates_of("zips")),
        needs=(MATCHER,),
        reads=("zips",),
    ),
    LabellingFunction(
        "zips_before_city",
        ("ZIP",),
        ("pattern:zip_city_confirmed",),
        "bare five-digit numbers confirmed as postcodes by a city right after them",
        _confirmed_zips,
        reads=("zips", "cities", "communes"),
    ),
)

#: The second pass, after the candidates are resolved: kept names found again elsewhere in the note.
#: Listed, switched off and counted like the others; the labeller runs it itself (:mod:`deid_ds.label.propagate`).
PROPAGATION = LabellingFunction(
    "propagation",
    ("PATIENT", "DOCTOR"),
    ("propagation:",),
    "repetitions of the names kept by the first resolution, elsewhere in the note",
    lambda note: [],
    needs=(KEPT,),
)

#: Every named function, the candidates' ones then the propagation.
ALL: tuple[LabellingFunction, ...] = (*FUNCTIONS, PROPAGATION)
BY_NAME: dict[str, LabellingFunction] = {f.name: f for f in ALL}


def check_names(names: Iterable[str]) -> frozenset[str]:
    """``names`` as a frozenset, each the name of a labelling function (an :class:`InputError` names the unknown)."""
    names = frozenset(names)
    unknown = sorted(names - BY_NAME.keys())
    if unknown:
        raise InputError(
            f"unknown labelling function{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
            f"(known: {', '.join(f.name for f in ALL)}; `deid-ds weak-label --rules` lists them)"
        )
    return names


def function_of_source(source: str) -> str | None:
    """The name of the function whose candidates carry ``source`` (None for a source no function gives)."""
    function = _BY_SOURCE.get(source)
    if function is None and ":" in source:
        function = _BY_SOURCE.get(source[: source.index(":") + 1])
    return function


_BY_SOURCE: dict[str, str] = {source: f.name for f in ALL for source in f.sources}


def counts_per_function(per_source: Mapping[str, int]) -> dict[str, int]:
    """Spans per function (every function, zeros included, in the order of :data:`ALL`) from spans per source."""
    counts = dict.fromkeys(BY_NAME, 0)
    for source, n in per_source.items():
        name = function_of_source(source)
        if name is not None:
            counts[name] += n
    return counts


def functions_table() -> str:
    """The labelling functions, one a row, for ``deid-ds weak-label --rules``."""
    from deid_ds.report import format_table

    rows = [[f.name, ",".join(f.labels), f.needs_text(), f.description] for f in ALL]
    return format_table(["function", "labels", "needs", "finds"], rows)
