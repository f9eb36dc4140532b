"""Two training recipes over several tagger seeds: each recipe's mean, and the difference of the means.

A tolerance such as "micro F1 within 0.01 of the full model" is smaller than one recipe's own seed-to-seed spread
on the acceptance corpus (0.011 F1, 0.019 redaction between two seeds), so one seed of each recipe can meet or miss
it by the draw of the seed. This script reads the predictions that ``model_vs_rules.py`` left in one work directory
for two variants (``--name``) trained with the same seeds, and compares the recipes on the mean over the seeds:

    .venv/bin/python benchmarks/recipe_seeds.py --workdir W --variant fast12 --baseline full12 --seeds 0,1,2,3 \\
        [--style exports-heldout] [--threshold 0.9] [--workers 1] [--resamples 1000] [--json OUT.json]

Systems: each seed's model alone and its hybrid with the model card's thresholds (``model-S``, ``hybrid-S`` of
``WORKDIR/eval-VARIANT-STYLE``); with ``--threshold T`` also the hybrid of ``predict --with-rules --threshold T``
(run here once per model, kept under ``hybrid-tT-S``). For each system: every seed's micro F1, precision and
redaction, the recipe's mean, the difference of the means (variant − baseline) with two 95 % intervals:

* **documents**: a percentile bootstrap over the test documents, the same resamples for every model of both
  recipes (the seeds taken as they are: how sure the difference is on these seeds);
* **documents and seeds**: each resample also draws the seeds of each recipe with replacement (a crude reading of
  the seed-to-seed spread with so few seeds; wider, and the honest one to read a criterion on).

The rules (``rules`` of the variant's evaluation) are the reference of the hybrids' precision criterion. Each
model's redaction is also split between the gold tokens that are numbers written in words (dates and phone numbers
spelt out, "deux mille douze", "zéro six ...": about 3 % of the acceptance corpus's gold tokens) and the others:
what a recipe learns on some seeds and not on others. Writes
``WORKDIR/recipe_seeds-VARIANT-BASELINE.json`` (or ``--json``) and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import model_vs_rules  # noqa: E402
from machine import cpu_model  # noqa: E402

FIGURES = ("f1", "precision", "redacted")

#: French number words (the generator's and the rules' dates and phone numbers written in words).
NUMBER_WORDS = frozenset(
    "zéro un une deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize vingt vingts "
    "trente quarante cinquante soixante cent cents mille et".split()
)


def is_written_number(word: str) -> bool:
    """A token that is a number written in words (``dix-sept``, ``quatre-vingt-quinze``, ``z&eacute;ro``), not a lone
    ``un``, ``une`` or ``et`` (as often an article or a conjunction)."""
    import html

    word = html.unescape(word).lower().strip(".,;:()")
    return word not in ("un", "une", "et") and all(part in NUMBER_WORDS for part in word.split("-"))


def written_number_redaction(tokens, gold: dict, predicted: dict) -> dict:
    """Redaction of the gold tokens that are numbers written in words, and of the other gold tokens.

    ``tokens``: ``(document, start, end, text)`` of every token of the notes; ``gold`` and ``predicted``: per
    document, the ``(start, end)`` of its spans (the same offsets). A token is gold when a gold span overlaps it,
    covered when a predicted span does (as ``evaluate``'s label-blind redaction)."""

    def overlaps(spans, start: int, end: int) -> bool:
        return any(s < end and start < e for s, e in spans)

    out = {kind: {"gold": 0, "covered": 0} for kind in ("written_numbers", "other")}
    for document, start, end, text in tokens:
        if overlaps(gold.get(document, ()), start, end):
            kind = out["written_numbers" if is_written_number(text) else "other"]
            kind["gold"] += 1
            kind["covered"] += overlaps(predicted.get(document, ()), start, end)
    for kind in out.values():
        kind["recall"] = kind["covered"] / kind["gold"] if kind["gold"] else 0.0
    return out


def spans_by_document(path: Path) -> dict:
    import pandas as pd

    frame = pd.read_parquet(path, columns=["id_document", "html_start", "html_end"])
    out: dict = {}
    for doc, start, end in frame.itertuples(index=False):
        out.setdefault(doc, []).append((int(start), int(end)))
    return out


def written_numbers_of(notes: Path, gold: Path, systems: dict[str, Path]) -> dict:
    """:func:`written_number_redaction` of each system, on ``evaluate``'s tokens of the gold documents."""
    from deid_ds.evaluation.evaluate import notes_info

    gold_spans = spans_by_document(gold)
    info = notes_info(notes, set(gold_spans))
    html = {doc: text.decode("utf-8") if isinstance(text, bytes) else text for doc, text in info.html.items()}
    tokens = [
        (doc, int(s), int(e), html[doc][s:e])
        for doc, s, e in info.tokens[["id_document", "html_start", "html_end"]].itertuples(index=False)
    ]
    return {
        name: written_number_redaction(tokens, gold_spans, spans_by_document(path / "spans.parquet"))
        for name, path in systems.items()
    }


def figures(sums):
    """Micro F1, precision and redaction from summed per-document counts ``[TP, predicted, gold, covered, gold
    tokens]`` (the last axis; any leading axes, e.g. resamples): the ratios of ``dev_gold.bootstrap``."""
    import numpy as np

    sums = np.asarray(sums, dtype=float)

    def ratio(num, den):
        return np.divide(num, den, out=np.zeros_like(num, dtype=float), where=den > 0)

    tp, predicted, gold, covered, gold_tokens = np.moveaxis(sums, -1, 0)
    return {
        "f1": ratio(2 * tp, predicted + gold),
        "precision": ratio(tp, predicted),
        "redacted": ratio(covered, gold_tokens),
    }


def recipe_difference(variant: list, baseline: list, n: int = 1000, seed: int = 0) -> dict:
    """The mean over seeds of each recipe's micro figures, their difference (``variant`` − ``baseline``), and the
    difference's 95 % intervals: ``*_ci`` over document resamples (the same for every model), ``*_seeds_ci`` over
    document resamples and a draw of each recipe's seeds with replacement.

    ``variant`` and ``baseline`` hold one per-document count array (documents × 5, the rows of
    ``dev_gold.document_counts``) per seed, the documents in the same order in all of them."""
    import numpy as np

    arrays = [np.asarray(c) for c in (*variant, *baseline)]
    n_docs = arrays[0].shape[0]
    if any(a.shape != (n_docs, 5) for a in arrays):
        raise ValueError("every model needs the counts of the same documents (documents × 5)")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_docs, size=(n, n_docs))
    picks = {
        "variant": rng.integers(0, len(variant), size=(n, len(variant))),
        "baseline": rng.integers(0, len(baseline), size=(n, len(baseline))),
    }
    per_seed, boot = {}, {}
    for name, models in (("variant", variant), ("baseline", baseline)):
        per_seed[name] = [figures(np.asarray(c).sum(axis=0)) for c in models]
        # resamples × seeds, one figure each
        boot[name] = {
            key: np.stack([figures(np.asarray(c)[draws].sum(axis=1))[key] for c in models], axis=1) for key in FIGURES
        }

    def interval(values) -> list[float]:
        return [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]

    out = {}
    for key in FIGURES:
        seeds = {name: [float(f[key]) for f in per_seed[name]] for name in per_seed}
        means = {name: float(np.mean(values)) for name, values in seeds.items()}
        by_documents = boot["variant"][key].mean(axis=1) - boot["baseline"][key].mean(axis=1)
        rows = np.arange(n)[:, None]
        by_both = boot["variant"][key][rows, picks["variant"]].mean(axis=1) - boot["baseline"][key][
            rows, picks["baseline"]
        ].mean(axis=1)
        out[key] = {
            "variant_seeds": seeds["variant"],
            "baseline_seeds": seeds["baseline"],
            "variant_mean": means["variant"],
            "baseline_mean": means["baseline"],
            "difference": means["variant"] - means["baseline"],
            "difference_ci": interval(by_documents),
            "difference_seeds_ci": interval(by_both),
        }
    return out


