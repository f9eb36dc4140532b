"""Gold merging on real sample notes: weak-label's tasks answered by three simulated annotators."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.agreement.gold import GoldSummary, build_gold, gold_from_files, majority_spans, write_gold
from deid_ds.agreement.items import Item
from deid_ds.agreement.model import Annotation, ReadReport, Span
from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.evaluation.scoring import score_spans
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.weak_labelling import read_gold

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> dict:
    """Six sample notes (one per document type), weak-labelled; their sentences are the tasks."""
    from deid_ds.weak_labelling import weak_label

    root = tmp_path_factory.mktemp("campaign")
    notes = pd.read_parquet(REPO / "data" / "notes.parquet")
    chosen = notes.groupby("doc_type", sort=True).head(1).head(6).reset_index(drop=True)
    chosen.to_parquet(root / "notes.parquet")
    weak_label(str(root / "notes.parquet"), str(root / "weak"), progress=False, workers=1, sentences_jsonl=True)
    tasks = [json.loads(line) for line in (root / "weak" / "sentences.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(tasks) > 50
    return {
        "root": root,
        "notes": root / "notes.parquet",
        "html": dict(zip(chosen["id_document"], chosen["html"])),
        "tasks": tasks,
        "spans": pd.read_parquet(root / "weak" / "spans.parquet"),
    }


def _perturb(tasks: list[dict], name: str) -> list[dict]:
    """Deterministic annotators: alice keeps the pre-annotations, bob drops every 7th span, carol turns
    every 7th span (another subset) into PATIENT. No span is changed by both, so the majority is the
    pre-annotation everywhere."""
    out, k = [], 0
    for n, task in enumerate(tasks):
        spans = []
        for span in task["spans"]:
            if name == "bob" and k % 7 == 0:
                k += 1
                continue
            if name == "carol" and k % 7 == 3:
                span = {**span, "label": "PATIENT" if span["label"] != "PATIENT" else "DOCTOR"}
            spans.append(span)
            k += 1
        answer = {
            **task,
            "spans": spans,
            "answer": "accept",
            "_input_hash": n,
            "_task_hash": n,
            "_annotator_id": f"deid-{name}",
            "_session_id": f"deid-{name}",
            "_view_id": "ner_manual",
            "_timestamp": 1_700_000_000 + n,
        }
        out.append(answer)
    return out


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def answers(campaign) -> list[Path]:
    root = campaign["root"]
    return [
        _write_jsonl(root / f"{name}.jsonl", _perturb(campaign["tasks"], name)) for name in ("alice", "bob", "carol")
    ]


def _reads_back(frame: pd.DataFrame, html: dict[str, str]) -> None:
    """Every gold span's HTML range reads as its text once parsed (the guidelines' offset rule)."""
    parsed = {doc: html_to_text(source) for doc, source in html.items()}
    for row in frame.itertuples(index=False):
        p = parsed[row.id_document]
        start, end = p.text_span(row.html_start, row.html_end)
        assert p.text[start:end] == row.text
        assert p.html_span(start, end) == (row.html_start, row.html_end)


def _in_sentences(spans: pd.DataFrame, tasks: list[dict]) -> pd.DataFrame:
    """Weak spans as the sentences show them (an entity is never cut by a sentence boundary here)."""
    return spans[spans["id_document"].isin({t["meta"]["id_document"] for t in tasks})]


def test_majority_gold_recovers_the_pre_annotations(campaign, answers):
    frame, summary = gold_from_files(answers, strategy="majority")
    assert list(frame.columns) == [
        "id_document",
        "label",
        "html_start",
        "html_end",
        "text",
        "id_patient",
        "doc_type",
        "annotators",
    ]
    _reads_back(frame, campaign["html"])
    weak = _in_sentences(campaign["spans"], campaign["tasks"])
    scores = score_spans(frame, weak)
    assert scores.micro.f1 >= 0.99
    assert scores.micro.gold == len(frame)
    assert summary.documents == 6 and summary.tied_tokens == {}
    assert set(frame["annotators"]) == {"alice,bob,carol"}
    assert frame["doc_type"].notna().all() and frame["id_patient"].notna().all()


def test_majority_with_two_perturbed_annotators_loses_what_they_agree_on(campaign):
    """bob and carol both drop the same spans: the majority drops them too, and the score says so."""
    root = campaign["root"]
    tasks = campaign["tasks"]
    dropped = 0
    paths = []
    for name in ("alice", "bob", "carol"):
        rows = []
        for n, task in enumerate(tasks):
            spans = task["spans"]
            if name != "alice" and n % 4 == 0:
                spans = [s for s in spans if s["label"] != "DATE"]
            rows.append({**task, "spans": spans, "answer": "accept", "_annotator_id": f"x-{name}", "_input_hash": n})
        paths.append(_write_jsonl(root / f"drop-{name}.jsonl", rows))
    dropped = sum(1 for n, t in enumerate(tasks) if n % 4 == 0 for s in t["spans"] if s["label"] == "DATE")
    assert dropped > 0
    frame, _ = gold_from_files(paths, strategy="majority")
    weak = _in_sentences(campaign["spans"], tasks)
    scores = score_spans(frame, weak)
    assert scores.exact["DATE"].gold == scores.exact["DATE"].predicted - dropped
    assert scores.exact["DATE"].precision < 1.0 and scores.exact["DATE"].recall == 1.0


def test_review_gold_is_the_reviewed_version(campaign):
    rows = []
    for n, task in enumerate(campaign["tasks"]):
        spans = [s for s in task["spans"] if s["label"] != "EMAIL"]  # the reviewer removed every e-mail
        rows.append({**task, "spans": spans, "answer": "accept", "_annotator_id": "review-gwen", "_input_hash": n})
    path = _write_jsonl(campaign["root"] / "review.jsonl", rows)
    frame, _summary = gold_from_files([path], strategy="review")
    assert "EMAIL" not in set(frame["label"])
    assert set(frame["annotators"]) == {"gwen"}
    weak = _in_sentences(campaign["spans"], campaign["tasks"])
    scores = score_spans(frame, weak)
    assert scores.exact["EMAIL"].predicted > 0 and scores.exact["EMAIL"].gold == 0
    assert scores.exact["DOCTOR"].f1 == pytest.approx(1.0)
    _reads_back(frame, campaign["html"])


def _doccano(tasks: list[dict], keep_index: bool = True) -> list[dict]:
    rows = []
    for n, task in enumerate(tasks):
        meta = {"id_document": task["meta"]["id_document"], "doc_type": task["meta"]["doc_type"]}
        if keep_index:
            meta["sentence_index"] = task["meta"]["sentence_index"]
        rows.append(
            {
                "id": n,
                "text": task["text"],
                "label": [[s["start"], s["end"], s["label"]] for s in task["spans"]],
                "meta": meta,
            }
        )
    return rows


def test_doccano_answers_need_notes_for_html_offsets(campaign, answers):
    path = _write_jsonl(campaign["root"] / "reviewer.jsonl", _doccano(campaign["tasks"]))
    with pytest.raises(InputError, match=r"reviewer.jsonl:1 \(id 0\): the answers carry no HTML offsets.*--notes"):
        gold_from_files([path], strategy="review")
    frame, summary = gold_from_files([path], strategy="review", notes=campaign["notes"])
    reference, _ = gold_from_files([answers[0]], strategy="review")
    pd.testing.assert_frame_equal(
        frame.drop(columns=["annotators", "id_patient"]), reference.drop(columns=["annotators", "id_patient"])
    )
    assert summary.notes == {"sentence index": len(campaign["tasks"])}


def test_labelstudio_answers_located_by_text_search(campaign, answers):
    tasks = []
    for n, task in enumerate(campaign["tasks"]):
        result = [
            {
                "type": "labels",
                "from_name": "label",
                "to_name": "text",
                "value": {"start": s["start"], "end": s["end"], "labels": [s["label"]]},
            }
            for s in task["spans"]
        ]
        tasks.append(
            {
                "id": n,
                "data": {"text": task["text"], "meta": {"id_document": task["meta"]["id_document"]}},
                "annotations": [{"completed_by": 1, "result": result}],
            }
        )
    path = campaign["root"] / "ls.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    frame, summary = gold_from_files([path], strategy="review", notes=campaign["notes"])
    reference, _ = gold_from_files([answers[0]], strategy="review")
    assert set(summary.notes) <= {
        "text search (unique)",
        "text search (several occurrences: first after the previous sentence)",
    }
    merged = frame.merge(reference, on=["id_document", "label", "html_start", "html_end"])
    assert len(merged) >= 0.95 * len(reference)  # a repeated sentence may land on another occurrence
    _reads_back(frame, campaign["html"])


def test_gold_table_is_read_by_weak_label_and_scoring(campaign, answers, tmp_path):
    frame, _ = gold_from_files(answers, tmp_path / "gold.parquet", strategy="majority")
    for name in ("gold.parquet", "gold.jsonl"):
        read = read_gold(tmp_path / name)
        assert len(read) == len(frame)
        assert score_spans(read, frame).micro.f1 == 1.0
    with pytest.raises(InputError, match=r"name it \.parquet"):
        write_gold(frame, tmp_path / "gold.jsonl")


def test_gold_command_end_to_end(campaign, answers, tmp_path):
    out = tmp_path / "gold" / "campaign.parquet"
    result = CliRunner().invoke(main, ["gold", *map(str, answers), "--out", str(out), "--strategy", "majority"])
    assert result.exit_code == 0, result.output
    assert "Gold (majority)" in result.output
    assert out.is_file() and out.with_suffix(".jsonl").is_file()
    weak_run = CliRunner().invoke(
        main,
        [
            "weak-label",
            str(campaign["notes"]),
            "--out",
            str(tmp_path / "weak"),
            "--gold",
            str(out),
            "--quiet",
            "--workers",
            "1",
        ],
    )
    assert weak_run.exit_code == 0, weak_run.output
    report = json.loads((tmp_path / "weak" / "report.json").read_text(encoding="utf-8"))
    assert report["gold"]["exact"]["micro"]["f1"] >= 0.99


def test_gold_without_document_id_is_an_error(tmp_path):
    path = _write_jsonl(tmp_path / "a.jsonl", [{"id": 1, "text": "Dr Martin", "label": [[3, 9, "DOCTOR"]]}])
    with pytest.raises(InputError, match=r"a.jsonl:1 \(id 1\): no meta.id_document"):
        gold_from_files([path], fmt="doccano")


# --------------------------------------------------------------------------------------------------
# Majority voting rules on a hand-made item


def _item(answers: dict[str, list[tuple[int, int, str]]], primary: str | None = None) -> Item:
    text = "le Dr Jean Martin et Anne Roux 12 mai"
    from deid_ds.segmentation.tokens import tokenize

    tokens = tokenize(text)
    made = {
        name: Annotation(
            name,
            "D#0",
            text,
            [Span(*s) for s in spans],
            tokens,
            None,
            id_document="D",
            sentence_index=0,
            primary=primary,
        )
        for name, spans in answers.items()
    }
    return Item("D#0", text, made, tokens, None)


def test_majority_rules_by_hand():
    # tokens: le(0,2) Dr(3,5) Jean(6,10) Martin(11,17) et(18,20) Anne(21,25) Roux(26,30) 12(31,33) mai(34,37)
    item = _item(
        {
            "a": [(6, 17, "DOCTOR"), (21, 30, "PATIENT"), (31, 37, "DATE")],
            "b": [(6, 17, "DOCTOR"), (21, 25, "PATIENT"), (26, 30, "PATIENT")],  # splits Anne | Roux
            "c": [(6, 10, "DOCTOR"), (11, 17, "DOCTOR"), (21, 30, "PATIENT")],  # splits Jean | Martin
        }
    )
    summary = GoldSummary("majority")
    spans, names = majority_spans(item, summary)
    # Jean Martin: joined by a and b, split by c -> one span; Anne Roux: joined by a and c -> one span;
    # 12 mai: one vote of three -> O.
    assert spans == [Span(6, 17, "DOCTOR"), Span(21, 30, "PATIENT")]
    assert names == ["a", "b", "c"]
    assert summary.tied_tokens == {}


def test_majority_tie_rules():
    two = {"a": [(6, 17, "DOCTOR")], "b": [(6, 17, "PATIENT")]}
    summary = GoldSummary("majority")
    assert majority_spans(_item(two, primary="a"), summary)[0] == [Span(6, 17, "DOCTOR")]
    assert summary.tied_tokens == {"primary annotator's label": 2}
    summary = GoldSummary("majority")
    assert majority_spans(_item(two), summary)[0] == [Span(6, 17, "PATIENT")]  # report order: PATIENT before DOCTOR
    assert summary.tied_tokens == {"first label in report order": 2}
    summary = GoldSummary("majority")
    assert majority_spans(_item({"a": [(31, 37, "DATE")], "b": []}), summary)[0] == []
    assert summary.tied_tokens == {"O (no majority for an entity)": 2}
    summary = GoldSummary("majority")
    assert majority_spans(_item({"a": [(31, 37, "DATE")], "b": []}, primary="a"), summary)[0] == [Span(31, 37, "DATE")]


def test_unaligned_span_needs_notes():
    item = _item({"a": [(7, 17, "DOCTOR")]})  # starts inside "Jean"
    item.html = [(100 + s, 100 + e) for s, e in item.tokens]
    for answer in item.answers.values():
        answer.html = item.html
    with pytest.raises(InputError, match="token boundaries: pass --notes"):
        build_gold(list(item.answers.values()), ReadReport(), strategy="review")
    item_ok = _item({"a": [(6, 17, "DOCTOR")]})
    for answer in item_ok.answers.values():
        answer.html = [(100 + s, 100 + e) for s, e in item_ok.tokens]
    frame, _ = build_gold(list(item_ok.answers.values()), ReadReport(), strategy="review")
    assert frame[["label", "html_start", "html_end", "text"]].values.tolist() == [["DOCTOR", 106, 117, "Jean Martin"]]
