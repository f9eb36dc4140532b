"""``deid-ds weak-label`` end to end: accounting, offsets, BIO files, split, determinism, resume, CLI."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import deid_ds.weak_labelling as wl
from deid_ds.cli import main
from deid_ds.errors import DocumentError, InputError
from deid_ds.io.output_dir import MARKER
from deid_ds.label.labeller import WeakLabeller
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.weak_labelling import assign_splits, flair_token, parse_split, spans_schema, weak_label
from tests.conftest import REPO

NOTES = REPO / "data" / "notes.parquet"
GOLD = REPO / "data" / "gold.parquet"
OUTPUT_FILES = (
    "spans.parquet",
    "sentences.parquet",
    "sentences.jsonl",
    "documents.parquet",
    "train.txt",
    "dev.txt",
    "test.txt",
    "report.json",
)
TAG = re.compile(r"^(O|[BI]-[A-Z]+)$")


def run(notes, out, **options):
    """``weak_label`` quietly, with the opt-in ``sentences.jsonl`` whose lines these tests read."""
    options.setdefault("progress", False)
    options.setdefault("sentences_jsonl", True)
    return weak_label(notes, out, **options)


@pytest.fixture(scope="module")
def sample_run(kb_dir, tmp_path_factory):
    """The whole embedded sample, labelled once with the sample knowledge base."""
    out = tmp_path_factory.mktemp("weak") / "out"
    report = run(NOTES, out, kb=kb_dir, batch_size=64)
    return out, report


@pytest.fixture
def subset(tmp_path):
    """The first ``n`` notes of the sample, written as their own notes table."""

    def write(n: int = 40, name: str = "subset.parquet") -> Path:
        path = tmp_path / name
        pq.write_table(pq.read_table(NOTES).slice(0, n), path)
        return path

    return write


def same_outputs(a: Path, b: Path) -> None:
    """Two output directories hold the same data (Parquet compared as tables, text files byte for byte;
    the opt-in ``sentences.jsonl`` in both or in neither)."""
    for name in OUTPUT_FILES:
        if name == "sentences.jsonl" and not (a / name).exists() and not (b / name).exists():
            continue
        if name.endswith(".parquet"):
            pd.testing.assert_frame_equal(pd.read_parquet(a / name), pd.read_parquet(b / name))
        elif name != "report.json":
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ra, rb = (json.loads((d / "report.json").read_text()) for d in (a, b))
    for volatile in ("seconds", "notes_per_second", "batches", "batches_resumed"):
        ra.pop(volatile), rb.pop(volatile)
    assert ra == rb


def read_flair(path: Path) -> list[list[tuple[str, str]]]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n\n")
    sentences, current = [], []
    for line in text.split("\n")[:-1]:
        if line == "":
            assert current, "two blank lines in a row"
            sentences.append(current)
            current = []
        else:
            parts = line.split(" ")  # token TAG, or token FEATURES TAG (knowledge features: the default)
            assert len(parts) in (2, 3), line
            token, tag = parts[0], parts[-1]
            assert token and not re.search(r"\s", token)
            current.append((token, tag))
    assert not current
    return sentences


def check_bio(tags: list[str]) -> None:
    previous = "O"
    for tag in tags:
        assert TAG.match(tag), tag
        if tag.startswith("I-"):
            assert previous != "O" and previous[2:] == tag[2:], (previous, tag)
        previous = tag


# ---------------------------------------------------------------------------------------------- sample


def test_every_note_is_accounted_for_and_spans_read_back_in_the_html(sample_run):
    out, report = sample_run
    notes = pd.read_parquet(NOTES)
    documents = pd.read_parquet(out / "documents.parquet")
    assert documents["id_document"].tolist() == notes["id_document"].tolist()
    assert report.documents == 300 and report.failed == 0 and report.ok + report.empty == 300
    assert set(documents["status"]) <= {"ok", "empty"}
    spans = pd.read_parquet(out / "spans.parquet")
    assert list(spans.columns) == spans_schema().names
    assert len(spans) == report.entities == documents["n_entities"].sum() > 1000
    assert not spans.duplicated(["id_document", "html_start", "html_end"]).any()
    html = dict(zip(notes["id_document"], notes["html"]))
    patient = dict(zip(notes["id_document"], notes["id_patient"]))
    for id_document, group in spans.groupby("id_document"):
        parsed = html_to_text(html[id_document])
        for row in group.itertuples():
            assert parsed.text[row.text_start : row.text_end] == row.text
            assert parsed.html_span(row.text_start, row.text_end) == (row.html_start, row.html_end)
            fragment = html_to_text(html[id_document][row.html_start : row.html_end]).text
            assert " ".join(fragment.split()) == " ".join(row.text.split())
            assert row.id_patient == patient[id_document]
    assert sum(report.entities_per_label.values()) == sum(report.entities_per_source.values()) == len(spans)
    assert json.loads((out / "report.json").read_text())["entities"] == len(spans)


def test_sentences_tags_spans_and_flair_files_agree(sample_run):
    out, report = sample_run
    lines = [json.loads(line) for line in (out / "sentences.jsonl").read_text(encoding="utf-8").splitlines()]
    table = pd.read_parquet(out / "sentences.parquet")
    assert len(lines) == len(table) == report.sentences_kept
    assert [line["text"] for line in lines] == table["text"].tolist()
    flair = {name: read_flair(out / f"{name}.txt") for name in ("train", "dev", "test")}
    by_split = {name: [line for line in lines if line["split"] == name] for name in flair}
    notes = pd.read_parquet(NOTES)
    html = dict(zip(notes["id_document"], notes["html"]))
    for name, sentences in flair.items():
        assert len(sentences) == len(by_split[name]) == report.splits[name]["sentences"]
        for columns, line in zip(sentences, by_split[name]):
            assert [tag for _, tag in columns] == line["tags"]
            assert [token for token, _ in columns] == [flair_token(t["text"]) for t in line["tokens"]]
    for line in lines:
        check_bio(line["tags"])
        if line["split"] != "test":  # the test split keeps every sentence (keep_empty_test=1)
            assert line["spans"], "a sentence without entity was kept in train/dev with keep_empty=0"
        assert set(line["meta"]) == {"id_document", "id_patient", "doc_type", "sentence_index"}
        tokens = line["tokens"]
        assert [t["id"] for t in tokens] == list(range(len(tokens)))
        assert [(t["html_start"], t["html_end"]) for t in tokens] == [
            (p["start"], p["end"]) for p in line["tokens_parser"]
        ]
        for t in tokens:
            assert line["text"][t["start"] : t["end"]] == t["text"]
            assert (
                html_to_text(html[line["meta"]["id_document"]][t["html_start"] : t["html_end"]]).text.strip()
                == t["text"]
            )
        expected = ["O"] * len(tokens)
        for span in line["spans"]:
            assert (
                line["text"][span["start"] : span["end"]]
                == line["text"][tokens[span["token_start"]]["start"] : tokens[span["token_end"]]["end"]]
            )
            expected[span["token_start"]] = "B-" + span["label"]
            for i in range(span["token_start"] + 1, span["token_end"] + 1):
                expected[i] = "I-" + span["label"]
        assert expected == line["tags"]


def test_split_is_by_patient_with_the_requested_shares(sample_run):
    out, report = sample_run
    documents = pd.read_parquet(out / "documents.parquet")
    assert (documents.groupby("id_patient")["split"].nunique() == 1).all()
    patients = documents.drop_duplicates("id_patient")["split"].value_counts()
    assert (patients["train"], patients["dev"], patients["test"]) == (64, 8, 8)  # 80 patients, 80/10/10
    lines = [json.loads(line) for line in (out / "sentences.jsonl").read_text(encoding="utf-8").splitlines()]
    split_of = dict(zip(documents["id_document"], documents["split"]))
    assert all(line["split"] == split_of[line["meta"]["id_document"]] for line in lines)
    assert sum(s["patients"] for s in report.splits.values()) <= 80
    assert sum(s["entities"] for s in report.splits.values()) == report.entities


def test_assign_splits_depends_only_on_the_set_of_patients_and_the_seed():
    patients = [f"P{i:04d}" for i in range(1000)]
    one = assign_splits(patients, (0.8, 0.1, 0.1), seed=0)
    assert one == assign_splits(list(reversed(patients)) + patients[:10], (0.8, 0.1, 0.1), seed=0)
    assert Counter(one.values()) == {"train": 800, "dev": 100, "test": 100}
    other = assign_splits(patients, (0.8, 0.1, 0.1), seed=1)
    assert other != one and Counter(other.values()) == Counter(one.values())
    assert set(assign_splits(patients, (1.0, 0.0, 0.0)).values()) == {"train"}
    assert assign_splits([], (0.8, 0.1, 0.1)) == {}


def test_parse_split_refuses_bad_shares():
    assert parse_split("0.7,0.2,0.1") == (0.7, 0.2, 0.1)
    for bad in ("0.8,0.1", "a,b,c", "0.8,0.3,0.1", "1.5,-0.5,0"):
        with pytest.raises(InputError):
            parse_split(bad)


def test_flair_tokens_never_hold_whitespace_and_are_never_empty():
    assert flair_token("a b\u00a0c") == "a_b_c"
    assert flair_token("") == "_"
    assert flair_token("Jean-Pierre") == "Jean-Pierre"


# ---------------------------------------------------------------------------------------------- determinism


def test_output_does_not_depend_on_workers_or_batch_size(kb_dir, subset, tmp_path):
    notes = subset(40)
    run(notes, tmp_path / "a", kb=kb_dir, batch_size=7)
    run(notes, tmp_path / "b", kb=kb_dir, batch_size=7)
    run(notes, tmp_path / "c", kb=kb_dir, batch_size=13, workers=2)
    same_outputs(tmp_path / "a", tmp_path / "b")
    same_outputs(tmp_path / "a", tmp_path / "c")
    assert not (tmp_path / "a.partial").exists()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(
        [*OUTPUT_FILES, MARKER]
    )  # and the marker of deid-ds


def test_keep_empty_keeps_the_requested_share_of_sentences_without_entity(kb_dir, subset, tmp_path):
    notes = subset(60)
    none = run(notes, tmp_path / "none", kb=kb_dir, keep_empty_test=0.0)
    half = run(notes, tmp_path / "half", kb=kb_dir, keep_empty=0.5, keep_empty_test=0.5)
    every = run(notes, tmp_path / "all", kb=kb_dir, keep_empty=1.0)
    empty = none.sentences - none.sentences_kept
    assert empty > 300
    assert none.sentences_kept_without_entity == 0
    assert every.sentences_kept == every.sentences and every.sentences_kept_without_entity == empty
    assert 0.4 < half.sentences_kept_without_entity / empty < 0.6
    assert half.sentences_kept == none.sentences_kept + half.sentences_kept_without_entity
    again = run(notes, tmp_path / "again", kb=kb_dir, keep_empty=0.5, keep_empty_test=0.5, batch_size=9)
    assert (tmp_path / "half" / "sentences.jsonl").read_bytes() == (tmp_path / "again" / "sentences.jsonl").read_bytes()
    kept_empty = [json.loads(line) for line in (tmp_path / "half" / "sentences.jsonl").read_text().splitlines()]
    assert all(set(line["tags"]) == {"O"} for line in kept_empty if not line["spans"])
    assert again.sentences_kept == half.sentences_kept


def read_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "sentences.jsonl").read_text(encoding="utf-8").splitlines()]


def check_kept_counts(out: Path, report) -> None:
    """``n_sentences_kept`` of documents.parquet and the report's counts are the sentences written."""
    lines = read_lines(out)
    documents = pd.read_parquet(out / "documents.parquet")
    per_document = Counter(line["meta"]["id_document"] for line in lines)
    assert documents.set_index("id_document")["n_sentences_kept"].to_dict() == {
        d: per_document.get(d, 0) for d in documents["id_document"]
    }
    assert report.sentences_kept == len(lines) == len(pd.read_parquet(out / "sentences.parquet"))
    assert report.sentences_kept_without_entity == sum(not line["spans"] for line in lines)
    for name in ("train", "dev", "test"):
        assert (
            report.splits[name]["sentences"]
            == sum(line["split"] == name for line in lines)
            == len(read_flair(out / f"{name}.txt"))
        )
        assert report.splits[name]["documents"] == len(
            {line["meta"]["id_document"] for line in lines if line["split"] == name}
        )
    report_file = json.loads((out / "report.json").read_text())
    assert (report_file["sentences_kept"], report_file["written"]) == (
        report.sentences_kept,
        int((documents["n_sentences_kept"] > 0).sum()),
    )


