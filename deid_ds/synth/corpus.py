"""Generate a whole sample (notes, gold, knowledge bases) and write it: the API behind ``deid-ds synth``.

Reproducibility is the contract: one ``random.Random`` per concern, all derived from ``seed`` (never the
global generator, never ``hash()``), sorted outputs, Parquet written with a fixed schema and gzip with
``mtime=0``. The same configuration gives the same bytes.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import partial
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from deid_ds.io.files import atomic_path, atomic_write_text
from deid_ds.model import LABELS
from deid_ds.synth import kb, third_parties
from deid_ds.synth.config import PHRASINGS, SynthConfig
from deid_ds.synth.context import NoteContext
from deid_ds.synth.documents import DOCUMENT_TYPES
from deid_ds.synth.exports import ExportContext, write_export_note
from deid_ds.synth.html_builder import Encoding, HtmlDoc
from deid_ds.synth.institutions import build_hospitals, build_hospitals_elsewhere
from deid_ds.synth.metadata import cdw_metadata
from deid_ds.synth.summary import SampleCounts
from deid_ds.synth.world import Hospital, Patient, WorldBuilder

#: Columns of the notes table (the input contract of the pipeline).
NOTE_COLUMNS: tuple[str, ...] = (
    "id_document",
    "id_patient",
    "doc_type",
    "html",
    "firstname",
    "lastname",
    "birthdate",
    "address",
    "zip",
    "city",
    "phone",
    "email",
)
GOLD_COLUMNS: tuple[str, ...] = ("id_document", "label", "html_start", "html_end", "text")
#: Notes are dated between these days; ages are computed at each note's date.
FIRST_DAY, LAST_DAY = date(2014, 1, 1), date(2023, 12, 31)
#: A patient's first note is at least this many days after birth; patients are drawn at least this old on LAST_DAY.
FIRST_NOTE_AGE_DAYS = 30
#: Notes per row group of notes.parquet (gold.parquet: the gold rows of those notes), and so per chunk the
#: writer holds in memory. A sample up to this size is one row group, as when it was written in one piece.
#: 1024 notes: ~4 MB of HTML per row group; resident memory plateaus ~110 MB lower than with 4096 at 20,000 notes.
CHUNK_NOTES = 1024
ANNUAIRE_FILE = "PS_LibreAcces_Personne_activite_202401150830.txt"


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
    #: (id_document, html_start) of the gold spans of the people around the patients (--third-parties)
    third_parties: set[tuple[str, int]] = field(default_factory=set, repr=False)

    def label_counts(self) -> dict[str, int]:
        counts = Counter(row["label"] for row in self.gold)
        return {label: counts.get(label, 0) for label in LABELS}

    def doc_type_counts(self) -> dict[str, tuple[int, int]]:
        """doc_type -> (notes, gold entities)."""
        notes = Counter(row["doc_type"] for row in self.notes)
        doc_of = {row["id_document"]: row["doc_type"] for row in self.notes}
        spans = Counter(doc_of[row["id_document"]] for row in self.gold)
        return {doc_type: (notes.get(doc_type, 0), spans.get(doc_type, 0)) for doc_type in DOCUMENT_TYPES}

    def counts(self) -> SampleCounts:
        """The counts the summary and the README report, as :func:`synthesize` gathers them while writing."""
        counts = SampleCounts(self.config)
        for note, gold in _gold_by_note(self.notes, self.gold):
            counts.add_note(note, gold)
        counts.ban_rows = {dep: len(rows) for dep, rows in self.ban.items()}
        counts.annuaire_rows = len(self.annuaire) - 1
        return counts


def _gold_by_note(notes: list[dict], gold: list[dict]) -> Iterator[tuple[dict, list[dict]]]:
    """Each note with its gold rows; ``gold`` lists them note after note, in the notes' order."""
    position = 0
    for note in notes:
        end = position
        while end < len(gold) and gold[end]["id_document"] == note["id_document"]:
            end += 1
        yield note, gold[position:end]
        position = end
    if position != len(gold):
        raise ValueError("gold rows are not in the order of the notes they belong to")


