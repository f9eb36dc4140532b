"""Experiment: does the model trained on the rules' weak labels beat the rules on a style neither has seen?

The acceptance criterion ("on the generator's held-out style the model must beat the rules'
micro F1"), made fair: the test notes are written in ``synth --phrasing unseen`` (family 2), a house style
written without looking at the rules, so that the rules were not tuned on it and the model never trained
on it. The paper's comparison is the same on real notes (model 0.9696 vs rules 0.9365 micro F1).

    .venv/bin/python benchmarks/model_vs_rules.py [--workdir /tmp/deid-model-vs-rules] [--test-notes 300]
        [--test-seed 3] [--train sample|N] [--train-seed 2] [--max-epochs 8] [--seeds 0] [--threads 1]
        [--styles unseen] [--text-noise 0] [--name NAME] [--train-args "--augment 0.5"] [--json OUT.json]
        [--resume] [--baseline NAME]

From nothing but the repository, with the commands and flags of ``make demo``:

1. ``synth --phrasing unseen`` test notes with gold (their own world: people, streets, KB sources);
2. ``build-kb`` from ``kb/sources/`` **and** the test corpus's own ``kb/`` sources (a hospital's rules
   would have the national files, which list its patients' streets and its professionals);
3. the training notes: the embedded sample ``data/notes.parquet`` (``--train sample``, the default) or a
   fresh ``synth --phrasing train`` corpus of N notes (``--train N``), weak-labelled with ``--keep-empty 0.3``;
4. FastText and Flair character LMs on the weak labels, then the tagger (demo sizes, ``--max-epochs``);
5. on the test notes: the rules (``weak-label --gold``), the model (``predict``), the hybrid
   (``predict --with-rules``), scored side by side by ``evaluate`` (bootstrap 95% intervals);
6. an error breakdown: per system and label, the words just before the gold spans it missed and the
   spans it found that are not in the gold (entities masked by their label, digits by 0).

``--styles unseen,heldout`` scores the same systems on a family-1 corpus as well (the style the rules
were tuned on). ``--seeds 0,1`` trains one tagger per seed (embeddings and data fixed). ``--text-noise LEVEL``
generates every corpus (test and training; not the embedded sample) with ``synth --text-noise LEVEL``: scan and
typing noise, gold kept exact. ``--train-args`` is passed to ``train`` as is (``--augment 0.5``,
``--synthetic N``...); ``--name`` keeps each variant's models and scores apart in one work directory, so that
with ``--resume`` a variant reuses the corpora, knowledge base, weak labels and embeddings of the first run;
``--baseline NAME`` then compares its model and hybrid with that earlier variant's, paired (``''``: the unnamed
run). ``--train-args "--fast"`` trains the CPU recipe, without the character LMs (neither trained nor given).
Besides ``evaluate``'s F1 intervals, each system gets paired bootstrap intervals of its precision and redaction
and of their differences with the rules (``dev_gold.bootstrap``). Prints the tables and writes
``WORKDIR/model_vs_rules.json`` (or ``WORKDIR/model_vs_rules-NAME.json``, or ``--json``).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shlex
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402

LABELS = ("PATIENT", "DOCTOR", "DATE", "EMAIL", "PHONE", "STR", "ZIP", "VILLE")
SYSTEMS = ("rules", "model", "hybrid")


RESUME = False  # --resume: a step whose --out exists is not run again


def run(step: str, args: list[str], timings: dict[str, float]) -> None:
    """``deid-ds ARGS`` in a subprocess (as ``make demo`` runs it), timed; stops the experiment on failure."""
    out = args[args.index("--out") + 1] if "--out" in args else None
    if RESUME and out is not None and Path(out).exists():
        print(f"[{time.strftime('%H:%M:%S')}] {step}: kept {out}", flush=True)
        return
    print(f"[{time.strftime('%H:%M:%S')}] {step}: deid-ds {' '.join(args)}", flush=True)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "deid_ds", *args], cwd=REPO, capture_output=True, text=True)
    timings[step] = timings.get(step, 0.0) + time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{step} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")


def synth_args(count: int | str, seed: int, style: str, out: Path, text_noise: int = 0) -> list[str]:
    """``deid-ds synth`` for one corpus; ``--text-noise`` only when asked, so that the clean corpora are the
    ones the earlier figures were measured on."""
    args = ["synth", "--notes", str(count), "--seed", str(seed), "--phrasing", style, "--out", str(out)]
    return args + (["--text-noise", str(text_noise)] if text_noise else []) + ["--quiet"]


def deltas(systems: dict, reference: str = "rules") -> dict[str, dict[str, float]]:
    """Each system's exact micro F1, precision and redaction minus the reference's (the acceptance
    criteria are read on these point estimates; the intervals are in the tables)."""
    ref = systems[reference]

    def figures(s: dict) -> dict[str, float]:
        micro = s["exact"]["micro"]
        return {"f1": micro["f1"], "precision": micro["precision"], "redacted": s["redacted"]["recall"]}

    base = figures(ref)
    return {
        name: {key: round(value - base[key], 4) for key, value in figures(s).items()}
        for name, s in systems.items()
        if name != reference
    }


def is_fast(extra: str) -> bool:
    """``--train-args`` asks for ``train --fast``: no character language models (``train`` refuses ``--flair-lm``)."""
    return "--fast" in shlex.split(extra)


def train_args(
    work: Path, variant: str, seed: int, hidden: int, max_epochs: int, threads: int, extra: str
) -> list[str]:
    """``deid-ds train`` for one variant and seed: the work directory's FastText vectors and character LMs
    (none with ``--fast``, the CPU recipe), then ``--train-args`` as given."""
    flair_lm = [] if is_fast(extra) else ["--flair-lm", str(work / "flair-lm")]
    return [
        "train",
        str(work / "weak"),
        "--out",
        str(work / f"model-{variant}{seed}"),
        "--fasttext",
        str(work / "fasttext"),
        *flair_lm,
        "--hidden",
        str(hidden),
        "--max-epochs",
        str(max_epochs),
        "--threads",
        str(threads),
        "--seed",
        str(seed),
        *shlex.split(extra),
        "--quiet",
    ]


def micro_figures(counts) -> dict[str, float]:
    """Micro F1, precision and redaction of a system from its per-document counts (``dev_gold.document_counts``)."""
    tp, predicted, gold, covered, gold_tokens = (int(v) for v in counts.sum(axis=0))
    return {
        "f1": 2 * tp / (predicted + gold) if predicted + gold else 0.0,
        "precision": tp / predicted if predicted else 0.0,
        "redacted": covered / gold_tokens if gold_tokens else 0.0,
    }


def versus_baseline(counts: dict, baseline: dict, reference: str = "rules") -> dict:
    """Each system but ``reference`` minus the same system of the baseline variant (another ``--name`` trained in
    the same work directory: same corpora, knowledge base, weak labels and document resamples): the differences of
    micro F1, precision and redaction, and their paired bootstrap 95 % intervals."""
    from dev_gold import bootstrap  # here: dev_gold imports this module

    out = {}
    for name in counts:
        if name == reference:
            continue
        boot = bootstrap({"variant": counts[name], "baseline": baseline[name]}, reference="baseline")["variant"]
        this, base = micro_figures(counts[name]), micro_figures(baseline[name])
        out[name] = {
            **{key: round(this[key] - base[key], 4) for key in ("f1", "precision", "redacted")},
            **{f"{key}_ci": boot[f"delta_{key}_ci"] for key in ("f1", "precision", "redacted")},
        }
    return out


def kb_sources(directory: Path) -> list[str]:
    args = [arg for path in sorted(directory.glob("adresses-*.csv.gz")) for arg in ("--ban", str(path))]
    return args + [
        arg
        for path in sorted(directory.glob("PS_LibreAcces_Personne_activite_*.txt"))
        for arg in ("--health-directory", str(path))
    ]


def masked_context(text: str, start: int, spans: list[tuple[int, int, str]], words: int = 3) -> str:
    """The ``words`` words before ``start``, other entities replaced by their label, digits by 0."""
    left = text[max(0, start - 80) : start]
    offset = start - len(left)
    for s, e, label in sorted(spans, reverse=True):
        if s >= offset and e <= start:
            left = left[: s - offset] + f"<{label}>" + left[e - offset :]
    left = re.sub(r"\d", "0", left.replace("\xa0", " "))
    return " ".join(left.split()[-words:]) or "^"


def error_breakdown(notes: Path, gold: Path, systems: dict[str, Path], top: int = 8) -> dict:
    """Per system and label: counts and the most frequent contexts of missed gold spans and of false positives."""
    import pandas as pd

    from deid_ds.segmentation.html_text import html_to_text

    html = dict(pd.read_parquet(notes, columns=["id_document", "html"]).itertuples(index=False))
    gold_rows = pd.read_parquet(gold)
    gold_set = {(r.id_document, r.label, r.html_start, r.html_end) for r in gold_rows.itertuples()}
    parsed = {doc: html_to_text(h) for doc, h in html.items() if doc in set(gold_rows.id_document)}
    gold_text_spans: dict[str, list[tuple[int, int, str]]] = {}
    for r in gold_rows.itertuples():
        s, e = parsed[r.id_document].text_span(r.html_start, r.html_end)
        gold_text_spans.setdefault(r.id_document, []).append((s, e, r.label))
    out = {}
    for name, path in systems.items():
        pred = pd.read_parquet(path / "spans.parquet" if path.is_dir() else path)
        pred = pred[pred.id_document.isin(parsed)]
        pred_set = {(r.id_document, r.label, r.html_start, r.html_end) for r in pred.itertuples()}
        missed: dict[str, Counter] = {label: Counter() for label in LABELS}
        wrong: dict[str, Counter] = {label: Counter() for label in LABELS}
        for doc, label, hs, he in gold_set - pred_set:
            text = parsed[doc]
            s, _ = text.text_span(hs, he)
            missed[label][masked_context(text.text, s, gold_text_spans[doc])] += 1
        for doc, label, hs, he in pred_set - gold_set:
            text = parsed[doc]
            s, e = text.text_span(hs, he)
            # what the gold has there: the same span with another label, an overlapping one, or nothing
            overlap = [g for g in gold_text_spans[doc] if g[0] < e and s < g[1]]
            kind = (
                "nothing"
                if not overlap
                else ("label " + overlap[0][2] if (overlap[0][0], overlap[0][1]) == (s, e) else "boundary")
            )
            wrong[label][f"{kind} | {masked_context(text.text, s, gold_text_spans[doc])}"] += 1
        out[name] = {
            label: {
                "missed": sum(missed[label].values()),
                "missed_after": missed[label].most_common(top),
                "false": sum(wrong[label].values()),
                "false_where": wrong[label].most_common(top),
            }
            for label in LABELS
        }
    return out


def training_corpora(
    spec: str, seed: int, test_seed: int, work: Path, timings: dict[str, float], text_noise: int = 0
) -> list[tuple[str, Path | None]]:
    """The training corpora named by ``--train``: ``sample``, ``N`` (``synth --phrasing train``) or
    ``STYLE:N`` (``synth --phrasing STYLE``, e.g. ``unseen:300``), comma-separated; each generated corpus
    gets its own seed (``--train-seed``, then the next ones, never ``--test-seed``), so its notes, patients
    and people are not the test corpus's. Returns ``(name, directory)``, ``None`` for the embedded sample."""
    parts: list[tuple[str, Path | None]] = []
    seeds = (s for s in range(seed, seed + 1000) if s != test_seed)
    for item in (p.strip() for p in spec.split(",") if p.strip()):
        if item == "sample":
            parts.append(("sample", None))
            continue
        style, _, count = item.rpartition(":")
        style = style or "train"
        name = f"train-{style}-{count}"
        run(f"synth {name}", synth_args(count, next(seeds), style, work / name, text_noise), timings)
        parts.append((name, work / name))
    return parts