def test_the_test_split_keeps_every_sentence_of_its_documents_by_default(sample_run):
    out, report = sample_run  # keep_empty=0, keep_empty_test=1
    documents = pd.read_parquet(out / "documents.parquet")
    lines = read_lines(out)
    test = documents[documents["split"] == "test"]
    assert len(test) > 10 and (test["n_sentences_kept"] == test["n_sentences"]).all()
    indices: dict[str, list[int]] = {}
    for line in lines:
        indices.setdefault(line["meta"]["id_document"], []).append(line["meta"]["sentence_index"])
    for row in test.itertuples():
        assert indices.get(row.id_document, []) == list(range(row.n_sentences))
    assert any(not line["spans"] for line in lines if line["split"] == "test")
    assert all(line["spans"] for line in lines if line["split"] != "test")  # train/dev: entity sentences only
    train_dev = documents[documents["split"] != "test"]
    assert (train_dev["n_sentences_kept"] < train_dev["n_sentences"]).any()
    check_kept_counts(out, report)


def test_keep_empty_test_changes_only_the_test_split(kb_dir, subset, tmp_path):
    notes = subset(40)
    old = run(notes, tmp_path / "old", kb=kb_dir, keep_empty_test=0.0)  # the behaviour before --keep-empty-test
    default = run(notes, tmp_path / "default", kb=kb_dir)
    assert all(line["spans"] for line in read_lines(tmp_path / "old"))
    for name in ("train.txt", "dev.txt", "spans.parquet"):
        assert (tmp_path / "old" / name).read_bytes() == (tmp_path / "default" / name).read_bytes(), name
    old_lines, default_lines = read_lines(tmp_path / "old"), read_lines(tmp_path / "default")
    assert [line for line in old_lines if line["split"] != "test"] == [
        line for line in default_lines if line["split"] != "test"
    ]
    old_test = [line for line in old_lines if line["split"] == "test"]
    default_test = [line for line in default_lines if line["split"] == "test"]
    assert len(default_test) > len(old_test) > 0
    assert [line for line in default_test if line["spans"]] == old_test
    for out, report in ((tmp_path / "old", old), (tmp_path / "default", default)):
        check_kept_counts(out, report)
    assert default.sentences_kept_without_entity == len(default_test) - len(old_test)
    # Train and dev keep more than test: the filter works the other way round too.
    reverse = run(notes, tmp_path / "reverse", kb=kb_dir, keep_empty=1.0, keep_empty_test=0.0)
    assert [line for line in read_lines(tmp_path / "reverse") if line["split"] == "test"] == old_test
    check_kept_counts(tmp_path / "reverse", reverse)
    train = pd.read_parquet(tmp_path / "reverse" / "documents.parquet").query("split == 'train' and status == 'ok'")
    assert (train["n_sentences_kept"] == train["n_sentences"]).all()