def _patient_hospital(rng: random.Random, patient: Patient, hospitals: list[Hospital]) -> Hospital:
    local = [h for h in hospitals if h.address.commune.departement == patient.address.commune.departement]
    return rng.choice(local) if local and rng.random() < 0.85 else rng.choice(hospitals)


def note_window(birthdate: date) -> tuple[date, date]:
    """The first and last day a patient's notes can be dated: from ``FIRST_NOTE_AGE_DAYS`` after birth (and not
    before ``FIRST_DAY``) to ``LAST_DAY``. Never empty for a patient of the world: :meth:`WorldBuilder.new_patient`
    draws everyone at least that old on ``LAST_DAY``."""
    return max(FIRST_DAY, birthdate + timedelta(days=FIRST_NOTE_AGE_DAYS)), LAST_DAY


def note_days(rng: random.Random, birthdate: date, count: int) -> list[date]:
    """``count`` sorted note days inside the patient's window (the same draws the generator has always made)."""
    first, last = note_window(birthdate)
    if first > last:  # only a caller bypassing new_patient's youngest age can get here; say so, not "empty range"
        raise ValueError(f"a patient born on {birthdate} has no day for a note before {LAST_DAY}")
    span_days = (last - first).days
    return [first + timedelta(days=offset) for offset in sorted(rng.randrange(span_days + 1) for _ in range(count))]


class NotePlan(NamedTuple):
    """One note to write: whose, on which day, of which type, and its rank among the patient's notes."""

    patient: Patient
    when: date
    doc_type: str
    index: int
    count: int


class SynthNote(NamedTuple):
    """One generated note: its row of the notes table, its gold rows (by offset) and its phrasing family."""

    row: dict[str, str | None]
    gold: list[dict[str, str | int]]
    family: int
    third_parties: tuple[int, ...] = ()  # html_start of the spans of the people around the patient


