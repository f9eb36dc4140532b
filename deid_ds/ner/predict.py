"""``deid-ds predict``: tag notes with a trained Flair tagger, into the weak labeller's ``spans.parquet``.

Each note is parsed and segmented exactly as ``weak-label`` does (:func:`deid_ds.segmentation.notes.segment_note`
with the same :class:`~deid_ds.segmentation.segmenter.Segmenter` options), so the model sees the tokens it was trained
on: each sentence is the list of *our* token texts (the same :func:`~deid_ds.weak_labelling.render.flair_token`
rendering as the training files: whitespace inside a token becomes ``_``), never re-tokenised by Flair. The
sentences of a whole batch of notes are tagged together (sorted by length, ``mini_batch_size`` at a time:
:func:`tag_token_texts`, through :mod:`deid_ds.ner.direct` — the tagger's modules on tensors, Flair's spans
without its ``Sentence`` objects — or, for embeddings it does not know, :func:`deid_ds.ner.speed.tag_sentences`),
and each predicted entity — a Flair span, or a run of BIO/BIOES token tags (:func:`tags_to_spans`) for a model
that predicts tags — maps back from token indices to text offsets, then to HTML offsets through the
note's offset map (``parsed.html_span``).

Output directory (replaced atomically, as a whole):

* ``spans.parquet``: the weak labeller's schema exactly (:func:`~deid_ds.weak_labelling.schemas.spans_schema`),
  ``source = "model"`` (with ``--with-rules``, the hybrid's source: see :mod:`deid_ds.ner.hybrid`);
* ``documents.parquet``: one row per input note — ``ok``, ``empty`` or ``failed`` with its reason, and
  its counts; no content;
* ``report.json``: documents, sentences, tokens, entities per label (and per source), labels the model
  predicted outside the eight (dropped, counted), time spent tagging and sentences per second.

Only the eight labels of :data:`deid_ds.model.LABELS` are written. An entity the segmenter cut at a
sentence boundary (a sentence longer than ``max_tokens`` split in its middle) comes out as two spans,
as it would from a human reading sentence by sentence.

**Parallelism.** On a GPU, one process (the GPU is the parallelism, and tagging batches of sentences
keeps it busy). On CPU with ``workers > 1``, batches of notes go to worker processes
(:func:`deid_ds.engine.parallel.ordered_map`, ``spawn``) that each load the model once and use one torch
thread (``--threads``: up to ``cores / workers``, :func:`deid_ds.ner.runtime.thread_count`); results come
back in input order, so the output does not depend on the worker count.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from deid_ds.defaults import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS, DEFAULT_MINI_BATCH
from deid_ds.errors import InputError
from deid_ds.label.labeller import LabelConfig
from deid_ds.model import LABELS, MISSING_ID_WARNING, DocumentStatus, DocumentTotals, Note
from deid_ds.report import add_counts
from deid_ds.segmentation.notes import SegmentOptions, segment_note, segmenter_for

MODEL_FILES = ("best-model.pt", "final-model.pt")
MODEL_SOURCE = "model"

#: Why a note whose ``id_document`` an earlier note already had is not tagged: spans are keyed by
#: document id, so the second note's spans would be mixed with the first's (same reason as weak-label).
DUPLICATE_REASON = "duplicate id_document (an earlier note of the input has the same id)"


# --------------------------------------------------------------------------------------------------
# Tags and spans (pure)


def tags_to_spans(tags: Sequence[str]) -> list[tuple[int, int, str]]:
    """Entities ``(first token, last token inclusive, label)`` of a sequence of BIO, BIOES or IOB1 tags.

    Lenient on purpose, since a model's output need not be well formed: an ``I-``/``E-`` tag that does
    not continue an open entity of its label (after ``O``, or after another label) starts a new entity
    rather than being dropped — dropping it would leave an identifier unmasked; ``B-``/``S-`` always
    start one; ``S-`` and ``E-`` close it; a bare label (``DATE``) reads as ``I-DATE``; ``O``, empty and
    ``<unk>``-like tags close any open entity.
    """
    spans: list[tuple[int, int, str]] = []
    open_first = -1
    open_label: str | None = None

    def close(last: int) -> None:
        nonlocal open_first, open_label
        if open_label is not None:
            spans.append((open_first, last, open_label))
        open_first, open_label = -1, None

    for i, tag in enumerate(tags):
        if not tag or tag == "O" or tag.startswith("<"):
            close(i - 1)
            continue
        prefix, sep, label = tag.partition("-")
        if not sep or prefix not in ("B", "I", "E", "S"):
            prefix, label = "I", tag
        if prefix in ("B", "S") or open_label != label:
            close(i - 1)
            open_first, open_label = i, label
        if prefix in ("S", "E"):
            close(i)
    close(len(tags) - 1)
    return spans


def sentence_entities(sentence, label_type: str) -> list[tuple[int, int, str, float]]:
    """A tagged ``flair.data.Sentence``'s entities as token ranges ``(first, last inclusive, label, score)``.

    Flair turns a span tagger's BIOES output into spans itself (``get_spans``), each with its score (the
    mean of its tokens' scores, Flair's own choice in ``get_spans_from_bio``); a model predicting plain
    token tags (or ``force_token_predictions``) leaves labels on the tokens, read with
    :func:`tags_to_spans`, and the span's score is the **mean** of its tokens' scores too — the same
    definition as Flair's span path, so a threshold means the same on both paths (the minimum would
    punish long spans, a date or an address, for one hesitant token). Scores are in (0, 1], rounded to
    :data:`SCORE_DECIMALS` decimals: the last bits of a float depend on the torch thread count and the
    batch (a run with more workers must write the same file), and a confidence needs no more.
    """
    spans = sentence.get_spans(label_type)
    if spans:
        position = {id(token): i for i, token in enumerate(sentence.tokens)}
        entities = []
        for span in spans:
            label = span.get_label(label_type)
            entities.append(
                (position[id(span.tokens[0])], position[id(span.tokens[-1])], label.value, _rounded(label.score))
            )
        return entities
    labels = [token.get_label(label_type, zero_tag_value="O") for token in sentence.tokens]
    return [
        (first, last, label, _rounded(sum(float(labels[i].score) for i in range(first, last + 1)) / (last - first + 1)))
        for first, last, label in tags_to_spans([label.value for label in labels])
    ]


SCORE_DECIMALS = 4


def _rounded(score: float) -> float:
    """A span's score rounded to :data:`SCORE_DECIMALS` decimals, never 0 (a span predicted has some confidence)."""
    return max(round(float(score), SCORE_DECIMALS), 10.0**-SCORE_DECIMALS)