def test_per_split_shares_match_runs_with_one_share_whatever_the_workers_and_batches(kb_dir, subset, tmp_path):
    notes = subset(40)
    mixed = run(notes, tmp_path / "mixed", kb=kb_dir, keep_empty=0.3, keep_empty_test=0.6, batch_size=7)
    run(notes, tmp_path / "mixed2", kb=kb_dir, keep_empty=0.3, keep_empty_test=0.6, batch_size=13, workers=2)
    same_outputs(tmp_path / "mixed", tmp_path / "mixed2")
    check_kept_counts(tmp_path / "mixed", mixed)
    run(notes, tmp_path / "low", kb=kb_dir, keep_empty=0.3, keep_empty_test=0.3)
    run(notes, tmp_path / "high", kb=kb_dir, keep_empty=0.6, keep_empty_test=0.6)
    for split, reference in (("train", "low"), ("dev", "low"), ("test", "high")):
        assert (tmp_path / "mixed" / f"{split}.txt").read_bytes() == (
            tmp_path / reference / f"{split}.txt"
        ).read_bytes(), split
        lines = [line for line in read_lines(tmp_path / "mixed") if line["split"] == split]
        assert lines == [line for line in read_lines(tmp_path / reference) if line["split"] == split]
    test = [line for line in read_lines(tmp_path / "mixed") if line["split"] == "test"]
    assert any(not line["spans"] for line in test)


def test_a_smaller_share_keeps_a_subset_of_what_a_larger_one_keeps():
    shares = [0.0, 0.05, 0.1, 0.3, 0.5, 0.6, 0.99, 1.0]
    for document in ("d1", "DOC-42", "été"):
        for index in range(200):
            kept = [wl.keeps_empty_sentence(document, index, share) for share in shares]
            assert kept == sorted(kept), (document, index)  # False ... False True ... True
            assert not kept[0] and kept[-1]


def test_the_resume_fingerprint_covers_keep_empty_test(subset):
    from deid_ds.io.notes import open_notes
    from deid_ds.label.labeller import LabelConfig
    from deid_ds.segmentation.notes import SegmentOptions

    source = open_notes(subset(5))
    options = [
        wl.WeakLabelOptions(SegmentOptions(None, 200), LabelConfig(None, True), 0.0, share) for share in (1.0, 0.5)
    ]
    one, other = (wl.run_fingerprint(source, o, 8, None) for o in options)
    assert {k for k in one if one[k] != other[k]} == {"keep_empty_test"}
    assert (options[1].share_for("test"), options[1].share_for("train"), options[1].share_for("dev")) == (0.5, 0.0, 0.0)
    seeded = [wl.run_fingerprint(source, options[0], 8, None, (0.8, 0.1, 0.1), seed) for seed in (0, 1)]
    assert {k for k in seeded[0] if seeded[0][k] != seeded[1][k]} == {"seed"}  # the split decides what a part keeps


