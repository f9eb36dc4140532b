"""Behaviour unchanged? Run two revisions of deid-ds on the same inputs and compare their outputs byte for byte.

A change that reorganises the code is accepted only if every command's output is unchanged and ``weak-label``
is not slower. This script checks both, for any two revisions:

    python tools/compare_revisions.py --before 6854cef --workdir /tmp/deid-compare
    python tools/compare_revisions.py --before /work/wt/before --after /work/wt/compare --workdir DIR \\
        [--notes 3000] [--skip-spark] [--throughput-only | --no-throughput] [--repeat 3]

``--before`` is a git revision (checked out with ``git worktree add --detach`` into ``DIR/before``, reused
when already there, removed at the end only if this run created it) or an existing directory holding a
checkout; ``--after`` likewise, by default the working tree this script lives in. Each side runs the CLI as
``sys.executable -m deid_ds ...`` with ``PYTHONPATH=<its tree>`` and the current directory in ``DIR/cwd``
(outside both trees), so each side runs its own code: the ``deid_ds.__file__`` each side imports is printed.

Inputs, made once into ``DIR/inputs`` by the *before* side and reused by later runs:

* ``sample``: the embedded sample (``data/notes.parquet``, ``data/gold.parquet``, ``kb/sources/*``);
* ``all``: ``synth --phrasing all`` (2/3 of ``--notes``, seed 11) and ``unseen``: ``synth --phrasing unseen``
  (1/3, seed 12): together every phrasing family, each with its own knowledge-base source files;
* a tiny tagger trained once on the sample's weak labels (FastText dim 16, 1 epoch; hidden 16, 1 epoch on
  200 sentences per split: its quality does not matter, only that both sides run the same one).

Commands run by each side on each corpus (outputs in ``DIR/out/<side>/<corpus>/<command>``): ``build-kb``;
``segment``; ``weak-label`` (2 workers, ``--gold``); ``predict`` with the tagger, alone and ``--with-rules``;
``deidentify --spans`` in ``--mode mask`` and in ``--mode surrogate --kb --keep-metadata surrogate`` (fixed
key in ``DEID_DS_KEY``); each of the last three with ``--engine local`` and ``--engine spark`` (``local[2]``;
not with ``--skip-spark``). So that each line says whether *that* command changed, the commands after
``build-kb`` take the same inputs on both sides: the before side's knowledge base and weak labels.

Comparison: every file of both output directories, byte for byte, but for the ``.deid-ds.json`` markers
(they hold the time of the run) and the keys of :data:`VOLATILE_JSON_KEYS` in JSON files (timings, paths,
dates). The before side runs the sample twice, to show which files differ between two runs of the same code
(reported, never silently ignored). One line per (corpus, command, engine): ``identical`` or ``DIFFERENT``
with the first differing file (for Parquet: the first differing column and row; for JSON: the key path).

Throughput: ``weak-label --workers 1`` on the ``all`` corpus, the whole command as a subprocess, timed for
each side alternately (before, after, before, after...) ``--repeat`` times: best and median notes/s and KB
of HTML/s per side, the ratio after/before of the medians, and the median CPU seconds of each side (user +
system, the command and its processes: what a loaded machine distorts least). ``--after-option`` adds an
option to the after side's command only (``--after-option=--no-features``: a before side may not know it).

Exit status: 0 all identical and the median ratio at least 0.90; 1 otherwise; 2 bad arguments.

Duration: dominated by ``predict`` (tiny tagger, CPU) and the Spark runs; each output line gives its seconds.
On the 2-core development machine (AMD EPYC), while other jobs loaded it (load average ~17), the throughput
part alone (``--throughput-only --repeat 3``, inputs made) took under 3 minutes, and ``--corpora sample
--only segment --skip-spark`` about 9 minutes; a complete run did not fit in the hour available there, so
give it a quiet machine (or ``--skip-spark`` / ``--corpora`` / ``--only`` to run part of it). Inputs and the
tagger are kept in ``DIR/inputs`` and reused: a second run skips their making.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from machine import cpu_model  # noqa: E402

#: Keys dropped (at any depth) from JSON files before they are compared, because they legitimately differ
#: between two runs of the same code (found by running the before side twice on the sample):
#: timings (``seconds``, ``seconds_tagging``, ``*_per_second``); moments of the run (``built_at`` of the KB
#: manifest, ``fetched_at`` of its sources); ``written_to``, the absolute path of the output directory
#: (each side writes its own); ``key_fingerprint``, a salted scrypt hash of the surrogate key whose salt
#: is drawn at random on every run (the key itself is the same fixed one on both sides).
VOLATILE_JSON_KEYS = frozenset(
    {
        "seconds",
        "seconds_tagging",
        "notes_per_second",
        "sentences_per_second",
        "documents_per_second",
        "built_at",
        "fetched_at",
        "written_to",
        "key_fingerprint",
    }
)

#: Files excluded from the comparison, by name: the output-directory markers (time of the run, command line).
MARKER_NAMES = frozenset({".deid-ds.json"})

#: Files excluded, by name, because two runs of the SAME code write them differently (found by running the
#: before side twice on the sample): name -> why. None found so far; a file added here is still listed by
#: the determinism check of every run.
NONDETERMINISTIC: dict[str, str] = {}

SPARK_MASTER = "local[2]"
KEY = "compare-revisions-fixed-key-0001"
SYNTH = (("all", 2 / 3, 11), ("unseen", 1 / 3, 12))


# --- comparison (pure: two directories in, the first difference out) --------------------------------------


def strip_volatile(value, keys=None):
    """``value`` (parsed JSON) without the keys in ``keys`` (default :data:`VOLATILE_JSON_KEYS`), at any depth."""
    keys = VOLATILE_JSON_KEYS if keys is None else keys
    if isinstance(value, dict):
        return {k: strip_volatile(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [strip_volatile(v, keys) for v in value]
    return value


def first_json_difference(a, b, path: str = "$") -> str | None:
    """The path of the first place where two parsed JSON values differ, with both values; None if equal."""
    if type(a) is not type(b):
        return f"{path}: {short(a)} != {short(b)}"
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'after' if k not in a else 'before'}"
            found = first_json_difference(a[k], b[k], f"{path}.{k}")
            if found:
                return found
        if list(a) != list(b):
            return f"{path}: keys in another order"
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_json_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        return None
    return None if a == b else f"{path}: {short(a)} != {short(b)}"


def short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_parquet_difference(a: Path, b: Path) -> str:
    """Where two Parquet files that are not byte-identical differ: schema, row count, or first column and row."""
    try:
        ta, tb = pq.read_table(a), pq.read_table(b)
    except Exception as exc:
        return f"unreadable: {type(exc).__name__}"
    if ta.schema != tb.schema:
        names_a, names_b = ta.schema.names, tb.schema.names
        if names_a != names_b:
            return f"columns {names_a} != {names_b}"
        for name in names_a:
            if ta.schema.field(name) != tb.schema.field(name):
                return f"column {name}: type {ta.schema.field(name).type} != {tb.schema.field(name).type}"
        return "schema metadata differs"
    if ta.num_rows != tb.num_rows:
        return f"{ta.num_rows} rows != {tb.num_rows}"
    for name in ta.schema.names:
        ca, cb = ta.column(name).to_pylist(), tb.column(name).to_pylist()
        for row, (x, y) in enumerate(zip(ca, cb)):
            if x != y:
                return f"column {name}, row {row}: {short(x)} != {short(y)}"
    return "same rows, bytes differ (row groups, metadata or encoding)"


def first_bytes_difference(a: bytes, b: bytes) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    line = a[:n].count(b"\n") + 1
    return f"byte {n} (line {line}): {short(a[n : n + 30])} != {short(b[n : n + 30])}"


def files_of(directory: Path, skip: frozenset[str] = frozenset()) -> list[str]:
    """The files under ``directory``, relative, sorted; markers, :data:`NONDETERMINISTIC` files and ``skip``
    (relative paths) left out."""
    return sorted(
        p.relative_to(directory).as_posix()
        for p in directory.rglob("*")
        if p.is_file()
        and p.name not in MARKER_NAMES
        and p.name not in NONDETERMINISTIC
        and p.relative_to(directory).as_posix() not in skip
    )


def compare_files(a: Path, b: Path, keys=None) -> str | None:
    """None when the two files count as identical, else what differs first."""
    da, db = a.read_bytes(), b.read_bytes()
    if da == db:
        return None
    if a.suffix == ".json":
        try:
            ja, jb = json.loads(da), json.loads(db)
        except ValueError:
            return first_bytes_difference(da, db)
        return first_json_difference(strip_volatile(ja, keys), strip_volatile(jb, keys))
    if a.suffix == ".parquet":
        return first_parquet_difference(a, b)
    return first_bytes_difference(da, db)


def compare_dirs(a: Path, b: Path, skip: frozenset[str] = frozenset(), keys=None) -> str | None:
    """None when the two output directories count as identical, else ``file: what differs`` (first file)."""
    if not a.is_dir() or not b.is_dir():
        return f"missing output: {a if not a.is_dir() else b}"
    fa, fb = files_of(a, skip), files_of(b, skip)
    if fa != fb:
        only_a, only_b = sorted(set(fa) - set(fb)), sorted(set(fb) - set(fa))
        return f"files differ: only before {only_a[:3]}, only after {only_b[:3]}"
    for rel in fa:
        found = compare_files(a / rel, b / rel, keys)
        if found:
            return f"{rel}: {found}"
    return None


# --- running the two sides ---------------------------------------------------------------------------------


@dataclass
class Side:
    name: str
    tree: Path


class Runner:
    """Runs the CLI of one side or the other with its own code, from a directory outside both trees."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.cwd = workdir / "cwd"
        self.cwd.mkdir(parents=True, exist_ok=True)

    def env(self, side: Side) -> dict[str, str]:
        env = dict(os.environ, PYTHONPATH=str(side.tree), DEID_DS_KEY=KEY, PYTHONHASHSEED="0")
        env.pop("PYTHONSTARTUP", None)
        return env

    def imported_file(self, side: Side) -> str:
        code = "import deid_ds; print(deid_ds.__file__)"
        return subprocess.run(
            [sys.executable, "-c", code], env=self.env(side), cwd=self.cwd, capture_output=True, text=True, check=True
        ).stdout.strip()

    def cli(self, side: Side, *args, check: bool = True) -> float:
        """Run ``deid-ds ARGS`` for ``side``; the seconds it took. A failure stops the comparison with its output."""
        return self.timed(side, *args, check=check)[0]

    def timed(self, side: Side, *args, check: bool = True) -> tuple[float, float]:
        """:meth:`cli`, with the CPU seconds (user + system) of the command and its worker processes."""
        argv = [sys.executable, "-m", "deid_ds", *map(str, args)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, env=self.env(side), cwd=self.cwd, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        if check and done.returncode != 0:
            raise SystemExit(
                f"{side.name}: deid-ds {' '.join(map(str, args))} exited {done.returncode}\n{done.stderr[-3000:]}"
            )
        return seconds, cpu


def git_tree(spec: str, dest: Path) -> tuple[Path, bool]:
    """The checkout for ``spec`` (a directory, or a revision checked out at ``dest``); whether it was created."""
    if Path(spec).is_dir():
        return Path(spec).resolve(), False
    rev = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", f"{spec}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if rev.returncode != 0:
        raise SystemExit(f"--before/--after: {spec!r} is neither a directory nor a git revision")
    commit = rev.stdout.strip()
    if dest.is_dir():
        head = subprocess.run(
            ["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
        )
        if head.stdout.strip() != commit:
            raise SystemExit(f"{dest} holds another revision than {spec}; remove it or give another --workdir")
        return dest, False
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(dest), commit], check=True)
    return dest, True


