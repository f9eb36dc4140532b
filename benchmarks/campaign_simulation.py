"""Experiment: a simulated correction campaign on dev-gold, its gold playing the annotator (issue 31).

Per training seed, in ``dev_gold.py``'s setting (same KB, weak labels, tagger sizes; its functions are
reused): model0 on the weak labels of the 21 notes and its predictions; then a budget of ``--budget``
corrected notes chosen two ways,

* ``random``: a seeded draw (the seed is the training seed);
* ``disagreement``: the notes ranked by :func:`deid_ds.campaign.selection.document_priorities` on the
  rules' spans and model0's predictions — the very ranking of ``campaign --select disagreement`` (without
  its per-type quotas: one pool here), ties in the seeded random order;
* ``rules-silent`` (``--selections``, not a ``campaign --select`` choice: a candidate measured here): the notes
  with the most model0 spans that overlap no rule span, :func:`rules_silent_score` — where the rules may
  have missed an identifier, the only errors of theirs a correction can teach the hybrid to catch;

dev-gold's gold of those notes is the correction: model1 = ``train --gold-train`` (same seed, same
sizes), ``calibrate`` on the same notes (its ``calibration.json``, which ``predict --with-rules`` reads),
and rules, model0's hybrid, model1 and hybrid1 are scored on the **other** notes only, with paired
bootstrap intervals (documents resampled) of hybrid1's and model1's differences with model0's hybrid and
with the rules. The mean over seeds has an interval too: each draw resamples every seed's scored notes
and averages the seeds' differences.

    .venv/bin/python benchmarks/campaign_simulation.py [--workdir /tmp/deid-campaign-sim]
        [--corpus DIR] [--seeds 0,1,2] [--budget 5] [--max-epochs 20] [--resume] [--json OUT.json]
        [--selections random,disagreement[,rules-silent]]

Per run the JSON also records what the correction holds: the gold spans of the corrected notes that the
rules miss (not wholly covered by a rule span) against those of the scored notes, and model0's card
thresholds next to model1's calibrated ones.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import dev_gold  # noqa: E402
import model_vs_rules  # noqa: E402
from machine import cpu_model  # noqa: E402
from model_vs_rules import run  # noqa: E402

from deid_ds.campaign.choices import DISAGREEMENT  # noqa: E402
from deid_ds.campaign.selection import document_priorities  # noqa: E402

SELECTIONS = ("random", "disagreement", "rules-silent")
DEFAULT_SELECTIONS = "random,disagreement"
SYSTEMS = ("rules", "model0", "hybrid0", "model1", "hybrid1")
#: (system, reference) pairs whose differences get intervals: each retrained system against its model0 twin
#: and against the rules.
LIFTS = (("model1", "model0"), ("model1", "rules"), ("hybrid1", "hybrid0"), ("hybrid1", "rules"))


def random_order(documents: Sequence[str], seed: int) -> list[str]:
    """``documents`` (sorted first, so the order depends on the seed only) in a seeded random order."""
    import numpy as np

    ordered = sorted(documents)
    return [ordered[i] for i in np.random.default_rng(seed).permutation(len(ordered))]


def choose(documents: Sequence[str], budget: int, seed: int, priorities: Mapping[str, float] | None) -> list[str]:
    """The ``budget`` documents to correct: the first of the seeded random order (``priorities`` None), or
    the highest priorities, ties kept in that random order (as ``campaign --select`` does)."""
    order = random_order(documents, seed)
    if priorities is not None:
        order = sorted(order, key=lambda d: -priorities[d])  # stable: ties keep the random order
    return order[:budget]


Span = tuple[int, int, str]  # html_start, html_end, label


def rules_silent_score(rule_spans: Sequence[Span], model_spans: Sequence[Span]) -> int:
    """How many of the model's spans overlap no rule span: the places the rules are silent and the model is not."""
    return sum(not any(rs < me and ms < re for rs, re, _ in rule_spans) for ms, me, _ in model_spans)