def test_sentences_jsonl_is_written_only_on_request_and_holds_the_parquet_rows(kb_dir, subset, tmp_path):
    """The JSONL is the largest output (docs/weak-label.md: what each output costs); the Parquet file has the same
    rows, and the campaign and the embeddings corpus read it."""
    from deid_ds.ner.corpus_text import write_corpus_text

    notes, runner = subset(20), CliRunner()
    plain = runner.invoke(
        main, ["weak-label", str(notes), "--kb", str(kb_dir), "-o", str(tmp_path / "plain"), "-q", "-j", "1"]
    )
    assert plain.exit_code == 0, plain.output
    assert not (tmp_path / "plain" / "sentences.jsonl").exists()
    asked = [
        "weak-label",
        str(notes),
        "--kb",
        str(kb_dir),
        "-o",
        str(tmp_path / "jsonl"),
        "-q",
        "-j",
        "1",
        "--sentences-jsonl",
    ]
    assert runner.invoke(main, asked).exit_code == 0
    lines = [
        json.loads(line) for line in (tmp_path / "jsonl" / "sentences.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert lines == pq.read_table(tmp_path / "plain" / "sentences.parquet").to_pylist()
    same_outputs(tmp_path / "plain", tmp_path / "plain")
    for name in OUTPUT_FILES:
        if name not in ("sentences.jsonl", "report.json"):
            assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "jsonl" / name).read_bytes(), name
    (tmp_path / "jsonl-only").mkdir()
    (tmp_path / "jsonl" / "sentences.jsonl").rename(
        tmp_path / "jsonl-only" / "sentences.jsonl"
    )  # an older run's directory
    from_parquet, from_jsonl = (
        write_corpus_text(tmp_path / "plain", tmp_path / "a.txt"),
        write_corpus_text(tmp_path / "jsonl-only", tmp_path / "b.txt"),
    )
    assert from_parquet.kind == from_jsonl.kind == "weak-label" and from_parquet.sentences > 0
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    assert from_parquet.to_dict() | {"source": ""} == from_jsonl.to_dict() | {"source": ""}


# ---------------------------------------------------------------------------------------------- resume


def interrupt_after(monkeypatch, batches: int) -> None:
    """Make the run stop (as a crash would) once ``batches`` batches are written."""
    import deid_ds.engine.local as local_engine

    real = local_engine.run_job
    calls = Counter()

    def flaky(job):
        if calls["n"] >= batches:
            raise KeyboardInterrupt
        calls["n"] += 1
        return real(job)

    monkeypatch.setattr(local_engine, "run_job", flaky)


def test_an_interrupted_run_resumes_without_duplicates_or_gaps(kb_dir, subset, tmp_path, monkeypatch):
    notes = subset(40)
    run(notes, tmp_path / "reference", kb=kb_dir, batch_size=8)
    out = tmp_path / "out"
    run(notes, out, kb=kb_dir, batch_size=8)  # a previous output, kept while the next run is unfinished
    before = (out / "report.json").read_bytes()
    with monkeypatch.context() as patch:
        interrupt_after(patch, 2)
        with pytest.raises(KeyboardInterrupt):
            run(notes, out, kb=kb_dir, batch_size=8, keep_empty=0.2)
    assert (out / "report.json").read_bytes() == before
    parts = sorted(p.name for p in (tmp_path / "out.partial").iterdir() if p.name.startswith("batch-"))
    assert parts == ["batch-000000", "batch-000001"]
    messages: list[str] = []
    report = run(notes, out, kb=kb_dir, batch_size=8, keep_empty=0.2, log=messages.append)
    assert messages == [f"resuming: 2 of 5 batches done (work directory {tmp_path / 'out.partial'})"]
    assert (report.batches, report.batches_resumed) == (5, 2)
    run(notes, tmp_path / "reference", kb=kb_dir, batch_size=8, keep_empty=0.2)
    same_outputs(tmp_path / "reference", out)
    documents = pd.read_parquet(out / "documents.parquet")
    assert documents["id_document"].is_unique and len(documents) == 40
    assert not (tmp_path / "out.partial").exists()


def test_the_resume_fingerprint_covers_every_module_of_the_pipeline_and_the_labelling_code():
    from deid_ds.weak_labelling import resume

    files = resume._code_files()
    assert all(file.is_file() for file in files) and len(set(files)) == len(files)
    assert set(Path(resume.__file__).resolve().parent.glob("*.py")) <= set(files)
    assert {"labeller.py", "html_text.py", "segmenter.py", "notes.py", "tokens.py"} <= {file.name for file in files}
    assert len(resume._code_digest()) == 64


def test_a_changed_option_starts_over(kb_dir, subset, tmp_path, monkeypatch):
    notes = subset(30)
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        interrupt_after(patch, 1)
        with pytest.raises(KeyboardInterrupt):
            run(notes, out, kb=kb_dir, batch_size=10)
    assert not out.exists()
    messages: list[str] = []
    report = run(notes, out, kb=kb_dir, batch_size=10, keep_empty=1.0, log=messages.append)
    assert len(messages) == 1 and messages[0].startswith("starting over: keep_empty changed")
    assert report.batches_resumed == 0 and report.sentences_kept == report.sentences
    assert pd.read_parquet(out / "documents.parquet")["id_document"].is_unique


def test_an_input_changed_with_the_same_size_and_mtime_starts_over(kb_dir, subset, tmp_path, monkeypatch):
    """Size and mtime miss an in-place rewrite whose mtime was put back (``cp -p``, ``rsync --times``):
    resuming would mix batches labelled from the old notes with batches from the new ones."""
    import os

    notes = tmp_path / "notes.parquet"
    table = pq.read_table(NOTES).slice(0, 30)
    plain = {
        "compression": "none",
        "use_dictionary": False,
        "write_statistics": False,
    }  # the size follows the bytes of the text
    pq.write_table(table, notes, **plain)
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        interrupt_after(patch, 1)
        with pytest.raises(KeyboardInterrupt):
            run(notes, out, kb=kb_dir, batch_size=10)
    stat = notes.stat()
    html = table.column("html").to_pylist()
    first = re.search(r"<body>.*?>[^<]*?([a-z])", html[0], re.S)  # a letter of the text of a note of the labelled batch
    html[0] = html[0][: first.start(1)] + ("b" if first.group(1) == "a" else "a") + html[0][first.end(1) :]
    assert html[0] != table.column("html")[0].as_py()
    changed = table.set_column(table.schema.get_field_index("html"), "html", pa.array(html, pa.string()))
    pq.write_table(changed, notes, **plain)
    assert notes.stat().st_size == stat.st_size, "the rewrite must keep the size for this test to mean anything"
    os.utime(notes, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    messages: list[str] = []
    report = run(notes, out, kb=kb_dir, batch_size=10, log=messages.append)
    assert messages == [
        f"starting over: input changed since the interrupted run (work directory {tmp_path / 'out.partial'})"
    ]
    assert report.batches_resumed == 0
    run(notes, tmp_path / "reference", kb=kb_dir, batch_size=10)
    same_outputs(tmp_path / "reference", out)


def test_parts_hold_no_jsonl_unless_asked_and_asking_later_starts_over(kb_dir, subset, tmp_path, monkeypatch):
    """Without --sentences-jsonl the workers do not render the JSONL lines (time, and half the work
    directory): a restart that asks for them cannot reuse those parts."""
    from deid_ds.engine.local import PART_SUFFIX, read_part_table

    notes, out = subset(30), tmp_path / "out"
    with monkeypatch.context() as patch:
        interrupt_after(patch, 1)
        with pytest.raises(KeyboardInterrupt):
            run(notes, out, kb=kb_dir, batch_size=10, sentences_jsonl=False)
    lines = read_part_table(tmp_path / "out.partial" / "batch-000000" / f"sentences{PART_SUFFIX}")
    assert lines.num_rows > 0 and lines.column("jsonl").null_count == lines.num_rows
    assert lines.column("flair").null_count == 0
    messages: list[str] = []
    report = run(notes, out, kb=kb_dir, batch_size=10, log=messages.append)
    assert messages == [
        f"starting over: sentences_jsonl changed since the interrupted run (work directory {tmp_path / 'out.partial'})"
    ]
    assert report.batches_resumed == 0
    run(notes, tmp_path / "reference", kb=kb_dir, batch_size=10)
    same_outputs(tmp_path / "reference", out)


def test_the_same_bytes_touched_in_place_still_resume(kb_dir, subset, tmp_path, monkeypatch):
    import os

    notes = subset(30)
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        interrupt_after(patch, 1)
        with pytest.raises(KeyboardInterrupt):
            run(notes, out, kb=kb_dir, batch_size=10)
    os.utime(notes, ns=(notes.stat().st_atime_ns, notes.stat().st_mtime_ns + 10**9))
    assert run(notes, out, kb=kb_dir, batch_size=10).batches_resumed == 1


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes from /proc")
def test_sigterm_stops_the_command_and_its_workers_and_the_run_resumes(kb_dir, tmp_path):
    """``kill PID`` (a scheduler's stop) on a running weak-label: exit status 143, no worker left behind,
    no output, the finished batches kept; the same command then resumes."""
    import signal
    import subprocess
    import sys
    import time

    from tests.engine.test_parallel import _alive, _children, _environment, _wait_for

    sample = pq.read_table(NOTES)
    copies = []
    for n in range(4):  # enough notes to still be labelling when the signal comes
        ids = pa.array([f"{d}-{n}" for d in sample.column("id_document").to_pylist()])
        copies.append(sample.set_column(0, "id_document", ids))
    notes = tmp_path / "notes.parquet"
    pq.write_table(pa.concat_tables(copies), notes)
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "deid_ds",
        "weak-label",
        str(notes),
        "--kb",
        str(kb_dir),
        "-o",
        str(out),
        "-q",
        "-j",
        "2",
        "--batch-size",
        "8",
    ]
    parent = subprocess.Popen(command, env=_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        work = tmp_path / "out.partial"
        assert _wait_for(lambda: any(work.glob("batch-*")), 120), "no batch finished"
        workers = _children(parent.pid)
        assert len(workers) >= 2
        started = time.monotonic()
        parent.send_signal(signal.SIGTERM)
        output, _ = parent.communicate(timeout=60)
        assert parent.returncode == 143, output
        assert (
            time.monotonic() - started < 30
        )  # 1.5 s measured on 2 shared cores; the batches left take a minute or more
        assert "Traceback" not in output
        assert _wait_for(lambda: not any(_alive(pid) for pid in workers), 5), "workers still running"
    finally:
        if parent.poll() is None:
            parent.kill()
    assert not out.exists() and (work / "state.json").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".deid-ds-tmp")]
    resumed = subprocess.run(command, env=_environment(), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming:" in resumed.stdout + resumed.stderr
    documents = pd.read_parquet(out / "documents.parquet")
    assert len(documents) == 1200 and documents["id_document"].is_unique
    assert not work.exists()


# ---------------------------------------------------------------------------------------------- bad notes


def test_a_failing_note_is_counted_with_a_reason_and_never_printed(kb_dir, write_notes, tmp_path, monkeypatch):
    schema = pa.schema([(name, pa.string()) for name in ("id_document", "id_patient", "html", "lastname")])
    rows = [
        {
            "id_document": "d1",
            "id_patient": "p1",
            "html": "<p>Mme Jeanne KERVELLA, née le 12/08/1957, tél 02 99 28 43 21.</p>",
            "lastname": "KERVELLA",
        },
        {"id_document": "d2", "id_patient": "p1", "html": None, "lastname": "KERVELLA"},
        {
            "id_document": "d3",
            "id_patient": None,
            "html": "<p>Revue le 3 février 2021 par le Dr Yann MORVAN.</p>",
            "lastname": None,
        },
        {
            "id_document": "d4",
            "id_patient": "p2",
            "html": "<p>Courrier de Mme Odile QUÉMÉNEUR du 04/05/2020.</p>",
            "lastname": "QUÉMÉNEUR",
        },
        {"id_document": "d5", "id_patient": "p2", "html": "<p>&nbsp;</p>", "lastname": "QUÉMÉNEUR"},
    ]
    notes = write_notes(rows, schema=schema)
    real = WeakLabeller.labelling  # what the pipeline calls: the segmenter's offset lists, spans and lookup back

    def label(self, text, starts, ends, patient=None):
        if "QUÉMÉNEUR" in text:
            raise ValueError(f"cannot label {text}")
        return real(self, text, starts, ends, patient)

    monkeypatch.setattr(WeakLabeller, "labelling", label)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["weak-label", str(notes), "--kb", str(kb_dir), "--out", str(out), "-j", "1", "--batch-size", "2"]
    )
    assert result.exit_code == 0, result.output
    for secret in ("Jeanne", "KERVELLA", "MORVAN", "QUÉMÉNEUR", "Odile", "1957"):
        assert secret not in result.output
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    assert documents["status"].to_dict() == {"d1": "ok", "d2": "failed", "d3": "ok", "d4": "failed", "d5": "empty"}
    assert documents.loc["d2", "error"] == "html is null"
    assert documents.loc["d4", "error"] == "internal error during labelling (ValueError)"
    assert "internal error during labelling (ValueError)" in result.output
    report = json.loads((out / "report.json").read_text())
    assert report["failures"] == {"html is null": 1, "internal error during labelling (ValueError)": 1}
    assert (report["documents"], report["failed"], report["empty"], report["documents_without_patient"]) == (5, 2, 1, 1)
    assert documents.loc["d1", "split"] == documents.loc["d2", "split"]
    assert pd.read_parquet(out / "spans.parquet")["id_document"].isin(["d1", "d3"]).all()
    assert report["written"] == 2