def kb_args(sources: Path) -> list[str]:
    args = []
    for f in sorted(sources.glob("adresses-*.csv.gz")):
        args += ["--ban", f]
    for f in sorted(sources.glob("PS_LibreAcces_Personne_activite_*.txt")):
        args += ["--health-directory", f]
    return args


def make_inputs(run: Runner, before: Side, inputs: Path, notes: int, chosen=("all", "unseen", "sample")):
    """Corpus name -> its directory (notes.parquet, gold.parquet, kb/), for the ``chosen`` corpora: made once,
    then reused."""
    corpora = {}
    sample = inputs / "sample"  # always: the tagger is trained on it
    if not (sample / "done").exists():
        shutil.rmtree(sample, ignore_errors=True)
        (sample / "kb").mkdir(parents=True)
        for name in ("notes.parquet", "gold.parquet"):
            shutil.copyfile(before.tree / "data" / name, sample / name)
        for f in (before.tree / "kb" / "sources").iterdir():
            shutil.copyfile(f, sample / "kb" / f.name)
        (sample / "done").write_text("")
    corpora["sample"] = sample
    for phrasing, share, seed in SYNTH:
        if phrasing not in chosen:
            continue
        n = max(1, round(notes * share))
        d = inputs / f"{phrasing}-{n}-seed{seed}"
        if not (d / "done").exists():
            shutil.rmtree(d, ignore_errors=True)
            print(f"making inputs: synth --phrasing {phrasing} --notes {n} --seed {seed}", flush=True)
            run.cli(before, "synth", "--notes", n, "--seed", seed, "--phrasing", phrasing, "--out", d, "--quiet")
            (d / "done").write_text("")
        corpora[phrasing] = d
    return corpora


