"""Summary tables of a generated sample, for the terminal and for the sample's README.

Both are computed from the generated data, never typed by hand, so that ``data/README.md`` cannot
drift from ``data/gold.parquet``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from deid_ds.model import LABELS
from deid_ds.synth.config import SynthConfig


@dataclass
class SampleCounts:
    """What the summary and the README say about a sample: counts only, gathered note by note as it is
    written (a sample of the study's size is never in memory as a whole)."""

    config: SynthConfig
    notes: int = 0
    spans: int = 0
    labels: Counter = field(default_factory=Counter)
    doc_notes: Counter = field(default_factory=Counter)
    doc_spans: Counter = field(default_factory=Counter)
    ban_rows: dict[str, int] = field(default_factory=dict)  # département -> rows
    annuaire_rows: int = 0  # header excluded
    _patients: set[str] = field(default_factory=set, repr=False)

    @property
    def patients(self) -> int:
        return len(self._patients)

    def add_note(self, row: dict, gold: list[dict]) -> None:
        self.notes += 1
        self.spans += len(gold)
        self._patients.add(row["id_patient"])
        self.doc_notes[row["doc_type"]] += 1
        self.doc_spans[row["doc_type"]] += len(gold)
        self.labels.update(span["label"] for span in gold)

    def label_counts(self) -> dict[str, int]:
        return {label: self.labels.get(label, 0) for label in LABELS}

    def doc_type_counts(self) -> dict[str, tuple[int, int]]:
        """doc_type -> (notes, gold entities)."""
        from deid_ds.synth.documents import DOCUMENT_TYPES

        return {
            doc_type: (self.doc_notes.get(doc_type, 0), self.doc_spans.get(doc_type, 0)) for doc_type in DOCUMENT_TYPES
        }


class Counted(Protocol):
    """What has counts to summarise: a :class:`~deid_ds.synth.corpus.Corpus` held in memory."""

    def counts(self) -> SampleCounts: ...


def _counts(sample: Counted | SampleCounts) -> SampleCounts:
    return sample if isinstance(sample, SampleCounts) else sample.counts()


def summary_rows(sample: Counted | SampleCounts) -> tuple[list[list[object]], list[list[object]]]:
    """(label rows, doc-type rows) with totals."""
    counts = _counts(sample)
    labels = counts.label_counts()
    label_rows: list[list[object]] = [[label, n] for label, n in labels.items()]
    label_rows.append(["total", sum(labels.values())])
    doc_rows: list[list[object]] = [[doc_type, n, spans] for doc_type, (n, spans) in counts.doc_type_counts().items()]
    doc_rows.append(["total", counts.notes, counts.spans])
    return label_rows, doc_rows


def summary_table(sample: Counted | SampleCounts) -> str:
    """The short summary printed at the end of ``deid-ds synth``: counts only, no note content."""
    from deid_ds.report import format_table

    counts = _counts(sample)
    label_rows, doc_rows = summary_rows(counts)
    kb_rows = [[f"adresses-{dep}.csv.gz", n] for dep, n in counts.ban_rows.items()]
    kb_rows.append(["PS_LibreAcces_Personne_activite", counts.annuaire_rows])
    return "\n\n".join(
        [
            format_table(["label", "entities"], label_rows),
            format_table(["doc_type", "notes", "entities"], doc_rows),
            format_table(["knowledge base file", "rows"], kb_rows),
            f"{counts.notes} notes, {counts.patients} patients, phrasing {counts.config.phrasing}",
        ]
    )


def _markdown(headers: list[str], rows: list[list[object]]) -> str:
    def cell(value: object) -> str:
        return f"{value:,}" if isinstance(value, int) else str(value)

    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---:" if i else "---" for i in range(len(headers))) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _where(config) -> str:
    """``Breton`` for the four départements every corpus before ``--geography france`` covers."""
    return "French" if config.region == "france" else "Breton"


def _phrasing_note(phrasing: str) -> str:
    if phrasing.startswith("exports"):
        return (
            "- Export styles (families 3 and 4: `exports`, `exports-heldout`): PDF-to-HTML and CDA renderings, "
            "fixed-width\n"
            "  `<pre>` exports, dictated reports, nurse transmissions, capital-letter letters and lab reports, "
            "each in a\n"
            "  development phrasing (family 3) and a held-out one (family 4)."
        )
    if phrasing == "unseen":
        return (
            "- Phrasing family `unseen` (family 2): a third house style (Word-exported pages, `NOM Prénom` names, "
            "`Rédigé par`,\n"
            "  `Destinataires :`, `Résidant au`, abbreviated street types, `3/2/21` and `03 fév. 2021` dates, "
            "`+33 (0)6` phones),\n"
            "  written apart from the `train` and `heldout` families and from the weak labeller's rules: a test "
            "set only."
        )
    return (
        "- Two phrasing families: `train` (family 0) and `heldout` (family 1, other layouts and wordings, for a test\n"
        "  set that measures generalisation); `--phrasing all` mixes them."
    )


def readme_text(sample: Counted | SampleCounts, command: str, kb_location: str = "kb/") -> str:
    """The README of a generated sample: what it is, how to regenerate it, what it holds."""
    counts = _counts(sample)
    label_rows, doc_rows = summary_rows(counts)
    c = counts.config
    patients = counts.patients
    kb_rows: list[list[object]] = [[f"`adresses-{dep}.csv.gz`", n] for dep, n in counts.ban_rows.items()]
    kb_rows.append(["`PS_LibreAcces_Personne_activite_*.txt`", counts.annuaire_rows])
    return f"""# Synthetic sample: French clinical HTML notes with gold annotations

Everything here is **synthetic**, written by `deid-ds synth` (module `deid_ds.synth`): no real patient,
professional, address or phone number. People, streets and phones are drawn at random from shipped pools;
communes, postcodes and INSEE codes are real {_where(c)} ones (départements {", ".join(sorted(counts.ban_rows))}).

Regenerate it byte for byte (same versions of deid-ds and pyarrow) with:

```
{command}
```

- {counts.notes:,} notes of {patients} patients, phrasing family `{c.phrasing}`, noise {c.noise:g},
  {c.missing_professionals:.0%} of mentioned professionals left out of the directory, {c.missing_streets:.0%} of
  mentioned streets left out of the BAN.
- `notes.parquet`: the notes table (`id_document`, `id_patient`, `doc_type`, `html` and the patient metadata
  `firstname`, `lastname`, `birthdate` as an ISO `YYYY-MM-DD` string, `address`, `zip`, `city`, `phone`,
  `email`; all strings, metadata fields nullable). The metadata disagrees with the notes the way a CDW's does:
  birth vs married name, all given names vs the one in use, capitals without accents, typos, previous
  address, missing fields.
- `gold.parquet` / `gold.jsonl`: one row per entity, `id_document`, `label`, `html_start`, `html_end` (offsets
  into `html`, end exclusive), `text` (the entity as it reads once tags are removed, references decoded and
  whitespace collapsed; a `&nbsp;` inside an entity reads as U+00A0). Annotations follow the annotation
  guidelines of deid-ds ([`docs/guidelines.md`](../docs/guidelines.md) in its repository); dictation initials
  `YK/CL` are two DOCTOR spans.
- Knowledge-base sources in `{kb_location}`, in the official formats (BAN `adresses-XX.csv.gz`, Annuaire Santé
  `PS_LibreAcces_Personne_activite_*.txt`), with thousands of entries no note mentions, as in the national files:

{_markdown(["file", "rows"], kb_rows)}

## What the notes contain

- Twelve document types, each with its own structure: letterheads in tables (hospital address, phones, fax,
  e-mail, the department's physicians), identity blocks, recipient blocks, "copie à" lists, signatures with
  dictation initials, running clinical prose with negations, dosages, times, ages and durations (not dates).
- Several notes per patient over ten years; patients who moved (older notes show the previous address).
- Every date, phone and address format of the guidelines; names in capitals, title case and initials; relatives
  (PATIENT), nurses and secretaries (DOCTOR); entities split by inline markup and written with character
  references; eponyms (Parkinson, Crohn, Glasgow, Leriche et Fontaine) and ordinary words that are also
  surnames or communes (`petite masse du bras`, `médecin de garde`, `voile du palais`), all unannotated.
{_phrasing_note(c.phrasing)}

## Entities per label

{_markdown(["label", "entities"], label_rows)}

## Notes and entities per document type

{_markdown(["doc_type", "notes", "entities"], doc_rows)}
"""
