"""A stage described once runs on either engine: a toy stage (a batch function, two output tables, a
file it reads, an input column kept and a column joined on each note) gives the same tables with one
worker, two workers, a resumed run, and on Spark."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_ds.engine import engine_for
from deid_ds.engine.local import part_name
from deid_ds.engine.stage import Resume, Stage

needs_spark = pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark not installed")

LENGTHS = pa.schema(
    [("id_document", pa.string()), ("n_chars", pa.int64()), ("ward", pa.string()), ("tag", pa.string())]
)
STATS = pa.schema([("notes", pa.int64()), ("duplicates", pa.int64())])


@dataclass(frozen=True)
class Measure:
    """The toy batch function: each note's length, its kept ``ward`` and joined ``_upper`` columns,
    and the text of a file it reads; one stats row per batch."""

    suffix_file: str | None

    def __call__(self, notes, duplicates, others) -> dict:
        suffix = Path(self.suffix_file).read_text(encoding="utf-8").strip()
        tags = [f"{upper}-{suffix}" for upper in others.column("_upper").to_pylist()]
        lengths = {
            "id_document": [note.id_document for note in notes],
            "n_chars": [-1 if i in duplicates else len(note.html or "") for i, note in enumerate(notes)],
            "ward": others.column("ward").to_pylist(),
            "tag": tags,
        }
        stats = {"notes": [len(notes)], "duplicates": [len(duplicates)]}
        return {
            "lengths": pa.Table.from_pydict(lengths, schema=LENGTHS),
            "stats": pa.Table.from_pydict(stats, schema=STATS),
        }


def measure_files(batch: Measure, where) -> Measure:
    return replace(batch, suffix_file=where(batch.suffix_file))


class Upper:
    """The toy join: each note's id in capitals, as a column beside it."""

    columns = ("_upper",)

    def local(self, source):
        return lambda notes: {"_upper": [note.id_document.upper() for note in notes]}

    def spark(self, notes):
        from pyspark.sql import functions as F

        from deid_ds.engine.spark import SparkNotes

        frame = notes.frame.withColumn("_upper", F.upper(F.col("id_document")))
        return SparkNotes(frame, notes.columns, (*notes.others, "_upper"))


class Collect:
    """A sink keeping every table it is given."""

    def __init__(self) -> None:
        self.tables: dict[str, list] = {}

    def add(self, name: str, table) -> None:
        self.tables.setdefault(name, []).append(table)

    def table(self, name: str):
        return pa.concat_tables(self.tables[name]).combine_chunks()


@pytest.fixture
def toy(tmp_path):
    """Notes in two files (an id repeated across them), and the stage that measures them."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, ids in (("a.parquet", ["d1", "d2", "d3", "d4", "d5"]), ("b.parquet", ["d6", "d2", "d7"])):
        rows = {
            "id_document": ids,
            "html": [f"<p>{'x' * (i + 1)}</p>" for i in range(len(ids))],
            "ward": [f"w-{i}" for i in ids],
            "secret": ["never read"] * len(ids),
        }
        pq.write_table(pa.table(rows), notes / name)
    (tmp_path / "suffix.txt").write_text("ok\n", encoding="utf-8")
    stage = Stage(
        "measure",
        Measure(str(tmp_path / "suffix.txt")),
        {"lengths": LENGTHS, "stats": STATS},
        measure_files,
        keep=("ward",),
        join=Upper(),
    )
    return notes, stage


def run(runner, stage, notes, out, **options) -> Collect:
    sink = Collect()
    source = runner.open("measure", notes, None, lambda message: None)
    runner.run(stage, source, sink, 2, out=out, **options)
    return sink


def test_the_local_engine_runs_a_stage_alike_on_one_or_two_workers(toy, tmp_path):
    notes, stage = toy
    one = run(engine_for("local", workers=1, progress=False), stage, notes, tmp_path / "out")
    lengths = one.table("lengths")
    assert lengths.column("id_document").to_pylist() == ["d1", "d2", "d3", "d4", "d5", "d6", "d2", "d7"]
    assert lengths.column("n_chars").to_pylist()[-2] == -1  # d2 again: a duplicate
    assert lengths.column("tag").to_pylist()[0] == "D1-ok" and lengths.column("ward").to_pylist()[-1] == "w-d7"
    assert one.table("stats").column("notes").to_pylist() == [2, 2, 1, 2, 1]  # a batch never spans two files
    two = run(engine_for("local", workers=2, progress=False), stage, notes, tmp_path / "out")
    for name in stage.outputs:
        assert two.table(name).equals(one.table(name)), name


def test_a_resumed_local_run_reads_the_finished_batches_back(toy, tmp_path):
    notes, stage = toy
    runner = engine_for("local", workers=1, progress=False)
    reference = run(runner, stage, notes, tmp_path / "out")
    source = runner.open("measure", notes, None, print)
    lengths = tuple(source.source.batch_lengths(2))
    work = tmp_path / "work"
    work.mkdir()
    first = run(runner, stage, notes, tmp_path / "out", resume=Resume(work, frozenset(), lengths))
    assert sorted(p.name for p in work.iterdir()) == [part_name(i) for i in range(len(lengths))]
    broken = replace(stage, batch=Measure(str(tmp_path / "missing.txt")))  # would fail if it ran again
    sink = Collect()
    ran = runner.run(
        broken, source, sink, 2, resume=Resume(work, frozenset({0, 1, 2, 3, 4}), lengths)
    )  # every batch done: read back, none run
    assert ran == 0
    for name in stage.outputs:
        assert first.table(name).equals(reference.table(name)) and sink.table(name).equals(reference.table(name))


@pytest.mark.slow
@needs_spark
def test_the_spark_engine_runs_the_same_stage_into_the_same_tables(toy, tmp_path):
    from deid_ds.engine.spark import spark_session

    notes, stage = toy
    session = spark_session("local[2]", {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "3"})
    session.sparkContext.setLogLevel("ERROR")
    try:
        local = run(engine_for("local", progress=False), stage, notes, tmp_path / "out")
        distributed = run(engine_for("spark", spark_master="local[2]"), stage, notes, tmp_path / "out")
    finally:
        session.stop()
    assert distributed.table("lengths").equals(local.table("lengths"))  # every note's row, in input order
    # Spark cuts its batches where its partitions end (never across files, at most batch_size notes):
    # per-batch rows may differ, their sums may not.
    for column in STATS.names:
        assert sum(distributed.table("stats").column(column).to_pylist()) == sum(
            local.table("stats").column(column).to_pylist()
        )
    assert not Path(str(tmp_path / "out") + ".spark-partial").exists()
