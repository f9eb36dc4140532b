"""Generate a whole sample (notes, gold, knowledge bases) and write it: the API behind ``deid-ds synth``.

Reproducibility is the contract: one ``random.Random`` per concern, all derived from ``seed`` (never the
global generator, never ``hash()``), sorted outputs, Parquet written with a fixed schema and gzip with
``mtime=0``. The same configuration gives the same bytes.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from deid_ds.io_utils import atomic_path, atomic_write_text
from deid_ds.model import LABELS
from deid_ds.synth import kb
from deid_ds.synth.context import NoteContext
from deid_ds.synth.documents import DOCUMENT_TYPES
from deid_ds.synth.html_builder import Encoding, HtmlDoc
from deid_ds.synth.institutions import build_hospitals
from deid_ds.synth.metadata import cdw_metadata
from deid_ds.synth.pools import DEPARTEMENTS
from deid_ds.synth.world import Hospital, Patient, WorldBuilder

#: Columns of the notes table (the input contract of the pipeline).
NOTE_COLUMNS: tuple[str, ...] = ("id_document", "id_patient", "doc_type", "html", "firstname", "lastname", "birthdate",
                                 "address", "zip", "city", "phone", "email")
GOLD_COLUMNS: tuple[str, ...] = ("id_document", "label", "html_start", "html_end", "text")
#: Phrasing families per ``--phrasing``: ``unseen`` (family 2, :mod:`deid_ds.synth.unseen`) is a test style kept out
#: of ``all``, so that ``all`` corpora stay what they were and nothing tuned on them has seen family 2.
PHRASINGS = {"train": (0,), "heldout": (1,), "all": (0, 1), "unseen": (2,)}
#: Notes are dated between these days; ages are computed at each note's date.
FIRST_DAY, LAST_DAY = date(2014, 1, 1), date(2023, 12, 31)
ANNUAIRE_FILE = "PS_LibreAcces_Personne_activite_202401150830.txt"


@dataclass(frozen=True)
class SynthConfig:
    """Options of a generated sample; see ``deid-ds synth --help`` for their meaning."""

    notes: int = 300
    patients: int | None = None  # default: one patient for about four notes
    seed: int = 1
    missing_professionals: float = 0.15
    missing_streets: float = 0.2
    noise: float = 0.3
    phrasing: str = "train"
    distractor_professionals: int = 2500
    distractor_streets: int = 20  # per commune, on average (three times more in the big towns)

    def __post_init__(self) -> None:
        if self.notes < 1:
            raise ValueError("notes must be at least 1")
        if self.patients is not None and not 1 <= self.patients <= self.notes:
            raise ValueError("patients must be between 1 and the number of notes")
        for name in ("missing_professionals", "missing_streets", "noise"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1")
        if self.phrasing not in PHRASINGS:
            raise ValueError(f"phrasing must be one of {', '.join(PHRASINGS)}")

    @property
    def n_patients(self) -> int:
        return self.patients or max(1, round(self.notes / 4))


@dataclass
class Corpus:
    """A generated sample in memory: notes rows, gold rows and knowledge-base contents."""

    config: SynthConfig
    notes: list[dict[str, str | None]]
    gold: list[dict[str, str | int]]
    ban: dict[str, list[list[str]]]  # département -> BAN rows
    annuaire: list[str]  # lines, header first
    families: dict[str, int] = field(default_factory=dict)  # id_document -> phrasing family
    world: WorldBuilder | None = field(default=None, repr=False)  # the people and places behind the notes

    def label_counts(self) -> dict[str, int]:
        counts = Counter(row["label"] for row in self.gold)
        return {label: counts.get(label, 0) for label in LABELS}

    def doc_type_counts(self) -> dict[str, tuple[int, int]]:
        """doc_type -> (notes, gold entities)."""
        notes = Counter(row["doc_type"] for row in self.notes)
        doc_of = {row["id_document"]: row["doc_type"] for row in self.notes}
        spans = Counter(doc_of[row["id_document"]] for row in self.gold)
        return {doc_type: (notes.get(doc_type, 0), spans.get(doc_type, 0)) for doc_type in DOCUMENT_TYPES}


def _patient_hospital(rng: random.Random, patient: Patient, hospitals: list[Hospital]) -> Hospital:
    local = [h for h in hospitals if h.address.commune.departement == patient.address.commune.departement]
    return rng.choice(local) if local and rng.random() < 0.85 else rng.choice(hospitals)


def generate_corpus(config: SynthConfig = SynthConfig(), *, progress: bool = False) -> Corpus:
    """Build the world, write every note with its gold spans, and derive the knowledge-base files."""
    from tqdm import tqdm

    seed = config.seed
    world = WorldBuilder(random.Random(f"world-{seed}"), missing_professionals=config.missing_professionals,
                         missing_streets=config.missing_streets)
    hospitals = build_hospitals(world)
    for _ in range(max(3, config.n_patients // 3)):
        world.new_gp()
    rng = random.Random(f"notes-{seed}")
    n_patients = config.n_patients
    patients = [world.new_patient(k, f"P{seed}-{k + 1:05d}", LAST_DAY) for k in range(n_patients)]
    weights = [rng.random() ** 2 + 0.05 for _ in range(n_patients)]
    per_patient = Counter(range(n_patients)) + Counter(rng.choices(range(n_patients), weights, k=config.notes - n_patients))
    doc_types = list(DOCUMENT_TYPES)
    doc_weights = [DOCUMENT_TYPES[d][2] for d in doc_types]
    families = PHRASINGS[config.phrasing]

    plans = []  # (patient, date, doc_type, note rng seed) in patient order
    for patient in patients:
        count = per_patient[patient.key]
        first_possible = max(FIRST_DAY, patient.birthdate + timedelta(days=30))
        span_days = (LAST_DAY - first_possible).days
        days = sorted(rng.randrange(span_days + 1) for _ in range(count))
        for index, offset in enumerate(days):
            plans.append((patient, first_possible + timedelta(days=offset), rng.choices(doc_types, doc_weights)[0], index, count))

    notes, gold, family_of = [], [], {}
    metadata = {p.key: cdw_metadata(p, random.Random(f"meta-{seed}-{p.key}"), config.noise) for p in patients}
    main_department = {}
    for number, (patient, when, doc_type, index, count) in enumerate(tqdm(plans, desc="synth", unit="note", disable=not progress)):
        note_rng = random.Random(f"note-{seed}-{number}")
        id_document = f"N{seed}-{number + 1:06d}"
        family = note_rng.choice(families)
        writer, kind, _ = DOCUMENT_TYPES[doc_type]
        hospital = _patient_hospital(note_rng, patient, hospitals)
        if patient.key not in main_department:
            main_department[patient.key] = note_rng.choice([d for d in hospital.departments.values() if d.kind in ("medical", "surgical")]).name
        department = _department_for(note_rng, hospital, kind, main_department[patient.key])
        author = _author_for(note_rng, department, doc_type, patient)
        dates = _dates(note_rng, patient, when, index)
        address = patient.old_address if patient.old_address is not None and index < count // 2 else patient.address
        mode = "raw" if note_rng.random() > min(1.0, 1.5 * config.noise) else note_rng.choice(("named", "named", "numeric", "mixed"))
        doc = HtmlDoc(note_rng, Encoding(mode, hex_numeric=note_rng.random() < 0.3), config.noise)
        extras = {}
        if note_rng.random() < 0.3:
            extras["specialist"] = [world.specialists[note_rng.randrange(len(world.specialists))] if world.specialists and note_rng.random() < 0.5
                                    else world.new_specialist(department.name)]
        if family == 2:  # its own writers and random stream: families 0 and 1 draw exactly what they drew before it
            from deid_ds.synth.unseen import WRITERS, UnseenContext

            writer = WRITERS[doc_type]
            ctx = UnseenContext(random.Random(f"unseen-{seed}-{number}"), family, config.noise, patient, hospital, department, author,
                                when, dates, doc, address, extras)
        else:
            ctx = NoteContext(note_rng, family, config.noise, patient, hospital, department, author, when, dates, doc, address, extras)
        writer(ctx)
        html = doc.html()
        notes.append({"id_document": id_document, "id_patient": patient.id_patient, "doc_type": doc_type, "html": html,
                      **metadata[patient.key]})
        family_of[id_document] = family
        for span in sorted(doc.spans, key=lambda s: s.html_start):
            gold.append({"id_document": id_document, "label": span.label, "html_start": span.html_start,
                         "html_end": span.html_end, "text": span.text})

    annuaire = kb.annuaire_lines(world, config.distractor_professionals, seed)
    kb.add_distractor_streets(world, config.distractor_streets)
    ban = {dep: kb.ban_rows(world, dep, seed) for dep in DEPARTEMENTS}
    return Corpus(config, notes, gold, ban, annuaire, family_of, world)


def _department_for(rng: random.Random, hospital: Hospital, kind: str, main: str):
    departments = hospital.departments
    if kind == "clinical":
        return departments.get(main) or rng.choice([d for d in departments.values() if d.kind in ("medical", "surgical")])
    if kind == "surgical":
        main_department = departments.get(main)
        if main_department is not None and main_department.kind == "surgical":
            return main_department
        return rng.choice([d for d in departments.values() if d.kind == "surgical"])
    return next(d for d in departments.values() if d.kind == kind)


def _author_for(rng: random.Random, department, doc_type: str, patient: Patient):
    if doc_type == "referral_letter":
        return patient.gp
    if doc_type == "convocation":
        return rng.choice(department.of_role("secrétaire"))
    roles = ("praticien", "chef de service", "interne") if doc_type in ("hospitalisation_report", "discharge_letter", "consultation") else ("praticien", "chef de service")
    return rng.choice([p for p in department.staff if p.role in roles])


def _dates(rng: random.Random, patient: Patient, when: date, index: int) -> dict[str, date]:
    """The other dates a note mentions, consistent with its own date and the patient's life."""
    birth = patient.birthdate
    earliest_surgery = birth + timedelta(days=365 * (15 if (when - birth).days > 365 * 17 else 0) + 30)
    surgery_span = max(1, (when - earliest_surgery).days - 60)
    return {
        "admission": when - timedelta(days=rng.randrange(2, 21)),
        "discharge": when,
        "prev": when - timedelta(days=rng.randrange(20, 900)),
        "next": when + timedelta(days=rng.randrange(7, 120)),
        "exam": when - timedelta(days=rng.randrange(1, 7)),
        "surgery": earliest_surgery + timedelta(days=rng.randrange(surgery_span)),
    }