class Generation:
    """One sample being generated: the world first, then the notes one at a time, then the knowledge bases.

    Why a generator and not lists: a corpus of the study's size (878,217 notes, ~20 GB as Python rows) does not
    fit in memory. Notes come out in patient order and each patient is let go once planned, so what stays in
    memory is the world the knowledge-base files list (streets, professionals), not the notes. Every draw
    is the one the in-memory generator made, in the same order: the output is the same for a given seed.
    """

    def __init__(self, config: SynthConfig) -> None:
        seed = self.seed = config.seed
        self.config = config
        self.world = world = WorldBuilder(
            random.Random(f"world-{seed}"),
            missing_professionals=config.missing_professionals,
            missing_streets=config.missing_streets,
            geography=config.region,
            geo_rng=random.Random(f"geo-{seed}"),
        )
        self.hospitals = build_hospitals(world)
        if world.france:  # after the Breton ones, which are drawn as they always were
            self.hospitals += build_hospitals_elsewhere(world)
        for _ in range(max(3, config.n_patients // 3)):
            world.new_gp()
        self.rng = rng = random.Random(f"notes-{seed}")
        n_patients = config.n_patients
        # all patients before any note: specialists drawn while writing notes come from the same world stream
        self._patients: list[Patient | None] = [
            world.new_patient(k, f"P{seed}-{k + 1:05d}", LAST_DAY, youngest_days=FIRST_NOTE_AGE_DAYS)
            for k in range(n_patients)
        ]
        weights = [rng.random() ** 2 + 0.05 for _ in range(n_patients)]
        self._per_patient = Counter(range(n_patients)) + Counter(
            rng.choices(range(n_patients), weights, k=config.notes - n_patients)
        )
        self._exhausted = False

    def plans(self) -> Iterator[NotePlan]:
        """The notes to write, patient after patient (each patient is dropped from the list once planned)."""
        rng, doc_types = self.rng, list(DOCUMENT_TYPES)
        doc_weights = [DOCUMENT_TYPES[d][2] for d in doc_types]
        for key, patient in enumerate(self._patients):
            if patient is None:
                raise RuntimeError("a generation's notes are planned once: make a new Generation to plan them again")
            self._patients[key] = None
            count = self._per_patient[patient.key]
            for index, when in enumerate(note_days(rng, patient.birthdate, count)):
                yield NotePlan(patient, when, rng.choices(doc_types, doc_weights)[0], index, count)

    def notes(self, *, progress: bool = False) -> Iterator[SynthNote]:
        """Write every planned note with its gold spans; the world is complete once this is exhausted."""
        config, seed, world, hospitals = self.config, self.seed, self.world, self.hospitals
        families = PHRASINGS[config.phrasing]
        metadata: dict[str, str | None] = {}
        current = -1  # notes come patient after patient: what is drawn once per patient is kept for the current one
        main_department = ""
        plans = tqdm(self.plans(), desc="synth", unit="note", total=config.notes, disable=not progress)
        for number, (patient, when, doc_type, index, count) in enumerate(plans):
            if patient.key != current:  # each patient's record has its own stream: drawn at its first note
                metadata = cdw_metadata(
                    patient,
                    random.Random(f"meta-{seed}-{patient.key}"),
                    config.noise,
                    flaws=random.Random(f"flaws-{seed}-{patient.key}") if world.france else None,
                )
                current, main_department = patient.key, ""
            note_rng = random.Random(f"note-{seed}-{number}")
            id_document = f"N{seed}-{number + 1:06d}"
            family = note_rng.choice(families)
            writer, kind, _ = DOCUMENT_TYPES[doc_type]
            hospital = _patient_hospital(note_rng, patient, hospitals)
            if not main_department:
                main_department = note_rng.choice(
                    [d for d in hospital.departments.values() if d.kind in ("medical", "surgical")]
                ).name
            department = _department_for(note_rng, hospital, kind, main_department)
            author = _author_for(note_rng, department, doc_type, patient)
            dates = _dates(note_rng, patient, when, index)
            address = patient.old_address if patient.old_address is not None and index < count // 2 else patient.address
            mode = (
                "raw"
                if note_rng.random() > min(1.0, 1.5 * config.noise)
                else note_rng.choice(("named", "named", "numeric", "mixed"))
            )
            doc = HtmlDoc(note_rng, Encoding(mode, hex_numeric=note_rng.random() < 0.3), config.noise)
            extras = {}
            if note_rng.random() < 0.3:
                extras["specialist"] = [
                    world.specialists[note_rng.randrange(len(world.specialists))]
                    if world.specialists and note_rng.random() < 0.5
                    else world.new_specialist(department.name)
                ]
            # families 2 to 4 have their own writers and random streams: families 0 and 1 draw exactly what
            # they drew before those existed
            if family >= 3:  # the export styles
                context_class, context_rng = ExportContext, random.Random(f"export-{seed}-{number}")
                writer = partial(write_export_note, doc_type=doc_type)
            elif family == 2:
                from deid_ds.synth.unseen import WRITERS, UnseenContext

                context_class, context_rng, writer = (
                    UnseenContext,
                    random.Random(f"unseen-{seed}-{number}"),
                    WRITERS[doc_type],
                )
            else:
                context_class, context_rng = NoteContext, note_rng
            ctx = context_class(
                context_rng,
                family,
                config.noise,
                patient,
                hospital,
                department,
                author,
                when,
                dates,
                doc,
                address,
                extras,
            )
            written = writer(ctx)  # the export writers say which style they drew
            style = written if family >= 3 else "prose"
            people: tuple[int, ...] = ()
            share = config.third_party_share(family)
            if share:  # a stream of its own: the notes without a passage are byte for byte what they were
                people_rng = random.Random(f"people-{seed}-{number}")
                if people_rng.random() < share:
                    born = patient.birthdate
                    age = when.year - born.year - ((when.month, when.day) < (born.month, born.day))
                    spans = third_parties.write_passage(people_rng, doc, patient, age, style)
                    people = tuple(span.html_start for span in spans)
            row = {
                "id_document": id_document,
                "id_patient": patient.id_patient,
                "doc_type": doc_type,
                "html": doc.html(),
                **metadata,
            }
            gold = [
                {
                    "id_document": id_document,
                    "label": span.label,
                    "html_start": span.html_start,
                    "html_end": span.html_end,
                    "text": span.text,
                }
                for span in sorted(doc.spans, key=lambda s: s.html_start)
            ]
            if config.text_noise:  # its own stream: every other draw is the one a clean corpus makes
                _perturb_note(row, gold, config.text_noise, random.Random(f"perturb-{seed}-{number}"))
            yield SynthNote(row, gold, family, people)
        self._exhausted = True

    def knowledge_bases(self) -> Iterator[tuple[str, Iterable[list[str]] | list[str]]]:
        """``("annuaire", lines)``, then ``(département, BAN rows)`` for each: one file's rows at a time, drawn in
        the order the world's random stream has always drawn them (the directory's distractors, then the streets')."""
        if not self._exhausted:
            raise RuntimeError("the knowledge bases list the people and streets of the notes: generate the notes first")
        config, world = self.config, self.world
        yield "annuaire", kb.annuaire_lines(world, config.distractor_professionals, self.seed)
        kb.add_distractor_streets(world, config.distractor_streets)
        for dep in world.departements:  # lazily: each département's rows are written as they are drawn
            yield dep, kb.iter_ban_rows(world, dep, self.seed)


def _perturb_note(row: dict, gold: list[dict], level: int, rng: random.Random) -> None:
    """Perturb a note's text in place (``--text-noise``, :mod:`deid_ds.synth.perturb`): its HTML and its gold
    rows, whose offsets and text then read exactly the perturbed entities."""
    from deid_ds.segmentation.html_text import html_to_text
    from deid_ds.synth.perturb import perturb_html

    spans = [(span["html_start"], span["html_end"], span["label"]) for span in gold]
    row["html"], moved = perturb_html(row["html"], spans, level, rng)
    parsed = html_to_text(row["html"])
    for span, (start, end, _) in zip(gold, moved, strict=True):
        text_start, text_end = parsed.text_span(start, end)
        span.update(html_start=start, html_end=end, text=parsed.text[text_start:text_end])


def generate_corpus(config: SynthConfig = SynthConfig(), *, progress: bool = False) -> Corpus:
    """Build the world, write every note with its gold spans, and derive the knowledge-base files, in memory.

    For a large sample use :func:`synthesize`, which writes as it generates and gives the same files.
    """
    generation = Generation(config)
    notes, gold, family_of, people = [], [], {}, set()
    for note in generation.notes(progress=progress):
        notes.append(note.row)
        gold.extend(note.gold)
        family_of[note.row["id_document"]] = note.family
        people.update((note.row["id_document"], start) for start in note.third_parties)
    files = {name: list(rows) for name, rows in generation.knowledge_bases()}
    annuaire = files.pop("annuaire")
    return Corpus(config, notes, gold, files, annuaire, family_of, generation.world, people)


def _department_for(rng: random.Random, hospital: Hospital, kind: str, main: str):
    departments = hospital.departments
    if kind == "clinical":
        return departments.get(main) or rng.choice(
            [d for d in departments.values() if d.kind in ("medical", "surgical")]
        )
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
    roles = (
        ("praticien", "chef de service", "interne")
        if doc_type in ("hospitalisation_report", "discharge_letter", "consultation")
        else ("praticien", "chef de service")
    )
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


class _ParquetChunks:
    """A Parquet file written one row group per chunk, with the schema the pipeline reads (fixed, so that an
    empty chunk or a column of nulls does not change it)."""

    def __init__(self, path: Path, columns: tuple[str, ...], types: dict[str, str]) -> None:
        arrow_types = {"string": pa.string(), "int64": pa.int64()}
        self.columns = columns
        self.schema = pa.schema([pa.field(c, arrow_types[types.get(c, "string")], nullable=True) for c in columns])
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self.written = False

    def write(self, rows: list[dict]) -> None:
        if rows or not self.written:
            self.writer.write_table(
                pa.Table.from_pydict({c: [row[c] for row in rows] for c in self.columns}, schema=self.schema)
            )
            self.written = True

    def close(self) -> None:
        if not self.written:  # no row at all: an empty table, as pq.write_table writes one
            self.write([])
        self.writer.close()


@contextmanager
def _table_files(out: Path) -> Iterator[Callable[[list[dict], list[dict]], None]]:
    """Yield ``write(notes, gold)``, which appends a chunk to notes.parquet, gold.parquet and gold.jsonl.

    The three are written to temporary files beside their destinations and moved into place together when
    the block ends without error: an interrupted run leaves the previous sample's tables as they were.
    """
    with ExitStack() as stack:
        notes_tmp, gold_tmp, jsonl_tmp = (
            stack.enter_context(atomic_path(out / name)) for name in ("notes.parquet", "gold.parquet", "gold.jsonl")
        )
        notes_file = _ParquetChunks(notes_tmp, NOTE_COLUMNS, {})
        stack.callback(notes_file.close)
        gold_file = _ParquetChunks(gold_tmp, GOLD_COLUMNS, {"html_start": "int64", "html_end": "int64"})
        stack.callback(gold_file.close)
        jsonl = stack.enter_context(open(jsonl_tmp, "w", encoding="utf-8", newline="\n"))

        def write(notes: list[dict], gold: list[dict]) -> None:
            if notes:
                notes_file.write(notes)
            if gold:
                gold_file.write(gold)
                jsonl.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in gold))

        yield write


