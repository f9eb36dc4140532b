"""The hybrid's thresholds (:mod:`deid_ds.ner.hybrid`): chosen on dev data, recorded, and found again by ``predict``.

Two thresholds on the model's span scores drive the merge: ``add`` (a model span the rules did not
find is added when its score reaches it) and ``override`` (a model span overrides a weak rule span it
overlaps when its score reaches it). Where they come from, strongest first (:func:`resolve_thresholds`):

1. ``predict --threshold X`` (``add``) and ``--override Y``: the user's choice, e.g. a lower ``add``
   toward recall (more model spans, never fewer redacted characters);
2. ``predict --calibration FILE.json``, else ``calibration.json`` beside the model: written by
   ``deid-ds calibrate`` (:func:`calibrate`) from **gold** annotations of dev notes — the real choice;
3. the model card's ``hybrid`` entry, written at the end of ``deid-ds train`` (:func:`proxy_thresholds`)
   from the weak labels' dev split — a **proxy** (no gold there);
4. none of these (a model trained before thresholds existed): ``add = override = 0``, every model span
   counts, the hybrid of earlier versions.

**Calibration** (``deid-ds calibrate``): the model and the rules tag the gold-annotated notes once
(``predict --with-rules`` with the merge left out), then the merge is redone for every ``add`` of
:data:`GRID` (``override`` fixed), and each result is scored against the gold by
:func:`deid_ds.evaluation.scoring.score_spans` (character-level label-blind redaction recall, exact micro
precision). The choice is the ``add`` of highest redaction whose precision is at most ``tolerance``
(0.01 by default) below the rules' alone; ties go to the highest ``add`` (fewer model
spans). When no ``add`` keeps the precision, the most precise one is chosen and ``constraint_met`` is
false. The curve and the choice go to a JSON file written atomically; the model card is never rewritten
(never destroy what ``train`` recorded).

**The training proxy** (:func:`proxy_thresholds`): without gold, ``add`` is the lowest score of
:data:`GRID` at which at least ``target`` (0.98, about the rules' own precision on gold) of the model's
spans on the weak labels' dev split are exactly a weak-label span (same tokens, same label): "when the
model is that sure, it says what the rules say", so its spans at that confidence where the rules are
silent are taken as the rules' misses. It is a proxy, and a weak one: the weak labels miss identifiers
(a model span they lack may be right: the proxy is cautious there) and share the rules' errors (a wrong
span they back looks right); above all the dev split has the training notes' style, where the model
agrees with the rules far more than on notes of another style. Measured (docs/benchmarks.md, "The hybrid's
thresholds"): on the demo model it picks 0.7, where calibrating on gold of another style picks 1.0. ``override`` is
:data:`DEFAULT_OVERRIDE`, fixed, not tuned.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from deid_ds.errors import InputError
from deid_ds.ner.thresholds import DEFAULT_OVERRIDE, check_threshold

#: The ``add`` thresholds tried by calibrate and the training proxy.
GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(21))
#: The training proxy's target: the share of the model's spans that are exactly weak-label spans.
DEFAULT_TARGET = 0.98
#: How far below the rules' precision the calibrated hybrid may go.
DEFAULT_TOLERANCE = 0.01


# --------------------------------------------------------------------------------------------------
# Sweeping the threshold (pure, on spans already found)


def merged_frame(model_rows, rule_rows, *, add: float, override: float):
    """The hybrid's spans at these thresholds, as a spans frame, from the model's and the rules' rows of
    ``predict`` (columns of ``spans.parquet``; the merge on text offsets, HTML offsets looked up)."""
    import pandas as pd

    from deid_ds.ner.hybrid import merge_scored

    rows = []
    for document in sorted(set(model_rows) | set(rule_rows)):
        model, rules = model_rows.get(document, {}), rule_rows.get(document, {})
        html = {**{key[:2]: value for key, value in model.items()}, **{key[:2]: value for key, value in rules.items()}}
        merged = merge_scored(
            [(*key[:3], "model", value[2]) for key, value in model.items()],
            list(rules),
            add=add,
            override=override,
        )
        for start, end, label, source, score in merged:
            html_start, html_end = html[(start, end)][:2]
            rows.append((document, label, html_start, html_end, start, end, source, score))
    columns = ["id_document", "label", "html_start", "html_end", "text_start", "text_end", "source", "score"]
    return pd.DataFrame(rows, columns=columns)


def _split_rows(frame) -> tuple[dict, dict]:
    """``predict``'s unmerged rows by document: model spans ``{(start, end, label): (html_start, html_end,
    score)}`` and rule spans ``{(start, end, label, source): (html_start, html_end)}``."""
    model: dict[str, dict] = {}
    rules: dict[str, dict] = {}
    for row in frame.itertuples(index=False):
        key = (int(row.text_start), int(row.text_end), row.label)
        if row.source == "model":
            model.setdefault(row.id_document, {})[key] = (int(row.html_start), int(row.html_end), float(row.score))
        else:
            rules.setdefault(row.id_document, {})[(*key, row.source)] = (int(row.html_start), int(row.html_end))
    return model, rules


def _point(scores) -> dict:
    micro = scores.micro
    return {
        "precision": round(micro.precision, 6),
        "recall": round(micro.recall, 6),
        "micro_f1": round(micro.f1, 6),
        "redacted_recall": round(scores.redacted_recall, 6),
        "spans": int(micro.predicted),
    }


def choose(curve: Sequence[dict], rules_precision: float, tolerance: float) -> dict:
    """The point of ``curve`` of highest redaction with a precision at most ``tolerance`` below the rules',
    ties to the highest ``add``; else the most precise point (``constraint_met`` false). Pure."""
    floor = rules_precision - tolerance
    allowed = [p for p in curve if p["precision"] >= floor - 1e-12]
    if allowed:
        best = max(allowed, key=lambda p: (p["redacted_recall"], p["add"]))
        return {**best, "constraint_met": True}
    best = max(curve, key=lambda p: (p["precision"], p["redacted_recall"], p["add"]))
    return {**best, "constraint_met": False}


def sweep(
    gold,
    predicted,
    *,
    documents: Iterable[str] | None = None,
    grid: Iterable[float] = GRID,
    override: float = DEFAULT_OVERRIDE,
) -> dict:
    """The rules', the model's and the hybrid's scores at each ``add`` of ``grid``, against ``gold`` (frames),
    on ``documents`` (default: the gold's)."""
    from deid_ds.evaluation.scoring import score_spans

    documents = sorted(set(gold["id_document"]) if documents is None else set(documents))
    model_rows, rule_rows = _split_rows(predicted)
    rules_only = predicted[predicted["source"] != "model"]
    model_only = predicted[predicted["source"] == "model"]
    result = {
        "documents": len(documents),
        "rules": _point(score_spans(gold, rules_only, documents=documents)),
        "model": _point(score_spans(gold, model_only, documents=documents)),
        "curve": [],
    }
    for add in grid:
        frame = merged_frame(model_rows, rule_rows, add=add, override=override)
        result["curve"].append({"add": add, **_point(score_spans(gold, frame, documents=documents))})
    return result


# --------------------------------------------------------------------------------------------------
# The command's function


KIND = "deid-ds calibrate"


def _check_out(out: Path) -> None:
    """``out`` may be replaced only if it is absent or an earlier calibrate's file (never destroy, e.g. a
    model card given by mistake)."""
    if out.is_dir():
        raise InputError(f"{out}: is a directory (calibrate writes a JSON file)")
    if out.exists():
        try:
            kind = json.loads(out.read_text(encoding="utf-8")).get("kind")
        except (OSError, ValueError, AttributeError):
            kind = None
        if kind != KIND:
            raise InputError(f"{out}: exists and was not written by deid-ds calibrate; choose another --out")


def calibrate(
    model: str | Path,
    notes: str | Path,
    gold: str | Path,
    kb: str | Path,
    out: str | Path,
    *,
    override: float = DEFAULT_OVERRIDE,
    tolerance: float = DEFAULT_TOLERANCE,
    use_metadata: bool = True,
    column_map: Mapping[str, str] | None = None,
    punkt: str | Path | None = None,
    max_tokens: int | None = None,
    workers: int = 1,
    device: str = "auto",
    log: Callable[[str], None] | None = None,
) -> dict:
    """Choose the hybrid's ``add`` threshold on gold-annotated ``notes`` and write the curve and the choice to
    ``out`` (JSON, atomically; module docstring). Returns what was written."""
    import pandas as pd

    from deid_ds.defaults import DEFAULT_MAX_TOKENS
    from deid_ds.evaluation.evaluate import read_spans
    from deid_ds.io.files import atomic_write_text
    from deid_ds.ner.predict import predict

    log = log or (lambda message: print(message, file=sys.stderr))
    override = check_threshold(override, "--override", "the override threshold")
    out = Path(out)
    _check_out(out)
    gold_frame = read_spans(gold, "gold")
    if gold_frame.empty:
        raise InputError(f"{gold}: the gold has no spans to calibrate on")
    with tempfile.TemporaryDirectory(prefix="deid-ds-calibrate-") as tmp:
        predict(
            model,
            notes,
            Path(tmp) / "raw",
            with_rules=kb,
            use_metadata=use_metadata,
            column_map=column_map,
            punkt=punkt,
            max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            workers=workers,
            device=device,
            progress=False,
            log=log,
            merge=False,
        )
        predicted = pd.read_parquet(Path(tmp) / "raw" / "spans.parquet")
        status = pd.read_parquet(Path(tmp) / "raw" / "documents.parquet", columns=["id_document", "status"])
    # the gold's documents that were tagged (a gold note missing from NOTES would count as all missed)
    documents = set(gold_frame["id_document"]) & set(status.loc[status["status"] == "ok", "id_document"])
    if not documents:
        raise InputError(f"{notes}: none of the gold's documents is among these notes (or none could be tagged)")
    result = sweep(gold_frame, predicted, documents=documents, override=override)
    chosen = choose(result["curve"], result["rules"]["precision"], tolerance)
    written = {
        "kind": KIND,
        "model": str(Path(model).resolve()),
        "notes": str(notes),
        "gold": str(gold),
        "documents": sorted(documents),  # calibrated on: evaluate never scores them (deid_ds.evaluation.held_out)
        "kb": str(kb),
        "use_metadata": use_metadata,
        "metrics": "exact micro precision; label-blind redaction recall on characters (deid_ds.evaluation.scoring)",
        "tolerance": tolerance,
        "override": override,
        **result,
        "chosen": {"add": chosen["add"], "override": override, **{k: v for k, v in chosen.items() if k != "add"}},
    }
    atomic_write_text(out, json.dumps(written, indent=1, sort_keys=True) + "\n")
    return written


# --------------------------------------------------------------------------------------------------
# The training proxy


def proxy_curve(pairs: Iterable[tuple[Sequence, Sequence]], grid: Iterable[float] = GRID) -> list[dict]:
    """For each ``add`` of ``grid``: the model's spans scoring at least ``add`` and the share of them that are
    exactly a weak-label span. ``pairs``: per sentence, the model's ``(first, last, label, score)`` and the
    weak labels' ``(first, last, label)`` (token indices, last inclusive). Pure."""
    scored = []
    for model, weak in pairs:
        weak = {tuple(span[:3]) for span in weak}
        for first, last, label, score in model:
            scored.append((score, (first, last, label) in weak))
    curve = []
    for add in grid:
        kept = [backed for score, backed in scored if score >= add]
        curve.append({"add": add, "spans": len(kept), "backed": round(sum(kept) / len(kept), 6) if kept else 1.0})
    return curve


def proxy_thresholds(model_path: str | Path, dev, *, target: float = DEFAULT_TARGET, mini_batch_size: int = 32):
    """The model card's ``hybrid`` entry: the training proxy (module docstring) on the Flair ``dev`` dataset
    (sentences with the weak labels as ``ner``), or ``None`` without dev sentences."""
    if dev is None or len(dev) == 0:
        return None
    from flair.data import Sentence
    from flair.models import SequenceTagger

    from deid_ds.ner.predict import sentence_entities

    tagger = SequenceTagger.load(str(model_path))
    gold = list(dev)
    fresh = [Sentence([token.text for token in sentence]) for sentence in gold]
    tagger.predict(fresh, mini_batch_size=mini_batch_size, verbose=False)
    pairs = []
    for weak, tagged in zip(gold, fresh):
        position = {id(token): i for i, token in enumerate(weak.tokens)}
        weak_spans = [
            (position[id(s.tokens[0])], position[id(s.tokens[-1])], s.get_label("ner").value)
            for s in weak.get_spans("ner")
        ]
        pairs.append((sentence_entities(tagged, tagger.label_type), weak_spans))
    curve = proxy_curve(pairs)
    reached = [point["add"] for point in curve if point["spans"] and point["backed"] >= target]
    return {
        "add": min(reached) if reached else 1.0,
        "override": DEFAULT_OVERRIDE,
        "source": "train: proxy on the weak labels' dev split (no gold; see deid-ds calibrate)",
        "target_backed": target,
        "curve": curve,
    }
