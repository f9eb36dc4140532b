"""Benchmark: ``weak-label --engine spark`` on ``local[N]`` against the local engine, same input, same machine.

    .venv/bin/python benchmarks/spark.py [--copies 10] [--workdir /tmp/deid-spark-bench] [--kb DIR]
                                         [--local-workers 1,2] [--masters local[1],local[2]] [--repeat 2]

Input: the embedded sample (``data/notes.parquet``, 300 notes, ~2 KB of HTML each) replicated
``--copies`` times with distinct document and patient ids (3000 notes by default), in one Parquet file
of row groups of 256 notes; the knowledge base built from ``kb/sources`` (as ``make demo`` does) unless
``--kb`` names one. Nothing is downloaded.

Each configuration runs ``deid_ds.weak_label`` end to end (Parquet in, every output file written) in a
fresh interpreter, ``--repeat`` times (best kept). For Spark the time is split into the session start
(JVM, ~10 s, paid once per application) and the command on the started session, which is what a
``spark-submit`` job pays per run beyond its start. Outputs of every run are checked identical to the
first local run's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402

_RUN = r"""
import json, sys, time
started = time.perf_counter()
engine, master, workers, notes, kb, out = sys.argv[1:7]
session = 0.0
if engine == "spark":
    from deid_ds.engine.spark import spark_session
    spark = spark_session(master, {"spark.ui.enabled": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    session = time.perf_counter() - started
from deid_ds import weak_label
begin = time.perf_counter()
report = weak_label(notes, out, kb=kb, workers=int(workers), engine=engine,
                    spark_master=master if engine == "spark" else None, progress=False, sentences_jsonl=True)
print(json.dumps({"session": session, "command": time.perf_counter() - begin, "notes": report.documents}))
"""


def replicate(copies: int, path: Path) -> int:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    sample = pq.read_table(REPO / "data" / "notes.parquet")
    tables = []
    for k in range(copies):
        table = sample
        for column in ("id_document", "id_patient"):
            table = table.set_column(
                table.schema.get_field_index(column),
                column,
                pc.binary_join_element_wise(table[column], pa.scalar(f"-c{k}"), ""),
            )
        tables.append(table)
    pq.write_table(pa.concat_tables(tables), path, row_group_size=256)
    return sample.num_rows * copies


def build_kb(out: Path) -> Path:
    if not (out / "manifest.json").exists():
        sources = REPO / "kb" / "sources"
        args = [a for f in sorted(sources.glob("adresses-*.csv.gz")) for a in ("--ban", str(f))]
        args += [
            a
            for f in sorted(sources.glob("PS_LibreAcces_Personne_activite_*.txt"))
            for a in ("--health-directory", str(f))
        ]
        subprocess.run(
            [str(REPO / ".venv" / "bin" / "deid-ds"), "build-kb", "--out", str(out), "--quiet", *args], check=True
        )
    return out


def same(a: Path, b: Path) -> bool:
    names = ("train.txt", "dev.txt", "test.txt", "sentences.jsonl")
    import pyarrow.parquet as pq

    return all((a / n).read_bytes() == (b / n).read_bytes() for n in names) and all(
        pq.read_table(a / n).equals(pq.read_table(b / n))
        for n in ("spans.parquet", "documents.parquet", "sentences.parquet")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-spark-bench"))
    parser.add_argument("--kb", type=Path)
    parser.add_argument("--local-workers", default="1,2")
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    notes = args.workdir / f"notes-x{args.copies}.parquet"
    n_notes = replicate(args.copies, notes)
    kb = args.kb or build_kb(args.workdir / "kb")
    configs = [("local", "-", int(w)) for w in args.local_workers.split(",") if w]
    configs += [("spark", m, 1) for m in args.masters.split(",") if m]
    print(
        f"{n_notes} notes ({notes.stat().st_size / 1e6:.1f} MB Parquet), {os.cpu_count()} CPUs ({cpu_model()}), "
        f"Python {platform.python_version()}"
    )
    reference = None
    rows = []
    for engine, master, workers in configs:
        best = None
        for attempt in range(args.repeat):
            out = args.workdir / f"out-{engine}-{master.strip('[]').replace('[', '')}-{workers}-{attempt}"
            result = subprocess.run(
                [sys.executable, "-c", _RUN, engine, master, str(workers), str(notes), str(kb), str(out)],
                capture_output=True,
                text=True,
                cwd=REPO,
            )
            if result.returncode:
                sys.exit(result.stderr[-3000:])
            figures = json.loads(result.stdout.strip().splitlines()[-1])
            reference = reference or out
            assert same(reference, out), f"{out} differs from {reference}"
            if best is None or figures["command"] < best["command"]:
                best = figures
        label = f"{engine} workers={workers}" if engine == "local" else f"spark {master}"
        rows.append((label, best["session"], best["command"], n_notes / best["command"]))
        print(
            (
                f"{label:22s} session {best['session']:6.1f} s   command {best['command']:6.1f} s   "
                f"{n_notes / best['command']:7.1f} notes/s"
            ),
            flush=True,
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