# --------------------------------------------------------------------------------------------------
# The model, once per process


def model_file(model: str | Path) -> Path:
    """The tagger file of ``model``: the file itself, or ``best-model.pt`` (else ``final-model.pt``) in it."""
    path = Path(model)
    if path.is_file():
        return path
    if path.is_dir():
        for name in MODEL_FILES:
            if (path / name).is_file():
                return path / name
        raise InputError(
            f"{path}: no {' or '.join(MODEL_FILES)} in this directory "
            f"(train one with deid-ds train WEAKDIR --out {path})"
        )
    raise InputError(f"{path}: model directory or file not found")


_TAGGERS: dict[tuple[str, str], object] = {}


def load_tagger(path: str, device: str):
    """The ``SequenceTagger`` at ``path`` on ``device``, loaded once per process (workers keep theirs).

    Its character embeddings are computed by :class:`deid_ds.ner.speed.BatchedCharacterEmbeddings`:
    the same output, faster.
    """
    key = (path, device)
    tagger = _TAGGERS.get(key)
    if tagger is None:
        from deid_ds.ner.runtime import flair_console, select_device

        select_device(device)
        with flair_console(False):
            from flair.models import SequenceTagger

            import deid_ds.ner.knowledge  # noqa: F401 - registers the knowledge embedding a model may hold

            try:
                tagger = SequenceTagger.load(path)
            except Exception as error:
                raise InputError(f"{path}: not a Flair SequenceTagger ({type(error).__name__})") from None
        if not isinstance(tagger, SequenceTagger):
            raise InputError(f"{path}: holds a {type(tagger).__name__}, not a SequenceTagger")
        tagger.eval()
        from deid_ds.ner.speed import speed_up

        speed_up(tagger)
        _TAGGERS[key] = tagger
    return tagger


# --------------------------------------------------------------------------------------------------
# One batch