def _chunks(notes: Iterable[tuple[dict, list[dict]]], size: int) -> Iterator[tuple[list[dict], list[dict]]]:
    """Group (note row, gold rows) pairs into chunks of ``size`` notes."""
    rows: list[dict] = []
    gold: list[dict] = []
    for row, spans in notes:
        rows.append(row)
        gold.extend(spans)
        if len(rows) == size:
            yield rows, gold
            rows, gold = [], []
    if rows:
        yield rows, gold


def _write_sample(
    config: SynthConfig,
    out: str | Path,
    notes: Iterable[tuple[dict, list[dict]]],
    knowledge_bases: Callable[[], Iterable[tuple[str, list]]],
    *,
    kb_dir: str | Path | None,
    command: str | None,
    chunk_notes: int,
    overwrite: bool = False,
) -> tuple[SampleCounts, dict[str, Path]]:
    """Write a sample's files as its notes come: the one place that writes a sample's files.

    ``knowledge_bases`` is called once every note is written (its files list the notes' people and streets).
    The tables go into place last, with the README, so a failure before the end leaves them untouched.
    ``out`` and ``kb_dir`` follow the output-directory policy of :mod:`deid_ds.io.output_dir`: written only
    when new, empty or signed by an earlier ``synth`` (else ``overwrite``), never the current or home
    directory; ``out`` is locked for the run, and both are signed.
    """
    from deid_ds.io.output_dir import check_output_dir, guarded_output, remove_stale_inside, write_marker

    if chunk_notes < 1:
        raise ValueError("chunk_notes must be at least 1")
    out = Path(out)
    kb_path = Path(kb_dir) if kb_dir is not None else out / "kb"
    check_output_dir(kb_path, "synth", overwrite=overwrite)
    with guarded_output(out, "synth", overwrite=overwrite):
        out.mkdir(parents=True, exist_ok=True)
        kb_path.mkdir(parents=True, exist_ok=True)
        for directory in (out, kb_path):
            remove_stale_inside(directory)  # the temporary files of a killed run (under the lock of out)
        result = _write_files(
            config, out, kb_path, notes, knowledge_bases, kb_dir=kb_dir, command=command, chunk_notes=chunk_notes
        )
        for directory in (out, kb_path):
            write_marker(directory, "synth", timestamp=False)
        return result


