"""``--engine spark``: the sample through both engines gives the same outputs (segment, weak-label, predict and
deidentify), failing notes are accounted for, outputs on a Hadoop URI are replaced atomically, and pyspark
stays optional. Spark runs in local mode (``local[2]``), one session for the module."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.deidentification.batch import MISSING_ID_REASON
from deid_ds.errors import DeidError
from deid_ds.weak_labelling import weak_label
from tests.conftest import REPO
from tests.weak_labelling.test_weak_label import GOLD, NOTES, same_outputs

needs_spark = pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark not installed")


@pytest.fixture(scope="module")
def spark():
    """One local Spark session for the module: two cores, small partitions (so that the sample's file
    is read in several partitions: outputs must not depend on it), no UI."""
    from deid_ds.engine.spark import spark_session

    config = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "3",
        "spark.sql.files.maxPartitionBytes": "200000",
        "spark.sql.files.openCostInBytes": "1",
        "spark.sql.execution.arrow.maxRecordsPerBatch": "37",
    }
    session = spark_session("local[2]", config)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def notes_dir(tmp_path_factory) -> Path:
    """The sample in small row groups, and a second file of notes that fail or are odd: no HTML, an
    id seen in the first file, no id at all, no patient, blank text."""
    directory = tmp_path_factory.mktemp("spark-notes") / "notes"
    directory.mkdir()
    sample = pq.read_table(NOTES)
    pq.write_table(sample, directory / "a.parquet", row_group_size=40)
    odd = sample.slice(0, 5).to_pandas()
    odd["id_document"] = ["no-html", sample["id_document"][3].as_py(), None, "no-patient", "blank"]
    odd["html"] = [
        None,
        "<p>Vu le 12/03/2021.</p>",
        "<p>Revu le 3 mars 2021 par le Dr Martin.</p>",
        "<p>Appel du 04/05/2020.</p>",
        "<p> </p>",
    ]
    odd.loc[3, "id_patient"] = None
    pq.write_table(pa.Table.from_pandas(odd, schema=sample.schema, preserve_index=False), directory / "b.parquet")
    return directory


def _weak(notes, out, **options):
    return weak_label(notes, out, progress=False, sentences_jsonl=True, **options)


@pytest.mark.slow
@needs_spark
def test_weak_label_gives_the_local_engines_outputs(spark, notes_dir, kb_dir, tmp_path):
    local, distributed = tmp_path / "local", tmp_path / "spark"
    _weak(notes_dir, local, kb=kb_dir, gold=GOLD, batch_size=64, workers=1)
    report = _weak(notes_dir, distributed, kb=kb_dir, gold=GOLD, batch_size=25, engine="spark", spark_master="local[2]")
    same_outputs(
        local, distributed
    )  # spans, sentences, documents in the same order; BIO files byte for byte; report counts
    documents = pd.read_parquet(distributed / "documents.parquet")
    n_notes = len(pd.read_parquet(notes_dir))
    assert len(documents) == report.documents == n_notes  # every note accounted for
    errors = documents.set_index("id_document")["error"]
    assert errors["no-html"] == "html is null" and report.failures["html is null"] == 1
    assert (
        documents["error"].str.startswith("duplicate id_document").sum() == 1
        and documents["status"].eq("failed").sum() == report.failed == 2
    )
    assert "b.parquet#row2" in set(documents["id_document"])  # a note without id is named after its file and row
    assert documents.set_index("id_document").loc["blank", "status"] == "empty"
    assert report.gold is not None and report.gold["documents"] > 0
    assert not Path(str(distributed) + ".spark-partial").exists()


@pytest.mark.slow
@needs_spark
def test_output_on_a_hadoop_uri_is_replaced_atomically_and_a_failed_run_leaves_it_whole(
    spark, kb_dir, tmp_path, monkeypatch
):
    from deid_ds.io.output_dir import OutputRefused
    from deid_ds.weak_labelling.assemble import Assembly

    notes = tmp_path / "notes.parquet"
    pq.write_table(pq.read_table(NOTES).slice(0, 30), notes)
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("from an older run")

    def broken(*args, **kwargs):
        raise RuntimeError("the driver died while assembling")

    with pytest.raises(OutputRefused, match="not written by deid-ds"):
        _weak(notes, out.as_uri(), kb=kb_dir, engine="spark")
    monkeypatch.setattr(Assembly, "finish", broken)
    with pytest.raises(RuntimeError, match="assembling"):
        _weak(
            notes, out.as_uri(), kb=kb_dir, engine="spark", overwrite=True
        )  # not deid-ds's: replaced only with overwrite
    assert sorted(p.name for p in out.iterdir()) == ["stale.txt"]  # untouched
    monkeypatch.undo()
    result = CliRunner().invoke(
        main,
        [
            "weak-label",
            str(notes),
            "--out",
            out.as_uri(),
            "--kb",
            str(kb_dir),
            "--engine",
            "spark",
            "--verbose",
            "--overwrite",
            "--sentences-jsonl",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Spark" in result.output and "documents read" in result.output
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "spans.parquet",
            "sentences.parquet",
            "sentences.jsonl",
            "documents.parquet",
            "train.txt",
            "dev.txt",
            "test.txt",
            "report.json",
            ".deid-ds.json",
        ]
    )
    _weak(notes, tmp_path / "local", kb=kb_dir)
    same_outputs(tmp_path / "local", out)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "local",
        "notes.parquet",
        "out",
    ]  # no work or temporary directory left


@pytest.mark.slow
@needs_spark
def test_segment_gives_the_local_engines_outputs(spark, notes_dir, tmp_path):
    """``segment --engine spark``: the same sentences and documents, in the same order, and the same report."""
    reports = {}
    for engine in ("local", "spark"):
        out = tmp_path / engine
        result = CliRunner().invoke(
            main,
            ["segment", str(notes_dir), "--out", str(out), "--batch-size", "25", "--engine", engine, "--quiet"]
            + (["--spark-master", "local[2]"] if engine == "spark" else []),
        )
        assert result.exit_code == 0, result.output
        reports[engine] = json.loads((out / "report.json").read_text())
        del reports[engine]["seconds"]
    for table in ("sentences.parquet", "documents.parquet"):
        assert pq.read_table(tmp_path / "spark" / table).equals(pq.read_table(tmp_path / "local" / table)), table
    assert reports["spark"] == reports["local"] and reports["local"]["documents"] == len(pd.read_parquet(notes_dir))
    assert sorted(p.name for p in (tmp_path / "spark").iterdir()) == sorted(
        ["sentences.parquet", "documents.parquet", "report.json", ".deid-ds.json"]
    )
    assert not Path(str(tmp_path / "spark") + ".spark-partial").exists()


@pytest.mark.slow
@needs_spark
def test_predict_gives_the_local_engines_spans(spark, model_dir, notes_file, kb_dir, tmp_path):
    from deid_ds.ner.predict import predict

    def both(name, **options):
        local = predict(
            model_dir,
            notes_file,
            tmp_path / f"{name}-local",
            workers=1,
            batch_size=5,
            device="cpu",
            progress=False,
            **options,
        )
        spark_report = predict(
            model_dir,
            notes_file,
            tmp_path / f"{name}-spark",
            batch_size=4,
            device="cpu",
            progress=False,
            engine="spark",
            **options,
        )
        for table in ("spans.parquet", "documents.parquet"):
            assert pq.read_table(tmp_path / f"{name}-spark" / table).equals(
                pq.read_table(tmp_path / f"{name}-local" / table)
            ), (name, table)
        for field in (
            "documents",
            "ok",
            "empty",
            "failed",
            "failures",
            "sentences",
            "tokens",
            "entities",
            "entities_per_label",
            "entities_per_source",
            "ignored_labels",
            "hybrid",
        ):
            assert getattr(spark_report, field) == getattr(local, field), (name, field)
        report = json.loads((tmp_path / f"{name}-spark" / "report.json").read_text())
        assert report["documents"] == len(pd.read_parquet(notes_file)) and report["entities"] > 0
        return spark_report

    assert both("model").failed == 2  # no HTML, duplicated id
    assert both("hybrid", with_rules=kb_dir).hybrid


@pytest.mark.slow
@needs_spark
def test_deidentify_gives_the_local_engines_outputs(spark, notes_dir, kb_dir, tmp_path):
    """Gold spans, surrogates with metadata, two other columns passed through (--keep-column); a planted bad span
    fails one note, the odd notes of ``b.parquet`` fail as locally, spans of an unknown note are counted."""

    notes = tmp_path / "notes"
    notes.mkdir()
    for i, file in enumerate(sorted(notes_dir.glob("*.parquet"))):
        table = pq.read_table(file)
        table = table.append_column("stay", pa.array(range(i * 1000, i * 1000 + table.num_rows), pa.int64()))
        pq.write_table(
            table.append_column("ward", pa.array([f"w{n % 3}" if n % 4 else None for n in range(table.num_rows)])),
            notes / file.name,
            row_group_size=40,
        )
    gold = pd.read_parquet(GOLD)
    bad = gold.iloc[0].to_dict()
    html = pq.read_table(NOTES).to_pandas().set_index("id_document").loc[bad["id_document"], "html"]
    tag = html.index(
        "<", bad["html_start"] - 60
    )  # a span starting inside a tag: the note cannot be de-identified safely
    gold = pd.concat(
        [
            gold,
            pd.DataFrame(
                [
                    {**bad, "html_start": tag + 1, "html_end": tag + 3, "text": None},
                    {**bad, "id_document": "nowhere", "html_start": 0, "html_end": 2},
                ]
            ),
        ],
        ignore_index=True,
    )
    gold.to_parquet(tmp_path / "gold.parquet")
    runs = {}
    for engine, batch_size in (("local", 64), ("spark", 25)):
        args = [
            "deidentify",
            str(notes),
            "--spans",
            str(tmp_path / "gold.parquet"),
            "--kb",
            str(kb_dir),
            "--key",
            "k1-test-key-not-secret",
            "--keep-metadata",
            "surrogate",
            "--out",
            str(tmp_path / engine),
            "--batch-size",
            str(batch_size),
            "--engine",
            engine,
            "--quiet",
            "--keep-column",
            "stay",
            "--keep-column",
            "ward",
        ]
        result = CliRunner().invoke(main, args + (["-j", "1"] if engine == "local" else ["--spark-master", "local[2]"]))
        assert result.exit_code == 0, result.output
        assert "k1-test-key" not in result.output  # the key is never printed
        runs[engine] = json.loads((tmp_path / engine / "report.json").read_text())
    for table in ("notes.parquet", "audit.parquet", "documents.parquet"):
        assert pq.read_table(tmp_path / "spark" / table).equals(pq.read_table(tmp_path / "local" / table)), table
    from deid_ds.deidentification.keyed import Keyring

    for report in runs.values():
        del report["seconds"], report["documents_per_second"], report["written_to"]
        assert Keyring(b"k1-test-key-not-secret").matches(report.pop("key_fingerprint"))  # salted: differs run to run
    assert runs["spark"] == runs["local"]
    report = runs["spark"]
    assert (
        report["documents"] == len(pd.read_parquet(notes))
        and report["spans_for_unknown_documents"] == 1
        and report["replacements"] > 0
    )
    assert (
        report["failures"]["html is null"] == 1
        and sum(n for e, n in report["failures"].items() if e.startswith("duplicate")) == 1
    )
    assert report["failures"][MISSING_ID_REASON] == 1
    assert report["failed"] == 4  # no HTML, duplicated id, no id (no spans can name it), the bad span
    written = pd.read_parquet(tmp_path / "spark" / "notes.parquet")
    assert list(written.columns[-2:]) == ["stay", "ward"] and bad["id_document"] not in set(written["id_document"])
    assert not Path(str(tmp_path / "spark") + ".spark-partial").exists()
    result = CliRunner().invoke(
        main, ["deidentify", str(notes), "--model", str(tmp_path), "--out", str(tmp_path / "m"), "--engine", "spark"]
    )
    assert result.exit_code == 1 and "predict --engine spark" in result.output


@pytest.mark.slow
@needs_spark
def test_deidentify_fail_on_leak_keeps_the_output_aside_as_locally(spark, tmp_path):
    """--fail-on-leak with leaks (--hidden keep leaves a name in a comment): OUT untouched, the output in
    OUT.leaks, exit status 3; a column not named by --keep-column is dropped, a missing one refused."""
    html = "<html><body><!-- Kerbrat --><p>Mme <b>Jeanne</b> KERBRAT, vue ce jour.</p></body></html>"
    notes = tmp_path / "notes"
    notes.mkdir()
    pd.DataFrame(
        [{"id_document": "d1", "id_patient": "P1", "html": html, "lastname": "Kerbrat", "nir": "2570835238012"}]
    ).to_parquet(notes / "a.parquet")
    start = html.index("Jeanne")
    pd.DataFrame(
        [{"id_document": "d1", "label": "PATIENT", "html_start": start, "html_end": html.index(", vue")}]
    ).to_parquet(tmp_path / "spans.parquet")
    out = tmp_path / "out"
    out.mkdir()
    args = [
        "deidentify",
        str(notes),
        "--spans",
        str(tmp_path / "spans.parquet"),
        "--out",
        str(out),
        "--key",
        "k-test-key-not-secret",
        "--quiet",
        "--engine",
        "spark",
        "--spark-master",
        "local[2]",
        "--fail-on-leak",
    ]
    result = CliRunner().invoke(main, [*args, "--hidden", "keep"])
    assert result.exit_code == 3 and f"{out}.leaks" in result.output
    assert list(out.iterdir()) == []
    assert list(pd.read_parquet(tmp_path / "out.leaks" / "notes.parquet").columns) == [
        "id_document",
        "id_patient",
        "html",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "Kerbrat" not in pd.read_parquet(out / "notes.parquet")["html"].iloc[0]
    result = CliRunner().invoke(main, [*args, "--keep-column", "ward"])
    assert result.exit_code == 1 and "--keep-column ward: no such column" in result.output


@pytest.mark.slow
@needs_spark
def test_deidentify_refuses_unmatched_spans_and_marks_notes_without_spans_as_locally(spark, tmp_path):
    """Spans matching none of the notes (ids lower-cased) are refused before anything is written; a subset
    of the spans (--allow-unmatched-spans) gives the local engine's "no spans" notes and counts."""
    notes = tmp_path / "notes"
    notes.mkdir()
    pq.write_table(pq.read_table(NOTES).slice(0, 8), notes / "a.parquet")
    gold = pd.read_parquet(GOLD)
    ids = sorted(pd.read_parquet(notes)["id_document"])
    gold.assign(id_document=gold["id_document"].str.lower()).to_parquet(tmp_path / "lower.parquet")
    gold[gold["id_document"].isin(ids[:3])].to_parquet(tmp_path / "three.parquet")
    args = ["deidentify", str(notes), "--mode", "mask", "--quiet", "--out"]
    spark_args = ["--engine", "spark", "--spark-master", "local[2]"]
    result = CliRunner().invoke(main, [*args, str(tmp_path / "out"), "--spans", str(tmp_path / "lower.parquet")])
    assert result.exit_code == 2 and "none of its" in result.output and not (tmp_path / "out").exists()
    result = CliRunner().invoke(
        main, [*args, str(tmp_path / "out"), "--spans", str(tmp_path / "lower.parquet"), *spark_args]
    )
    assert result.exit_code == 2 and "none of its" in result.output and not (tmp_path / "out").exists()
    result = CliRunner().invoke(
        main, [*args, str(tmp_path / "out"), "--spans", str(tmp_path / "three.parquet"), *spark_args]
    )
    assert result.exit_code == 2 and "5 of the 8 note document(s) have no span" in result.output
    for engine, more in (("local", ["-j", "1"]), ("spark", spark_args)):
        options = ["--spans", str(tmp_path / "three.parquet"), "--allow-unmatched-spans", *more]
        result = CliRunner().invoke(main, [*args, str(tmp_path / engine), *options])
        assert result.exit_code == 0, result.output
    documents = pd.read_parquet(tmp_path / "spark" / "documents.parquet")
    assert documents.equals(pd.read_parquet(tmp_path / "local" / "documents.parquet"))
    assert sorted(documents["status"]) == ["no spans"] * 5 + ["ok"] * 3
    report = json.loads((tmp_path / "spark" / "report.json").read_text())
    assert report["documents_without_spans"] == 5 and report["span_documents"] == 3