@dataclass(frozen=True)
class PredictOptions:
    """What a worker needs to tag a batch exactly as the parent would (picklable)."""

    model: str
    segment: SegmentOptions
    device: str = "cpu"
    mini_batch_size: int = DEFAULT_MINI_BATCH
    threads: int | None = None
    rules: LabelConfig | None = None  # hybrid: the weak labeller's configuration
    add: float = 0.0  # hybrid: a model-only span's least score (deid_ds.ner.hybrid)
    override: float = 0.0  # hybrid: the least score of a model span that overrides a weak rule span
    merge: bool = True  # hybrid: False writes the model's and the rules' spans unmerged (for calibrate)
    features: LabelConfig | None = None  # a model with knowledge features: the labeller that computes them
    direct: bool = True  # False: tag through Flair's Sentence objects (deid_ds.ner.direct gives the same spans)


@dataclass(frozen=True)
class PredictJob:
    """One input batch (picklable: sent to worker processes)."""

    notes: list[Note]
    options: PredictOptions
    duplicates: frozenset[int] = frozenset()


@dataclass
class BatchResult:
    """A batch's two tables as flat columns, and its counts (cheap to pickle back from a worker)."""

    documents: dict[str, list]
    spans: dict[str, list]
    sentences: int = 0
    tokens: int = 0
    ignored_labels: dict[str, int] = field(default_factory=dict)
    seconds_tagging: float = 0.0


def documents_schema():
    """``documents.parquet`` of ``predict``: segment's columns, the document type and the entities written."""
    from deid_ds.io.schemas import document_schema

    fields = list(document_schema())
    fields.insert(2, pa.field("doc_type", pa.string()))
    warnings = next(i for i, f in enumerate(fields) if f.name == "warnings")
    fields.insert(warnings, pa.field("n_entities", pa.int32()))
    return pa.schema(fields)


def _failed(status: DocumentStatus, reason: str) -> DocumentStatus:
    return DocumentStatus(
        status.id_document, status.id_patient, "failed", reason, status.n_chars, 0, 0, status.warnings
    )


def predict_batch(job: PredictJob) -> BatchResult:
    """Segment, tag (and, in hybrid mode, label and merge) one batch of notes. Module level: workers import it."""
    from deid_ds.engine.parallel import relaxed_gc
    from deid_ds.weak_labelling.render import flair_token
    from deid_ds.weak_labelling.schemas import spans_schema

    options = job.options
    if options.threads:
        from deid_ds.ner.runtime import set_threads

        set_threads(options.threads)
    tagger = load_tagger(options.model, options.device)
    segmenter = segmenter_for(options.segment)
    labeller = None
    if options.rules is not None:
        from deid_ds.weak_labelling.note import labeller_for

        labeller = labeller_for(options.rules)
    featurer = None
    if options.features is not None:
        from deid_ds.label.features import feature_columns
        from deid_ds.label.lookup import NoteLookup
        from deid_ds.weak_labelling.note import labeller_for

        featurer = labeller_for(options.features)
    # A hybrid whose rules are the features' labeller looks each note up once (one matcher pass, one fold):
    # the rules read the features' lookup, and only their spans are kept until the batch is tagged.
    shared = labeller is not None and options.rules == options.features
    ruled: dict[int, list | str] = {}  # hybrid: note position in ``notes`` -> its rule spans, or why they failed
    result = BatchResult({name: [] for name in documents_schema().names}, {name: [] for name in spans_schema().names})
    notes: list[tuple[Note, DocumentStatus, object, object]] = []
    sentences: list[list[str]] = []  # each sentence's token texts, as the training files render them
    columns: list[list[str]] | None = [] if featurer is not None else None  # their knowledge-feature columns
    owners: list[tuple[int, int]] = []  # (note position in ``notes``, index of the sentence's first token)
    with relaxed_gc():
        for position, note in enumerate(job.notes):
            if position in job.duplicates:
                notes.append(
                    (note, DocumentStatus(note.id_document, note.id_patient, "failed", DUPLICATE_REASON), None, None)
                )
                continue
            status, parsed, compact = segment_note(note, segmenter)
            notes.append((note, status, parsed, compact))
            if status.status != "ok":
                continue
            text = parsed.text
            bounds = compact.bounds
            note_columns = lookup = None
            if featurer is not None:  # the same features weak-label wrote for training (deid_ds.ner.knowledge)
                patient = note.patient if options.features.use_metadata else None
                try:
                    lookup = NoteLookup.of_offsets(text, compact.starts, compact.ends, featurer.matcher, patient)
                    note_columns = feature_columns(lookup)
                except Exception as error:
                    reason = f"internal error computing the knowledge features ({type(error).__name__})"
                    notes[-1] = (note, _failed(status, reason), None, None)
                    continue
            if labeller is not None:
                ruled[len(notes) - 1] = _rule_spans(
                    note, parsed, compact, labeller, options, lookup if shared else None
                )
            tokens = [flair_token(text[s:e]) for s, e in zip(compact.starts, compact.ends)]
            for k in range(len(bounds) - 1):
                a, b = bounds[k], bounds[k + 1]
                sentences.append(tokens[a:b])
                owners.append((len(notes) - 1, a))
                if columns is not None:
                    columns.append(note_columns[a:b])
        started = time.perf_counter()
        tagged = []
        if sentences:
            tagged = tag_token_texts(tagger, sentences, columns, options.mini_batch_size, options.direct)
        result.seconds_tagging = time.perf_counter() - started
        found: list[list[tuple[int, int, str, float]]] = [[] for _ in notes]
        ignored: Counter[str] = Counter()
        for entities, (owner, a) in zip(tagged, owners):
            for first, last, label, score in entities:
                if label in LABELS:
                    found[owner].append((a + first, a + last, label, score))
                else:
                    ignored[label] += 1
        result.ignored_labels = dict(ignored)
        result.sentences = len(sentences)
        for position, ((note, status, parsed, compact), entities) in enumerate(zip(notes, found)):
            spans = []
            if status.status == "ok":
                spans = [
                    (compact.starts[first], compact.ends[last], label, MODEL_SOURCE, score)
                    for first, last, label, score in entities
                ]
                if labeller is not None:
                    spans, status = _with_rules(spans, status, ruled[position], options)
                result.tokens += status.n_tokens
            _add_note(result, note, status, parsed, spans)
    return result