def test_a_note_whose_knowledge_features_fail_is_failed_and_the_others_written(
    kb_dir, write_notes, tmp_path, monkeypatch
):
    from deid_ds.weak_labelling import columns

    rows = [
        {"id_document": "d1", "id_patient": "p1", "html": "<p>Revue le 3 février 2021 par le Dr Yann MORVAN.</p>"},
        {"id_document": "d2", "id_patient": "p2", "html": "<p>Courrier de Mme Odile QUÉMÉNEUR du 04/05/2020.</p>"},
    ]
    real = columns.feature_columns

    def features(lookup, ranges):
        if "QUÉMÉNEUR" in lookup.text:
            raise ValueError(f"cannot compute {lookup.text}")
        return real(lookup, ranges)

    monkeypatch.setattr(columns, "feature_columns", features)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["weak-label", str(write_notes(rows)), "--kb", str(kb_dir), "--out", str(out), "-j", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "QUÉMÉNEUR" not in result.output and "Odile" not in result.output
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    assert documents["status"].to_dict() == {"d1": "ok", "d2": "failed"}
    assert documents.loc["d2", "error"] == "internal error during knowledge features (ValueError)"
    assert set(pd.read_parquet(out / "spans.parquet")["id_document"]) == {"d1"}
    written = "".join((out / name).read_text() for name in ("train.txt", "dev.txt", "test.txt"))
    assert "MORVAN" in written and "QUÉMÉNEUR" not in written


def test_a_second_note_with_an_already_seen_id_is_failed_not_mixed_with_the_first(write_notes, tmp_path):
    rows = [
        {"id_document": "d1", "id_patient": "p1", "html": "<p>Revue le 3 février 2021.</p>"},
        {"id_document": "d2", "id_patient": "p1", "html": "<p>Revue le 4 février 2021.</p>"},
        {
            "id_document": "d1",
            "id_patient": "p2",
            "html": "<p>Revue le 5 février 2021.</p>",
        },  # another patient, same id
    ]
    out = tmp_path / "out"
    run(write_notes(rows), out, batch_size=2, split=(0.5, 0.0, 0.5))  # p1 and p2 in different splits
    documents = pd.read_parquet(out / "documents.parquet")
    assert documents["status"].tolist() == ["ok", "ok", "failed"]  # every input row accounted for
    assert documents["split"].iloc[0] != documents["split"].iloc[2]
    lines = [json.loads(line) for line in (out / "sentences.jsonl").read_text().splitlines()]
    assert {line["split"] for line in lines} == {
        documents["split"].iloc[0]
    }  # the first d1's split, not the duplicate's
    assert documents["n_sentences_kept"].tolist() == [1, 1, 0]
    assert documents["error"].iloc[2].startswith("duplicate id_document")
    spans = pd.read_parquet(out / "spans.parquet")
    assert sorted(spans["text"]) == ["3 février 2021", "4 février 2021"]
    assert set(spans["id_patient"]) == {"p1"}


def test_an_entity_cut_by_a_sentence_boundary_restarts_with_b_in_the_next_sentence(write_notes, tmp_path, monkeypatch):
    from deid_ds.label.candidate import Candidate
    from deid_ds.label.labeller import Labelling

    html = "<p>Vu le 3</p><p>février 2021 au CHU.</p>"
    notes = write_notes([{"id_document": "d1", "id_patient": "p1", "html": html}])
    real = WeakLabeller.labelling  # what the pipeline calls: its spans replaced, its lookup kept (the features)

    def label(self, text, starts, ends, patient=None):
        start = next(s for s, e in zip(starts, ends) if text[s:e] == "3")
        end = next(e for s, e in zip(starts, ends) if text[s:e] == "2021")
        return Labelling([Candidate(start, end, "DATE", "test:cross")], real(self, text, starts, ends, patient).lookup)

    monkeypatch.setattr(WeakLabeller, "labelling", label)
    report = run(notes, tmp_path / "out")
    lines = [json.loads(line) for line in (tmp_path / "out" / "sentences.jsonl").read_text().splitlines()]
    assert [line["tags"] for line in lines] == [["O", "O", "B-DATE"], ["B-DATE", "I-DATE", "O", "O", "O"]]
    assert [(sp["token_start"], sp["token_end"]) for line in lines for sp in line["spans"]] == [(2, 2), (0, 1)]
    spans = pd.read_parquet(tmp_path / "out" / "spans.parquet")
    assert report.entities == len(spans) == 1
    assert html_to_text(html[spans.loc[0, "html_start"] : spans.loc[0, "html_end"]]).text.split() == [
        "3",
        "février",
        "2021",
    ]


def test_a_labeller_breaking_its_contract_fails_the_note_not_the_run():
    from deid_ds.label.candidate import Candidate

    starts, ends = [0, 4, 10], [3, 9, 14]
    assert wl.token_ranges([Candidate(4, 14, "DATE", "x")], starts, ends) == [(1, 2)]
    for bad in ([Candidate(5, 9, "DATE", "x")], [Candidate(0, 9, "DATE", "x"), Candidate(4, 14, "DATE", "x")]):
        with pytest.raises(DocumentError):
            wl.token_ranges(bad, starts, ends)


# ---------------------------------------------------------------------------------------------- options and CLI


def test_column_mapping_gives_the_same_labels(kb_dir, subset, tmp_path):
    notes = subset(20)
    renamed = tmp_path / "export.parquet"
    table = pq.read_table(notes)
    pq.write_table(
        table.rename_columns(
            [{"id_document": "ID_ENTREPOT", "html": "TEXTE", "id_patient": "IPP"}.get(c, c) for c in table.column_names]
        ),
        renamed,
    )
    runner = CliRunner()
    args = ["--kb", str(kb_dir), "-q", "-j", "1"]
    plain = runner.invoke(main, ["weak-label", str(notes), "--out", str(tmp_path / "plain"), *args])
    mapped = runner.invoke(
        main,
        [
            "weak-label",
            str(renamed),
            "--out",
            str(tmp_path / "mapped"),
            *args,
            "-c",
            "id_document=ID_ENTREPOT",
            "--column",
            "html=TEXTE",
            "-c",
            "id_patient=IPP",
        ],
    )
    assert plain.exit_code == 0 and mapped.exit_code == 0, plain.output + mapped.output
    same_outputs(tmp_path / "plain", tmp_path / "mapped")
    missing = runner.invoke(main, ["weak-label", str(renamed), "--out", str(tmp_path / "x"), *args])
    assert missing.exit_code == 1 and "required column 'id_document' not found" in missing.output
    assert not (tmp_path / "x").exists()


def test_without_metadata_and_without_knowledge_base(kb_dir, subset, tmp_path):
    notes = subset(30)
    runner = CliRunner()
    full = runner.invoke(
        main, ["weak-label", str(notes), "--kb", str(kb_dir), "-o", str(tmp_path / "full"), "-q", "-j", "1"]
    )
    blind = runner.invoke(
        main,
        [
            "weak-label",
            str(notes),
            "--kb",
            str(kb_dir),
            "-o",
            str(tmp_path / "blind"),
            "-q",
            "-j",
            "1",
            "--no-metadata",
        ],
    )
    bare = runner.invoke(main, ["weak-label", str(notes), "-o", str(tmp_path / "bare"), "-q", "-j", "1"])
    for result in (full, blind, bare):
        assert result.exit_code == 0, result.output
    sources = {
        name: set(pd.read_parquet(tmp_path / name / "spans.parquet")["source"]) for name in ("full", "blind", "bare")
    }
    assert any(s.startswith("metadata:") for s in sources["full"])
    assert not any(s.startswith("metadata:") for s in sources["blind"])
    assert not any(s.startswith("gazetteer:") for s in sources["bare"])
    for name in ("blind", "bare"):
        assert len(pd.read_parquet(tmp_path / name / "documents.parquet")) == 30
        assert pd.read_parquet(tmp_path / name / "spans.parquet")["label"].isin(["DATE", "PHONE", "EMAIL"]).any()


def test_the_command_prints_the_tables_and_refuses_bad_options(kb_dir, subset, tmp_path):
    notes = subset(10)
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "weak-label",
            str(notes),
            "--kb",
            str(kb_dir),
            "-o",
            str(tmp_path / "ok"),
            "-v",
            "--split",
            "0.5,0.25,0.25",
            "--seed",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "documents read" in result.output and "label" in result.output and "source" in result.output
    assert json.loads((tmp_path / "ok" / "report.json").read_text())["split_shares"] == [0.5, 0.25, 0.25]
    not_a_kb = tmp_path / "not-a-kb"
    not_a_kb.mkdir()
    cases = [
        (["--split", "0.8,0.3"], "--split"),
        (["--kb", str(not_a_kb)], "not a built knowledge base"),
        (["--kb", str(tmp_path / "nowhere")], "knowledge base directory not found"),
        (["--keep-empty", "1.5"], "--keep-empty"),
        (["--keep-empty-test", "-0.1"], "--keep-empty-test"),
        (["--gold", str(notes)], "gold column(s)"),
    ]
    for extra, message in cases:
        out = tmp_path / "bad"
        bad = runner.invoke(main, ["weak-label", str(notes), "-o", str(out), "-q", *extra])
        assert bad.exit_code != 0 and message in bad.output, (extra, bad.output)
        assert "Traceback" not in bad.output and not out.exists() and not (tmp_path / "bad.partial").exists()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_knowledge_base_table_changed_since_its_manifest_is_refused_by_name(kb_dir, subset, tmp_path, workers):
    """The compiled matcher cache is keyed by the manifest alone: without checking the tables, a run
    after a table was replaced would label with the stale cache, as if nothing had changed."""
    import shutil

    notes, kb = subset(4), tmp_path / "kb"
    shutil.copytree(kb_dir, kb)
    runner = CliRunner()
    first = runner.invoke(
        main, ["weak-label", str(notes), "--kb", str(kb), "-o", str(tmp_path / "ok"), "-q", "-j", workers]
    )
    assert first.exit_code == 0, first.output
    assert (kb / "matcher.npz").is_file()  # the cache a stale run would use
    names = pq.read_table(kb / "names.parquet")
    pq.write_table(names.slice(1), kb / "names.parquet")  # a valid table, no longer the one the manifest describes
    out = tmp_path / "out"
    result = runner.invoke(main, ["weak-label", str(notes), "--kb", str(kb), "-o", str(out), "-q", "-j", workers])
    assert result.exit_code == 1, result.output
    assert f"{kb / 'names.parquet'}: does not match manifest.json" in result.output and "Traceback" not in result.output
    assert not out.exists() and not (tmp_path / "out.partial").exists()


# ---------------------------------------------------------------------------------------------- gold


def documents_types(notes: Path, ids: list[str]) -> dict[str, str]:
    frame = pd.read_parquet(notes)
    return (
        dict(zip(frame["id_document"], frame["doc_type"]))
        if not ids
        else {d: t for d, t in zip(frame["id_document"], frame["doc_type"]) if d in ids}
    )


def test_gold_gets_every_token_of_the_evaluated_notes_and_its_scores_are_reported(
    kb_dir, subset, tmp_path, monkeypatch
):
    """The contract with deid_ds.evaluation.scoring, checked with a stand-in that records what it is given."""
    import sys
    import types

    notes = subset(12)
    ids = pd.read_parquet(notes)["id_document"].tolist()
    gold = pd.read_parquet(GOLD)
    gold = pd.concat(
        [
            gold[gold["id_document"].isin(ids[:8])],
            pd.DataFrame(
                [{"id_document": "elsewhere", "label": "DATE", "html_start": 0, "html_end": 4, "text": "2020"}]
            ),
        ]
    )
    gold_path = tmp_path / "gold.jsonl"
    gold.to_json(gold_path, orient="records", lines=True, force_ascii=False)
    seen = {}

    class Scores:
        def table(self) -> str:
            return "stand-in gold table"

        def to_dict(self) -> dict:
            return {"micro": {"f1": 0.5}}

    def score_spans(gold_df, predicted_df, *, tokens, documents, doc_types=None):
        seen.update(gold=gold_df, predicted=predicted_df, tokens=tokens, documents=documents, doc_types=doc_types)
        return Scores()

    monkeypatch.setitem(sys.modules, "deid_ds.evaluation.scoring", types.SimpleNamespace(score_spans=score_spans))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "weak-label",
            str(notes),
            "--kb",
            str(kb_dir),
            "-o",
            str(out),
            "-v",
            "-j",
            "1",
            "--gold",
            str(gold_path),
            "--batch-size",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.index("stand-in gold table") > result.output.index("documents read")
    assert seen["documents"] == sorted(ids[:8])
    assert seen["doc_types"] == documents_types(notes, ids[:8])
    assert set(seen["gold"]["id_document"]) == set(ids[:8])
    assert set(seen["predicted"]["id_document"]) <= set(ids[:8]) and {
        "label",
        "html_start",
        "html_end",
        "source",
    } <= set(seen["predicted"].columns)
    spans = pd.read_parquet(out / "spans.parquet")
    assert len(seen["predicted"]) == spans["id_document"].isin(ids[:8]).sum()
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    tokens = seen["tokens"]
    assert list(tokens.columns) == ["id_document", "html_start", "html_end"]
    assert tokens.groupby("id_document").size().to_dict() == documents.loc[ids[:8], "n_tokens"].to_dict()
    report = json.loads((out / "report.json").read_text())
    assert report["gold"] == {"documents": 8, "gold_documents_not_in_input": 1, "micro": {"f1": 0.5}}


def test_gold_scores_are_printed_and_reported(kb_dir, tmp_path):
    """With the real deid_ds.evaluation.scoring: every gold entity and every prediction of the sample is scored."""
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["weak-label", str(NOTES), "--kb", str(kb_dir), "-o", str(out), "-v", "-j", "1", "--gold", str(GOLD)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    gold = report["gold"]
    assert gold["documents"] == 300 and gold["gold_documents_not_in_input"] == 0
    assert gold["exact"]["micro"]["gold"] == len(pd.read_parquet(GOLD))
    assert gold["exact"]["micro"]["predicted"] == report["entities"] == len(pd.read_parquet(out / "spans.parquet"))
    assert gold["redacted"]["unit"] == "token"  # the tokens of the notes were handed over
    assert set(gold["per_doc_type"]) == set(pd.read_parquet(NOTES)["doc_type"])
    assert result.output.index("micro") > result.output.index("documents read")


def test_the_api_name_is_the_function_even_after_the_package_was_imported():
    import types

    import deid_ds
    import deid_ds.weak_labelling

    assert callable(deid_ds.weak_label) and not isinstance(deid_ds.weak_label, types.ModuleType)


def test_rules_lists_the_labelling_functions_and_disable_rule_switches_one_off(kb_dir, subset, tmp_path):
    from deid_ds.label.functions import ALL, function_of_source

    runner = CliRunner()
    listed = runner.invoke(main, ["weak-label", "--rules"])  # no NOTES nor --out needed
    assert listed.exit_code == 0, listed.output
    assert [line.split()[0] for line in listed.output.splitlines()[2:]] == [f.name for f in ALL]
    notes = subset(10)
    outputs = {}
    for name, extra in (("all", []), ("without", ["-v", "--disable-rule", "dates", "--disable-rule", "streets"])):
        result = runner.invoke(
            main, ["weak-label", str(notes), "--kb", str(kb_dir), "-o", str(tmp_path / name), "-q", "-j", "1", *extra]
        )
        assert result.exit_code == 0, result.output
        # the spans per function are printed with -v only: the default summary stays short
        assert ("labelling function" in result.output) == ("-v" in extra)
        outputs[name] = (
            pd.read_parquet(tmp_path / name / "spans.parquet"),
            json.loads((tmp_path / name / "report.json").read_text()),
        )
    for spans, report in outputs.values():
        per_function = Counter(map(function_of_source, spans["source"]))
        assert report["entities_per_function"] == {f.name: per_function.get(f.name, 0) for f in ALL}
        assert sum(report["entities_per_function"].values()) == len(spans) == report["entities"]
    (_, full), (_, reduced) = outputs["all"], outputs["without"]
    assert full["entities_per_function"]["dates"] > 0 and full["entities_per_function"]["streets"] > 0
    assert reduced["entities_per_function"]["dates"] == reduced["entities_per_function"]["streets"] == 0
    assert reduced["entities_per_function"]["phones"] == full["entities_per_function"]["phones"]
    bad = runner.invoke(main, ["weak-label", str(notes), "-o", str(tmp_path / "bad"), "-q", "--disable-rule", "datez"])
    assert bad.exit_code == 1 and "unknown labelling function datez" in bad.output and "Traceback" not in bad.output
    assert not (tmp_path / "bad").exists() and not (tmp_path / "bad.partial").exists()