def make_model(run: Runner, before: Side, inputs: Path, sample: Path) -> Path:
    """A tiny tagger trained once by the before side on the sample's weak labels (a fixed input of predict)."""
    model = inputs / "model"
    if (model / "done").exists():
        return model
    print("making inputs: a tiny tagger on the sample's weak labels", flush=True)
    shutil.rmtree(model, ignore_errors=True)
    run.cli(before, "build-kb", "--out", model / "kb", "--quiet", *kb_args(sample / "kb"))
    weak = model / "weak"
    run.cli(before, "weak-label", sample / "notes.parquet", "--kb", model / "kb", "--out", weak, "--keep-empty", "0.3")
    run.cli(
        before,
        "embeddings",
        "fasttext",
        weak,
        "--out",
        model / "fasttext",
        "--dim",
        16,
        "--epochs",
        1,
        "--bucket",
        2000,
    )
    run.cli(
        before,
        "train",
        weak,
        "--out",
        model / "tagger",
        "--fasttext",
        model / "fasttext",
        "--hidden",
        16,
        "--max-epochs",
        1,
        "--threads",
        1,
        "--max-sentences",
        200,
    )
    (model / "done").write_text("")
    return model


def command_list(corpus: Path, kb: Path, weak: Path, model: Path, spark: bool) -> list[tuple[str, str, list]]:
    """(command, engine, arguments without --out) run by both sides on one corpus, after build-kb."""
    notes = corpus / "notes.parquet"
    tagger = model / "tagger"
    engines = ["local", "spark"] if spark else ["local"]
    out = [("segment", "local", ["segment", notes, "--workers", 2])]
    for engine in engines:
        e = ["--engine", engine] + (["--spark-master", SPARK_MASTER] if engine == "spark" else ["--workers", 2])
        out += [
            ("weak-label", engine, ["weak-label", notes, "--kb", kb, "--gold", corpus / "gold.parquet", *e]),
            ("predict", engine, ["predict", tagger, notes, "--device", "cpu", *e]),
            ("predict --with-rules", engine, ["predict", tagger, notes, "--with-rules", kb, "--device", "cpu", *e]),
            ("deidentify mask", engine, ["deidentify", notes, "--spans", weak, "--mode", "mask", *e]),
            (
                "deidentify surrogate",
                engine,
                ["deidentify", notes, "--spans", weak, "--mode", "surrogate", "--kb", kb]
                + ["--keep-metadata", "surrogate", *e],
            ),
        ]
    return out