def tag_token_texts(
    tagger, sentences: list[list[str]], columns: list[list[str]] | None, mini_batch_size: int, direct: bool = True
) -> list[list[tuple[int, int, str, float]]]:
    """The entities of each sentence (token texts; ``columns``: their knowledge-feature columns, for a model
    with knowledge features) as :func:`sentence_entities` reads them from Flair's ``predict``.

    Through :class:`deid_ds.ner.direct.DirectTagger` (the same spans, without Flair's ``Sentence`` objects)
    when the tagger's embeddings allow it and ``direct``, else through Flair
    (:func:`deid_ds.ner.speed.tag_sentences`).
    """
    runner = direct_tagger(tagger) if direct else None
    if runner is not None:
        return [
            [(first, last, label, _rounded(score)) for first, last, label, score in entities]
            for entities in runner.tag(sentences, columns, mini_batch_size)
        ]
    from flair.data import Sentence

    from deid_ds.ner.speed import tag_sentences

    flair_sentences = [Sentence(list(texts)) for texts in sentences]
    if columns is not None:
        from deid_ds.ner.knowledge import attach_features

        for sentence, sentence_columns in zip(flair_sentences, columns):
            attach_features([sentence], sentence_columns, [0])
    tag_sentences(tagger, flair_sentences, mini_batch_size)
    return [sentence_entities(sentence, tagger.label_type) for sentence in flair_sentences]


def direct_tagger(tagger):
    """The :class:`deid_ds.ner.direct.DirectTagger` of a loaded tagger (built once, kept on it), or None when
    an embedding of the tagger is one the direct path does not know."""
    if "_deid_direct" not in tagger.__dict__:
        from deid_ds.ner.direct import DirectTagger

        tagger.__dict__["_deid_direct"] = DirectTagger.of(tagger)
    return tagger.__dict__["_deid_direct"]


