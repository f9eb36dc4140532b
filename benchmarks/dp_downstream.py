"""Benchmark: one downstream use of de-identified notes — the weak labeller on originals, ``--privacy shift`` and dp.

    .venv/bin/python benchmarks/dp_downstream.py [--workdir /tmp/deid-dp-downstream] [--notes 300] [--seed 4711]
        [--epsilons 1,0.3,0.1] [--reference 2024-01-01] [--json OUT.json] [--resume]

Does NLP on released notes behave as on the originals? From nothing but the repository (subprocesses, as a user
runs the commands):

1. ``deid-ds synth --phrasing exports`` (notes, gold, the corpus's own KB sources) and ``deid-ds build-kb`` from
   those sources plus the shipped ``kb/sources``;
2. ``deid-ds deidentify`` of the notes with their gold spans, ``--kb`` (communes drawn among similar ones under
   dp), ``--keep-metadata surrogate`` (the metadata follows the surrogates), once with ``--privacy shift`` and
   once per ε with ``--privacy dp``; one fixed key;
3. the gold carried to each de-identified text through its ``audit.parquet`` (one row per replacement with its
   input and output offsets: :func:`map_spans`);
4. ``deid-ds weak-label`` (rules, same KB) on the originals and on every version, and ``deid-ds evaluate`` of each
   against its own gold: exact-match micro and per-label precision/recall/F1 (micro F1 with its bootstrap
   interval), on every entity and on those every version rewrote with a surrogate, not a mask (a masked entity
   and the predictions on it left out: what the labeller does on surrogates, apart from what masks hide).

Also counted per version: what dp perturbs that the shift leaves (ages, durations: the ``dp:age``/``dp:duration``
audit rows; the communes drawn by the mechanism, from ``report.json``), and a clinical-timeline use: the length of
every stay written ``du <date> au <date>`` (:func:`stay_pairs`) read back from each version, its error in days
against the originals (shift: 0 by construction; dp: measured).
"""

from __future__ import annotations

import argparse
import html as html_lib
import itertools
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dp_dates import quantiles  # noqa: E402
from machine import cpu_model  # noqa: E402

LABELS = ["PATIENT", "DOCTOR", "DATE", "PHONE", "EMAIL", "STR", "VILLE", "ZIP"]
KEY = "benchmark-key-not-secret-0123456789"
RESUME = False
_TAG = re.compile(r"<[^>]*>")


def map_spans(
    spans: Sequence[tuple[int, int]], replacements: Sequence[tuple[int, int, int, int]]
) -> list[tuple[int, int]]:
    """Each input span ``(start, end)`` of a note at its place in the de-identified note.

    ``replacements`` are the note's audit rows ``(html_start, html_end, out_start, out_end)``: non-overlapping
    input ranges and where their replacement lies in the output. A span that is a replacement takes its output
    range; any other offset moves by the length the replacements before it gained or lost, and an offset inside
    a replacement goes to that replacement's edge (start to its start, end to its end) so that a span never
    cuts a surrogate. Raises ``ValueError`` on overlapping replacements (no single output place then).
    """
    ordered = sorted(replacements)
    for (_, end, _, _), (start, _, _, _) in itertools.pairwise(ordered):
        if start < end:
            raise ValueError("overlapping replacements")
    exact = {(r[0], r[1]): (r[2], r[3]) for r in ordered}

    def moved(offset: int, is_end: bool) -> int:
        delta = 0
        for in_start, in_end, out_start, out_end in ordered:
            if in_end <= offset:
                delta = out_end - in_end
            elif in_start < offset:
                return out_end if is_end else out_start
            else:
                break
        return offset + delta

    return [exact.get((start, end)) or (moved(start, False), moved(end, True)) for start, end in spans]


def visible(fragment: str) -> str:
    """HTML between two spans as text: tags dropped, entities read, spaces collapsed, lower case."""
    return " ".join(html_lib.unescape(_TAG.sub(" ", fragment)).split()).lower()


