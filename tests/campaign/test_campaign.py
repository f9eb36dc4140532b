"""``deid-ds campaign``: tasks built from weak-label sentences, stratified sampling, assignment with
overlap, the written files and the command; the review logic of ``deid.review``."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.campaign.assignment import (
    OVERLAP,
    PRIMARY,
    annotators_of,
    assign_documents,
    overlap_size,
    parse_annotators,
)
from deid_ds.campaign.build import TOOLS, prepare_campaign
from deid_ds.campaign.components import (
    LABEL_COLOURS,
    answer_validator,
    before_db,
    correct_config,
    parse_labels,
    prepare_stream,
)
from deid_ds.campaign.review import build_review_task, group_answers, infer_dataset, review_tasks
from deid_ds.campaign.sampling import sample_documents, stratified_order
from deid_ds.campaign.tasks import META_KEYS, TaskError, expected_ws, task_problems, validate_task
from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.model import LABELS
from tests.conftest import REPO

NOTES = REPO / "data" / "notes.parquet"


@pytest.fixture(scope="module")
def weak_dir(tmp_path_factory) -> Path:
    """60 notes of the sample labelled (without knowledge base: the task format does not depend on
    it), every sentence kept, split by patient."""
    from deid_ds import weak_label

    base = tmp_path_factory.mktemp("campaign")
    notes = base / "notes.parquet"
    pq.write_table(pq.read_table(NOTES).slice(0, 60), notes)
    weak_label(
        notes, base / "weak", keep_empty=1.0, split=(0.5, 0.1, 0.4), progress=False, workers=1, sentences_jsonl=True
    )
    return base / "weak"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def a_task() -> dict:
    """A hand-made consistent task: 'Vu par le Dr Yann KERBRAT le 03/02/2021.'"""
    text = "Vu par le Dr Yann KERBRAT le 03/02/2021."
    words = [(0, 2), (3, 6), (7, 9), (10, 12), (13, 17), (18, 25), (26, 28), (29, 39), (39, 40)]
    tokens = [
        {"text": text[s:e], "start": s, "end": e, "html_start": 100 + s, "html_end": 100 + e, "id": i, "ws": ws}
        for i, ((s, e), ws) in enumerate(zip(words, expected_ws(text, [e for _, e in words])))
    ]
    return {
        "text": text,
        "tokens": tokens,
        "tokens_parser": [{"start": t["html_start"], "end": t["html_end"]} for t in tokens],
        "spans": [
            {"start": 13, "end": 25, "token_start": 4, "token_end": 5, "label": "DOCTOR", "source": "context:title"},
            {"start": 29, "end": 39, "token_start": 7, "token_end": 7, "label": "DATE", "source": "pattern:date"},
        ],
        "meta": {
            "id_document": "D1",
            "id_patient": "P1",
            "doc_type": "letter",
            "sentence_index": 2,
            "annotator": "alice",
            "annotator2": ["bob"],
        },
    }


# ---------------------------------------------------------------------------------------------------
# Tasks


def test_a_consistent_task_passes_and_ws_follows_the_offsets():
    task = a_task()
    assert task_problems(task) == []
    assert [t["ws"] for t in task["tokens"]] == [True] * 7 + [False, True]  # '03/02/2021' glued to '.'


@pytest.mark.parametrize(
    "break_it, expected",
    [
        (lambda t: t["spans"][0].update(token_end=6), "not aligned"),  # exclusive token_end: one token too far
        (lambda t: t["spans"][0].update(start=14), "not aligned"),  # half a token
        (lambda t: t["spans"][1].update(token_start=9, token_end=9), "not tokens of the sentence"),
        (
            lambda t: t["spans"].append({"start": 18, "end": 25, "token_start": 5, "token_end": 5, "label": "PATIENT"}),
            "overlap",
        ),
        (lambda t: t["spans"][0].update(label="NAME"), "unknown label"),
        (lambda t: t["spans"][0].update(end=99), "outside the sentence"),
        (lambda t: t["tokens"][7].update(ws=True), "ws=True contradicts"),
        (lambda t: t["tokens"][2].update(text="du"), "token 2: its text"),
        (lambda t: t["tokens"][3].update(id=7), "id 7"),
        (lambda t: t["tokens_parser"].pop(), "tokens_parser has 8 entries"),
    ],
)
def test_task_problems_finds_each_inconsistency_without_quoting_text(break_it, expected):
    task = a_task()
    break_it(task)
    problems = task_problems(task)
    assert any(expected in p for p in problems), problems
    with pytest.raises(TaskError) as caught:
        validate_task(task)
    assert isinstance(caught.value, ValueError)
    for word in ("KERBRAT", "Yann", "03/02/2021"):
        assert word not in str(caught.value)


def test_campaign_tasks_are_consistent_and_carry_the_weak_label_sentences(weak_dir, tmp_path):
    out = tmp_path / "campaign"
    report = prepare_campaign(weak_dir, out, "alice,bob,carol", per_type=3, overlap=0.5, splits="train,test", seed=1)
    tasks = read_jsonl(out / "tasks.jsonl")
    assert len(tasks) == report.tasks > 0
    assert report.sentences_missing == 0  # --keep-empty 1: every sentence of a chosen document
    sentences = {
        (s["meta"]["id_document"], s["meta"]["sentence_index"]): s for s in read_jsonl(weak_dir / "sentences.jsonl")
    }
    for task in tasks:
        assert task_problems(task) == []
        assert set(task) == {"text", "tokens", "tokens_parser", "spans", "meta"}
        assert tuple(task["meta"]) == META_KEYS
        source = sentences[(task["meta"]["id_document"], task["meta"]["sentence_index"])]
        assert (task["text"], task["tokens"], task["spans"], task["tokens_parser"]) == (
            source["text"],
            source["tokens"],
            source["spans"],
            source["tokens_parser"],
        )
        assert [t["ws"] for t in task["tokens"]] == expected_ws(task["text"], [t["end"] for t in task["tokens"]])
        for span in task["spans"]:  # token_end inclusive
            assert task["tokens"][span["token_end"]]["end"] == span["end"]
            assert task["tokens"][span["token_start"]]["start"] == span["start"]
    chosen = {t["meta"]["id_document"] for t in tasks}
    expected = sorted(k for k in sentences if k[0] in chosen)
    assert [
        (t["meta"]["id_document"], t["meta"]["sentence_index"]) for t in tasks
    ] == expected  # document then sentence order


# ---------------------------------------------------------------------------------------------------
# Sampling and assignment


def documents_of(counts: dict[str, int]) -> dict[str, str]:
    return {f"{doc_type}-{i:03d}": doc_type for doc_type, n in counts.items() for i in range(n)}


def test_sampling_is_stratified_nested_and_independent_of_input_order():
    documents = documents_of({"letter": 30, "report": 12, "imaging": 4})
    sample = sample_documents(documents, per_type=10, seed=3)
    assert {t: len(d) for t, d in sample.chosen.items()} == {"imaging": 4, "letter": 10, "report": 10}
    assert sample.short_types == {"imaging": 4}
    assert all(documents[d] == t for t, ds in sample.chosen.items() for d in ds)
    shuffled = dict(sorted(documents.items(), reverse=True))
    assert sample_documents(shuffled, per_type=10, seed=3).chosen == sample.chosen
    bigger = sample_documents(documents, per_type=11, seed=3)
    assert all(set(sample.chosen[t]) <= set(bigger.chosen[t]) for t in sample.chosen)
    assert sample_documents(documents, per_type=10, seed=4).chosen != sample.chosen
    assert sample_documents(documents, per_type=None).documents == documents


def test_stratified_order_keeps_every_prefix_proportional():
    documents = documents_of({"a": 20, "b": 10, "c": 5})
    order = stratified_order(documents.items(), seed=0, purpose="t")
    assert sorted(order) == sorted(documents)
    first = Counter(documents[d] for d in order[:7])
    assert first == {"a": 4, "b": 2, "c": 1}


@pytest.mark.parametrize(
    "counts, annotators, overlap",
    [
        ({"letter": 30, "report": 17, "imaging": 4}, "a,b,c", 0.2),
        ({"x": 250, "y": 250}, "a,b,c,d,e", 0.2),
        ({"x": 7}, "a,b", 0.5),
        ({"x": 9, "y": 2}, "a,b,c", 1.0),
    ],
)
def test_assignment_gives_every_document_one_primary_and_the_overlap_to_all_others(counts, annotators, overlap):
    documents = documents_of(counts)
    names = annotators.split(",")
    assignments = assign_documents(documents, names, overlap=overlap, seed=5)
    who = annotators_of(assignments)
    assert set(who) == set(documents)
    assert sum(a.role == PRIMARY for a in assignments) == len(documents)
    primary = Counter(owner for owner, _ in who.values())
    assert max(primary.values()) - min(primary.values()) <= 1  # balanced in total
    for doc_type in counts:
        per_type = Counter(owner for d, (owner, _) in who.items() if documents[d] == doc_type)
        assert max(per_type.get(n, 0) for n in names) - min(per_type.get(n, 0) for n in names) <= 1  # and per type
    for name in names:
        owned = [d for d, (owner, _) in who.items() if owner == name]
        shared = [d for d in owned if who[d][1]]
        assert len(shared) == overlap_size(len(owned), overlap)
    for owner, others in who.values():
        assert owner not in others
        assert others == [] or sorted(others + [owner]) == sorted(names)  # overlap: every annotator, >= 2
    assert len({(a.id_document, a.annotator) for a in assignments}) == len(assignments)
    assert assign_documents(dict(reversed(documents.items())), names, overlap=overlap, seed=5) == assignments


def test_the_paper_design_gives_each_annotator_360_of_1000_documents():
    documents = documents_of({"html": 250, "cda": 250, "xml": 250, "pdf": 250})
    assignments = assign_documents(documents, list("abcde"), overlap=0.2, seed=0)
    per_annotator = Counter(a.annotator for a in assignments)
    assert set(per_annotator.values()) == {360}
    assert Counter(a.role for a in assignments) == {PRIMARY: 1000, OVERLAP: 4 * 200}
    overlap_types = Counter(a.doc_type for a in assignments if a.role == OVERLAP and a.annotator == "a")
    assert set(overlap_types.values()) == {40}  # the overlap is balanced across types too


def test_overlap_size_rounding_and_edges():
    assert [overlap_size(n, 0.2) for n in (0, 1, 2, 3, 7, 8, 200)] == [0, 1, 1, 1, 1, 2, 40]
    assert overlap_size(10, 0.0) == 0 and overlap_size(10, 1.0) == 10
    assert [a.role for a in assign_documents({"d": "x"}, ["solo"], overlap=1.0)] == [PRIMARY]
    with pytest.raises(ValueError):
        overlap_size(3, 1.5)


@pytest.mark.parametrize(
    "value, message",
    [("", "no annotator"), ("a,b,a", "given twice: a"), ("a,b c", "letters, digits"), ("a,../x", "letters, digits")],
)
def test_parse_annotators_refuses_bad_names(value, message):
    with pytest.raises(ValueError, match=message):
        parse_annotators(value)


# ---------------------------------------------------------------------------------------------------
# The command


def test_campaign_command_end_to_end(weak_dir, tmp_path):
    out = tmp_path / "campaign"
    args = [
        "campaign",
        str(weak_dir),
        "--out",
        str(out),
        "--annotators",
        "alice,bob,carol",
        "--per-type",
        "3",
        "--split",
        "test,train",
        "--seed",
        "7",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        ".deid-ds.json",
        "assignments.csv",
        "campaign.json",
        "tasks-alice.jsonl",
        "tasks-bob.jsonl",
        "tasks-carol.jsonl",
        "tasks.jsonl",
    ]
    campaign = json.loads((out / "campaign.json").read_text())
    with (out / "assignments.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    tasks = read_jsonl(out / "tasks.jsonl")
    by_doc = {}
    for task in tasks:
        by_doc.setdefault(task["meta"]["id_document"], []).append(task)
    assert campaign["documents"] == len(by_doc) == len({r["id_document"] for r in rows})
    assert campaign["options"]["splits"] == ["test", "train"] and campaign["options"]["per_type"] == 3
    assert all(c["chosen"] == min(3, c["available"]) for c in campaign["per_doc_type"].values())
    for name in ("alice", "bob", "carol"):
        mine = read_jsonl(out / f"tasks-{name}.jsonl")
        docs = {r["id_document"] for r in rows if r["annotator"] == name}
        assert mine == [t for t in tasks if t["meta"]["id_document"] in docs]  # the same task objects
        assert all(name == t["meta"]["annotator"] or name in t["meta"]["annotator2"] for t in mine)
        assert campaign["per_annotator"][name]["documents"] == len(docs)
        assert campaign["per_annotator"][name]["tasks"] == len(mine)
    for row in rows:
        task = by_doc[row["id_document"]][0]
        assert row["doc_type"] == task["meta"]["doc_type"]
        assert (row["role"] == "primary") == (row["annotator"] == task["meta"]["annotator"])
        assert int(row["n_sentences"]) == len(by_doc[row["id_document"]])
    # counts only: no document id, no note text in what is printed
    assert "alice" in result.output and "overlap" in result.output
    assert not any(d in result.output for d in by_doc)
    assert not any(len(t["text"]) > 8 and t["text"] in result.output for t in tasks)
    # deterministic: the same bytes again
    again = tmp_path / "again"
    assert CliRunner().invoke(main, [*args[:3], str(again), *args[4:], "--quiet"]).exit_code == 0
    for name in ("tasks.jsonl", "tasks-bob.jsonl", "assignments.csv", "campaign.json"):
        expected = (out / name).read_bytes()
        if name == "campaign.json":
            expected = expected.replace(str(out).encode(), str(again).encode())
        assert (again / name).read_bytes() == expected, name


def test_campaign_defaults_to_the_test_split_and_reports_short_types(weak_dir, tmp_path):
    report = prepare_campaign(weak_dir, tmp_path / "c", ["a", "b"], per_type=1000, log=(logged := []).append)
    documents = pq.read_table(weak_dir / "documents.parquet").to_pandas()
    test_docs = documents[(documents["split"] == "test") & (documents["n_sentences_kept"] > 0)]
    assert report.documents == len(test_docs)
    assert report.short_doc_types == test_docs.groupby("doc_type").size().to_dict()
    assert any("with fewer documents than --per-type 1000, all taken" in line for line in logged)


def test_a_default_weak_label_run_gives_the_campaign_every_sentence_of_the_test_documents(tmp_path):
    """weak-label keeps every sentence of the test split by default (--keep-empty-test 1), so the
    gold of the campaign can hold what the rules missed; --keep-empty-test 0 leaves sentences out."""
    from deid_ds import weak_label

    notes = tmp_path / "notes.parquet"
    pq.write_table(pq.read_table(NOTES).slice(0, 60), notes)
    for keep_empty_test in (1.0, 0.0):
        weak = tmp_path / f"weak-{keep_empty_test}"
        weak_label(notes, weak, keep_empty_test=keep_empty_test, split=(0.5, 0.1, 0.4), progress=False, workers=1)
        messages: list[str] = []
        report = prepare_campaign(
            weak, tmp_path / f"campaign-{keep_empty_test}", "alice,bob", seed=1, log=messages.append
        )
        documents = pq.read_table(weak / "documents.parquet").to_pandas().set_index("id_document")
        tasks = read_jsonl(tmp_path / f"campaign-{keep_empty_test}" / "tasks.jsonl")
        chosen = {t["meta"]["id_document"] for t in tasks}
        assert chosen and set(documents.loc[sorted(chosen), "split"]) == {"test"}
        if keep_empty_test == 1.0:
            assert report.sentences_missing == 0 and not any("not in the input" in m for m in messages)
            assert len(tasks) == documents.loc[sorted(chosen), "n_sentences"].sum()
            assert chosen == set(documents.query("split == 'test' and n_sentences > 0").index)
            assert any(not t["spans"] for t in tasks)
        else:
            assert report.sentences_missing > 0 and any("--keep-empty-test" in m for m in messages)
            assert all(t["spans"] for t in tasks)


def test_campaign_refuses_bad_input_with_a_message(weak_dir, tmp_path):
    runner = CliRunner()
    base = ["campaign", str(weak_dir), "--out", str(tmp_path / "c")]
    cases = [
        (["--annotators", "a,b", "--split", "nosuch"], "no document with sentences in split nosuch"),
        (["--annotators", "a,a"], "given twice"),
        (["--annotators", "a,b", "--overlap", "1.5"], "1.5"),
        (["--annotators", "a,b", "--per-type", "0"], "0"),
    ]
    for extra, message in cases:
        result = runner.invoke(main, base + extra)
        assert result.exit_code != 0 and message in result.output, (extra, result.output)
    no_split = tmp_path / "predictions"
    no_split.mkdir()
    with (no_split / "sentences.jsonl").open("w") as handle:
        for line in (weak_dir / "sentences.jsonl").read_text().splitlines()[:30]:
            row = json.loads(line)
            row.pop("split")
            handle.write(json.dumps(row) + "\n")
    with pytest.raises(InputError, match="--split all"):
        prepare_campaign(no_split, tmp_path / "p", "a,b")
    report = prepare_campaign(no_split, tmp_path / "p", "a,b", splits="all")
    assert report.tasks == 30
    with pytest.raises(InputError, match=r"no sentences\.parquet or sentences\.jsonl"):
        prepare_campaign(tmp_path, tmp_path / "x", "a,b")


# ---------------------------------------------------------------------------------------------------
# Label Studio and doccano


@pytest.fixture(scope="module")
def three_tools(weak_dir, tmp_path_factory) -> dict[str, Path]:
    """One campaign written for each tool, with the same options."""
    base = tmp_path_factory.mktemp("tools")
    for tool in TOOLS:
        prepare_campaign(weak_dir, base / tool, "alice,bob", per_type=2, overlap=0.5, splits="test,train", tool=tool)
    return {tool: base / tool for tool in TOOLS}


def test_label_studio_campaign_has_each_annotators_sentences_with_the_weak_labels_as_predictions(three_tools):
    prodigy, out = three_tools["prodigy"], three_tools["label-studio"]
    assert sorted(p.name for p in out.iterdir()) == [
        ".deid-ds.json",
        "assignments.csv",
        "campaign.json",
        "label-studio",
    ]
    assert sorted(p.name for p in (out / "label-studio").iterdir()) == [
        "README.md",
        "alice.json",
        "bob.json",
        "label_config.xml",
    ]
    for name in ("assignments.csv",):
        assert (out / name).read_bytes() == (prodigy / name).read_bytes()
    assert json.loads((out / "campaign.json").read_text())["options"]["tool"] == "label-studio"
    config = ElementTree.fromstring((out / "label-studio" / "label_config.xml").read_text())
    labels = config.find("Labels")
    assert (labels.get("name"), labels.get("toName"), config.find("Text").get("name")) == ("label", "text", "text")
    assert [label.get("value") for label in labels] == list(LABELS)
    assert config.find("Text").get("value") == "$text"
    for name in ("alice", "bob"):
        tasks = read_jsonl(prodigy / f"tasks-{name}.jsonl")
        imported = json.loads((out / "label-studio" / f"{name}.json").read_text(encoding="utf-8"))
        assert len(imported) == len(tasks) > 0  # the same sentences, in the same order
        for task, ls in zip(tasks, imported):
            data = ls["data"]
            assert data["text"] == task["text"] and data["assigned_to"] == name
            assert {key: data[key] for key in META_KEYS[:4]} == {key: task["meta"][key] for key in META_KEYS[:4]}
            assert (data["primary_annotator"], data["other_annotators"]) == (
                task["meta"]["annotator"],
                task["meta"]["annotator2"],
            )
            assert data["tokens"] == [
                {k: t[k] for k in ("start", "end", "html_start", "html_end")} for t in task["tokens"]
            ]
            (prediction,) = ls["predictions"]
            assert prediction["model_version"] == "deid-ds weak labels"
            result = prediction["result"]
            assert [(r["value"]["start"], r["value"]["end"], r["value"]["labels"]) for r in result] == [
                (s["start"], s["end"], [s["label"]]) for s in task["spans"]
            ]
            assert all(r["value"]["text"] == task["text"][r["value"]["start"] : r["value"]["end"]] for r in result)
            assert all((r["from_name"], r["to_name"], r["type"]) == ("label", "text", "labels") for r in result)
            assert len({r["id"] for r in result}) == len(result)
    readme = (out / "label-studio" / "README.md").read_text()
    assert "label_config.xml" in readme and "deid-ds agreement" in readme and "deid-ds gold" in readme


def test_doccano_campaign_has_each_annotators_sentences_with_the_weak_labels(three_tools):
    prodigy, out = three_tools["prodigy"], three_tools["doccano"]
    assert sorted(p.name for p in (out / "doccano").iterdir()) == [
        "README.md",
        "alice.jsonl",
        "bob.jsonl",
        "labels.json",
    ]
    labels = json.loads((out / "doccano" / "labels.json").read_text())
    assert [label["text"] for label in labels] == list(LABELS)
    assert len({label["suffix_key"] for label in labels}) == len(LABELS)
    for name in ("alice", "bob"):
        tasks = read_jsonl(prodigy / f"tasks-{name}.jsonl")
        lines = read_jsonl(out / "doccano" / f"{name}.jsonl")
        assert len(lines) == len(tasks) > 0
        for task, line in zip(tasks, lines):
            assert line["text"] == task["text"] and line["assigned_to"] == name
            assert line["label"] == [[s["start"], s["end"], s["label"]] for s in task["spans"]]
            assert line["id_document"] == task["meta"]["id_document"]
            assert line["sentence_index"] == task["meta"]["sentence_index"]
            assert line["primary_annotator"] == task["meta"]["annotator"]


def test_the_open_tools_import_files_read_back_as_unanswered_or_as_the_pre_annotations(three_tools):
    """Label Studio's import file holds predictions only (no answer yet: nothing counted); a doccano line
    reads as the pre-annotations, with the annotator the campaign assigned and HTML offsets."""
    from deid_ds.agreement.readers import read_answers

    annotations, report = read_answers([three_tools["label-studio"] / "label-studio" / "alice.json"])
    assert annotations == [] and set(report.skipped) == {"labelstudio: task without annotation"}
    path = three_tools["doccano"] / "doccano" / "bob.jsonl"
    annotations, report = read_answers([path])
    tasks = read_jsonl(three_tools["prodigy"] / "tasks-bob.jsonl")
    assert [a.annotator for a in annotations] == ["bob"] * len(tasks)
    assert [[(s.start, s.end, s.label) for s in a.spans] for a in annotations] == [
        [(s["start"], s["end"], s["label"]) for s in t["spans"]] for t in tasks
    ]
    assert all(a.html is not None and len(a.html) == len(a.tokens) for a in annotations)


def test_campaign_tool_is_checked(weak_dir, tmp_path):
    with pytest.raises(InputError, match="--tool brat: expected one of prodigy, label-studio, doccano"):
        prepare_campaign(weak_dir, tmp_path / "c", "a,b", tool="brat")
    result = CliRunner().invoke(
        main, ["campaign", str(weak_dir), "-o", str(tmp_path / "c"), "-a", "a,b", "--tool", "x"]
    )
    assert result.exit_code == 2 and "--tool" in result.output


# ---------------------------------------------------------------------------------------------------
# Recipe components and review logic


def fake_set_hashes(task, input_keys=("text",), task_keys=("spans",), overwrite=False):
    """Hashes over the given keys' values, as Prodigy's set_hashes does (with its own hash function)."""
    if overwrite or "_input_hash" not in task:
        task["_input_hash"] = hash(json.dumps([task.get(k) for k in input_keys], sort_keys=True))
    if overwrite or "_task_hash" not in task:
        task["_task_hash"] = hash(json.dumps([task["_input_hash"], *[task.get(k) for k in task_keys]], sort_keys=True))
    return task


def test_config_and_labels():
    config = correct_config(LABELS, feed_overlap=True)
    assert config["exclude_by"] == "input" and config["force_stream_order"] and config["honor_token_whitespace"]
    assert config["labels"] == list(LABELS) and config["feed_overlap"] is True and "annotations_per_task" not in config
    assert len(set(config["custom_theme"]["labels"].values())) == len(LABELS) == len(LABEL_COLOURS)
    routed = correct_config(LABELS, annotations_per_task=2)
    assert routed["annotations_per_task"] == 2 and "feed_overlap" not in routed
    with pytest.raises(ValueError, match="cannot be set together"):
        correct_config(LABELS, feed_overlap=True, annotations_per_task=2)
    assert parse_labels("DATE, PHONE") == ["DATE", "PHONE"]
    with pytest.raises(ValueError, match="NAME"):
        parse_labels("DATE,NAME")


def test_input_hash_separates_identical_sentences_of_different_documents():
    first, copy, other = a_task(), a_task(), a_task()
    other["meta"]["id_document"] = "D2"
    hashed = list(prepare_stream([first, copy, other], fake_set_hashes))
    assert hashed[0]["_input_hash"] == hashed[1]["_input_hash"] != hashed[2]["_input_hash"]
    other["meta"].update(annotator="carol", annotator2=[])
    assert [t["meta"]["id_document"] for t in prepare_stream([a_task(), other], fake_set_hashes, annotator="bob")] == [
        "D1"
    ]
    assert [
        t["meta"]["id_document"] for t in prepare_stream([a_task(), other], fake_set_hashes, annotator="carol")
    ] == ["D2"]
    broken = a_task()
    broken["spans"][0]["token_end"] = 6
    with pytest.raises(TaskError, match="document D1, sentence 2"):
        list(prepare_stream([broken], fake_set_hashes))


def test_answer_validator_and_before_db():
    validate = answer_validator(LABELS)
    answer = dict(a_task(), answer="accept")
    validate(answer)
    answer["spans"].append({"start": 18, "end": 28, "token_start": 5, "token_end": 6, "label": "PATIENT"})
    with pytest.raises(ValueError, match="overlap"):
        validate(answer)
    validate(dict(answer, answer="ignore"))
    saved = before_db([dict(a_task(), answer="accept")])[0]
    assert saved["meta"] == a_task()["meta"] and saved["tokens_parser"] == a_task()["tokens_parser"]
    assert [(s["html_start"], s["html_end"]) for s in saved["spans"]] == [(113, 125), (129, 139)]


def answer_of(
    name: str,
    spans: list[tuple[int, int, int, int, str]],
    answer: str = "accept",
    timestamp: int = 1,
    dataset: str = "deid-gold",
) -> dict:
    task = a_task()
    task["spans"] = [
        {"start": s, "end": e, "token_start": ts, "token_end": te, "label": label} for s, e, ts, te, label in spans
    ]
    return dict(
        task,
        answer=answer,
        _input_hash=42,
        _annotator_id=f"{dataset}-{name}",
        _session_id=f"{dataset}-{name}",
        _timestamp=timestamp,
    )


DOCTOR = (13, 25, 4, 5, "DOCTOR")
PATIENT = (13, 25, 4, 5, "PATIENT")
DATE = (29, 39, 7, 7, "DATE")


def test_review_task_is_the_majority_with_the_differences_listed():
    answers = [
        answer_of("alice", [DOCTOR, DATE]),
        answer_of("bob", [DOCTOR, DATE]),
        answer_of("carol", [PATIENT, DATE]),
        answer_of("dan", [DATE], answer="ignore"),
    ]
    assert infer_dataset(answers) == "deid-gold"
    groups = group_answers(answers)
    assert list(groups) == [42] and sorted(groups[42]) == ["alice", "bob", "carol"]
    task = build_review_task(groups[42])
    assert [(s["start"], s["end"], s["label"]) for s in task["spans"]] == [(13, 25, "DOCTOR"), (29, 39, "DATE")]
    assert task_problems(task) == []
    assert task["meta"]["review_annotators"] == "alice, bob, carol"
    assert (
        task["meta"]["review_differences"]
        == "DOCTOR «Yann KERBRAT» (13-25): alice, bob | PATIENT «Yann KERBRAT» (13-25): carol"
    )
    assert task["_input_hash"] == 42 and task["meta"]["id_document"] == "D1"
    assert [v["annotator"] for v in task["review"]["versions"]] == ["alice", "bob", "carol"]


def test_review_skips_agreement_single_answers_and_keeps_the_latest_answer():
    agreed = [answer_of("alice", [DOCTOR]), answer_of("bob", [DOCTOR])]
    assert list(review_tasks(agreed)) == []
    assert len(list(review_tasks(agreed, include_agreed=True))) == 1
    assert list(review_tasks([answer_of("alice", [DOCTOR])])) == []
    changed = agreed + [answer_of("bob", [PATIENT], timestamp=2)]
    (task,) = review_tasks(changed)
    assert task["spans"] == [] and "PATIENT" in task["meta"]["review_differences"]
    (rejected,) = review_tasks([answer_of("alice", [DOCTOR]), answer_of("bob", [DOCTOR], answer="reject")])
    assert "rejected by bob" in rejected["meta"]["review_differences"]


def test_a_long_annotator_name_gets_its_tasks_and_one_too_long_for_a_file_name_is_one_line(weak_dir, tmp_path):
    long = "é" * 40  # 80 bytes: more than BLAKE2b's 64-byte key, where the name is part of the draw's key
    runner = CliRunner()
    base = ["campaign", str(weak_dir), "--quiet"]
    result = runner.invoke(main, [*base, "--out", str(tmp_path / "c"), "--annotators", f"{long},bob"])
    assert result.exit_code == 0, result.output
    assert read_jsonl(tmp_path / "c" / f"tasks-{long}.jsonl") and read_jsonl(tmp_path / "c" / "tasks-bob.jsonl")
    refused = runner.invoke(main, [*base, "--out", str(tmp_path / "d"), "--annotators", f"{'a' * 300},bob"])
    assert refused.exit_code == 1 and "at most 200 bytes" in refused.output and "Traceback" not in refused.output
    assert len(refused.output.strip().splitlines()) == 1 and not (tmp_path / "d").exists()