def _rule_spans(note: Note, parsed, compact, labeller, options: PredictOptions, lookup=None) -> list | str:
    """The weak labeller's spans of a note on the model's tokens (from ``lookup`` when the knowledge features
    made it with the same labeller), or the reason it failed."""
    try:
        if lookup is not None:
            rules = labeller.label_lookup(lookup)
        else:
            patient = note.patient if options.rules.use_metadata else None
            rules = labeller.label_offsets(parsed.text, compact.starts, compact.ends, patient)
    except Exception as error:
        return f"internal error during labelling ({type(error).__name__})"
    return [(c.start, c.end, c.label, c.source) for c in rules]


def _with_rules(spans, status: DocumentStatus, rule_spans: list | str, options: PredictOptions):
    """The hybrid: the model's spans merged by the policy with the weak labeller's (:func:`_rule_spans`),
    or none and a failed status where the rules failed."""
    from deid_ds.ner.hybrid import merge_scored

    if isinstance(rule_spans, str):
        return [], _failed(status, rule_spans)
    if not options.merge:
        return sorted(spans + [(*span, None) for span in rule_spans], key=lambda span: span[:4]), status
    return merge_scored(spans, rule_spans, add=options.add, override=options.override), status


def _add_note(result: BatchResult, note: Note, status: DocumentStatus, parsed, spans) -> None:
    text = parsed.text if parsed is not None else ""
    columns = result.spans
    for start, end, label, source, score in spans:
        html_start, html_end = parsed.html_span(start, end)
        for name, value in (
            ("id_document", note.id_document),
            ("id_patient", note.id_patient),
            ("label", label),
            ("html_start", html_start),
            ("html_end", html_end),
            ("text_start", start),
            ("text_end", end),
            ("text", text[start:end]),
            ("source", source),
            ("score", score),
        ):
            columns[name].append(value)
    row = {
        **{
            name: getattr(status, name)
            for name in ("id_document", "id_patient", "status", "error", "n_chars", "n_sentences", "n_tokens")
        },
        "doc_type": note.doc_type,
        "n_entities": len(spans) if status.status == "ok" else 0,
        "warnings": json.dumps(status.warnings, sort_keys=True),
    }
    for name, values in result.documents.items():
        values.append(row[name])


# --------------------------------------------------------------------------------------------------
# The command's function


@dataclass
class PredictReport(DocumentTotals):
    """Totals of a ``predict`` run (``report.json`` and the printed table)."""

    model: str = ""
    device: str = "cpu"
    workers: int = 1
    threads: int | None = None  # torch threads per process (deid_ds.ner.runtime.thread_count)
    hybrid_kb: str | None = None
    hybrid: bool = False
    thresholds: dict | None = None  # hybrid: add, override and where they came from (deid_ds.ner.calibrate)
    entities: int = 0
    entities_per_label: dict[str, int] = field(default_factory=dict)
    entities_per_source: dict[str, int] = field(default_factory=dict)
    ignored_labels: dict[str, int] = field(default_factory=dict)
    seconds_tagging: float = 0.0
    #: Hybrid: the rules' knowledge base's coverage of the notes' postcodes (:mod:`deid_ds.kb.coverage`).
    kb_coverage: dict | None = None

    @property
    def sentences_per_second(self) -> float:
        """Sentences over the whole run's wall time (reading, segmenting, tagging, writing)."""
        return self.sentences / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "sentences_per_second": self.sentences_per_second}

    def add(self, batch: BatchResult) -> None:
        documents = batch.documents
        for status, error, warnings in zip(documents["status"], documents["error"], documents["warnings"]):
            self.documents += 1
            setattr(self, status, getattr(self, status) + 1)
            if error:
                self.failures[error] = self.failures.get(error, 0) + 1
            self.documents_without_id += f'"{MISSING_ID_WARNING}"' in warnings  # warnings: the JSON of the column
        self.sentences += batch.sentences
        self.tokens += batch.tokens
        self.seconds_tagging += batch.seconds_tagging
        self.entities += len(batch.spans["label"])
        for label in batch.spans["label"]:
            self.entities_per_label[label] = self.entities_per_label.get(label, 0) + 1
        for source in batch.spans["source"]:
            self.entities_per_source[source] = self.entities_per_source.get(source, 0) + 1
        add_counts(self.ignored_labels, batch.ignored_labels)