def training_notes(parts: list[tuple[str, Path | None]], work: Path) -> tuple[Path, list[str]]:
    """One notes input for ``weak-label`` (a file, or a directory of the corpora's Parquet files) and the
    ``--gold`` flags: gold scores the weak labels of a single corpus for the record; it never feeds training."""
    import shutil

    files = [
        (
            name,
            REPO / "data" / "notes.parquet" if directory is None else directory / "notes.parquet",
            REPO / "data" / "gold.parquet" if directory is None else directory / "gold.parquet",
        )
        for name, directory in parts
    ]
    if len(files) == 1:
        return files[0][1], ["--gold", str(files[0][2])]
    merged = work / "train-notes"
    if not (RESUME and merged.exists()):
        shutil.rmtree(merged, ignore_errors=True)
        merged.mkdir(parents=True)
        for position, (name, notes, _) in enumerate(files):
            shutil.copyfile(notes, merged / f"part-{position:02d}-{name}.parquet")
    return merged, []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-model-vs-rules"))
    parser.add_argument("--test-notes", type=int, default=300)
    parser.add_argument("--test-seed", type=int, default=3)
    parser.add_argument(
        "--train",
        default="sample",
        help=(
            "training corpora, comma-separated: 'sample' (data/notes.parquet), N (synth --phrasing train) or "
            "STYLE:N (e.g. unseen:300)"
        ),
    )
    parser.add_argument("--train-seed", type=int, default=2)
    parser.add_argument("--max-epochs", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=64, help="the tagger's LSTM hidden size (the demo's: 64)")
    parser.add_argument("--seeds", default="0", help="tagger seeds, comma-separated (one model each)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads for training (1: torch's spinning threads crawl on a shared machine)",
    )
    parser.add_argument("--workers", type=int, default=2, help="predict workers")
    parser.add_argument("--styles", default="unseen", help="test styles: unseen, heldout (comma-separated)")
    parser.add_argument(
        "--text-noise",
        type=int,
        choices=range(4),
        default=0,
        help="synth --text-noise of every generated corpus, test and training (0: clean; 1-3: light to very poor)",
    )
    parser.add_argument("--name", default="", help="name of this training variant (its models and scores)")
    parser.add_argument("--train-args", default="", help='extra options of `deid-ds train`, e.g. "--augment 0.5"')
    parser.add_argument(
        "--baseline",
        help=(
            "a variant run before in the same work directory ('' for the unnamed one): this variant's model and "
            "hybrid minus its, paired bootstrap"
        ),
    )
    parser.add_argument(
        "--keep-empty",
        default="0.3",
        help="weak-label --keep-empty of the training notes: share of the sentences without entity kept",
    )
    parser.add_argument(
        "--no-metadata",
        action="store_true",
        help="the patients' metadata used by no system: weak labels, rules, model features and hybrid",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--resume", action="store_true", help="keep the outputs of a previous run in WORKDIR (steps whose --out exists)"
    )
    args = parser.parse_args()
    global RESUME
    RESUME = args.resume
    work: Path = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    started = time.perf_counter()

    # 1-2. test corpora and the knowledge base (the shipped sources plus each generated corpus's own)
    styles = [s.strip() for s in args.styles.split(",") if s.strip()]
    kb_args = kb_sources(REPO / "kb" / "sources")
    for style in styles:
        synth = synth_args(args.test_notes, args.test_seed, style, work / style, args.text_noise)
        run(f"synth {style}", synth, timings)
        kb_args += kb_sources(work / style / "kb")
    train_parts = training_corpora(args.train, args.train_seed, args.test_seed, work, timings, args.text_noise)
    for _, directory in train_parts:
        if directory is not None:
            kb_args += kb_sources(directory / "kb")
    kb = work / "kb"
    no_metadata = ["--no-metadata"] if args.no_metadata else []
    run("build-kb", ["build-kb", "--out", str(kb), "--quiet", *kb_args], timings)

    # 3-4. weak labels of the training notes, embeddings and tagger(s), with the demo's sizes
    weak = work / "weak"
    train_notes, gold_args = training_notes(train_parts, work)
    run(
        "weak-label train",
        [
            "weak-label",
            str(train_notes),
            "--kb",
            str(kb),
            "--out",
            str(weak),
            *gold_args,
            "--keep-empty",
            args.keep_empty,
            *no_metadata,
            "--quiet",
        ],
        timings,
    )
    run(
        "fasttext",
        [
            "embeddings",
            "fasttext",
            str(weak),
            "--out",
            str(work / "fasttext"),
            "--dim",
            "32",
            "--epochs",
            "5",
            "--bucket",
            "20000",
            "--quiet",
        ],
        timings,
    )
    if not is_fast(args.train_args):
        run(
            "flair-lm",
            [
                "embeddings",
                "flair-lm",
                str(weak),
                "--out",
                str(work / "flair-lm"),
                "--hidden",
                "64",
                "--epochs",
                "2",
                "--seq-len",
                "50",
                "--batch",
                "16",
                "--threads",
                "1",
                "--quiet",
            ],
            timings,
        )
    seeds = [int(s) for s in args.seeds.split(",")]
    variant = f"{args.name}-" if args.name else ""
    for seed in seeds:
        run(
            f"train seed {seed}",
            train_args(work, variant, seed, args.hidden, args.max_epochs, args.threads, args.train_args),
            timings,
        )

    # 5-6. every system on every test style, side by side, and where each one errs
    results = {}
    for style in styles:
        notes, gold = work / style / "notes.parquet", work / style / "gold.parquet"
        out = work / f"eval-{variant}{style}"
        systems = {"rules": out / "rules"}
        run(
            f"rules {style}",
            [
                "weak-label",
                str(notes),
                "--kb",
                str(kb),
                "--out",
                str(systems["rules"]),
                "--gold",
                str(gold),
                *no_metadata,
                "--quiet",
            ],
            timings,
        )
        for seed in seeds:
            suffix = "" if len(seeds) == 1 else f"-{seed}"
            model = work / f"model-{variant}{seed}"
            systems[f"model{suffix}"] = out / f"model{suffix}"
            systems[f"hybrid{suffix}"] = out / f"hybrid{suffix}"
            run(
                f"predict {style}",
                [
                    "predict",
                    str(model),
                    str(notes),
                    "--out",
                    str(systems[f"model{suffix}"]),
                    "--kb",  # a model trained with knowledge features (weak-label's default) computes them from it
                    str(kb),
                    "--workers",
                    str(args.workers),
                    "--quiet",
                ],
                timings,
            )
            run(
                f"hybrid {style}",
                [
                    "predict",
                    str(model),
                    str(notes),
                    "--out",
                    str(systems[f"hybrid{suffix}"]),
                    "--with-rules",
                    str(kb),
                    *no_metadata,
                    "--workers",
                    str(args.workers),
                    "--quiet",
                ],
                timings,
            )
        evaluate_args = [
            "evaluate",
            "--gold",
            str(gold),
            "--notes",
            str(notes),
            "--json",
            str(out / "evaluate.json"),
            "--figure",
            str(out / "evaluate.png"),
            "--quiet",
        ]
        for name, path in systems.items():
            evaluate_args += ["--pred", str(path), "--name", name]
        run(f"evaluate {style}", evaluate_args, timings)
        scores = json.loads((out / "evaluate.json").read_text(encoding="utf-8"))
        from dev_gold import bootstrap, document_counts  # here: dev_gold imports this module

        counts = document_counts(notes, gold, systems)
        results[style] = {
            "evaluate": scores,
            "bootstrap": bootstrap(counts),
            "deltas": deltas(scores["systems"]),
            "errors": error_breakdown(notes, gold, systems),
        }
        if args.baseline is not None:
            base_out = work / f"eval-{args.baseline + '-' if args.baseline else ''}{style}"
            base_systems = {name: base_out / name for name in systems}
            missing = [str(path) for path in base_systems.values() if not (path / "spans.parquet").exists()]
            if missing:
                sys.exit(
                    f"--baseline {args.baseline!r}: no predictions in {', '.join(missing)} (run that variant first)"
                )
            results[style]["versus"] = {
                "baseline": args.baseline,
                "systems": versus_baseline(counts, document_counts(notes, gold, base_systems)),
            }

    cards = {
        seed: json.loads((work / f"model-{variant}{seed}" / "model_card.json").read_text(encoding="utf-8"))
        for seed in seeds
    }
    report = {
        "machine": {"cpu": cpu_model(), "python": platform.python_version()},
        "config": {**{k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}},
        "training": {
            str(seed): {k: card.get(k) for k in ("data", "selection", "seconds_per_epoch", "total_seconds")}
            for seed, card in cards.items()
        },
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "total_s": round(time.perf_counter() - started, 1),
        "results": results,
    }
    path = args.json or work / f"model_vs_rules{'-' + args.name if args.name else ''}.json"
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    print_summary(report)
    print(f"\nwritten to {path}")


