"""An entity written over two lines of a note stays one gold entity after an accept-everything round trip,
though the segmenter ends a sentence (a task) at the line break: the first task's ``meta.continues`` says
so, and ``deid-ds gold`` joins the pieces back (``deid_ds.campaign.continuation``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.campaign.continuation import continued_entities
from deid_ds.cli import main

NOTES = {
    "id_document": ["D1"],
    "id_patient": ["P1"],
    "doc_type": ["letter"],
    "html": [
        "<html><body><p>Compte rendu de consultation.</p>"
        "<p>Tel : 06 80<br>72 69 44</p>"
        "<p>Vu par le Dr Yann<br>KERBRAT</p>"
        "<p>Dates des séances :<br>12/03/2021<br>13/03/2021</p></body></html>"
    ],
    "firstname": ["Jeanne"],
    "lastname": ["MORVAN"],
    "birthdate": ["1960-02-03"],
    "address": [None],
    "zip": [None],
    "city": [None],
    "phone": [None],
    "email": [None],
}


@pytest.fixture(scope="module")
def weak_dir(tmp_path_factory) -> Path:
    from deid_ds import weak_label

    root = tmp_path_factory.mktemp("continuation")
    pd.DataFrame(NOTES).to_parquet(root / "notes.parquet")
    weak_label(str(root / "notes.parquet"), str(root / "weak"), progress=False, workers=1, split=(0, 0, 1))
    return root / "weak"


def weak_entities(weak_dir: Path) -> set[tuple]:
    spans = pd.read_parquet(weak_dir / "spans.parquet")
    return set(zip(spans["id_document"], spans["label"], spans["html_start"], spans["html_end"]))


def gold_entities(path: Path) -> set[tuple]:
    gold = pd.read_parquet(path)
    return set(zip(gold["id_document"], gold["label"], gold["html_start"], gold["html_end"]))


def test_the_weak_labeller_has_entities_over_two_lines_that_the_tasks_cut(weak_dir):
    spans = pd.read_parquet(weak_dir / "spans.parquet")
    assert {"PHONE", "DOCTOR"} <= set(spans.loc[spans["text"].str.contains("\n"), "label"])


def test_accepting_everything_gives_back_the_weak_entities_through_prodigy_answers(weak_dir, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["campaign", str(weak_dir), "--out", str(tmp_path / "c"), "-a", "alice", "-q"])
    assert result.exit_code == 0, result.output
    tasks = [json.loads(line) for line in (tmp_path / "c" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(t["meta"]["continues"] for t in tasks if "continues" in t["meta"]) == ["DOCTOR", "PHONE"]
    with (tmp_path / "answers.jsonl").open("w", encoding="utf-8") as answers:
        for task in tasks:
            answers.write(json.dumps({**task, "answer": "accept", "_annotator_id": "deid_gold-alice"}) + "\n")
    out = tmp_path / "gold.parquet"
    result = runner.invoke(main, ["gold", str(tmp_path / "answers.jsonl"), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert gold_entities(out) == weak_entities(weak_dir)
    # the two dates of the list, one per line, are two weak entities in two sentences: never joined
    dates = pd.read_parquet(out).query("label == 'DATE'")
    assert len(dates) == 2
    assert len({t["meta"]["sentence_index"] for t in tasks for s in t["spans"] if s["label"] == "DATE"}) == 2


def test_a_piece_the_annotator_relabelled_is_not_joined(weak_dir, tmp_path):
    runner = CliRunner()
    runner.invoke(main, ["campaign", str(weak_dir), "--out", str(tmp_path / "c"), "-a", "alice", "-q"])
    tasks = [json.loads(line) for line in (tmp_path / "c" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    with (tmp_path / "answers.jsonl").open("w", encoding="utf-8") as answers:
        for task in tasks:
            if task["meta"].get("continues") == "DOCTOR":
                task["spans"][-1]["label"] = "PATIENT"
            answers.write(json.dumps({**task, "answer": "accept", "_annotator_id": "deid_gold-alice"}) + "\n")
    out = tmp_path / "gold.parquet"
    result = runner.invoke(main, ["gold", str(tmp_path / "answers.jsonl"), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    gold = pd.read_parquet(out)
    assert len(gold) == len(weak_entities(weak_dir)) + 1  # the doctor stays in two pieces
    assert (gold["label"] == "PHONE").sum() == 1  # the phone number is joined


def test_label_studio_answers_keep_the_continuation(weak_dir, tmp_path):
    runner = CliRunner()
    args = ["campaign", str(weak_dir), "--out", str(tmp_path / "c"), "-a", "alice", "--tool", "label-studio", "-q"]
    assert runner.invoke(main, args).exit_code == 0
    imported = json.loads((tmp_path / "c" / "label-studio" / "alice.json").read_text(encoding="utf-8"))
    exported = [
        {
            **task,
            "id": number,
            "annotations": [
                {"id": number, "completed_by": 1, "was_cancelled": False, "result": task["predictions"][0]["result"]}
            ],
        }
        for number, task in enumerate(imported, start=1)
    ]
    (tmp_path / "export.json").write_text(json.dumps(exported), encoding="utf-8")
    out = tmp_path / "gold.parquet"
    result = runner.invoke(main, ["gold", str(tmp_path / "export.json"), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert gold_entities(out) == weak_entities(weak_dir)


def test_continued_entities_needs_a_weak_span_across_the_bound():
    def sentence(index, first, last):
        return {"meta": {"sentence_index": index}, "tokens": [{"html_start": first}, {"html_end": last}]}

    sentences = [sentence(0, 0, 10), sentence(1, 14, 20), sentence(3, 30, 40)]
    assert continued_entities(sentences, [(5, 17, "DOCTOR")]) == {0: "DOCTOR"}
    assert continued_entities(sentences, [(5, 10, "DOCTOR"), (14, 20, "DOCTOR")]) == {}  # two entities
    assert continued_entities(sentences, [(18, 35, "DATE")]) == {}  # sentence 2 is not there