def report_table(report: PredictReport) -> str:
    """The summary printed at the end of ``deid-ds predict``."""
    from deid_ds.report import format_table

    rows: list[list[object]] = [
        ["documents", report.documents],
        ["  ok", report.ok],
        ["  empty (no text)", report.empty],
        ["  failed", report.failed],
        ["sentences", report.sentences],
        ["tokens", report.tokens],
        ["entities", report.entities],
    ]
    rows += [[f"  {label}", report.entities_per_label.get(label, 0)] for label in LABELS]
    rows += [
        ["sentences/s", report.sentences_per_second],
        ["seconds (tagging)", report.seconds_tagging],
        ["seconds (total)", report.seconds],
    ]
    rows += [[f"failure: {reason}", n] for reason, n in sorted(report.failures.items())]
    rows += [
        [f"dropped label (not one of the eight): {label}", n] for label, n in sorted(report.ignored_labels.items())
    ]
    title = f"predict on {report.device}, {report.workers} process(es)" + (
        ", hybrid with the rules" if report.hybrid else ""
    )
    sections = [format_table(["predict", "count"], rows, title=title)]
    if report.hybrid:
        rows = [
            [source, n]
            for source, n in sorted(report.entities_per_source.items(), key=lambda item: (-item[1], item[0]))
        ]
        sections.append(format_table(["source", "spans"], rows))
        if report.thresholds:
            thresholds = report.thresholds
            sections.append(
                f"thresholds: add {thresholds['add']:g}, override {thresholds['override']:g} ({thresholds['source']})"
            )
    return "\n\n".join(sections)


# --------------------------------------------------------------------------------------------------
# The stage, as every engine runs it


def stats_schema():
    """One row per batch: what :class:`BatchResult` counts beside its tables."""
    return pa.schema(
        [
            ("sentences", pa.int64()),
            ("tokens", pa.int64()),
            ("seconds_tagging", pa.float64()),
            ("ignored_labels", pa.string()),
        ]
    )


@dataclass(frozen=True)
class PredictBatch:
    """The stage's batch function: :func:`predict_batch` on a batch, as tables (``stats``: its counts)."""

    options: PredictOptions

    def __call__(self, notes, duplicates: frozenset[int], others=None) -> dict:
        from deid_ds.weak_labelling.schemas import spans_schema

        result = predict_batch(PredictJob(list(notes), self.options, duplicates))
        stats = {
            "sentences": [result.sentences],
            "tokens": [result.tokens],
            "seconds_tagging": [result.seconds_tagging],
            "ignored_labels": [json.dumps(result.ignored_labels, sort_keys=True)],
        }
        return {
            "spans": pa.Table.from_pydict(result.spans, schema=spans_schema()),
            "documents": pa.Table.from_pydict(result.documents, schema=documents_schema()),
            "stats": pa.Table.from_pydict(stats, schema=stats_schema()),
        }


def predict_files(batch: PredictBatch, where) -> PredictBatch:
    """``batch`` with the model, Punkt and knowledge base paths replaced by ``where(path)`` (shipped on Spark)."""
    options = batch.options
    rules = options.rules and replace(options.rules, kb_dir=where(options.rules.kb_dir))
    features = options.features and replace(options.features, kb_dir=where(options.features.kb_dir))
    segment = replace(options.segment, punkt_path=where(options.segment.punkt_path))
    return PredictBatch(replace(options, model=where(options.model), segment=segment, rules=rules, features=features))


def predict_stage(options: PredictOptions):
    """``predict`` as the engines run it (:class:`deid_ds.engine.stage.Stage`)."""
    from deid_ds.engine.stage import Stage
    from deid_ds.weak_labelling.schemas import spans_schema

    outputs = {"spans": spans_schema(), "documents": documents_schema(), "stats": stats_schema()}
    return Stage("predict", PredictBatch(options), outputs, predict_files)