def rule_misses(gold_spans: Sequence[Span], rule_spans: Sequence[Span]) -> int:
    """How many gold spans the rules do not cover wholly (label-blind, characters): what a correction of
    the note teaches beyond its weak labels, on the redaction side."""

    def covered(start: int, end: int) -> int:
        cuts = sorted((max(rs, start), min(re, end)) for rs, re, _ in rule_spans if rs < end and start < re)
        total, reach = 0, start
        for low, high in cuts:
            total += max(0, high - max(low, reach))
            reach = max(reach, high)
        return total

    return sum(covered(start, end) < end - start for start, end, _ in gold_spans)


def spans_by_document(path: Path) -> dict[str, list[Span]]:
    """``spans.parquet`` (or a gold table) read as ``id -> [(html_start, html_end, label)]``."""
    import pandas as pd

    frame = pd.read_parquet(path, columns=["id_document", "html_start", "html_end", "label"])
    spans: dict[str, list[Span]] = {}
    for row in frame.itertuples(index=False):
        spans.setdefault(str(row.id_document), []).append((int(row.html_start), int(row.html_end), str(row.label)))
    return spans


def _rates(sums):
    """F1 (exact) and redaction recall from summed counts ``[tp, predicted, gold, covered, gold tokens]``."""
    import numpy as np

    sums = np.asarray(sums, dtype=float)
    f1_den, red_den = sums[..., 1] + sums[..., 2], sums[..., 4]
    f1 = np.divide(2 * sums[..., 0], f1_den, out=np.zeros_like(f1_den), where=f1_den > 0)
    red = np.divide(sums[..., 3], red_den, out=np.zeros_like(red_den), where=red_den > 0)
    return f1, red


def scores(counts) -> dict[str, float]:
    """F1 and redaction of one system from its per-document counts (rows as ``dev_gold.document_counts``)."""
    f1, red = _rates(counts.sum(axis=0))
    return {"f1": float(f1), "redacted": float(red)}