def slug(command: str, engine: str) -> str:
    return f"{command.replace(' --', '-').replace(' ', '-')}-{engine}"


def compare_corpus(
    run: Runner,
    sides: list[Side],
    name: str,
    corpus: Path,
    model: Path,
    out: Path,
    spark: bool,
    only=(),
    keys=None,
):
    """Run every command (or those starting with one of ``only``) for each side on one corpus; yield
    (command, engine, difference or None)."""
    kbs = {}
    for side in sides:
        kbs[side.name] = out / side.name / name / "kb"
        shutil.rmtree(kbs[side.name], ignore_errors=True)
        run.cli(side, "build-kb", "--out", kbs[side.name], "--quiet", *kb_args(corpus / "kb"))
    if not only or any("build-kb".startswith(o) for o in only):
        yield "build-kb", "local", compare_dirs(kbs[sides[0].name], kbs[sides[1].name], keys=keys)
    kb = kbs[sides[0].name]
    # The spans deidentify reads on both sides: the before side's weak labels, made first.
    weak = out / sides[0].name / name / "spans-for-deidentify"
    if not only or any(o.startswith("deidentify") or "deidentify".startswith(o) for o in only):
        shutil.rmtree(weak, ignore_errors=True)
        run.cli(sides[0], "weak-label", corpus / "notes.parquet", "--kb", kb, "--workers", 2, "--out", weak, "--quiet")
    for command, engine, args in command_list(corpus, kb, weak, model, spark):
        if only and not any(command.startswith(o) for o in only):
            continue
        dirs = []
        for side in sides:
            d = out / side.name / name / slug(command, engine)
            shutil.rmtree(d, ignore_errors=True)
            run.cli(side, *args, "--out", d, "--quiet")
            dirs.append(d)
        yield command, engine, compare_dirs(*dirs, keys=keys)