class PredictSink:
    """Writes ``spans.parquet`` and ``documents.parquet`` as the engine delivers them, and counts
    the report from the tables (and the ``stats`` rows)."""

    def __init__(self, tmp: Path, report: PredictReport) -> None:
        from deid_ds.weak_labelling.schemas import spans_schema

        self.report = report
        self.writers = {
            "spans": pq.ParquetWriter(tmp / "spans.parquet", spans_schema()),
            "documents": pq.ParquetWriter(tmp / "documents.parquet", documents_schema()),
        }

    def add(self, name: str, table) -> None:
        report = self.report
        if name == "stats":
            for row in table.to_pylist():
                report.add(
                    BatchResult(
                        _NO_DOCUMENTS,
                        _NO_SPANS,
                        row["sentences"],
                        row["tokens"],
                        json.loads(row["ignored_labels"]),
                        row["seconds_tagging"],
                    )
                )
            return
        self.writers[name].write_table(table)
        if name == "documents":
            report.add(BatchResult(table.select(list(_NO_DOCUMENTS)).to_pydict(), _NO_SPANS))
        else:
            report.add(BatchResult(_NO_DOCUMENTS, table.select(["label", "source"]).to_pydict()))

    def close(self) -> None:
        from deid_ds.io.files import close_writers

        close_writers(list(self.writers.values()))


_NO_DOCUMENTS: dict[str, list] = {"status": [], "error": [], "warnings": []}  # what report.add reads of a batch
_NO_SPANS: dict[str, list] = {"label": [], "source": []}


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``; a CUDA name is checked."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"--device {device}: torch sees no CUDA device here (use --device cpu or auto)")
    if device != "cpu" and not device.startswith("cuda"):
        raise InputError(f"--device {device}: expected auto, cpu, cuda or cuda:N")
    return device


def _features_config(tagger, kb, with_rules, use_metadata: bool, log, strict: bool) -> LabelConfig | None:
    """The labeller that computes a knowledge-feature model's features (None for a model without them);
    refuses such a model without a knowledge base (:func:`deid_ds.ner.knowledge.check_kb_for`)."""
    from deid_ds.ner.knowledge import check_kb_for, knowledge_embedding_of

    embedding = knowledge_embedding_of(tagger)
    if embedding is None:
        return None
    from deid_ds.weak_labelling.pipeline import check_kb

    kb_dir = check_kb(kb if kb is not None else with_rules)
    check_kb_for(tagger, kb_dir, log, strict=strict)
    return LabelConfig(kb_dir, use_metadata and embedding.use_metadata)