def _write_files(
    config: SynthConfig,
    out: Path,
    kb_path: Path,
    notes: Iterable[tuple[dict, list[dict]]],
    knowledge_bases: Callable[[], Iterable[tuple[str, list]]],
    *,
    kb_dir: str | Path | None,
    command: str | None,
    chunk_notes: int,
) -> tuple[SampleCounts, dict[str, Path]]:
    from deid_ds.synth.summary import readme_text

    counts = SampleCounts(config)
    written: dict[str, Path] = {}
    with _table_files(out) as write_tables:
        for rows, gold in _chunks(_counted(notes, counts), chunk_notes):
            write_tables(rows, gold)
        for name, rows in knowledge_bases():
            if name == "annuaire":
                kb.write_annuaire(rows, kb_path / ANNUAIRE_FILE)
                counts.annuaire_rows = len(rows) - 1
                written["annuaire"] = kb_path / ANNUAIRE_FILE
            else:
                path = kb_path / f"adresses-{name}.csv.gz"
                counts.ban_rows[name] = kb.write_ban(rows, path)
                written[f"ban_{name}"] = path
        kb_location = f"{kb_dir}" if kb_dir is not None else "kb/"
        atomic_write_text(
            out / "README.md", readme_text(counts, command or canonical_command(config, out, kb_dir), kb_location)
        )
    written.update(
        notes=out / "notes.parquet", gold=out / "gold.parquet", gold_jsonl=out / "gold.jsonl", readme=out / "README.md"
    )
    return counts, written