@pytest.mark.slow
@needs_spark
def test_deidentify_keeps_id_types_and_shifts_kept_dates_as_locally(spark, tmp_path):
    """Integer ids keep their type in notes.parquet; a kept date column is shifted by each patient's offset."""
    import datetime as dt

    from tests.deidentification.test_deidentify_kept_columns import KEEP, write_dated_notes

    notes = tmp_path / "notes"
    notes.mkdir()
    write_dated_notes(notes / "a.parquet", tmp_path / "spans.parquet")
    args = ["deidentify", str(notes), "--spans", str(tmp_path / "spans.parquet"), "--key", "k-test-key-not-secret"]
    for engine, more in (("local", ["-j", "1"]), ("spark", ["--engine", "spark", "--spark-master", "local[2]"])):
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / engine), "-q", *KEEP, *more])
        assert result.exit_code == 0, result.output
    written, local = (pq.read_table(tmp_path / engine / "notes.parquet") for engine in ("spark", "local"))
    assert written.to_pylist() == local.to_pylist()  # (a kept string column: large_string as pandas wrote it locally)
    assert written.schema.field("id_document").type == local.schema.field("id_document").type == pa.int64()
    assert dt.date(2021, 3, 12) not in written.column("admission").to_pylist()


def test_without_pyspark_the_spark_engine_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    with pytest.raises(DeidError, match=r'pip install "deid-ds\[spark\]"'):
        weak_label(NOTES, tmp_path / "out", engine="spark", progress=False)
    result = CliRunner().invoke(main, ["weak-label", str(NOTES), "--out", str(tmp_path / "out"), "--engine", "spark"])
    assert result.exit_code == 1 and 'pip install "deid-ds[spark]"' in result.output
    assert not (tmp_path / "out").exists()


