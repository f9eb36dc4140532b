"""The local engine builds its outputs as the batches finish (:class:`Assembly` fed batch by batch,
inside the work directory); fed output by output once every batch is done (the Spark engine's order),
it gives the same files, and an interrupted run leaves nothing next to ``OUT`` but the work directory."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from deid_ds.engine.stage import duplicate_positions
from deid_ds.io.notes import open_notes
from deid_ds.label.labeller import LabelConfig
from deid_ds.segmentation.notes import SegmentOptions
from deid_ds.weak_labelling import pipeline, weak_label
from deid_ds.weak_labelling.assemble import Assembly, Run
from deid_ds.weak_labelling.batch import weak_label_stage
from deid_ds.weak_labelling.options import WeakLabelOptions
from deid_ds.weak_labelling.report import WeakLabelReport
from deid_ds.weak_labelling.split import DEFAULT_SPLIT, assign_splits, patient_group
from tests.conftest import REPO

NOTES = REPO / "data" / "notes.parquet"
FILES = (
    "spans.parquet",
    "sentences.parquet",
    "sentences.jsonl",
    "documents.parquet",
    "train.txt",
    "dev.txt",
    "test.txt",
)


@pytest.fixture
def notes(tmp_path) -> Path:
    path = tmp_path / "notes.parquet"
    pq.write_table(pq.read_table(NOTES).slice(0, 40), path)
    return path


def test_assembling_output_by_output_gives_the_streamed_outputs(kb_dir, notes, tmp_path):
    streamed = weak_label(
        notes, tmp_path / "streamed", kb=kb_dir, batch_size=7, keep_empty=0.3, progress=False, sentences_jsonl=True
    )
    source = open_notes(notes)
    options = WeakLabelOptions(
        SegmentOptions(), LabelConfig(str(Path(kb_dir).resolve()), True), 0.3, 1.0, sentences_jsonl=True
    )
    group_split = assign_splits({patient_group(d, p) for d, p in source.iter_identifiers()}, DEFAULT_SPLIT, 0)
    stage = weak_label_stage(options, group_split, None)
    seen: set[str] = set()
    batches = [stage.batch(batch, duplicate_positions(batch, seen), None) for batch in source.iter_batches(7)]
    lengths = source.batch_lengths(7)
    report = WeakLabelReport(split_shares=list(DEFAULT_SPLIT), batches=len(lengths))
    (tmp_path / "at-once").mkdir()
    assembly = Assembly(tmp_path / "at-once", group_split, None, sentences_jsonl=True)
    for name in stage.outputs:  # every batch's documents, then every batch's sentences...: as Spark delivers them
        for tables in batches:
            assembly.add(name, tables[name])
    run = Run(source.num_notes, DEFAULT_SPLIT, 0, time.perf_counter(), source.num_notes, group_split)
    assembly.finish(run, None, report)
    for name in FILES:
        assert (tmp_path / "streamed" / name).read_bytes() == (tmp_path / "at-once" / name).read_bytes(), name
    for field in (
        "sentences_kept",
        "sentences_kept_without_entity",
        "entities",
        "entities_per_label",
        "entities_per_label_and_split",
        "splits",
    ):
        assert getattr(report, field) == getattr(streamed, field), field


def test_an_interrupted_run_leaves_only_its_work_directory_and_resumes_cleanly(kb_dir, notes, tmp_path, monkeypatch):
    import deid_ds.engine.local as local_engine

    real, calls = local_engine.run_job, Counter()

    def flaky(job):
        if calls["n"] >= 3:
            raise KeyboardInterrupt
        calls["n"] += 1
        return real(job)

    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        patch.setattr(local_engine, "run_job", flaky)
        with pytest.raises(KeyboardInterrupt):
            weak_label(notes, out, kb=kb_dir, batch_size=8, progress=False, sentences_jsonl=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.parquet", "out.partial"]
    # The unfinished outputs are removed on the way out; a kill -9 leaves them, and the next run removes them.
    assert not [p.name for p in (tmp_path / "out.partial").glob(f"{pipeline.ASSEMBLY_PREFIX}*")]
    (tmp_path / "out.partial" / f"{pipeline.ASSEMBLY_PREFIX}killed").mkdir()
    report = weak_label(notes, out, kb=kb_dir, batch_size=8, progress=False, sentences_jsonl=True)
    assert report.batches_resumed == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.parquet", "out"]
    weak_label(notes, tmp_path / "reference", kb=kb_dir, batch_size=8, progress=False, sentences_jsonl=True)
    for name in FILES:
        assert (out / name).read_bytes() == (tmp_path / "reference" / name).read_bytes(), name