# -- writing --------------------------------------------------------------------------------------------


def _write_parquet(rows: list[dict], columns: tuple[str, ...], types: dict[str, str], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow_types = {"string": pa.string(), "int64": pa.int64()}
    schema = pa.schema([pa.field(c, arrow_types[types.get(c, "string")], nullable=True) for c in columns])
    table = pa.Table.from_pydict({c: [row[c] for row in rows] for c in columns}, schema=schema)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def write_corpus(corpus: Corpus, out: str | Path, *, kb_dir: str | Path | None = None, command: str | None = None) -> dict[str, Path]:
    """Write ``out/notes.parquet``, ``out/gold.parquet``, ``out/gold.jsonl``, ``out/README.md`` and the
    knowledge-base files into ``kb_dir`` (default ``out/kb``). Every file is written atomically.

    Returns the paths written, by role.
    """
    from deid_ds.synth.summary import readme_text

    out = Path(out)
    kb_path = Path(kb_dir) if kb_dir is not None else out / "kb"
    out.mkdir(parents=True, exist_ok=True)
    kb_path.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    _write_parquet(corpus.notes, NOTE_COLUMNS, {}, out / "notes.parquet")
    written["notes"] = out / "notes.parquet"
    _write_parquet(corpus.gold, GOLD_COLUMNS, {"html_start": "int64", "html_end": "int64"}, out / "gold.parquet")
    written["gold"] = out / "gold.parquet"
    atomic_write_text(out / "gold.jsonl", "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in corpus.gold))
    written["gold_jsonl"] = out / "gold.jsonl"
    for dep, rows in corpus.ban.items():
        path = kb_path / f"adresses-{dep}.csv.gz"
        kb.write_ban(rows, path)
        written[f"ban_{dep}"] = path
    kb.write_annuaire(corpus.annuaire, kb_path / ANNUAIRE_FILE)
    written["annuaire"] = kb_path / ANNUAIRE_FILE
    kb_location = f"{kb_dir}" if kb_dir is not None else "kb/"
    atomic_write_text(out / "README.md", readme_text(corpus, command or canonical_command(corpus.config, out, kb_dir), kb_location))
    written["readme"] = out / "README.md"
    return written


def canonical_command(config: SynthConfig, out: str | Path, kb_dir: str | Path | None = None) -> str:
    """The ``deid-ds synth`` command line that regenerates ``config`` (every option spelled out)."""
    parts = ["deid-ds synth", f"--notes {config.notes}", f"--patients {config.n_patients}", f"--seed {config.seed}",
             f"--missing-professionals {config.missing_professionals:g}", f"--missing-streets {config.missing_streets:g}",
             f"--noise {config.noise:g}", f"--phrasing {config.phrasing}", f"--out {out}"]
    if kb_dir is not None:
        parts.append(f"--kb-dir {kb_dir}")
    defaults = SynthConfig()
    if config.distractor_professionals != defaults.distractor_professionals:
        parts.append(f"--distractor-professionals {config.distractor_professionals}")
    if config.distractor_streets != defaults.distractor_streets:
        parts.append(f"--distractor-streets {config.distractor_streets}")
    return " ".join(parts)


__all__ = ["Corpus", "SynthConfig", "generate_corpus", "write_corpus", "canonical_command"]
