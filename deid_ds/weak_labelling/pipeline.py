"""``weak_label()``: the command's function — check the options, label the missing batches, assemble."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from deid_ds.defaults import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS
from deid_ds.engine.output import SCRATCH_PREFIX
from deid_ds.engine.stage import Resume
from deid_ds.errors import DeidError, InputError
from deid_ds.io.output_dir import check_output_dir, check_work_directory, guarded_output
from deid_ds.kb.coverage import run_coverage
from deid_ds.kb.matcher import ensure_matcher_cache
from deid_ds.label.functions import check_names
from deid_ds.label.labeller import LabelConfig
from deid_ds.model import PATIENT_FIELDS
from deid_ds.segmentation.limits import DEFAULT_MAX_NOTE_BYTES, DEFAULT_NOTE_TIMEOUT, NoteLimits
from deid_ds.segmentation.notes import SegmentOptions, segmenter_for
from deid_ds.weak_labelling.assemble import Assembly, Run
from deid_ds.weak_labelling.batch import weak_label_stage
from deid_ds.weak_labelling.gold import read_gold
from deid_ds.weak_labelling.note import labeller_for
from deid_ds.weak_labelling.options import WeakLabelOptions
from deid_ds.weak_labelling.report import WeakLabelReport
from deid_ds.weak_labelling.resume import STATE_FILE, prepare_work, run_fingerprint, work_directory
from deid_ds.weak_labelling.split import DEFAULT_SPLIT, assign_splits, parse_split, patient_group

#: Name prefix of the directory, in the work directory, where the outputs are built before they replace ``OUT``.
ASSEMBLY_PREFIX = SCRATCH_PREFIX


def check_kb(kb: str | Path | None) -> str | None:
    """The knowledge base directory, resolved, after checking every table against its manifest.

    As ``deidentify`` does: a compiled matcher cache is keyed by the manifest alone, so without this
    a table replaced or damaged after the build would go unnoticed and the run would label with the
    stale cache. The error names the table that does not match. (Hashing the tables costs about a
    second per GB, once per run.)
    """
    if kb is None:
        return None
    from deid_ds.kb.build import verify_tables

    path = Path(kb)
    if not path.is_dir():
        raise InputError(f"{path}: knowledge base directory not found (build one with deid-ds build-kb --out {path})")
    verify_tables(path)
    return str(path.resolve())


def _features_record(options: WeakLabelOptions) -> dict:
    """What the Flair files' feature column holds, as ``report.json`` (and then the model card) records it."""
    from deid_ds.kb.fingerprint import kb_fingerprint
    from deid_ds.label.features import FEATURES

    kb = options.label.kb_dir
    return {
        "names": list(FEATURES),
        "kb_fingerprint": kb_fingerprint(kb) if kb is not None else None,
        "use_metadata": options.label.use_metadata,
    }


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def weak_label(
    notes: str | Path,
    out: str | Path,
    *,
    kb: str | Path | None = None,
    column_map: Mapping[str, str] | None = None,
    punkt: str | Path | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 1,
    keep_empty: float = 0.0,
    keep_empty_test: float = 1.0,
    split: str | Sequence[float] = DEFAULT_SPLIT,
    seed: int = 0,
    gold: str | Path | None = None,
    use_metadata: bool = True,
    disabled_rules: Iterable[str] = (),
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    engine: str = "local",
    spark_master: str | None = None,
    overwrite: bool = False,
    max_note_bytes: int | None = DEFAULT_MAX_NOTE_BYTES,
    note_timeout: float | None = DEFAULT_NOTE_TIMEOUT,
    sentences_jsonl: bool = False,
    features: bool = True,
) -> WeakLabelReport:
    """Label every note of ``notes`` into training sets in ``out`` (see the module docstring).

    ``keep_empty`` is the share of the sentences without entity kept in train and dev,
    ``keep_empty_test`` in test (default: all of them, so that a correction campaign on the test
    documents shows every sentence). ``log`` receives the resume messages (default: standard error
    when ``progress`` is on). ``engine="spark"`` runs the batches on Apache Spark
    (:mod:`deid_ds.engine`; ``spark_master``, else the active or ``spark-submit`` configuration, else
    ``local[*]``) with the same outputs; ``workers`` is then Spark's business. ``out`` is replaced only
    if deid-ds weak-label wrote it, or with ``overwrite`` (:mod:`deid_ds.io.output_dir`); a run holds a
    lock on it, which also guards the work directory ``OUT.partial``.
    A note of more than ``max_note_bytes`` bytes of HTML, or whose labelling takes more than
    ``note_timeout`` seconds, is failed with its reason and the batch goes on (None or 0: no limit;
    :mod:`deid_ds.segmentation.limits`).
    ``sentences_jsonl`` also writes ``sentences.jsonl``, the same rows as ``sentences.parquet`` as
    Prodigy tasks (off by default: it is the largest output, and nothing in the package needs it).
    ``features`` writes each token's knowledge features (:mod:`deid_ds.label.features`) as a middle column
    of the Flair files (``token FEATURES TAG``; the command's default, ``--no-features`` for two columns);
    the report records their names and the knowledge base's fingerprint.
    """
    from deid_ds.engine import engine_for

    runner = engine_for(engine, workers=workers, progress=progress, spark_master=spark_master)
    log = log or (_stderr if progress else (lambda message: None))
    shares = parse_split(split)
    if not 0.0 <= keep_empty <= 1.0:
        raise InputError(f"--keep-empty {keep_empty}: expected a share between 0 and 1")
    if not 0.0 <= keep_empty_test <= 1.0:
        raise InputError(f"--keep-empty-test {keep_empty_test}: expected a share between 0 and 1")
    if batch_size < 1 or workers < 1:
        raise InputError("batch size and workers must be at least 1")
    if (max_note_bytes or 0) < 0 or (note_timeout or 0) < 0:
        raise InputError("--max-note-bytes and --note-timeout must be positive (0: no limit)")
    disabled = check_names(disabled_rules)
    inputs = (notes, kb, gold, punkt)
    check_output_dir(out, "weak-label", inputs, overwrite)  # before hours of labelling, not after
    source = runner.open("weak-label", notes, column_map, log, group=patient_group, batch_size=batch_size)
    options = WeakLabelOptions(
        SegmentOptions(str(Path(punkt).resolve()) if punkt else None, max_tokens),
        LabelConfig(check_kb(kb), use_metadata, disabled),
        keep_empty,
        keep_empty_test,
        NoteLimits(max_note_bytes or None, note_timeout or None),
        sentences_jsonl,
        features,
    )
    gold_frame = None
    if gold is not None:
        gold_frame = read_gold(gold)
        try:
            import deid_ds.evaluation.scoring  # noqa: F401 - checked before hours of labelling, not after
        except ImportError:
            raise DeidError("--gold needs deid_ds.evaluation.scoring, which this installation lacks") from None
    segmenter_for(options.segment)  # fail fast on a bad Punkt file
    if runner.in_process:
        labeller_for(options.label)  # labels in this process: load (or compile) the matcher now
    elif options.label.kb_dir is not None:
        ensure_matcher_cache(options.label.kb_dir)  # compiled once, before workers race for it
    gold_ids = frozenset(gold_frame["id_document"]) if gold_frame is not None else None
    with guarded_output(out, "weak-label", inputs=inputs, overwrite=overwrite):
        started = time.perf_counter()
        resume, work = None, None
        if runner.resumable:
            lengths = source.source.batch_lengths(batch_size)
            work = work_directory(out)
            check_work_directory(work, inputs, overwrite, sign=STATE_FILE)  # prepare_work removes one it cannot resume
            fingerprint = run_fingerprint(source.source, options, batch_size, gold, shares, seed)
            done = prepare_work(work, fingerprint, len(lengths), log)
            resume = Resume(work, frozenset(done), tuple(lengths))
            # A killed run leaves its unfinished outputs in the work directory: this run starts them afresh.
            for stale in work.glob(f"{ASSEMBLY_PREFIX}*"):
                shutil.rmtree(stale, ignore_errors=True)
        # The split depends only on the set of patients: decided from the id columns before labelling, so
        # that workers keep exactly each split's sentences, whatever the engine.
        group_split = assign_splits(runner.groups(source, patient_group), shares, seed)
        n_batches = len(resume.lengths) if resume is not None else 0
        resumed = len(resume.done) if resume is not None else 0
        used = [name for name in PATIENT_FIELDS if name in source.note_columns] if use_metadata else []
        report = WeakLabelReport(
            split_shares=list(shares),
            seed=seed,
            use_metadata=bool(used),
            metadata_columns=used,
            metadata_columns_missing=[name for name in PATIENT_FIELDS if name not in used] if use_metadata else [],
            batches=n_batches,
            batches_resumed=resumed,
            knowledge_features=_features_record(options) if features else None,
        )
        # The outputs are built (in the work directory, locally) as the batches finish, in input order (a
        # resumed run reads its finished batches' parts again): assembling runs alongside the labelling
        # instead of after it on one core. A failure removes them; the finished batch parts stay, for the
        # next run to resume.
        with runner.output(out, "weak-label", inputs=inputs, overwrite=overwrite, scratch=work, locked=True) as output:
            assembly = Assembly(output.tmp, group_split, gold_ids, sentences_jsonl)
            try:
                stage = weak_label_stage(options, group_split, gold_ids)
                labelled = runner.run(stage, source, assembly, batch_size, out=out, log=log, resume=resume)
            finally:
                assembly.close()
            run = Run(source.n_notes, shares, seed, started, labelled, group_split)
            if options.label.kb_dir is not None:  # spans.parquet closed: read back for its ZIP spans
                spans = output.tmp / "spans.parquet"
                report.kb_coverage = run_coverage(options.label.kb_dir, source, spans, use_metadata)
            assembly.finish(run, gold_frame, report)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
        return report