def test_deid_ds_and_the_local_engine_never_import_pyspark():
    code = (
        "import sys, deid_ds, deid_ds.engine, deid_ds.weak_labelling, deid_ds.ner.predict, deid_ds.cli; "
        "from deid_ds.cli import main; assert 'pyspark' not in sys.modules, 'pyspark imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_note_runs_are_consecutive_rows_of_one_file_across_arrow_batches():
    from deid_ds.engine.spark import FILE, ROW, _note_runs

    rows = [("a", 0), ("a", 1), ("a", 2), ("a", 3), ("a", 7), ("b", 0), ("b", 1), ("a", 8)]
    table = pa.table(
        {"id_document": [f"{f}{r}" for f, r in rows], FILE: [f for f, _ in rows], ROW: [r for _, r in rows]}
    )
    batches = [table.slice(0, 3).to_batches()[0], table.slice(3, 4).to_batches()[0], table.slice(7).to_batches()[0]]
    runs = [(file, row, run["id_document"]) for file, row, run in _note_runs(batches, ("id_document",), 3)]
    assert runs == [
        ("a", 0, ["a0", "a1", "a2"]),
        ("a", 3, ["a3"]),
        ("a", 7, ["a7"]),
        ("b", 0, ["b0", "b1"]),
        ("a", 8, ["a8"]),
    ]
