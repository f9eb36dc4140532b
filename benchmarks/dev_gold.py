"""Experiment: rules, model and hybrid on the hand-written development notes, in the study's setting.

The first acceptance target of the tagger work: on ``../shared/dev-gold`` (21 notes written by hand, with
gold spans and the knowledge-base files of their hospital; read here only, never copied into the repository),
the tagger trained on the weak labels of those same notes — the gold never read for training — against the
rules it learned from. The hospital's situation: it has its notes, the national files (BAN, Annuaire Santé) and no
annotation; it labels its notes with the rules, trains on them and de-identifies the same notes.

    .venv/bin/python benchmarks/dev_gold.py [--dev-gold /work/shared/dev-gold] [--workdir /tmp/deid-dev-gold]
        [--metadata with,without] [--name weak] [--train-args "--augment 0.5"] [--hidden 64]
        [--max-epochs 40] [--batch 8] [--seeds 0] [--lms] [--threshold T] [--json OUT.json] [--resume] [-v]

1. ``notes.jsonl`` → ``WORKDIR/notes.parquet`` (the notes table of docs/input.md) and ``WORKDIR/gold.parquet``
   (the spans ``evaluate --gold`` reads);
2. ``build-kb --sources DEV_GOLD`` (its BAN and Annuaire files, nothing else: the hospital's own KB);
3. per metadata setting (``--metadata with,without``: the latter passes ``--no-metadata`` to every system):
   ``weak-label --keep-empty`` of the 21 notes **without** ``--gold`` (the training files), and the same run
   with ``--gold`` (the rules' spans, scored); the script checks that both runs wrote byte-identical
   train/dev/test files, i.e. that the gold fed nothing the tagger reads;
4. the tagger on the weak labels: ``--char`` and the knowledge features (weak-label's default), no FastText
   nor Flair LM by default — on 21 notes they learn next to nothing (``--lms`` trains both on the weak corpus
   at the demo's sizes, as ``model_vs_rules.py`` does); ``--train-args`` is passed to ``train`` as is
   (``--augment 0.5``, ``--synthetic N``...), ``--name`` keeps each variant's models and scores apart;
   ``--threshold`` sets the hybrid's threshold for model spans the rules did not find (default: the card's);
5. ``predict`` (model) and ``predict --with-rules`` (hybrid) on the 21 notes, ``evaluate --gold --notes``
   (exact and overlap entity F1 with bootstrap intervals, token redaction recall), plus paired bootstrap
   intervals (documents resampled, 1,000 draws, seed 0) of each system's precision, redaction and their
   differences with the rules, which ``evaluate`` does not give, and the acceptance checks.

Prints the tables (``-v``: per label too) and writes ``WORKDIR/dev_gold-NAME.json`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import platform
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import model_vs_rules  # noqa: E402
from machine import cpu_model  # noqa: E402
from model_vs_rules import run  # noqa: E402  (its --resume: model_vs_rules.RESUME, set in main)

from deid_ds.model import LABELS  # noqa: E402
from deid_ds.synth.corpus import NOTE_COLUMNS  # noqa: E402

RESUME = False  # --resume: a step whose --out exists is not run again


def convert(dev_gold: Path, work: Path) -> tuple[Path, Path]:
    """``notes.jsonl`` → the notes table and the gold spans, as Parquet files of the work directory."""
    import pandas as pd

    notes_path, gold_path = work / "notes.parquet", work / "gold.parquet"
    if RESUME and notes_path.exists() and gold_path.exists():
        return notes_path, gold_path
    notes, gold = [], []
    with (dev_gold / "notes.jsonl").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            record = json.loads(line)
            missing = [c for c in (*NOTE_COLUMNS, "entities") if c not in record]
            if missing:
                sys.exit(f"{dev_gold / 'notes.jsonl'} line {number}: no {', '.join(missing)}")
            notes.append({column: record[column] for column in NOTE_COLUMNS})
            gold += [
                {
                    "id_document": record["id_document"],
                    "label": entity["label"],
                    "html_start": int(entity["html_start"]),
                    "html_end": int(entity["html_end"]),
                    "text": entity["text"],
                }
                for entity in record["entities"]
            ]
    for frame, path in ((pd.DataFrame(notes, columns=list(NOTE_COLUMNS)), notes_path), (pd.DataFrame(gold), gold_path)):
        partial = path.with_suffix(".partial")
        frame.to_parquet(partial, index=False)
        partial.replace(path)
    print(f"[{time.strftime('%H:%M:%S')}] convert: {len(notes)} notes, {len(gold)} gold spans", flush=True)
    return notes_path, gold_path


def same_training_files(weak: Path, rules: Path) -> bool:
    """The weak-label run with ``--gold`` wrote the same train/dev/test files as the one without."""
    return all(filecmp.cmp(weak / name, rules / name, shallow=False) for name in ("train.txt", "dev.txt", "test.txt"))


def document_counts(notes: Path, gold: Path, systems: dict[str, Path]) -> dict[str, object]:
    """Per system, per gold document: exact [TP, predicted, gold] and redaction [covered, gold] tokens,
    scored by ``deid_ds.evaluation`` one document at a time (the unit the bootstrap resamples)."""
    import numpy as np
    import pandas as pd

    from deid_ds.evaluation.evaluate import notes_info
    from deid_ds.evaluation.scoring import score_spans

    gold_frame = pd.read_parquet(gold)
    documents = sorted(set(gold_frame.id_document))
    tokens = notes_info(notes, set(documents)).tokens
    counts = {}
    for name, path in systems.items():
        pred = pd.read_parquet(path / "spans.parquet")
        rows = []
        for doc in documents:
            s = score_spans(
                gold_frame[gold_frame.id_document == doc],
                pred[pred.id_document == doc],
                tokens=tokens[tokens.id_document == doc],
                documents=[doc],
            )
            micro = s.micro
            rows.append([micro.tp, micro.predicted, micro.gold, s.redacted_covered, s.redacted_gold])
        counts[name] = np.array(rows, dtype=np.int64)
    return counts


def bootstrap(counts: dict, reference: str = "rules", n: int = 1000, seed: int = 0) -> dict:
    """Paired percentile intervals (95 %) of precision, redaction recall and micro F1 per system, and of their
    differences with ``reference``: the same document resamples for every system."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n_docs = next(iter(counts.values())).shape[0]
    draws = rng.integers(0, n_docs, size=(n, n_docs))

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        return np.divide(num, den, out=np.zeros_like(num, dtype=float), where=den > 0)

    sums = {name: c[draws].sum(axis=1) for name, c in counts.items()}  # n × 5
    precision = {name: ratio(s[:, 0], s[:, 1]) for name, s in sums.items()}
    redaction = {name: ratio(s[:, 3], s[:, 4]) for name, s in sums.items()}
    f1 = {name: ratio(2 * s[:, 0], s[:, 1] + s[:, 2]) for name, s in sums.items()}  # micro: 2TP / (pred + gold)

    def interval(values: np.ndarray) -> list[float]:
        return [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]

    return {
        name: {
            "precision_ci": interval(precision[name]),
            "redacted_ci": interval(redaction[name]),
            "f1_ci": interval(f1[name]),
            "delta_precision_ci": interval(precision[name] - precision[reference]),
            "delta_redacted_ci": interval(redaction[name] - redaction[reference]),
            "delta_f1_ci": interval(f1[name] - f1[reference]),
        }
        for name in counts
    }