def not_below(difference: dict, tolerance: float) -> dict:
    """Whether the variant is at most ``tolerance`` below the baseline (a difference of means ``>= -tolerance``; a
    fast recipe better than the full one meets a "within" criterion): on the point estimate and on the lower end of
    the documents interval and of the documents-and-seeds interval."""
    return {
        "point": difference["difference"] >= -tolerance,
        "documents_ci": difference["difference_ci"][0] >= -tolerance,
        "seeds_ci": difference["difference_seeds_ci"][0] >= -tolerance,
    }


def hybrid_at(work: Path, variant: str, style: str, seed: int, threshold: float, workers: int) -> Path:
    """``predict --with-rules --threshold T`` of one model on the test notes (kept when already there)."""
    out = work / f"eval-{variant}-{style}" / f"hybrid-t{threshold:g}-{seed}"
    model_vs_rules.run(
        f"hybrid {variant} seed {seed} --threshold {threshold:g}",
        [
            "predict",
            str(work / f"model-{variant}-{seed}"),
            str(work / style / "notes.parquet"),
            "--out",
            str(out),
            "--with-rules",
            str(work / "kb"),
            "--threshold",
            f"{threshold:g}",
            "--workers",
            str(workers),
            "--quiet",
        ],
        {},
    )
    return out


