"""The one internal model every annotation format is read into.

Prodigy answers, doccano exports and Label Studio exports all say the same thing: *this annotator*
labelled *these character ranges* of *this sentence* of *this document*. Reading them into one model
lets agreement and gold merging ignore where the answers came from, so that a team without a Prodigy
licence gets exactly the same figures from the open tools.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Span:
    """A labelled range of the sentence's text (``end`` exclusive)."""

    start: int
    end: int
    label: str


@dataclass(slots=True)
class Annotation:
    """One annotator's answer on one item (a sentence, or whatever unit the tool showed).

    ``tokens`` are ``(start, end)`` offsets into ``text``; ``html`` holds each token's ``(html_start,
    html_end)`` in the note's HTML when the answer carries them (Prodigy tasks built by ``weak-label`` or
    ``campaign``), else ``None``. ``item_key`` identifies the item across annotators: the document id and
    sentence index when known, else a key of the tool (Prodigy's ``_input_hash``, Label Studio's task id,
    a hash of the text for doccano). ``source`` is ``file:line`` (or ``file:task N``) for error messages.
    """

    annotator: str
    item_key: str
    text: str
    spans: list[Span]
    tokens: list[tuple[int, int]] | None = None
    html: list[tuple[int, int]] | None = None
    id_document: str | None = None
    id_patient: str | None = None
    doc_type: str | None = None
    sentence_index: int | None = None
    primary: str | None = None  # the annotator the campaign assigned the item to (``meta.annotator``)
    sentence_start: int | None = None  # offset of the sentence in the note's extracted text, when known
    continues: str | None = None  # label of the entity going on in the next sentence (campaign meta.continues)
    order: float = 0.0  # when it was saved (Prodigy ``_timestamp``) or its position in the input
    answer: str = "accept"  # only accepted answers become annotations; the others are counted by reason
    source: str = ""

    @property
    def document(self) -> str:
        """The unit of the bootstrap: the document when known, else the item itself."""
        return self.id_document if self.id_document is not None else f"item:{self.item_key}"


@dataclass
class ReadReport:
    """What the readers kept and what they left out, with reasons (nothing is dropped silently)."""

    files: int = 0
    lines: int = 0
    accepted: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason -> count

    def skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] += n

    def merge(self, other: ReadReport) -> None:
        self.files += other.files
        self.lines += other.lines
        self.accepted += other.accepted
        self.skipped.update(other.skipped)

    def to_dict(self) -> dict:
        return {
            "files": self.files,
            "records": self.lines,
            "accepted": self.accepted,
            "skipped": dict(sorted(self.skipped.items())),
        }
