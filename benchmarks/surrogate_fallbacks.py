"""Benchmark: the share of spans ``deid-ds deidentify`` masks instead of replacing, per label and phrasing family.

A surrogate run writes a *fallback* (the span masked, its reason in the audit) wherever no safe surrogate exists.
Masks break what surrogates are there to keep (a masked date loses its interval with the others), so their share
is measured per label on generated corpora of every phrasing family, with their gold spans (what a perfect
labeller would give), as a user would run the commands:

    .venv/bin/python benchmarks/surrogate_fallbacks.py [--notes 300] [--seed 7] [--workdir /tmp/deid-fallbacks]
        [--families train,heldout,unseen,exports,exports-heldout,exports+noise2] [--target 2] [--json OUT]
        [--dev-gold /work/shared/dev-gold] [--privacy shift|dp]

Per family: ``deid-ds synth --phrasing FAMILY --notes N --seed S`` (``+noise2``: ``--text-noise 2``),
``deid-ds build-kb --sources OUT/kb``, ``deid-ds deidentify --spans OUT/gold.parquet --kb KB`` (surrogate mode, a
fixed key), then the audit's text rows counted per label. ``--dev-gold DIR`` adds the hand-written notes of
``DIR/notes.jsonl`` with their gold spans and their own knowledge-base files (``benchmarks/dev_gold.py``'s
conversion; read there, never copied into the repository) as the family ``dev-gold``. The counts are: spans,
masked, share, and the reasons (``--privacy dp``: the ε·d-private mode's surrogates instead of the shift's).
A label above ``--target`` percent is flagged. Also per family: the PATIENT and DOCTOR spans that are one given
name alone (``IDE Salma``: a name of the generator's given-name lists, of any origin, that its surname lists do
not hold) and how many were given a surname instead of a given name (the audit keeps the originals here, in the
work directory only). Prints the machine line and one
table per family; ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402

#: The eight labels of the study (the direct identifiers, NIR, IPP..., are found by deidentify itself).
LABELS = ("PATIENT", "DOCTOR", "DATE", "PHONE", "EMAIL", "ZIP", "VILLE", "STR")
FAMILIES = ("train", "heldout", "unseen", "exports", "exports-heldout", "exports+noise2")
KEY = "surrogate-fallbacks-benchmark-key"


def _deid_ds(*args: str) -> None:
    """Run a deid-ds command quietly (the leak warnings of a run are not this benchmark's figures)."""
    done = subprocess.run([sys.executable, "-m", "deid_ds", *args], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"deid-ds {args[0]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


#: Extra options of every ``deidentify`` run (``--privacy dp``).
DEIDENTIFY_OPTIONS: list[str] = []


def run_family(family: str, notes: int, seed: int, workdir: Path) -> Path:
    """Generate the family's corpus, build its knowledge base and de-identify it; the output directory."""
    phrasing, _, noise = family.partition("+noise")
    corpus, kb, out = workdir / family / "corpus", workdir / family / "kb", workdir / family / "out"
    if not (corpus / "gold.parquet").exists():
        args = ["--phrasing", phrasing, "--notes", str(notes), "--seed", str(seed), "--out", str(corpus)]
        _deid_ds("synth", *args, *(["--text-noise", noise] if noise else []), "--quiet")
    if not (kb / "manifest.json").exists():
        _deid_ds("build-kb", "--sources", str(corpus / "kb"), "--out", str(kb), "--quiet")
    _deid_ds(
        "deidentify", str(corpus / "notes.parquet"), "--spans", str(corpus / "gold.parquet"), "--kb", str(kb),
        "--out", str(out), "--key", KEY, "--overwrite", "--quiet", "--audit-originals", *DEIDENTIFY_OPTIONS,
    )  # fmt: skip
    return out


def run_dev_gold(dev_gold: Path, workdir: Path) -> Path:
    """De-identify the hand-written development notes with their gold spans and their own knowledge base."""
    from dev_gold import convert

    corpus, kb, out = workdir / "dev-gold" / "corpus", workdir / "dev-gold" / "kb", workdir / "dev-gold" / "out"
    corpus.mkdir(parents=True, exist_ok=True)
    notes, gold = convert(dev_gold, corpus)
    if not (kb / "manifest.json").exists():
        _deid_ds("build-kb", "--sources", str(dev_gold), "--out", str(kb), "--quiet")
    _deid_ds(
        "deidentify", str(notes), "--spans", str(gold), "--kb", str(kb), "--out", str(out), "--key", KEY,
        "--overwrite", "--quiet", "--audit-originals", *DEIDENTIFY_OPTIONS,
    )  # fmt: skip
    return out


def fallbacks_per_label(out: Path) -> dict[str, dict]:
    """Per label of the eight: spans, masked spans, their share (%) and the reasons, from ``audit.parquet``."""
    audit = pq.read_table(out / "audit.parquet", columns=["label", "fallback", "view"]).to_pydict()
    spans: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {}
    for label, fallback, view in zip(audit["label"], audit["fallback"], audit["view"]):
        if view != "text" or label not in LABELS:
            continue
        spans[label] += 1
        if fallback:
            reasons.setdefault(label, Counter())[fallback] += 1
    return {
        label: {
            "spans": spans[label],
            "masked": sum(reasons.get(label, {}).values()),
            "share": 100 * sum(reasons.get(label, {}).values()) / spans[label],
            "reasons": dict(reasons.get(label, {})),
        }
        for label in LABELS
        if spans[label]
    }


def _given_names() -> tuple[frozenset[str], frozenset[str]]:
    """The generator's given names (French, of many origins, third parties) and surnames, folded."""
    from deid_ds.kb.normalize import fold_key
    from deid_ds.synth import pools as synth
    from deid_ds.synth.pools import _lines

    firsts = {name for names in synth.first_names().values() for name in names}
    lasts = set(synth.surnames())
    for kinds in synth.origin_names().values():
        firsts |= {*kinds.get("F", ()), *kinds.get("M", ())}
        lasts |= set(kinds.get("L", ()))
    for line in _lines("names_third_parties.tsv"):
        _, kind, names = line.split("\t")
        (firsts if kind in "FM" else lasts).update(n.strip() for n in names.split(","))
    return frozenset(map(fold_key, firsts)), frozenset(map(fold_key, lasts))


def given_names_alone(out: Path) -> tuple[int, int]:
    """(spans that are one given name alone, those given a surname) in ``out``'s audit (``--audit-originals``)."""
    from deid_ds.deidentification.pools import load_pools
    from deid_ds.kb.normalize import fold_key

    firsts, lasts = _given_names()
    drawn = load_pools(None).first_name_keys  # the given names surrogates are drawn from
    audit = pq.read_table(out / "audit.parquet", columns=["label", "view", "original", "replacement"]).to_pydict()
    alone = given_surname = 0
    for label, view, original, replacement in zip(*audit.values()):
        key = fold_key((original or "").strip())
        if view != "text" or label not in ("PATIENT", "DOCTOR") or key not in firsts or key in lasts:
            continue
        alone += 1
        given_surname += not all(fold_key(part) in drawn for part in re.split(r"[-\s]+", replacement.strip()))
    return alone, given_surname


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", default="/tmp/deid-fallbacks")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--target", type=float, default=2.0, help="flag a label masked more often (percent)")
    parser.add_argument("--json", help="write the figures there")
    parser.add_argument("--dev-gold", type=Path, help="also the hand-written notes of this folder (notes.jsonl)")
    parser.add_argument("--privacy", choices=("shift", "dp"), default="shift", help="deidentify's --privacy")
    args = parser.parse_args()
    DEIDENTIFY_OPTIONS[:] = ["--privacy", args.privacy] if args.privacy != "shift" else []

    workdir = Path(args.workdir)
    print(
        f"machine: {cpu_model()}, Python {platform.python_version()}; {args.notes} notes per family, seed {args.seed}, "
        f"privacy {args.privacy}"
    )
    figures: dict[str, dict] = {}
    families = [f for f in args.families.split(",") if f] + (["dev-gold"] if args.dev_gold else [])
    for family in families:
        if family == "dev-gold":
            out = run_dev_gold(args.dev_gold, workdir)
        else:
            out = run_family(family, args.notes, args.seed, workdir)
        per_label = fallbacks_per_label(out)
        alone, given_surname = given_names_alone(out)
        figures[family] = {**per_label, "given names alone": {"spans": alone, "given a surname": given_surname}}
        print(f"\n{family}")
        print(f"  {'label':<8} {'spans':>6} {'masked':>7} {'share':>7}  reasons")
        for label, row in per_label.items():
            flag = " !" if row["share"] > args.target else "  "
            reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(row["reasons"].items()))
            print(f"  {label:<8} {row['spans']:>6} {row['masked']:>7} {row['share']:>6.2f}%{flag}{reasons}")
        print(f"  a given name alone: {alone} span(s), {given_surname} given a surname")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