def acceptance(systems: dict) -> dict:
    """The acceptance thresholds on dev-gold, on the point estimates: model F1 ≥ rules', model and hybrid
    redaction ≥ rules' + 0.02, hybrid precision ≥ rules' − 0.01."""
    rules, model, hybrid = (systems[name] for name in ("rules", "model", "hybrid"))

    def f1(s: dict) -> float:
        return s["exact"]["micro"]["f1"]

    def red(s: dict) -> float:
        return s["redacted"]["recall"]

    def prec(s: dict) -> float:
        return s["exact"]["micro"]["precision"]

    return {
        "model F1 >= rules F1": [round(f1(model) - f1(rules), 4), f1(model) >= f1(rules)],
        "model redaction >= rules + 0.02": [round(red(model) - red(rules), 4), red(model) >= red(rules) + 0.02],
        "hybrid redaction >= rules + 0.02": [round(red(hybrid) - red(rules), 4), red(hybrid) >= red(rules) + 0.02],
        "hybrid precision >= rules - 0.01": [round(prec(hybrid) - prec(rules), 4), prec(hybrid) >= prec(rules) - 0.01],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dev-gold",
        type=Path,
        default=next(
            (p for p in (REPO.parent / "shared" / "dev-gold", REPO.parents[1] / "shared" / "dev-gold") if p.is_dir()),
            REPO.parent / "shared" / "dev-gold",
        ),
        help="the dev-gold folder [default: ../shared/dev-gold next to the checkout, or one level up]",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-dev-gold"))
    parser.add_argument(
        "--metadata", default="with,without", help="with (metadata used), without (--no-metadata), or both"
    )
    parser.add_argument("--name", default="weak", help="name of this training variant (models and scores)")
    parser.add_argument("--train-args", default="", help='extra options of `deid-ds train`, e.g. "--augment 0.5"')
    parser.add_argument(
        "--threshold",
        type=float,
        help="the hybrid's `predict --threshold` [default: the model card's]; with --resume, only the hybrid reruns",
    )
    parser.add_argument("--keep-empty", default="0.3", help="weak-label --keep-empty (the demo's)")
    parser.add_argument(
        "--split",
        default="0.85,0.15,0",
        help="weak-label --split: every patient in train or dev (the notes are the ones de-identified)",
    )
    parser.add_argument("--max-epochs", type=int, default=40)
    parser.add_argument(
        "--batch",
        type=int,
        default=8,
        help="train --batch: ~325 sentences make 10 steps an epoch at the demo's 32, too few before annealing",
    )
    parser.add_argument("--patience", type=int, default=5, help="train --patience (the dev split holds 2 patients)")
    parser.add_argument("--hidden", type=int, default=64, help="the tagger's LSTM hidden size (the demo's: 64)")
    parser.add_argument("--seeds", default="0", help="tagger seeds, comma-separated (one model each)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for training")
    parser.add_argument("--workers", type=int, default=1, help="weak-label and predict workers")
    parser.add_argument("--lms", action="store_true", help="train FastText and Flair LMs on the weak corpus too")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--resume", action="store_true", help="keep the outputs of a previous run in WORKDIR")
    parser.add_argument("-v", "--verbose", action="store_true", help="print F1 per label")
    args = parser.parse_args()
    global RESUME
    RESUME = model_vs_rules.RESUME = args.resume
    if not (args.dev_gold / "notes.jsonl").is_file():
        sys.exit(f"{args.dev_gold}: no notes.jsonl (give --dev-gold)")
    settings = [s.strip() for s in args.metadata.split(",") if s.strip()]
    if not settings or any(s not in ("with", "without") for s in settings):
        sys.exit(f"--metadata {args.metadata!r}: expected with, without or with,without")
    work: Path = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    started = time.perf_counter()

    notes, gold = convert(args.dev_gold, work)
    kb = work / "kb"
    run("build-kb", ["build-kb", "--sources", str(args.dev_gold), "--out", str(kb), "--quiet"], timings)
    workers = ["--workers", str(args.workers)]
    seeds = [int(s) for s in args.seeds.split(",")]
    results, cards = {}, {}
    for setting in settings:
        no_metadata = ["--no-metadata"] if setting == "without" else []
        weak, rules = work / f"weak-{setting}", work / f"rules-{setting}"
        common = ["--kb", str(kb), "--keep-empty", args.keep_empty, "--split", args.split, *no_metadata, *workers]
        run(f"weak-label {setting}", ["weak-label", str(notes), "--out", str(weak), *common, "--quiet"], timings)
        run(
            f"rules {setting}",
            ["weak-label", str(notes), "--out", str(rules), "--gold", str(gold), *common, "--quiet"],
            timings,
        )
        if not same_training_files(weak, rules):
            sys.exit(f"weak-label --gold changed the training files ({weak} vs {rules})")
        embeddings: list[str] = []
        if args.lms:
            fasttext, flair_lm = work / f"fasttext-{setting}", work / f"flair-lm-{setting}"
            run(
                f"fasttext {setting}",
                ["embeddings", "fasttext", str(weak), "--out", str(fasttext), "--dim", "32", "--epochs", "5"]
                + ["--bucket", "20000", "--quiet"],
                timings,
            )
            run(
                f"flair-lm {setting}",
                ["embeddings", "flair-lm", str(weak), "--out", str(flair_lm), "--hidden", "64", "--epochs", "2"]
                + ["--seq-len", "50", "--batch", "16", "--threads", "1", "--quiet"],
                timings,
            )
            embeddings = ["--fasttext", str(fasttext), "--flair-lm", str(flair_lm)]
        for seed in seeds:
            model = work / f"model-{args.name}-{setting}-{seed}"
            run(
                f"train {setting} seed {seed}",
                ["train", str(weak), "--out", str(model), *embeddings, "--char", "--hidden", str(args.hidden)]
                + ["--max-epochs", str(args.max_epochs), "--batch", str(args.batch), "--patience", str(args.patience)]
                + ["--threads", str(args.threads), "--seed", str(seed)]
                + [*shlex.split(args.train_args), "--quiet"],
                timings,
            )
            cards[f"{setting}-{seed}"] = json.loads((model / "model_card.json").read_text(encoding="utf-8"))
            out = work / f"eval-{args.name}-{setting}-{seed}"
            suffix = "" if args.threshold is None else f"-t{args.threshold:g}"
            threshold = [] if args.threshold is None else ["--threshold", str(args.threshold)]
            systems = {"rules": rules, "model": out / "model", "hybrid": out / f"hybrid{suffix}"}
            run(
                f"predict {setting}",
                ["predict", str(model), str(notes), "--out", str(systems["model"]), "--kb", str(kb)]
                + [*no_metadata, *workers, "--quiet"],
                timings,
            )
            run(
                f"hybrid {setting}",
                ["predict", str(model), str(notes), "--out", str(systems["hybrid"]), "--with-rules", str(kb)]
                + [*threshold, *no_metadata, *workers, "--quiet"],
                timings,
            )
            evaluate_args = ["evaluate", "--gold", str(gold), "--notes", str(notes)]
            evaluate_args += ["--json", str(out / f"evaluate{suffix}.json"), "--quiet"]
            for name, path in systems.items():
                evaluate_args += ["--pred", str(path), "--name", name]
            run(f"evaluate {setting}", evaluate_args, timings)
            scores = json.loads((out / f"evaluate{suffix}.json").read_text(encoding="utf-8"))
            counts = document_counts(notes, gold, systems)
            for name, c in counts.items():  # the per-document scoring adds up to evaluate's totals
                micro = scores["systems"][name]["exact"]["micro"]
                redacted = scores["systems"][name]["redacted"]
                totals = c.sum(axis=0).tolist()
                expected = [micro["tp"], micro["predicted"], micro["gold"], redacted["covered"], redacted["gold"]]
                if totals != expected:
                    sys.exit(f"{name}: per-document counts {totals} differ from evaluate's {expected}")
            results[f"{setting}-{seed}"] = {
                "evaluate": scores,
                "bootstrap": bootstrap(counts),
                "acceptance": acceptance(scores["systems"]),
            }

    report = {
        "machine": {"cpu": cpu_model(), "python": platform.python_version()},
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "training": {
            key: {k: card.get(k) for k in ("data", "selection", "seconds_per_epoch", "total_seconds")}
            for key, card in cards.items()
        },
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "total_s": round(time.perf_counter() - started, 1),
        "results": results,
    }
    threshold_name = "" if args.threshold is None else f"-t{args.threshold:g}"
    path = args.json or work / f"dev_gold-{args.name}{threshold_name}.json"
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    print_summary(report, args.verbose)
    print(f"\nwritten to {path}")


def print_summary(report: dict, verbose: bool = False) -> None:
    from deid_ds.report import format_table

    def ci(values: list[float], signed: bool = False) -> str:
        return ("{:+.3f}..{:+.3f}" if signed else "{:.3f}-{:.3f}").format(*values)

    for key, result in report["results"].items():
        systems = result["evaluate"]["systems"]
        boot = result["bootstrap"]
        print(f"\n== metadata {key} (setting-seed): {next(iter(systems.values()))['documents']} documents ==")
        rows = []
        for name, s in systems.items():
            micro = s["exact"]["micro"]
            rows.append(
                [
                    name,
                    micro["precision"],
                    ci(boot[name]["precision_ci"]),
                    micro["recall"],
                    micro["f1"],
                    ci(s["micro_f1_ci"]),
                    ci(s["delta_f1_ci"], signed=True),
                    s["lenient"]["micro"]["f1"],
                    s["redacted"]["recall"],
                    ci(boot[name]["redacted_ci"]),
                    ci(boot[name]["delta_redacted_ci"], signed=True),
                ]
            )
        headers = ["system", "P", "P CI", "R", "F1", "F1 CI", "ΔF1 CI", "overlap F1", "redacted", "red. CI", "Δred. CI"]
        print(format_table(headers, rows))
        for check, (delta, met) in result["acceptance"].items():
            print(f"  {check}: {delta:+.4f} {'met' if met else 'NOT met'}")
        if verbose:
            rows = [
                [label, systems["rules"]["exact"]["per_label"].get(label, {}).get("gold", 0)]
                + [s["exact"]["per_label"].get(label, {}).get("f1", float("nan")) for s in systems.values()]
                for label in LABELS
            ]
            print(format_table(["label", "gold", *systems], rows))
    print(
        "\ntimings (s): "
        + ", ".join(f"{k} {v}" for k, v in report["timings_s"].items())
        + f"; total {report['total_s']}"
    )


if __name__ == "__main__":
    main()