def print_summary(report: dict) -> None:
    from deid_ds.report import format_table

    for style, result in report["results"].items():
        systems = result["evaluate"]["systems"]
        print(f"\n== style {style}: {next(iter(systems.values()))['documents']} documents ==")
        rows = []
        for name, s in systems.items():
            micro = s["exact"]["micro"]
            rows.append(
                [
                    name,
                    micro["precision"],
                    micro["recall"],
                    micro["f1"],
                    "{:.4f}-{:.4f}".format(*s["micro_f1_ci"]),
                    "{:+.4f}..{:+.4f}".format(*s["delta_f1_ci"]),
                    s["lenient"]["micro"]["f1"],
                    s["redacted"]["recall"],
                ]
            )
        print(format_table(["system", "P", "R", "F1", "F1 95% CI", "ΔF1 vs rules CI", "lenient F1", "redacted"], rows))
        boot = result.get("bootstrap", {})
        rows = [
            [name, *(f"{d[key]:+.4f}" for key in ("f1", "precision", "redacted"))]
            + [
                "{:+.4f}..{:+.4f}".format(*boot[name][key]) if name in boot else ""
                for key in ("delta_precision_ci", "delta_redacted_ci")
            ]
            + ["{:.4f}-{:.4f}".format(*boot[name]["redacted_ci"]) if name in boot else ""]
            for name, d in result.get("deltas", {}).items()
        ]
        if rows:
            print(format_table(["vs rules", "ΔF1", "ΔP", "Δredacted", "ΔP CI", "Δred. CI", "redacted CI"], rows))
        versus = result.get("versus")
        if versus:
            rows = [
                [name, *(f"{d[key]:+.4f}" for key in ("f1", "precision", "redacted"))]
                + ["{:+.4f}..{:+.4f}".format(*d[f"{key}_ci"]) for key in ("f1", "precision", "redacted")]
                for name, d in versus["systems"].items()
            ]
            print(f"minus the same system of variant {versus['baseline'] or '(unnamed)'}, paired bootstrap:")
            print(format_table(["system", "ΔF1", "ΔP", "Δredacted", "ΔF1 CI", "ΔP CI", "Δred. CI"], rows))
        rows = [
            [
                label,
                s0["gold"],
                *(systems[name]["exact"]["per_label"].get(label, {}).get("f1", float("nan")) for name in systems),
            ]
            for label in LABELS
            for s0 in [next(iter(systems.values()))["exact"]["per_label"].get(label, {"gold": 0})]
        ]
        print(format_table(["label", "gold", *systems], rows))
    print(
        "\ntimings (s): "
        + ", ".join(f"{k} {v}" for k, v in report["timings_s"].items())
        + f"; total {report['total_s']}"
    )


if __name__ == "__main__":
    main()