def _counted(notes: Iterable[tuple[dict, list[dict]]], counts: SampleCounts) -> Iterator[tuple[dict, list[dict]]]:
    for row, gold in notes:
        counts.add_note(row, gold)
        yield row, gold


def synthesize(
    config: SynthConfig,
    out: str | Path,
    *,
    kb_dir: str | Path | None = None,
    command: str | None = None,
    progress: bool = False,
    chunk_notes: int = CHUNK_NOTES,
    overwrite: bool = False,
) -> SampleCounts:
    """Generate a sample and write it as it is generated: ``deid-ds synth``.

    The files are those :func:`generate_corpus` then :func:`write_corpus` give, but only ``chunk_notes`` notes
    are in memory at a time, whatever ``config.notes``; what grows with the sample is the world (patients,
    streets and professionals the knowledge-base files list). Returns the counts the summary reports.
    """
    generation = Generation(config)
    notes = ((note.row, note.gold) for note in generation.notes(progress=progress))
    counts, _ = _write_sample(
        config,
        out,
        notes,
        generation.knowledge_bases,
        kb_dir=kb_dir,
        command=command,
        chunk_notes=chunk_notes,
        overwrite=overwrite,
    )
    return counts


def write_corpus(
    corpus: Corpus,
    out: str | Path,
    *,
    kb_dir: str | Path | None = None,
    command: str | None = None,
    chunk_notes: int = CHUNK_NOTES,
    overwrite: bool = False,
) -> dict[str, Path]:
    """Write ``out/notes.parquet``, ``out/gold.parquet``, ``out/gold.jsonl``, ``out/README.md`` and the
    knowledge-base files into ``kb_dir`` (default ``out/kb``). Every file is written atomically.

    Returns the paths written, by role.
    """

    def knowledge_bases() -> Iterator[tuple[str, list]]:
        yield "annuaire", corpus.annuaire
        yield from corpus.ban.items()

    _, written = _write_sample(
        corpus.config,
        out,
        _gold_by_note(corpus.notes, corpus.gold),
        knowledge_bases,
        kb_dir=kb_dir,
        command=command,
        chunk_notes=chunk_notes,
        overwrite=overwrite,
    )
    return written


def canonical_command(config: SynthConfig, out: str | Path, kb_dir: str | Path | None = None) -> str:
    """The ``deid-ds synth`` command line that regenerates ``config`` (every option spelled out)."""
    parts = [
        "deid-ds synth",
        f"--notes {config.notes}",
        f"--patients {config.n_patients}",
        f"--seed {config.seed}",
        f"--missing-professionals {config.missing_professionals:g}",
        f"--missing-streets {config.missing_streets:g}",
        f"--noise {config.noise:g}",
        f"--phrasing {config.phrasing}",
        f"--out {out}",
    ]
    if kb_dir is not None:
        parts.append(f"--kb-dir {kb_dir}")
    defaults = SynthConfig()
    if config.distractor_professionals != defaults.distractor_professionals:
        parts.append(f"--distractor-professionals {config.distractor_professionals}")
    if config.distractor_streets != defaults.distractor_streets:
        parts.append(f"--distractor-streets {config.distractor_streets}")
    if config.geography is not None:
        parts.append(f"--geography {config.geography}")
    if config.third_parties is not None:
        parts.append(f"--third-parties {config.third_parties:g}")
    if config.text_noise:
        parts.append(f"--text-noise {config.text_noise}")
    return " ".join(parts)


__all__ = ["Corpus", "Generation", "SynthConfig", "canonical_command", "generate_corpus", "synthesize", "write_corpus"]