def predict(
    model: str | Path,
    notes: str | Path,
    out: str | Path,
    *,
    with_rules: str | Path | None = None,
    use_metadata: bool = True,
    column_map: Mapping[str, str] | None = None,
    punkt: str | Path | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    mini_batch_size: int = DEFAULT_MINI_BATCH,
    workers: int = 1,
    threads: int | None = None,
    device: str = "auto",
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    engine: str = "local",
    spark_master: str | None = None,
    overwrite: bool = False,
    kb: str | Path | None = None,
    strict_kb: bool = False,
    threshold: float | None = None,
    override: float | None = None,
    calibration: str | Path | None = None,
    merge: bool = True,
) -> PredictReport:
    """Tag every note of ``notes`` with the tagger of ``model`` into ``out`` (module docstring).

    ``engine="spark"`` tags the batches on Apache Spark (:mod:`deid_ds.engine.spark`, the stage of
    :func:`predict_stage`; the model, the knowledge base and the Punkt file shipped to the executors once)
    with the same outputs; ``workers`` is then Spark's business, and ``device`` is resolved on each executor.
    ``threads``: torch threads per worker process on CPU (default one; never more than the cores shared among
    the workers, :meth:`~deid_ds.engine.local.LocalEngine.task_threads`: :func:`deid_ds.ner.runtime.thread_count`).

    ``with_rules`` (a ``build-kb`` directory) switches the hybrid mode on: the weak labeller runs on
    the same notes (with their metadata unless ``use_metadata`` is false) and its spans are merged
    with the model's (:func:`deid_ds.ner.hybrid.merge_spans`). ``punkt`` and ``max_tokens`` must be
    those ``weak-label`` used, so the model sees the sentences it was trained on. ``out`` is replaced
    only if deid-ds predict wrote it, or with ``overwrite`` (:mod:`deid_ds.io.output_dir`).

    A model trained with knowledge features (:mod:`deid_ds.ner.knowledge`) gets them computed for each note
    from ``kb`` (else the ``with_rules`` knowledge base; refused without either) and the notes' metadata
    unless ``use_metadata`` is false; a knowledge base other than the model's is warned about (refused
    with ``strict_kb``).

    The merge's thresholds (:mod:`deid_ds.ner.hybrid`) are ``threshold`` (``add``) and ``override`` when
    given, else those of ``calibration`` (a ``deid-ds calibrate`` file), of ``calibration.json`` beside the
    model, of the model card, or none (:func:`deid_ds.ner.thresholds.resolve_thresholds`); ``report.json``
    records them and their origin. ``merge=False`` writes the model's and the rules' spans unmerged.
    """
    from deid_ds.engine import engine_for
    from deid_ds.io.output_dir import check_output_dir

    log = log or (lambda message: print(message, file=sys.stderr))
    if batch_size < 1 or workers < 1 or mini_batch_size < 1 or (threads is not None and threads < 1):
        raise InputError("batch size, mini-batch size, workers and threads must be at least 1")
    runner = engine_for(engine, workers=workers, progress=progress, spark_master=spark_master)
    inputs = (model, notes, with_rules, punkt, kb)
    check_output_dir(out, "predict", inputs, overwrite)  # before the model loads, not after
    path = model_file(model)
    # Spark starts (and reads the notes' ids) once the model and options are checked, in the block below.
    source = None if runner.distributed else runner.open("predict", notes, column_map, log, batch_size=batch_size)
    # Where the batches run elsewhere, the device is theirs (resolved there); the driver checks the model on its own.
    chosen = resolve_device(device if not runner.distributed or not device.startswith("cuda") else "auto")
    rules = None
    if with_rules is not None:
        from deid_ds.weak_labelling.pipeline import check_kb

        rules = LabelConfig(check_kb(with_rules), use_metadata)
    thresholds = None
    if rules is not None:
        from deid_ds.ner.thresholds import resolve_thresholds

        thresholds = resolve_thresholds(path, threshold=threshold, override=override, calibration=calibration)
    if chosen != "cpu" and workers > 1:
        log(f"predict: one process on {chosen} (--workers {workers} applies to CPU only)")
        workers = runner.workers = 1
    options = PredictOptions(
        str(path.resolve()),
        SegmentOptions(str(Path(punkt).resolve()) if punkt else None, max_tokens),
        chosen,
        mini_batch_size,
        None,
        rules,
        thresholds.add if thresholds else 0.0,
        thresholds.override if thresholds else 0.0,
        merge,
    )
    segmenter_for(options.segment)  # fail fast on a bad Punkt file, before any output exists
    tagger = load_tagger(options.model, chosen)  # ... and on a bad model (workers load their own copy)
    options = replace(options, features=_features_config(tagger, kb, with_rules, use_metadata, log, strict_kb))
    if options.features is not None:
        from deid_ds.weak_labelling.note import labeller_for

        labeller_for(options.features)
    if rules is not None:
        from deid_ds.weak_labelling.note import labeller_for

        labeller_for(rules)
    with runner.output(out, "predict", inputs=inputs, overwrite=overwrite) as output:
        started = time.perf_counter()
        if source is None:
            source = runner.open("predict", notes, column_map, log)
        if runner.distributed:
            options = replace(options, device=device)
        from deid_ds.ner.runtime import thread_count

        options = replace(options, threads=thread_count(threads, runner.task_threads()))  # never oversubscribes
        if threads and options.threads < threads:
            log(f"predict: --threads {threads}: {runner.task_threads()} core(s) per worker, {options.threads} used")
        report = PredictReport(
            model=str(path) if not runner.distributed else options.model,
            device=options.device,
            workers=runner.parallelism,
            threads=options.threads,
            hybrid_kb=rules.kb_dir if rules else None,
            hybrid=rules is not None,
            thresholds=thresholds.to_dict() if thresholds else None,
        )
        sink = PredictSink(output.tmp, report)
        try:
            runner.run(predict_stage(options), source, sink, batch_size, out=out, log=log)
        finally:
            sink.close()
        report.seconds = time.perf_counter() - started
        if report.documents != source.n_notes:  # pragma: no cover - a reader bug, never silent
            raise RuntimeError(f"read {report.documents} notes but the input declares {source.n_notes}")
        if rules is not None:
            from deid_ds.kb.coverage import run_coverage

            report.kb_coverage = run_coverage(rules.kb_dir, source, output.tmp / "spans.parquet", rules.use_metadata)
        (output.tmp / "report.json").write_text(
            json.dumps(report.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
    return report