def lift_intervals(pairs: Sequence[tuple], n: int = 1000, seed: int = 0) -> dict[str, list[float]]:
    """95 % percentile intervals of the mean over ``pairs`` of (system − reference) F1 and redaction.

    Each pair is the per-document counts of a system and of its reference on the same documents (one pair
    per training seed); every draw resamples each pair's documents (paired: the same rows for both) and
    averages the pairs' differences, so one pair gives the usual paired bootstrap.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    f1_deltas, red_deltas = np.zeros(n), np.zeros(n)
    for system, reference in pairs:
        draws = rng.integers(0, system.shape[0], size=(n, system.shape[0]))
        f1_s, red_s = _rates(system[draws].sum(axis=1))
        f1_r, red_r = _rates(reference[draws].sum(axis=1))
        f1_deltas += (f1_s - f1_r) / len(pairs)
        red_deltas += (red_s - red_r) / len(pairs)

    def interval(values) -> list[float]:
        return [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]

    return {"delta_f1_ci": interval(f1_deltas), "delta_redacted_ci": interval(red_deltas)}


def subset(path: Path, documents: Sequence[str], out: Path) -> Path:
    """The rows of the Parquet table ``path`` whose ``id_document`` is in ``documents``, written to ``out``."""
    import pandas as pd

    frame = pd.read_parquet(path)
    frame[frame.id_document.isin(set(documents))].to_parquet(out, index=False)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=REPO.parent / "shared" / "dev-gold",
        help="dev-gold (notes.jsonl), or a `deid-ds synth --kb-dir OUT` folder (notes.parquet, gold.parquet), "
        "with its KB source files [default: ../shared/dev-gold]",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-campaign-sim"))
    parser.add_argument("--seeds", default="0,1,2", help="training seeds (also the random selection's)")
    parser.add_argument("--budget", type=int, default=5, help="corrected notes per selection")
    parser.add_argument(
        "--selections",
        default=DEFAULT_SELECTIONS,
        help=f"comma-separated, among {', '.join(SELECTIONS)} [default: {DEFAULT_SELECTIONS}]",
    )
    parser.add_argument("--max-epochs", type=int, default=20, help="train --max-epochs (capped on a shared CPU)")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--patience", type=int, default=5)
    parser.add_argument("--keep-empty", default="0.3", help="weak-label --keep-empty (dev_gold.py's)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--resume", action="store_true", help="keep the outputs of a previous run in WORKDIR")
    args = parser.parse_args()
    dev_gold.RESUME = model_vs_rules.RESUME = args.resume
    selections = [s for s in args.selections.split(",") if s]
    if not selections or any(s not in SELECTIONS for s in selections):
        sys.exit(f"--selections {args.selections}: expected a comma-separated list among {', '.join(SELECTIONS)}")
    corpus: Path = args.corpus
    generated = (corpus / "notes.parquet").is_file() and (corpus / "gold.parquet").is_file()
    if not generated and not (corpus / "notes.jsonl").is_file():
        sys.exit(f"{corpus}: neither notes.jsonl nor notes.parquet and gold.parquet (give --corpus)")
    work: Path = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    started = time.perf_counter()

    import pandas as pd

    notes, gold = (corpus / "notes.parquet", corpus / "gold.parquet") if generated else dev_gold.convert(corpus, work)
    documents = sorted(pd.read_parquet(notes, columns=["id_document"]).id_document.astype(str))
    kb, weak, rules = work / "kb", work / "weak", work / "rules"
    run("build-kb", ["build-kb", "--sources", str(corpus), "--out", str(kb), "--quiet"], timings)
    common = ["--kb", str(kb), "--keep-empty", args.keep_empty, "--split", "0.85,0.15,0", "--workers", "1"]
    run("weak-label", ["weak-label", str(notes), "--out", str(weak), *common, "--quiet"], timings)
    run("rules", ["weak-label", str(notes), "--out", str(rules), "--gold", str(gold), *common, "--quiet"], timings)
    if not dev_gold.same_training_files(weak, rules):
        sys.exit(f"weak-label --gold changed the training files ({weak} vs {rules})")
    sizes = ["--char", "--hidden", str(args.hidden), "--max-epochs", str(args.max_epochs), "--batch", str(args.batch)]
    sizes += ["--patience", str(args.patience), "--threads", "1", "--quiet"]

    gold_spans, rule_spans = spans_by_document(gold), spans_by_document(rules / "spans.parquet")
    misses = {d: rule_misses(gold_spans.get(d, []), rule_spans.get(d, [])) for d in documents}
    per_seed: dict[str, dict] = {}
    counts_by: dict[tuple[str, int], dict] = {}
    seeds = [int(s) for s in args.seeds.split(",")]
    for seed in seeds:
        model0, pred0, hybrid0 = work / f"model0-{seed}", work / f"pred0-{seed}", work / f"hybrid0-{seed}"
        run(
            f"train model0 seed {seed}",
            ["train", str(weak), "--out", str(model0), "--seed", str(seed), *sizes],
            timings,
        )
        predict = ["--workers", "1", "--quiet"]
        run(
            "predict model0",
            ["predict", str(model0), str(notes), "--out", str(pred0), "--kb", str(kb), *predict],
            timings,
        )
        run(
            "hybrid0",
            ["predict", str(model0), str(notes), "--out", str(hybrid0), "--with-rules", str(kb), *predict],
            timings,
        )
        priorities = document_priorities(DISAGREEMENT, rules, pred0, documents)
        model_spans = spans_by_document(pred0 / "spans.parquet")
        silent = {d: float(rules_silent_score(rule_spans.get(d, []), model_spans.get(d, []))) for d in documents}
        by_selection = {"random": None, "disagreement": priorities, "rules-silent": silent}
        threshold0 = json.loads((model0 / "model_card.json").read_text(encoding="utf-8")).get("hybrid") or {}
        for selection in selections:
            chosen = choose(documents, args.budget, seed, by_selection[selection])
            tag = f"{selection}-{seed}"
            fix_gold = subset(gold, chosen, work / f"fix-gold-{tag}.parquet")
            fix_notes = subset(notes, chosen, work / f"fix-notes-{tag}.parquet")
            model1, pred1, hybrid1 = work / f"model1-{tag}", work / f"pred1-{tag}", work / f"hybrid1-{tag}"
            run(
                f"train model1 {tag}",
                ["train", str(weak), "--out", str(model1), "--seed", str(seed), "--gold-train", str(fix_gold), *sizes],
                timings,
            )
            calibration = model1 / "calibration.json"
            run(
                f"calibrate {tag}",
                ["calibrate", str(model1), str(fix_notes), "--gold", str(fix_gold), "--kb", str(kb)]
                + ["--out", str(calibration), "--quiet"],
                timings,
            )
            run(
                f"predict {tag}",
                ["predict", str(model1), str(notes), "--out", str(pred1), "--kb", str(kb), *predict],
                timings,
            )
            run(
                f"hybrid1 {tag}",
                ["predict", str(model1), str(notes), "--out", str(hybrid1), "--with-rules", str(kb), *predict],
                timings,
            )
            scored = [d for d in documents if d not in set(chosen)]
            scored_gold = subset(gold, scored, work / f"scored-gold-{tag}.parquet")
            counts = dev_gold.document_counts(
                notes,
                scored_gold,
                {"rules": rules, "model0": pred0, "hybrid0": hybrid0, "model1": pred1, "hybrid1": hybrid1},
            )
            counts_by[(selection, seed)] = counts
            per_seed[tag] = {
                "chosen": chosen,
                "disagreement_of_chosen": [priorities[d] for d in chosen],
                "rules_silent_of_chosen": [silent[d] for d in chosen],
                "rule_misses": {
                    "chosen": sum(misses[d] for d in chosen),
                    "scored": sum(misses[d] for d in scored),
                },
                "threshold0": {k: threshold0.get(k) for k in ("add", "override")},
                "threshold": json.loads(calibration.read_text(encoding="utf-8")).get("chosen"),
                "scores": {name: scores(c) for name, c in counts.items()},
                "lifts": {f"{name} - {ref}": lift_intervals([(counts[name], counts[ref])]) for name, ref in LIFTS},
            }
        done = seeds[: seeds.index(seed) + 1]
        report = make_report(args, selections, counts_by, per_seed, done, timings, time.perf_counter() - started)
        path = args.json or work / "campaign_simulation.json"
        path.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")  # after each seed
        print(f"[{time.strftime('%H:%M:%S')}] seed {seed} done: {path}", flush=True)

    print_summary(report)
    print(f"\nwritten to {path}")


def make_report(
    args, selections: Sequence[str], counts_by: dict, per_seed: dict, seeds: list[int], timings: dict, total: float
) -> dict:
    """The JSON report: per seed, and the means over the ``seeds`` done so far."""
    summary = {}
    for selection in selections:
        runs = [counts_by[(selection, seed)] for seed in seeds]
        summary[selection] = {
            "mean_scores": {
                name: {k: sum(scores(r[name])[k] for r in runs) / len(runs) for k in ("f1", "redacted")}
                for name in SYSTEMS
            },
            "mean_lifts": {f"{name} - {ref}": lift_intervals([(r[name], r[ref]) for r in runs]) for name, ref in LIFTS},
        }
    return {
        "machine": {"cpu": cpu_model(), "python": platform.python_version()},
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "seeds_done": seeds,
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "total_s": round(total, 1),
        "per_seed": per_seed,
        "summary": summary,
    }


def print_summary(report: dict) -> None:
    from deid_ds.report import format_table

    def ci(values: list[float]) -> str:
        return "{:+.3f}..{:+.3f}".format(*values)

    for selection, result in report["summary"].items():
        print(f"\n== {selection} selection, mean over seeds ==")
        rows = [[name, s["f1"], s["redacted"]] for name, s in result["mean_scores"].items()]
        print(format_table(["system", "F1", "redacted"], rows))
        rows = [[pair, ci(v["delta_f1_ci"]), ci(v["delta_redacted_ci"])] for pair, v in result["mean_lifts"].items()]
        print(format_table(["difference", "ΔF1 CI", "Δredacted CI"], rows))
    print("\ntimings (s): " + ", ".join(f"{k} {v}" for k, v in report["timings_s"].items()))


if __name__ == "__main__":
    main()
