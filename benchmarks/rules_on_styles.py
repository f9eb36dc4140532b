"""Benchmark: the weak labeller's accuracy on each generated style, with and without the notes' metadata.

The acceptance check: on a corpus of the export styles in their held-out phrasing (``synth --phrasing
exports-heldout``), generated with a seed never used while the rules were written, with its own generated
knowledge base, micro F1 >= 0.95 with every label >= 0.92, and >= 0.92 with ``--no-metadata``; on the
older families nothing drops by more than 0.005 (compare two revisions' JSON outputs).

    .venv/bin/python benchmarks/rules_on_styles.py [--styles exports-heldout,exports,heldout,unseen]
        [--notes 1000] [--seed 2026] [--workdir /tmp/deid-rules-on-styles] [--no-metadata-too]
        [--errors] [--json OUT.json] [--resume]

For each style, from nothing but the repository (subprocesses, as a user runs the commands):

1. ``deid-ds synth --phrasing STYLE --seed SEED --notes N`` (notes, gold and the corpus's own KB sources);
2. ``deid-ds build-kb`` from those sources only (partial coverage: the generator leaves streets and
   professionals out of them, as the national files miss some);
3. ``deid-ds weak-label --gold``, and with ``--no-metadata-too`` also ``weak-label --no-metadata``;
4. ``deid-ds evaluate`` of both (exact-match micro and per-label F1, bootstrap 95% intervals, token-level
   redaction recall).

``--errors`` adds, per label, the most frequent contexts of missed and false spans (entities masked by their
label, digits by 0: no note text is printed, the notes are synthetic anyway). Prints one table per style and
writes every score to ``WORKDIR/rules_on_styles.json`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402
from model_vs_rules import LABELS, error_breakdown, kb_sources  # noqa: E402

RESUME = False


def run(step: str, args: list[str]) -> float:
    """``deid-ds ARGS`` in a subprocess; its duration, or the experiment stops with its output on failure."""
    out = args[args.index("--out") + 1] if "--out" in args else None
    if RESUME and out is not None and Path(out).exists():
        print(f"[{time.strftime('%H:%M:%S')}] {step}: kept {out}", flush=True)
        return 0.0
    print(f"[{time.strftime('%H:%M:%S')}] {step}", flush=True)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "deid_ds", *args], cwd=REPO, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{step} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return time.perf_counter() - started


def one_style(style: str, args: argparse.Namespace, work: Path) -> dict:
    """Generate, label and score one style; its scores per system."""
    data, sources, kb = work / "data", work / "kbsrc", work / "kb"
    seconds = {}
    seconds["synth"] = run(
        f"{style}: synth",
        ["synth", "--notes", str(args.notes), "--seed", str(args.seed), "--phrasing", style]
        + ["--out", str(data), "--kb-dir", str(sources), "-q"],
    )
    seconds["build-kb"] = run(f"{style}: build-kb", ["build-kb", "--out", str(kb), "-q", *kb_sources(sources)])
    systems = {"rules": work / "weak"}
    if args.no_metadata_too:
        systems["rules --no-metadata"] = work / "weak-no-metadata"
    for name, out in systems.items():
        extra = ["--no-metadata"] if name.endswith("--no-metadata") else []
        seconds[f"weak-label {' '.join(extra)}".strip()] = run(
            f"{style}: {name}",
            ["weak-label", str(data / "notes.parquet"), "--kb", str(kb), "--out", str(out), "-q", *extra],
        )
    scores = work / "scores.json"
    names = [arg for name in systems for arg in ("--name", name)]
    preds = [arg for out in systems.values() for arg in ("--pred", str(out))]
    run(
        f"{style}: evaluate",
        ["evaluate", "--gold", str(data / "gold.parquet"), "--notes", str(data / "notes.parquet"), *preds, *names]
        + ["--json", str(scores), "-q"],
    )
    result = json.loads(scores.read_text())
    out = {"seconds": seconds, "systems": result["systems"]}
    if args.errors:
        out["errors"] = error_breakdown(data / "notes.parquet", data / "gold.parquet", systems)
    return out


def summary_rows(style: str, systems: dict) -> list[list]:
    rows = []
    for name, scores in systems.items():
        micro, per_label = scores["exact"]["micro"], scores["exact"]["per_label"]
        low, high = scores["micro_f1_ci"]
        rows.append(
            [
                style,
                name,
                micro["precision"],
                micro["recall"],
                micro["f1"],
                f"[{low:.4f}, {high:.4f}]",
                *(per_label[label]["f1"] if label in per_label else float("nan") for label in LABELS),
                scores["redacted"]["recall"],
            ]
        )
    return rows


def main() -> None:
    global RESUME
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--styles", default="exports-heldout,exports,heldout,unseen")
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-rules-on-styles"))
    parser.add_argument("--no-metadata-too", action="store_true", help="also label with --no-metadata")
    parser.add_argument("--errors", action="store_true", help="the most frequent contexts of errors per label")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--resume", action="store_true", help="keep the outputs a previous run left")
    args = parser.parse_args()
    RESUME = args.resume
    from deid_ds.report import format_table

    report = {
        "machine": {"cpu": cpu_model(), "python": platform.python_version()},
        "notes": args.notes,
        "seed": args.seed,
        "styles": {},
    }
    rows = []
    for style in args.styles.split(","):
        report["styles"][style] = result = one_style(style, args, args.workdir / f"{style}-{args.seed}")
        rows += summary_rows(style, result["systems"])
        if args.errors:
            for system, per_label in result["errors"].items():
                for label, errors in per_label.items():
                    if errors["missed"] or errors["false"]:
                        print(f"\n{style} / {system} / {label}: {errors['missed']} missed, {errors['false']} false")
                        for context, count in errors["missed_after"]:
                            print(f"  missed {count:4d} after: {context}")
                        for context, count in errors["false_where"]:
                            print(f"  false  {count:4d} {context}")
    headers = ["style", "system", "P", "R", "F1", "95% interval", *LABELS, "redacted"]
    print()
    print(
        format_table(headers, rows, title=f"Weak labeller, exact match, {args.notes} notes per style, seed {args.seed}")
    )
    path = args.json or args.workdir / "rules_on_styles.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(f"\nscores: {path}")


if __name__ == "__main__":
    main()