def stay_pairs(html: str, dates: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The stays a note writes ``du <date> au <date>``: pairs of indices into ``dates`` (its DATE spans, input
    offsets), the two spans separated by nothing but ``au`` and the first preceded by ``du``."""
    order = sorted(range(len(dates)), key=lambda i: dates[i])
    pairs = []
    for first, second in itertools.pairwise(order):
        (start, end), (next_start, _) = dates[first], dates[second]
        before = visible(html[max(0, start - 40) : start])
        if visible(html[end:next_start]) == "au" and (before == "du" or before.endswith(" du")):
            pairs.append((first, second))
    return pairs


def length_of_stay(first: str, second: str) -> int | None:
    """Days between two written dates, both day-precise; ``None`` when either is not read as one."""
    from dp_dates import read_date

    a, b = read_date(first), read_date(second)
    if a is None or b is None or a[0] != "full" or b[0] != "full":
        return None
    return (b[1] - a[1]).days


def run(step: str, args: list[str]) -> None:
    """``deid-ds ARGS`` in a subprocess (the key in its environment); stops with its output on failure."""
    out = args[args.index("--out") + 1] if "--out" in args else None
    if RESUME and out is not None and Path(out).exists():
        print(f"[{time.strftime('%H:%M:%S')}] {step}: kept {out}", flush=True)
        return
    print(f"[{time.strftime('%H:%M:%S')}] {step}", flush=True)
    env = os.environ | {"DEID_DS_KEY": KEY, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "deid_ds", *args], cwd=REPO, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"{step} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")


def kb_sources(*directories: Path) -> list[str]:
    ban = [path for d in directories for path in sorted(d.glob("adresses-*.csv.gz"))]
    directory = [path for d in directories for path in sorted(d.glob("PS_LibreAcces_Personne_activite_*.txt"))]
    return [arg for p in ban for arg in ("--ban", str(p))] + [
        arg for p in directory for arg in ("--health-directory", str(p))
    ]


def carried_gold(gold, audit):
    """The gold table at its place in the de-identified notes, row for row (``id_document``, ``label``, output
    offsets; ``text`` the replacement the audit writes, ``None`` when a span is not exactly one replacement;
    ``masked`` when that replacement is a mask, not a surrogate: a fallback of the writer)."""
    import pandas as pd

    audit = audit[audit["view"] == "text"]
    by_doc = dict(tuple(audit.groupby("id_document")))
    out = []
    for doc, group in gold.groupby("id_document", sort=False):
        rep = by_doc.get(doc)
        rep = rep if rep is not None else audit.iloc[:0]
        replacements = list(zip(rep["html_start"], rep["html_end"], rep["out_start"], rep["out_end"]))
        written = dict(zip(zip(rep["html_start"], rep["html_end"]), zip(rep["replacement"], rep["fallback"])))
        spans = list(zip(group["html_start"], group["html_end"]))
        for index, span, label, (out_start, out_end) in zip(
            group.index, spans, group["label"], map_spans(spans, replacements)
        ):
            text, fallback = written.get(span, (None, None))
            masked = isinstance(fallback, str) and fallback.endswith("mask")
            out.append((index, doc, label, out_start, out_end, text, masked))
    columns = ["index", "id_document", "label", "html_start", "html_end", "text", "masked"]
    return pd.DataFrame(out, columns=columns).set_index("index").loc[gold.index]


def overlapping(spans, others):
    """A boolean Series: which of ``spans`` (a spans table) overlap any span of ``others`` in the same note —
    the predictions on an entity left out of a comparison, left out with it."""
    import pandas as pd

    regions: dict[str, list[tuple[int, int]]] = {}
    for doc, start, end in zip(others["id_document"], others["html_start"], others["html_end"]):
        regions.setdefault(doc, []).append((start, end))
    hit = [
        any(s < end and start < e for s, e in regions.get(doc, ()))
        for doc, start, end in zip(spans["id_document"], spans["html_start"], spans["html_end"])
    ]
    return pd.Series(hit, index=spans.index, dtype=bool)


def stays(
    notes, gold, texts_by_version: dict[str, dict[tuple[str, int, int], str]]
) -> dict[str, list[tuple[int, int]]]:
    """Per version, each stay's length in days in the originals and in the version (stays read in both)."""
    html = dict(zip(notes["id_document"], notes["html"]))
    dates = gold[gold["label"] == "DATE"]
    errors: dict[str, list[tuple[int, int]]] = {version: [] for version in texts_by_version}
    for doc, group in dates.groupby("id_document", sort=False):
        spans = list(zip(group["html_start"], group["html_end"]))
        originals = list(group["text"])
        for a, b in stay_pairs(html[doc], spans):
            truth = length_of_stay(originals[a], originals[b])
            if truth is None:
                continue
            for version, texts in texts_by_version.items():
                got = length_of_stay(texts.get((doc, *spans[a]), ""), texts.get((doc, *spans[b]), ""))
                if got is not None:
                    errors[version].append((truth, got))
    return errors


def _stay_summary(lengths: list[tuple[int, int]]) -> str:
    """``median / p90 / max`` of the errors in days, and the stays whose end fell on or before their start."""
    reversed_ = sum(truth > 0 and got <= 0 for truth, got in lengths)
    return f"{quantiles([abs(got - truth) for truth, got in lengths])} (n={len(lengths)}, {reversed_} reversed)"


def _slug(name: str) -> str:
    return name.replace(" ε=", "-")


def main() -> None:
    global RESUME
    import pandas as pd

    from deid_ds.report import format_table

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-dp-downstream"))
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=4711)
    parser.add_argument("--epsilons", default="1,0.3,0.1")
    parser.add_argument("--reference", default="2024-01-01", help="--dp-reference (the generated notes run to 2023)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--resume", action="store_true", help="keep the outputs a previous run left")
    args = parser.parse_args()
    RESUME = args.resume
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    data, sources, kb = work / "data", work / "kbsrc", work / "kb"
    run("synth", ["synth", "--notes", str(args.notes), "--seed", str(args.seed), "--phrasing", "exports"]
        + ["--out", str(data), "--kb-dir", str(sources), "-q"])  # fmt: skip
    run("build-kb", ["build-kb", "--out", str(kb), "-q", *kb_sources(sources, REPO / "kb" / "sources")])

    versions = {"originals": None, "shift": ["--privacy", "shift"]}
    for epsilon in args.epsilons.split(","):
        versions[f"dp ε={epsilon}"] = ["--privacy", "dp", "--epsilon", epsilon, "--dp-reference", args.reference]
    gold = pd.read_parquet(data / "gold.parquet")
    notes = pd.read_parquet(data / "notes.parquet")
    report: dict = {
        "machine": {"cpu": cpu_model(), "python": platform.python_version()},
        "notes": args.notes,
        "seed": args.seed,
        "gold_spans": len(gold),
        "versions": {},
    }
    texts_by_version: dict[str, dict[tuple[str, int, int], str]] = {}
    golds: dict[str, object] = {"originals": gold.assign(masked=False)}
    report["versions"]["originals"] = {}
    for name, options in versions.items():
        if options is None:
            continue
        out = work / f"deid-{_slug(name)}"
        run(f"deidentify {name}", ["deidentify", str(data / "notes.parquet"), "--spans", str(data / "gold.parquet")]
            + ["--kb", str(kb), "--keep-metadata", "surrogate", "--out", str(out), "--quiet", *options])  # fmt: skip
        audit = pd.read_parquet(out / "audit.parquet")
        golds[name] = carried = carried_gold(gold, audit)
        keys = zip(gold["id_document"], gold["html_start"], gold["html_end"])
        texts_by_version[name] = dict(zip(keys, carried["text"]))
        privacy = json.loads((out / "report.json").read_text()).get("privacy", {})
        counts = audit["source"].value_counts()
        report["versions"][name] = {
            "changes": {
                "gold_spans_not_one_replacement": int(carried["text"].isna().sum()),
                "gold_spans_masked": carried[carried["masked"]]["label"].value_counts().to_dict(),
                "ages": int(counts.get("dp:age", 0)),
                "durations": int(counts.get("dp:duration", 0)),
                "communes_by_mechanism": privacy.get("values_per_kind", {}).get("commune", 0),
                "values_unprotected": privacy.get("unprotected_values_per_kind", {}),
                "epsilon_per_patient": privacy.get("epsilon_per_patient"),
            }
        }
    # the entities every version rewrote with a surrogate (masked in none): the rules compared on the same set
    rewritten = ~pd.concat([g["masked"] for g in golds.values()], axis=1).any(axis=1)
    report["gold_spans_rewritten_everywhere"] = int(rewritten.sum())
    columns = ["id_document", "label", "html_start", "html_end"]
    for name in versions:
        slug = _slug(name)
        notes_path = data / "notes.parquet" if name == "originals" else work / f"deid-{slug}" / "notes.parquet"
        entry = report["versions"].setdefault(name, {})
        weak = work / f"weak-{slug}"
        run(f"weak-label {name}", ["weak-label", str(notes_path), "--kb", str(kb), "--out", str(weak), "-q"])
        spans = pd.read_parquet(weak / "spans.parquet")
        left_out = golds[name][~rewritten]
        subsets = {
            "all": (golds[name], spans),
            "rewritten": (golds[name][rewritten], spans[~overlapping(spans, left_out)]),
        }
        for subset, (rows, predicted) in subsets.items():
            gold_path, scores = work / f"gold-{slug}-{subset}.parquet", work / f"scores-{slug}-{subset}.json"
            pred_path = work / f"pred-{slug}-{subset}.parquet"
            rows[columns].to_parquet(gold_path, index=False)
            predicted.to_parquet(pred_path, index=False)
            if not (RESUME and scores.exists()):
                run(f"evaluate {name} ({subset})", ["evaluate", "--gold", str(gold_path), "--pred", str(pred_path)]
                    + ["--name", name, "--json", str(scores), "-q"])  # fmt: skip
            system = json.loads(scores.read_text())["systems"][name]
            entry[f"scores_{subset}"] = system["exact"]
            entry[f"micro_f1_ci_{subset}"] = system["micro_f1_ci"]

    stay_errors = stays(notes, gold, texts_by_version)
    header = [
        "version",
        "P",
        "R",
        "F1",
        "F1 95% CI",
        *LABELS,
        "DATE R",
        "DATE R rewr.",
        "F1 rewr.",
        "ages",
        "durations",
        "communes (dp)",
        "stay err. days med/p90/max",
    ]
    rows = []
    for name, entry in report["versions"].items():
        micro, per_label = entry["scores_all"]["micro"], entry["scores_all"]["per_label"]
        date_rewritten = entry["scores_rewritten"]["per_label"].get("DATE", {}).get("recall", float("nan"))
        changes = entry.get("changes", {})
        entry["stays"] = stay_errors.get(name, [])
        rows.append(
            [name, *(f"{micro[k]:.4f}" for k in ("precision", "recall", "f1"))]
            + ["{:.4f}–{:.4f}".format(*entry["micro_f1_ci_all"])]
            + [f"{per_label.get(label, {}).get('f1', float('nan')):.4f}" for label in LABELS]
            + [f"{per_label.get('DATE', {}).get('recall', float('nan')):.4f}", f"{date_rewritten:.4f}"]
            + [f"{entry['scores_rewritten']['micro']['f1']:.4f}"]
            + [changes.get("ages", "–"), changes.get("durations", "–"), changes.get("communes_by_mechanism", "–")]
            + [_stay_summary(entry["stays"]) if name in stay_errors else "–"]
        )
    print(
        f"machine: {report['machine']['cpu']}; {args.notes} notes, seed {args.seed}, {len(gold)} gold spans, "
        f"{report['gold_spans_rewritten_everywhere']} rewritten by a surrogate in every version"
    )
    print(format_table(header, rows))
    (args.json or work / "dp_downstream.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