def throughput(
    run: Runner, sides: list[Side], corpus: Path, kb: Path, out: Path, repeat: int, after_options=()
) -> dict:
    """notes/s and KB of HTML/s of ``weak-label --workers 1``, each side timed alternately ``repeat`` times, and
    the CPU seconds of each run. ``after_options`` are added to the after side's command (``--no-features``)."""
    notes = corpus / "notes.parquet"
    table = pq.read_table(notes, columns=["html"])
    n = table.num_rows
    kb_html = sum(len(h.encode()) for h in table.column("html").to_pylist() if h) / 1024
    seconds = {side.name: [] for side in sides}
    cpu = {side.name: [] for side in sides}
    for i in range(repeat):
        for side in sides:
            d = out / side.name / "throughput"
            shutil.rmtree(d, ignore_errors=True)
            shutil.rmtree(d.with_name("throughput.partial"), ignore_errors=True)
            options = after_options if side is sides[1] else ()
            s, c = run.timed(side, "weak-label", notes, "--kb", kb, "--workers", 1, "--out", d, "--quiet", *options)
            seconds[side.name].append(s)
            cpu[side.name].append(c)
            print(
                f"  throughput run {i + 1}/{repeat} {side.name}: {s:.1f} s, {n / s:.0f} notes/s, {c:.1f} s of CPU",
                flush=True,
            )
    result = {"notes": n, "kb_html": kb_html}
    for side in sides:
        ss = seconds[side.name]
        result[side.name] = {
            "best_notes_s": n / min(ss),
            "median_notes_s": n / statistics.median(ss),
            "best_kb_s": kb_html / min(ss),
            "median_kb_s": kb_html / statistics.median(ss),
            "median_cpu_s": statistics.median(cpu[side.name]),
        }
    result["ratio"] = result[sides[1].name]["median_notes_s"] / result[sides[0].name]["median_notes_s"]
    result["cpu_ratio"] = result[sides[0].name]["median_cpu_s"] / result[sides[1].name]["median_cpu_s"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="git revision or directory of the reference checkout")
    parser.add_argument("--after", default=str(REPO), help="git revision or directory (default: this tree)")
    parser.add_argument("--workdir", required=True, type=Path, help="inputs, checkouts and outputs (kept)")
    parser.add_argument("--notes", type=int, default=3000, help="notes of the generated corpus (default 3000)")
    parser.add_argument("--skip-spark", action="store_true", help="local engine only")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--throughput-only", action="store_true", help="only the weak-label timing")
    mode.add_argument("--no-throughput", action="store_true", help="only the output comparison")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per side (default 3)")
    parser.add_argument(
        "--corpora", default="all,unseen,sample", help="comma-separated subset of all,unseen,sample, run in that order"
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="COMMAND", help="only the commands starting so (repeatable)"
    )
    parser.add_argument(
        "--ignore-key",
        action="append",
        default=[],
        metavar="KEY",
        help="a JSON key the change under comparison added on purpose (e.g. a new report field): compared as if absent",
    )
    parser.add_argument("--min-ratio", type=float, default=0.90, help="lowest accepted after/before (0.90)")
    parser.add_argument(
        "--after-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="an option added to the after side's weak-label in the throughput runs (repeatable; e.g. "
        "--after-option=--no-features, which an older before side may not know)",
    )
    args = parser.parse_args(argv)

    chosen = [c for c in args.corpora.split(",") if c]
    if not chosen or set(chosen) - {"sample", "all", "unseen"}:
        parser.error("--corpora: a comma-separated subset of sample,all,unseen")
    # SIGTERM unwinds like an exception, so that a checkout this run created is removed (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.perf_counter()
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    created = []
    before_tree, made = git_tree(args.before, workdir / "before")
    if made:
        created.append(before_tree)
    after_tree, made = git_tree(args.after, workdir / "after")
    if made:
        created.append(after_tree)
    for tree in (before_tree, after_tree):
        if workdir == tree or tree in workdir.parents:
            raise SystemExit(f"--workdir must be outside the compared trees ({tree})")
    sides = [Side("before", before_tree), Side("after", after_tree)]
    run = Runner(workdir)
    failed = False
    try:
        print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; python {sys.version.split()[0]}")
        for side in sides:
            print(f"{side.name}: {side.tree} ({describe(side.tree)}) imports {run.imported_file(side)}")
        inputs = workdir / "inputs"
        corpora = make_inputs(run, sides[0], inputs, args.notes, chosen + ([] if args.no_throughput else ["all"]))
        out = workdir / "out"
        if not args.throughput_only:
            predicting = not args.only or any("predict".startswith(o) or o.startswith("predict") for o in args.only)
            model = make_model(run, sides[0], inputs, corpora["sample"]) if predicting else inputs / "model"
            spark, only = not args.skip_spark, tuple(args.only)
            for name in chosen:
                mark = time.perf_counter()
                for command, engine, diff in compare_corpus(
                    run, sides, name, corpora[name], model, out, spark, only, VOLATILE_JSON_KEYS | set(args.ignore_key)
                ):
                    status = "identical" if diff is None else f"DIFFERENT  {diff}"
                    took, mark = time.perf_counter() - mark, time.perf_counter()
                    print(f"{name:<7} {command:<21} {engine:<6} {status}  ({took:.0f} s)", flush=True)
                    failed |= diff is not None
            # Last, so that the generated corpora, the longest and most telling, come first.
            if "sample" in chosen:
                check_determinism(run, sides[0], corpora["sample"], model, out, spark, only)
        if not args.no_throughput:
            kb = out / "throughput-kb"
            if not (kb / "done").exists():
                shutil.rmtree(kb, ignore_errors=True)
                run.cli(sides[0], "build-kb", "--out", kb, "--quiet", *kb_args(corpora["all"] / "kb"))
                (kb / "done").write_text("")
            print(f"throughput: weak-label --workers 1 on {corpora['all'].name}, alternately, {args.repeat} times")
            t = throughput(run, sides, corpora["all"], kb, out, args.repeat, args.after_option)
            print(f"  {t['notes']} notes, {t['kb_html'] / t['notes']:.2f} KB of HTML per note")
            for side in sides:
                r = t[side.name]
                print(
                    f"  {side.name:<6} best {r['best_notes_s']:.0f} notes/s ({r['best_kb_s']:.0f} KB/s), "
                    f"median {r['median_notes_s']:.0f} notes/s ({r['median_kb_s']:.0f} KB/s), "
                    f"median {r['median_cpu_s']:.1f} s of CPU"
                )
            ok = t["ratio"] >= args.min_ratio
            print(f"  ratio after/before (medians): {t['ratio']:.3f} {'ok' if ok else 'BELOW'} {args.min_ratio}")
            print(f"  CPU ratio before/after (medians): {t['cpu_ratio']:.3f}")
            failed |= not ok
    finally:
        for tree in created:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)
    print(f"{'FAILED' if failed else 'OK'} in {time.perf_counter() - started:.0f} s")
    return 1 if failed else 0


def describe(tree: Path) -> str:
    """The commit of a checkout, and whether it has uncommitted changes."""
    head = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    dirty = subprocess.run(
        ["git", "-C", str(tree), "status", "--porcelain", "-uno"], capture_output=True, text=True, check=False
    )
    return (head.stdout.strip() or "not a git checkout") + (" + uncommitted changes" if dirty.stdout.strip() else "")


def check_determinism(run: Runner, before: Side, sample: Path, model: Path, out: Path, spark: bool, only=()) -> bool:
    """Run the before side twice on the sample: any difference between the two runs is nondeterminism,
    printed (it is not the change's doing, so it does not fail the comparison: see :data:`NONDETERMINISTIC`)."""
    sides = [Side("before", before.tree), Side("before-again", before.tree)]
    found = False
    for command, engine, diff in compare_corpus(run, sides, "sample", sample, model, out / "determinism", spark, only):
        if diff is not None:
            print(f"NONDETERMINISTIC sample {command} {engine}: {diff}", flush=True)
            found = True
    if not found:
        print("determinism: two runs of the before side on the sample are identical (markers and keys aside)")
    return found


if __name__ == "__main__":
    sys.exit(main())
