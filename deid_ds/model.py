"""The data model every stage passes around: notes, sentences, tokens, labelled spans, and each note's fate.

Every piece of text carries two offset pairs: ``start``/``end`` into the plain text extracted from the
note, and ``html_start``/``html_end`` into the original HTML string. The first is what rules and models
work on; the second is what de-identification needs to mask the original document. Ends are exclusive.

These are plain dataclasses on purpose: no behaviour beyond small derived properties, so that they
pickle cheaply between worker processes and convert to Arrow rows without ceremony. One convention:
every record has ``slots=True`` (notes hold thousands of tokens); a value never changed once made is
also ``frozen`` (:class:`EntitySpan`, :class:`PatientMetadata`); records filled as a note is read or a run
goes on are not (:class:`Token`, :class:`Sentence`, :class:`Note`, :class:`DocumentStatus`,
:class:`DocumentTotals`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The eight entity types of the reference study, in the order used in reports.
LABELS: tuple[str, ...] = ("PATIENT", "DOCTOR", "DATE", "EMAIL", "PHONE", "STR", "ZIP", "VILLE")

#: Metadata columns a clinical data warehouse holds for the patient of a note (the input contract).
PATIENT_FIELDS: tuple[str, ...] = (
    "firstname",
    "lastname",
    "birthdate",
    "address",
    "zip",
    "city",
    "phone",
    "email",
)


@dataclass(slots=True)
class Token:
    """One token: its text, its offsets in the note's text and in the HTML source.

    ``ws`` tells whether whitespace follows the token in the text, which is what Prodigy's token
    format and detokenisation need. (Not frozen: a frozen dataclass is several times slower to build,
    and notes have thousands of tokens.)
    """

    text: str
    start: int
    end: int
    html_start: int
    html_end: int
    ws: bool = True


@dataclass(slots=True)
class Sentence:
    """A sentence of a note: its tokens and the offsets of its first and last token."""

    index: int
    text: str
    start: int
    end: int
    html_start: int
    html_end: int
    tokens: list[Token] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class EntitySpan:
    """A labelled entity with both offset pairs and the rule, gazetteer or model that produced it."""

    label: str
    start: int
    end: int
    html_start: int
    html_end: int
    text: str
    source: str = ""


@dataclass(frozen=True, slots=True)
class PatientMetadata:
    """What the warehouse knows of the note's patient; any field may be missing."""

    firstname: str | None = None
    lastname: str | None = None
    birthdate: str | None = None
    address: str | None = None
    zip: str | None = None
    city: str | None = None
    phone: str | None = None
    email: str | None = None


@dataclass(frozen=True, slots=True)
class InvalidText:
    """The value of a text column of the notes table that is not valid UTF-8 (a damaged export).

    Read in place of the note's ``html``: the note is failed with :attr:`reason` (no byte of it quoted),
    the rest of the run goes on.
    """

    column: str

    @property
    def reason(self) -> str:
        return f"{self.column} is not valid UTF-8 (a damaged export?)"


@dataclass(slots=True)
class Note:
    """One clinical note as read from the notes table (see docs/input.md)."""

    id_document: str
    id_patient: str | None
    html: str | bytes | InvalidText | None  # as read; bytes are decoded by html_to_text; None, InvalidText: failed
    doc_type: str | None = None
    patient: PatientMetadata = field(default_factory=PatientMetadata)
    #: The table gave no id (null, NaN): ``id_document`` is then ``FILE#rowN``, a name no spans table uses.
    id_missing: bool = False


#: The warning of a note the table gave no id (``documents.parquet``'s ``warnings``): the outputs name it
#: ``FILE#rowN``, which no spans table can name, so ``deidentify`` will refuse it.
MISSING_ID_WARNING = "id_document_missing"


@dataclass(slots=True)
class DocumentStatus:
    """The fate of one input note."""

    id_document: str
    id_patient: str | None
    status: str  # ok | empty | failed
    error: str | None = None
    n_chars: int = 0
    n_sentences: int = 0
    n_tokens: int = 0
    warnings: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class DocumentTotals:
    """What every stage that reads notes reports: each note ok, empty or failed (with its reason)."""

    documents: int = 0
    ok: int = 0
    empty: int = 0
    failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    #: Notes the table gave no id (null, NaN): named ``FILE#rowN`` in the outputs (:data:`MISSING_ID_WARNING`).
    documents_without_id: int = 0
    sentences: int = 0
    tokens: int = 0
    seconds: float = 0.0