def stopping(work: Path, variant: str, seed: int) -> dict:
    """The epoch the model was kept at and the dev micro F1 of every epoch (Flair's ``loss.tsv``)."""
    model = work / f"model-{variant}-{seed}"
    card = json.loads((model / "model_card.json").read_text(encoding="utf-8"))
    lines = (model / "loss.tsv").read_text(encoding="utf-8").splitlines()
    column = lines[0].split("\t").index("DEV_F1")
    return {
        "kept_epoch": (card.get("selection") or {}).get("epoch"),
        "dev_f1": [round(float(line.split("\t")[column]), 4) for line in lines[1:] if line.strip()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, required=True, help="model_vs_rules.py's work directory")
    parser.add_argument("--variant", required=True, help="the recipe compared (a model_vs_rules.py --name)")
    parser.add_argument("--baseline", required=True, help="the reference recipe (a --name of the same directory)")
    parser.add_argument("--seeds", default="0,1,2,3", help="tagger seeds trained for both, comma-separated")
    parser.add_argument("--style", default="exports-heldout", help="the test style")
    parser.add_argument("--threshold", type=float, help="also the hybrids of predict --with-rules --threshold T")
    parser.add_argument("--workers", type=int, default=1, help="predict workers (--threshold)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the test documents")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from dev_gold import document_counts

    model_vs_rules.RESUME = True  # a --threshold hybrid already predicted is kept
    work, style = args.workdir, args.style
    seeds = [int(s) for s in args.seeds.split(",")]
    kinds = ["model", "hybrid"] + ([f"hybrid-t{args.threshold:g}"] if args.threshold is not None else [])
    notes, gold = work / style / "notes.parquet", work / style / "gold.parquet"
    counts = {}
    for variant in (args.variant, args.baseline):
        systems = {"rules": work / f"eval-{variant}-{style}" / "rules"}
        for seed in seeds:
            for kind in ("model", "hybrid"):
                systems[f"{kind}-{seed}"] = work / f"eval-{variant}-{style}" / f"{kind}-{seed}"
            if args.threshold is not None:
                systems[f"hybrid-t{args.threshold:g}-{seed}"] = hybrid_at(
                    work, variant, style, seed, args.threshold, args.workers
                )
        missing = [str(path) for path in systems.values() if not (path / "spans.parquet").exists()]
        if missing:
            sys.exit(f"no predictions in {', '.join(missing)} (run model_vs_rules.py --name {variant} --seeds first)")
        counts[variant] = document_counts(notes, gold, systems)
    rules = {key: float(value) for key, value in figures(counts[args.variant]["rules"].sum(axis=0)).items()}
    written = {
        variant: written_numbers_of(
            notes, gold, {str(s): work / f"eval-{variant}-{style}" / f"model-{s}" for s in seeds}
        )
        for variant in (args.variant, args.baseline)
    }
    results = {
        kind: recipe_difference(
            [counts[args.variant][f"{kind}-{s}"] for s in seeds],
            [counts[args.baseline][f"{kind}-{s}"] for s in seeds],
            n=args.resamples,
        )
        for kind in kinds
    }
    report = {
        "machine": {"cpu": cpu_model()},
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "rules": rules,
        "results": results,
        "criteria": {
            "model_f1_within_0.01": not_below(results["model"]["f1"], 0.01),
            "model_redacted_within_0.005": not_below(results["model"]["redacted"], 0.005),
            **{
                f"{kind}_precision_minus_rules": [
                    round(p - rules["precision"], 4) for p in results[kind]["precision"]["variant_seeds"]
                ]
                for kind in kinds
                if kind != "model"
            },
        },
        "model_redaction_written_numbers": written,
        "stopping": {
            variant: {str(s): stopping(work, variant, s) for s in seeds} for variant in (args.variant, args.baseline)
        },
    }
    path = args.json or work / f"recipe_seeds-{args.variant}-{args.baseline}.json"
    path.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print_summary(report, args.variant, args.baseline)
    print(f"\nwritten to {path}")


def print_summary(report: dict, variant: str, baseline: str) -> None:
    rules = report["rules"]
    print(f"rules: F1 {rules['f1']:.4f}, P {rules['precision']:.4f}, redacted {rules['redacted']:.4f}")
    for kind, result in report["results"].items():
        print(f"\n{kind}: per seed ({variant} / {baseline}), mean, {variant} − {baseline} (documents; and seeds)")
        for key in FIGURES:
            r = result[key]
            seeds = " ".join(f"{a:.4f}/{b:.4f}" for a, b in zip(r["variant_seeds"], r["baseline_seeds"], strict=True))
            lo, hi = r["difference_ci"]
            slo, shi = r["difference_seeds_ci"]
            print(
                f"  {key:9} {seeds}  mean {r['variant_mean']:.4f}/{r['baseline_mean']:.4f}  "
                f"{r['difference']:+.4f} ({lo:+.4f}..{hi:+.4f}; {slo:+.4f}..{shi:+.4f})"
            )
    print("\ncriteria:", json.dumps(report["criteria"]))
    for name, models in report["stopping"].items():
        print(name, "kept epoch", {s: m["kept_epoch"] for s, m in models.items()})
    for name, models in report["model_redaction_written_numbers"].items():
        print(
            name,
            "model redaction, numbers in words / other gold tokens:",
            {s: f"{m['written_numbers']['recall']:.3f}/{m['other']['recall']:.3f}" for s, m in models.items()},
        )


if __name__ == "__main__":
    main()
