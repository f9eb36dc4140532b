"""``deid-ds deidentify``: the I/O around :func:`deid_ds.deidentification.document.deidentify_document`.

Reads the notes table in batches (with the columns named by ``keep_columns``, written back unchanged:
the input's other columns are dropped, since a warehouse export may carry identifiers in any column),
the spans to replace (a ``weak-label``/``predict``/gold table, or the spans a model predicts here with
:func:`deid_ds.ner.predict.predict`), replaces them (and the note's other views: ``hidden``) note by note on
``workers`` processes, runs the residual-leak check (:mod:`deid_ds.deidentification.leaks`) on each output
note, and writes the output directory atomically:

* ``notes.parquet``: ``id_document``, ``id_patient``, the de-identified ``html``, the columns of
  ``keep_columns`` unchanged, the metadata columns dropped (``keep_metadata="drop"``) or replaced by
  their surrogates (``"surrogate"``). A note that could not be de-identified safely is **not** written;
* ``audit.parquet``: one row per replacement — document, patient, label, source, offsets in the input
  and output HTML, the replacement and its length, the ``view`` it was in, and the original text only
  with ``audit_originals``;
* ``documents.parquet``: one row per input note — ``ok``, ``no spans`` (written, but no span was given
  for it: its text as it was), or ``failed`` with a reason that holds no content — with its
  replacements, leaks and fallbacks (spans masked because no safe surrogate exists; ``leak_check``
  ``no metadata`` and ``n_leaks`` null for a note whose patient has no metadata: not checked, which is
  not "0 left"; ``metadata unreadable`` when a value of it could not be read);
* ``report.json``: the totals printed at the end (replacements per label and, for the direct identifiers
  that are not one of the eight labels, per kind; fallbacks, leaks per field and per identifier kind; with
  ``--privacy dp``, the privacy accounting: :mod:`.dp_accounting`).

With ``fail_on_leak``, an output in which the check finds any leak (or a ``no spans`` note it could not
check) is not published at ``out``: it is written whole to ``out.leaks`` (replacing a previous one) for
inspection, and ``out`` is left as it was.

The key never leaves memory: ``report.json`` holds only where it came from and a salted scrypt fingerprint
(none for a short key: see :mod:`deid_ds.deidentification.keyed`).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from deid_ds.defaults import DEFAULT_BATCH_SIZE
from deid_ds.deidentification.batch import NO_SPANS, UNREADABLE, BatchResult, DeidOptions
from deid_ds.deidentification.dp_accounting import accounting
from deid_ds.deidentification.identifiers import KINDS
from deid_ds.deidentification.keyed import resolve_key
from deid_ds.deidentification.leaks import LEAK_FIELDS, LeakCounts
from deid_ds.deidentification.other_views import HIDDEN_POLICIES
from deid_ds.deidentification.privacy import Privacy
from deid_ds.deidentification.surrogates import DEFAULT_MASK, MODES, check_mask_format
from deid_ds.errors import InputError
from deid_ds.model import LABELS, PATIENT_FIELDS
from deid_ds.report import add_counts

KEEP_METADATA = ("drop", "surrogate")
#: Columns written under our names, in this order, before the input's other columns.
_OWN_COLUMNS = ("id_document", "id_patient", "doc_type", "html")


# -------------------------------------------------------------------------------------------------- input


def check_keep_columns(keep_columns: tuple[str, ...], available: list[str], own: set[str], where: str) -> list[str]:
    """Refuse a ``--keep-column`` the input lacks or that deid-ds handles itself; return the dropped columns."""
    for name in keep_columns:
        if name in own:
            raise InputError(
                f"--keep-column {name}: deid-ds writes this column itself (see --keep-metadata for the metadata)"
            )
        if name not in available:
            raise InputError(
                f"--keep-column {name}: no such column in {where} (columns: {', '.join(available) or 'none'})"
            )
    return [name for name in available if name not in own and name not in keep_columns]


# -------------------------------------------------------------------------------------------------- report


@dataclass
class DeidentifyReport:
    """Totals of a ``deidentify`` run (``report.json`` and the printed table). Counts only, no content."""

    mode: str = "surrogate"
    key_origin: str = ""
    key_fingerprint: str = ""
    pools: str = ""
    keep_metadata: str = "drop"
    documents: int = 0
    ok: int = 0
    failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    replacements: int = 0
    replacements_per_label: dict[str, int] = field(default_factory=dict)
    fallbacks: dict[str, int] = field(default_factory=dict)
    #: Per label of the spans: how many were replaced (``spans``), masked instead (``masked``, and its ``share`` in
    #: percent) and why (``reasons``); filled by :meth:`add`, see :func:`masked_labels` for the warning.
    fallbacks_per_label: dict[str, dict] = field(default_factory=dict)
    documents_without_spans: int = 0  # written with status "no spans": no span was given for them
    spans_for_unknown_documents: int = 0
    span_documents: int = 0  # distinct documents of --spans (not counted with --model)
    span_documents_not_in_notes: int = 0
    documents_without_spans_not_checked: int = 0  # neither given a span nor leak-checked: --fail-on-leak fails
    allow_unmatched_spans: bool = False
    documents_with_leaks: int = 0
    documents_not_checked: int = 0  # written, but their patient has no metadata to look for
    #: written, but a value of their patient's metadata could not be read (not looked for: never "0 left")
    documents_metadata_unreadable: int = 0
    documents_without_patient: int = 0  # no id_patient: surrogates consistent within the note only
    leaks: dict = field(default_factory=dict)
    hidden: str = "deidentify"
    replacements_per_view: dict[str, int] = field(default_factory=dict)  # outside the visible text
    blanked: dict[str, int] = field(default_factory=dict)
    dropped_columns: list[str] = field(default_factory=list)
    fail_on_leak: bool = False
    #: Direct identifiers replaced (NIR, IPP, RPPS...: :mod:`deid_ds.deidentification.identifiers`), per kind;
    #: counted in ``replacements``, not in ``replacements_per_label`` (the eight labels).
    identifiers_per_kind: dict[str, int] = field(default_factory=dict)
    keep_identifiers: bool = False
    #: The surrogate policy of dates, ages and places, and with ``dp`` its accounting (:mod:`.dp_accounting`).
    privacy: dict = field(default_factory=dict)
    written_to: str = ""  # where the output went: OUT, or OUT.leaks when --fail-on-leak found leaks
    seconds: float = 0.0

    @property
    def documents_per_second(self) -> float:
        return self.documents / self.seconds if self.seconds else 0.0

    @property
    def leak_total(self) -> int:
        return int(self.leaks.get("total", 0))

    def to_dict(self) -> dict:
        return {**asdict(self), "documents_per_second": self.documents_per_second}

    @property
    def kept_aside(self) -> bool:
        """Whether ``--fail-on-leak`` kept the output out of ``OUT`` (written to ``OUT.leaks``): a leak, or a
        note that was neither given a span nor leak-checked (nothing says it holds no identifier)."""
        return self.fail_on_leak and (self.leak_total > 0 or self.documents_without_spans_not_checked > 0)

    def add(self, batch: BatchResult, totals: LeakCounts) -> None:
        documents = batch.documents
        for status, error, n_leaks, check in zip(
            documents["status"], documents["error"], documents["n_leaks"], documents["leak_check"]
        ):
            self.documents += 1
            setattr(self, _STATUS_COUNTS[status], getattr(self, _STATUS_COUNTS[status]) + 1)
            if error:
                self.failures[error] = self.failures.get(error, 0) + 1
            self.documents_with_leaks += (n_leaks or 0) > 0
            self.documents_not_checked += check == "no metadata"
            self.documents_metadata_unreadable += check == UNREADABLE
            self.documents_without_spans_not_checked += status == NO_SPANS and check == "no metadata"
        patients = batch.documents.get("id_patient", ())
        self.documents_without_patient += sum(patient is None for patient in patients)
        add_counts(self.replacements_per_label, {k: n for k, n in batch.per_label.items() if k not in KINDS})
        add_counts(self.identifiers_per_kind, {k: n for k, n in batch.per_label.items() if k in KINDS})
        self.replacements += sum(batch.per_label.values())
        add_counts(self.fallbacks, batch.fallbacks)
        self._add_span_fallbacks(batch.spans, batch.span_fallbacks)
        add_counts(self.replacements_per_view, batch.per_view)
        add_counts(self.blanked, batch.blanked)
        totals.add(batch.leaks)

    def _add_span_fallbacks(self, spans: Mapping[str, int], span_fallbacks: Mapping[str, int]) -> None:
        for label, n in spans.items():
            row = self.fallbacks_per_label.setdefault(label, {"spans": 0, "masked": 0, "share": 0.0, "reasons": {}})
            row["spans"] += n
        for kind, n in span_fallbacks.items():
            label, reason = kind.split("\t", 1)
            row = self.fallbacks_per_label.setdefault(label, {"spans": 0, "masked": 0, "share": 0.0, "reasons": {}})
            row["masked"] += n
            row["reasons"][reason] = row["reasons"].get(reason, 0) + n
        for row in self.fallbacks_per_label.values():
            row["share"] = round(100 * row["masked"] / row["spans"], 2) if row["spans"] else 0.0


#: A label whose spans are masked more often than this (percent) is warned about: surrogate mode is there to
#: keep the notes readable (a masked date loses its intervals with the others).
FALLBACK_WARN_SHARE = 2.0


def masked_labels(report: DeidentifyReport, above: float = FALLBACK_WARN_SHARE) -> dict[str, dict]:
    """The labels whose share of spans masked instead of replaced is above ``above`` percent (surrogate mode)."""
    if report.mode != "surrogate":
        return {}
    return {label: row for label, row in report.fallbacks_per_label.items() if row["share"] > above}


#: The report's counter of each status of ``documents.parquet``.
_STATUS_COUNTS = {"ok": "ok", "failed": "failed", NO_SPANS: "documents_without_spans"}


def new_report(options: DeidOptions) -> DeidentifyReport:
    """An empty report for a run with ``options`` (where the key came from and its fingerprint, never the key)."""
    report = DeidentifyReport(
        mode=options.mode,
        key_origin=options.keyring.origin.split(" (")[0],
        key_fingerprint=options.keyring.fingerprint(),
        pools="knowledge base" if options.kb else "shipped fallback list",
        keep_metadata=options.keep_metadata,
        hidden=options.hidden,
        keep_identifiers=options.keep_identifiers,
        privacy={"mode": options.privacy.mode},
    )
    if options.mode == "mask":
        report.pools = "n/a"
    return report


def report_table(report: DeidentifyReport) -> str:
    """The summary printed at the end of ``deid-ds deidentify``."""
    from deid_ds.report import format_table

    rows: list[list[object]] = [
        ["documents", report.documents],
        ["  ok (written)", report.ok],
        ["  failed (not written)", report.failed],
        ["  no spans (written, text unchanged)", report.documents_without_spans],
        ["replacements", report.replacements],
    ]
    labels = [*LABELS, *sorted(set(report.replacements_per_label) - set(LABELS))]
    rows += [[f"  {label}", report.replacements_per_label.get(label, 0)] for label in labels]
    if report.keep_identifiers:
        rows.append(["  direct identifiers (NIR, IPP...)", "kept (--keep-identifiers)"])
    else:
        rows.append(["  direct identifiers (NIR, IPP...)", sum(report.identifiers_per_kind.values())])
        rows += [[f"    {kind}", n] for kind, n in sorted(report.identifiers_per_kind.items())]
    rows += [[f"  outside the text: {view}", n] for view, n in sorted(report.replacements_per_view.items())]
    rows += [[f"blanked ({report.hidden}): {kind}", n] for kind, n in sorted(report.blanked.items())]
    if report.dropped_columns:
        rows.append(["input columns dropped (--keep-column keeps one)", len(report.dropped_columns)])
    rows.append(["fallbacks (masked, see audit)", sum(report.fallbacks.values())])
    rows += [[f"  {reason}", n] for reason, n in sorted(report.fallbacks.items())]
    if report.mode == "surrogate":
        per_label = report.fallbacks_per_label
        for label in [*(lab for lab in LABELS if lab in per_label), *sorted(set(per_label) - set(LABELS))]:
            row = per_label[label]
            flag = f" (above {FALLBACK_WARN_SHARE:g} %)" if row["share"] > FALLBACK_WARN_SHARE else ""
            rows.append([f"  {label} masked: {row['share']:.2f} % of {row['spans']:,} span(s){flag}", row["masked"]])
    rows += [[f"failure: {reason}", n] for reason, n in sorted(report.failures.items())]
    if report.spans_for_unknown_documents:
        rows.append(["spans of documents not in the notes", report.spans_for_unknown_documents])
    if report.span_documents_not_in_notes:
        rows.append(["  in documents not in the notes", report.span_documents_not_in_notes])
    privacy = report.privacy
    if privacy.get("mode") == "dp":
        rows += [
            [f"dp: ε per value (reference day {privacy['reference_day']})", privacy["epsilon_per_value"]],
            ["dp: values perturbed (distinct per patient)", privacy["values"]],
            *([f"  {kind}", n] for kind, n in privacy["values_per_kind"].items()),
            ["dp: ε per patient, max (sequential composition)", privacy["epsilon_per_patient"]["max"]],
            ["dp: ε per patient, median", privacy["epsilon_per_patient"]["median"]],
            *(
                [f"dp: {kind} replaced outside the mechanism (no ε covers it)", n]
                for kind, n in privacy["unprotected_values_per_kind"].items()
            ),
        ]
    rows += [["documents/s", report.documents_per_second], ["seconds", report.seconds]]
    title = f"deidentify ({report.mode}; key: {report.key_origin}; places: {report.pools})"
    if privacy.get("mode") == "dp":
        title = title[:-1] + "; privacy: dp)"
    fields = [*LEAK_FIELDS, *(name for name in report.leaks["per_field"] if name not in LEAK_FIELDS)]
    leak_rows = [
        [name, report.leaks["per_field"][name]["exact"], report.leaks["per_field"][name]["fuzzy"]] for name in fields
    ]
    leak_rows.append(["total", report.leak_total, ""])
    written = report.ok + report.documents_without_spans
    checked = written - report.documents_not_checked
    views = ", ".join(f"{v} {n}" for v, n in report.leaks["per_view"].items())
    if checked == 0 and written:
        leak_title = f"residual-leak check: not checked ({report.documents_not_checked} document(s) without metadata)"
    else:
        leak_title = (
            f"residual-leak check: {report.leak_total} value(s) of the patients' own metadata or direct identifiers "
            f"left in {report.documents_with_leaks} of {checked} checked document(s) (views: {views})"
        )
        if report.documents_not_checked:
            leak_title += f"; {report.documents_not_checked} document(s) not checked (no metadata)"
    if report.documents_metadata_unreadable:
        fields = ", ".join(report.leaks.get("metadata_unreadable", {}))
        leak_title += f"; metadata unreadable in {report.documents_metadata_unreadable} document(s) ({fields})"
    # the direct identifiers (NIR, IPP...) are checked in every note, with or without metadata
    left = sum(c["exact"] for name, c in report.leaks["per_field"].items() if name not in LEAK_FIELDS)
    leak_title += f"; direct identifiers (NIR, IPP...) left: {left}"
    return (
        format_table(["deidentify", "count"], rows, title=title)
        + "\n\n"
        + format_table(["field", "exact", "fuzzy"], leak_rows, title=leak_title)
    )


# -------------------------------------------------------------------------------------------------- the command


def deidentify(
    notes: str | Path,
    out: str | Path,
    *,
    spans: str | Path | None = None,
    model: str | Path | None = None,
    with_rules: str | Path | None = None,
    mode: str = "surrogate",
    kb: str | Path | None = None,
    key: str | None = None,
    allow_short_key: bool = False,
    keep_metadata: str = "drop",
    audit_originals: bool = False,
    birthdate_year: bool = False,
    mask_format: str = DEFAULT_MASK,
    column_map: Mapping[str, str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 1,
    device: str = "auto",
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    engine: str = "local",
    spark_master: str | None = None,
    hidden: str = "deidentify",
    keep_columns: tuple[str, ...] | list[str] = (),
    fail_on_leak: bool = False,
    overwrite: bool = False,
    keep_identifiers: bool = False,
    allow_unmatched_spans: bool = False,
    privacy: str | Privacy = "shift",
    epsilon: float = 1.0,
    k: int = 10,
    dp_neighbourhood: str = "nearest",
    dp_reference: str | dt.date | None = None,
) -> DeidentifyReport:
    """Mask or replace the entities of ``notes`` found in ``spans`` (or predicted by ``model``) into ``out``.

    See the module docstring for the outputs and :mod:`deid_ds.deidentification` for the policies. ``key`` (else the
    ``DEID_DS_KEY`` environment variable, else a random key) drives every surrogate choice; an empty key, or one
    shorter than 16 bytes without ``allow_short_key``, is refused (:mod:`.keyed`). ``engine="spark"`` runs the
    batches on Apache Spark (:mod:`deid_ds.engine.spark`, the stage of :mod:`deid_ds.deidentification.stage`: the
    spans joined to the notes, the key shipped inside the tasks) with the same outputs; ``--model`` is not available
    there yet. ``hidden`` is the policy for the views outside the visible text
    (:mod:`deid_ds.deidentification.other_views`); ``keep_columns`` the input columns written back (the others are
    dropped); ``keep_identifiers`` leaves the direct identifiers (NIR, IPP, RPPS...:
    :mod:`deid_ds.deidentification.identifiers`) as they are, with a warning (the leak check still counts them);
    ``fail_on_leak`` keeps an output with leaks out of ``out`` (module docstring: the report's
    ``written_to`` says where it went). ``out`` (and ``OUT.leaks``) is replaced only if deid-ds deidentify wrote it,
    or with ``overwrite`` (:mod:`deid_ds.io.output_dir`).

    ``privacy`` is ``shift`` (the keyed shift of dates, the default) or ``dp`` (ε·d-private dates, ages,
    durations and communes: :mod:`.privacy`), with ``epsilon`` per value, ``k`` similar communes
    (``dp_neighbourhood``: the ``nearest`` of each, or fixed ``groups``) and ``dp_reference`` the day no date is
    moved past (``YYYY-MM-DD``; default the day it runs, written in the report); a :class:`~.privacy.Privacy` may
    be given whole instead. ``dp`` is refused with ``mode="mask"``.

    ``spans`` that match none of the notes are refused, and (without ``allow_unmatched_spans``) spans that
    leave most notes without a span or are mostly about other documents (:mod:`.span_coverage`;
    an :class:`~.span_coverage.UnmatchedSpansError`, exit status 2), before anything is written. A note
    given no span is written with the status ``no spans``, never ``ok``; with ``fail_on_leak``, one that
    could not be leak-checked either keeps the output out of ``out`` as a leak does.
    """
    from deid_ds.io.output_dir import check_output_dir

    log = log or (lambda message: print(message, file=sys.stderr))
    if mode not in MODES:
        raise InputError(f"--mode {mode}: expected one of {', '.join(MODES)}")
    if keep_metadata not in KEEP_METADATA:
        raise InputError(f"--keep-metadata {keep_metadata}: expected one of {', '.join(KEEP_METADATA)}")
    if hidden not in HIDDEN_POLICIES:
        raise InputError(f"--hidden {hidden}: expected one of {', '.join(HIDDEN_POLICIES)}")
    check_mask_format(mask_format)
    policy = resolve_privacy(privacy, epsilon, k, dp_reference, mode, dp_neighbourhood)
    keep_columns = tuple(dict.fromkeys(keep_columns))
    if (spans is None) == (model is None):
        raise InputError("give the entities to replace with exactly one of --spans SPANS or --model MODELDIR")
    if with_rules is not None and model is None:
        raise InputError("--with-rules is for --model (the spans of --spans are used as they are)")
    if batch_size < 1 or workers < 1:
        raise InputError("batch size and workers must be at least 1")
    from deid_ds.engine import engine_for

    runner = engine_for(engine, workers=workers, progress=progress, spark_master=spark_master)
    if runner.distributed and model is not None:
        raise InputError(
            "--model is not available with --engine spark yet: run `deid-ds predict --engine spark` first, "
            "then `deid-ds deidentify --spans PREDICT_OUT --engine spark`"
        )
    inputs = (notes, spans, model, with_rules, kb)
    check_output_dir(out, "deidentify", inputs, overwrite)  # before a model runs, not after
    if kb is not None:
        from deid_ds.kb.build import verify_tables

        verify_tables(kb)
    keyring = resolve_key(key, allow_short=allow_short_key)
    if mode == "surrogate" and keyring.origin.startswith("random"):
        log(
            "deidentify: no --key and no DEID_DS_KEY: a random key is used for this run only "
            "(the mapping cannot be reproduced)"
        )
    if keep_identifiers:
        log(
            "deidentify: WARNING --keep-identifiers: NIR, INS, IPP, NDA, RPPS, IBAN and the other direct identifiers "
            "are left in the notes (the residual-leak check counts them): the output is not de-identified"
        )
    options = DeidOptions(
        mode,
        keyring,
        str(Path(kb).resolve()) if kb else None,
        mask_format,
        keep_metadata,
        audit_originals,
        birthdate_year,
        hidden,
        keep_columns,
        keep_identifiers,
        spans_predicted=model is not None,
        privacy=policy,
    )
    from deid_ds.deidentification.pools import load_pools

    load_pools(options.kb)  # fail fast on an unreadable knowledge base, before any output exists
    from deid_ds.deidentification.places import dp_places_warning

    places_warning = dp_places_warning(options.kb, options.privacy)
    if places_warning:
        log(places_warning)
    source = runner.open("deidentify", notes, column_map, log, batch_size=batch_size)
    own = own_columns(dict(column_map or {}))
    dropped = check_keep_columns(keep_columns, list(source.columns), own, str(notes))
    from deid_ds.deidentification.kept_columns import check_date_columns, date_columns, id_fields, sample_values

    dates = date_columns(source.fields(keep_columns), sample_values(source))
    check_date_columns(dates, mode)  # refused in mask mode, before a model runs
    options = replace(options, date_columns=dates)
    with tempfile.TemporaryDirectory(prefix="deid-ds-predict-") as scratch:
        if model is not None:
            from deid_ds.ner.predict import predict

            log("deidentify: predicting the entities with the model first")
            predict(
                model,
                notes,
                Path(scratch) / "predict",
                with_rules=with_rules,
                kb=kb,  # a model trained with knowledge features computes them from it (deid_ds.ner.knowledge)
                column_map=column_map,
                batch_size=batch_size,
                workers=workers,
                device=device,
                progress=progress,
                log=log,
            )
            spans = Path(scratch) / "predict"
        # predicted spans are about these very notes: a note the model finds nothing in has none, rightly
        allow = None if model is not None else allow_unmatched_spans
        args = (runner, source, spans, out, options, batch_size, dropped, fail_on_leak, inputs, overwrite, log)
        return _run(*args, allow, id_fields(source, dict(column_map or {})))


def resolve_privacy(
    privacy: str | Privacy,
    epsilon: float,
    k: int,
    reference: str | dt.date | None,
    mode: str,
    neighbourhood: str = "nearest",
) -> Privacy:
    """The run's :class:`~.privacy.Privacy`, its reference day fixed (today's when none is given), or an
    :class:`InputError` (``dp`` with ``--mode mask``: nothing is perturbed there, so no guarantee to give)."""
    if not isinstance(privacy, Privacy):
        if isinstance(reference, str):
            try:
                reference = dt.date.fromisoformat(reference.strip())
            except ValueError:
                raise InputError(f"--dp-reference {reference}: expected a day as YYYY-MM-DD") from None
        privacy = Privacy(privacy, epsilon, k=k, reference=reference, neighbourhood=neighbourhood)
    if privacy.is_dp and mode == "mask":
        raise InputError(
            "--privacy dp perturbs the surrogates of --mode surrogate; with --mode mask every entity is masked and "
            "nothing is perturbed: drop --privacy dp, or use --mode surrogate"
        )
    if privacy.is_dp and privacy.reference is None:
        privacy = replace(privacy, reference=dt.datetime.now(dt.UTC).date())
    return privacy


def own_columns(column_map: Mapping[str, str]) -> set[str]:
    """The input columns deid-ds reads itself (never copied by ``--keep-column``) and the names it writes."""
    return {*column_map.values(), *_OWN_COLUMNS, *PATIENT_FIELDS}


def leaks_path(out: str | Path) -> str:
    """Where ``--fail-on-leak`` writes an output with leaks: ``OUT.leaks`` beside ``OUT``."""
    return str(out).rstrip("/") + ".leaks"


def _run(
    runner,
    source,
    spans: str | Path,
    out: str | Path,
    options: DeidOptions,
    batch_size: int,
    dropped: list[str],
    fail_on_leak: bool,
    inputs: tuple,
    overwrite: bool,
    log: Callable[[str], None],
    allow_unmatched: bool | None = False,
    ids: dict | None = None,
) -> DeidentifyReport:
    """Run the stage (:mod:`deid_ds.deidentification.stage`) on ``runner`` into ``out`` (or ``OUT.leaks``),
    once the spans are known to be about the notes (``allow_unmatched`` ``None``: not checked, predicted);
    ``ids``: the input's fields of the id columns (:func:`.kept_columns.id_fields`)."""
    from deid_ds.deidentification.stage import DeidSink, SpanJoin, deidentify_stage, notes_schema

    report, leaks = new_report(options), LeakCounts()
    report.dropped_columns, report.fail_on_leak = list(dropped), fail_on_leak
    started = time.perf_counter()
    schema = notes_schema(source.note_columns, options.keep_metadata, source.fields(options.keep_columns), ids)
    join = SpanJoin(spans, surrogate=options.mode == "surrogate")
    if allow_unmatched is not None:
        from deid_ds.deidentification.span_coverage import check_coverage

        coverage = join.coverage(source)
        check_coverage(coverage, allow_unmatched, str(spans))
        report.span_documents = coverage.span_documents
        report.span_documents_not_in_notes = coverage.span_documents_not_in_notes
        report.allow_unmatched_spans = allow_unmatched
    stage = deidentify_stage(options, schema, join)
    with runner.output(out, "deidentify", inputs=inputs, overwrite=overwrite) as output:
        sink = DeidSink(output.tmp, stage.outputs, report, leaks)
        try:
            runner.run(stage, source, sink, batch_size, out=out, log=log)
        finally:
            sink.close()
        report.privacy = accounting(options.privacy, sink.dp_spent)
        if report.documents != source.n_notes:  # pragma: no cover - a reader bug, never silent
            raise RuntimeError(f"read {report.documents} notes but the input holds {source.n_notes}")
        report.spans_for_unknown_documents = join.unknown
        report.leaks = leaks.to_dict()
        report.seconds = time.perf_counter() - started
        if report.kept_aside:
            output.target = leaks_path(output.target)
        report.written_to = output.target
        (output.tmp / "report.json").write_text(
            json.dumps(report.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
    return report
