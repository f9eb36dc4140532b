"""The open annotation tools' round trip: ``campaign --tool label-studio|doccano`` -> the tool's export
-> ``agreement`` and ``gold``.

Two short notes are weak-labelled and given to two annotators (every document to both). The exports
under ``exports/`` are what Label Studio and doccano give back for those tasks (their documented export
fields, the ones the tools add included: ``lead_time``, ``created_at``, ``was_cancelled``, ``Comments``...),
with the corrections listed in ``exports/README.md``. The first test checks that the exports hold exactly
the tasks the campaign writes today, so the others read real campaign output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.agreement.compute import agreement_from_files
from deid_ds.agreement.gold import gold_from_files
from deid_ds.agreement.readers import detect_format, read_answers
from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.segmentation.html_text import html_to_text

EXPORTS = Path(__file__).parent / "exports"
LS = {name: EXPORTS / f"label-studio-{name}.json" for name in ("ann1", "ann2")}
LS_MIN = EXPORTS / "label-studio-ann2-min.json"
DOCCANO = {name: EXPORTS / f"doccano-{name}.jsonl" for name in ("ann1", "ann2")}

NOTES = {
    "id_document": ["D1", "D2"],
    "id_patient": ["P1", "P2"],
    "doc_type": ["letter", "letter"],
    "html": [
        "<html><body><p>Patient : <b>Jeanne</b> MORVAN, née le 03/02/1960.</p>"
        "<p>Vue par le Dr Yann KERBRAT à Lannion.</p></body></html>",
        "<html><body><p>Tél. 02 96 23 01 76</p>"
        "<p>Mme Anne LE GALL habite 12 rue des Roses, 22300 Lannion.</p></body></html>",
    ],
    "firstname": ["Jeanne", "Anne"],
    "lastname": ["MORVAN", "LE GALL"],
    "birthdate": ["1960-02-03", "1970-01-01"],
    "address": [None, "12 rue des Roses"],
    "zip": [None, "22300"],
    "city": ["Lannion", "Lannion"],
    "phone": [None, "02 96 23 01 76"],
    "email": [None, None],
}
#: The correction both tools' exports of ann2 make: "Lannion" in the second sentence of D1, missed by
#: the weak labels. D1's primary annotator is ann2, so the majority gold of two keeps it (tie rule).
LANNION = ("D1", 1, "VILLE", "Lannion")


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> dict:
    from deid_ds import weak_label

    root = tmp_path_factory.mktemp("open-tools")
    pd.DataFrame(NOTES).to_parquet(root / "notes.parquet")
    weak_label(str(root / "notes.parquet"), str(root / "weak"), progress=False, workers=1, split=(0, 0, 1))
    out = {"root": root, "notes": root / "notes.parquet", "weak": root / "weak"}
    for tool in ("label-studio", "doccano"):
        args = ["campaign", str(root / "weak"), "--out", str(root / tool), "-a", "ann1,ann2", "--overlap", "1"]
        result = CliRunner().invoke(main, [*args, "--tool", tool, "--quiet"])
        assert result.exit_code == 0, result.output
        out[tool] = root / tool / tool
    return out


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _html_offsets(document: str, sentence_text: str, needle: str) -> tuple[int, int]:
    """Where ``needle`` (in the sentence ``sentence_text``) lies in the note's HTML."""
    html = NOTES["html"][NOTES["id_document"].index(document)]
    parsed = html_to_text(html)
    start = parsed.text.index(sentence_text) + sentence_text.index(needle)
    return parsed.html_span(start, start + len(needle))


def test_the_exports_hold_the_campaign_tasks_as_the_tools_give_them_back(campaign):
    assignments = pd.read_csv(campaign["root"] / "label-studio" / "assignments.csv")
    assert sorted(assignments["annotator"]) == ["ann1", "ann1", "ann2", "ann2"]  # every document to both
    for name in ("ann1", "ann2"):
        imported = json.loads((campaign["label-studio"] / f"{name}.json").read_text(encoding="utf-8"))
        exported = json.loads(LS[name].read_text(encoding="utf-8"))
        assert [task["data"] for task in exported] == [task["data"] for task in imported]
        for before, after in zip(imported, exported):
            predicted = before["predictions"][0]["result"]
            assert predicted[0]["from_name"] == "label" if predicted else True
            for annotation in after["annotations"]:
                if annotation["was_cancelled"]:
                    continue
                kept = [{k: v for k, v in r.items() if k != "origin"} for r in annotation["result"]]
                assert kept[: len(predicted)] == predicted  # accepted as predicted, then what was added
        lines = _lines(campaign["doccano"] / f"{name}.jsonl")
        exports = _lines(DOCCANO[name])
        assert len(exports) == len(lines)
        for line, export in zip(lines, exports):
            assert {k: v for k, v in line.items() if k != "label"} == {
                k: v for k, v in export.items() if k not in ("id", "label", "entities", "relations", "Comments")
            }


def test_label_studio_export_gives_agreement_and_the_corrected_gold_without_the_notes(campaign):
    assert detect_format(LS["ann1"]) == "labelstudio"
    result = agreement_from_files([LS["ann1"], LS["ann2"]], n_bootstrap=50)
    assert result.n_annotators == 2 and result.n_documents == 2
    assert result.n_items == 3  # D2's first sentence: ann1 skipped it (a cancelled annotation)
    assert result.read["skipped"]["labelstudio: annotation cancelled"] == 1
    assert 0.5 < result.value < 1.0
    assert result.per_label["VILLE"]["kappa"] < 1.0 and result.per_label["DOCTOR"]["kappa"] == 1.0
    assert [tuple(p["annotators"]) for p in result.per_pair] == [("ann1", "ann2")]

    frame, summary = gold_from_files([LS["ann1"], LS["ann2"]], strategy="majority")
    assert summary.tied_tokens == {"primary annotator's label": 1}  # Lannion: ann2, the primary, says VILLE
    weak = pd.read_parquet(campaign["weak"] / "spans.parquet")
    expected = {(r.id_document, r.label, r.html_start, r.html_end) for r in weak.itertuples()}
    document, index, label, needle = LANNION
    sentence = next(
        t["data"]["text"]
        for t in json.loads(LS["ann2"].read_text())
        if (t["data"]["id_document"], t["data"]["sentence_index"]) == (document, index)
    )
    expected.add((document, label, *_html_offsets(document, sentence, needle)))
    assert set(zip(frame["id_document"], frame["label"], frame["html_start"], frame["html_end"])) == expected
    html = dict(zip(NOTES["id_document"], NOTES["html"]))
    for row in frame.itertuples():
        parsed = html_to_text(html[row.id_document])
        start, end = parsed.text_span(row.html_start, row.html_end)
        assert parsed.text[start:end] == row.text


def test_label_studio_json_min_reads_as_the_full_export(tmp_path):
    full, _ = read_answers([LS["ann2"]], "label-studio")  # campaign --tool's spelling, or labelstudio
    short, _ = read_answers([LS_MIN])
    rows = json.loads(LS_MIN.read_text(encoding="utf-8"))
    unannotated = {k: v for k, v in rows[0].items() if k not in ("label", "annotator", "annotation_id", "lead_time")}
    path = tmp_path / "min.json"
    path.write_text(json.dumps([*rows, {**unannotated, "id": 99, "annotation_id": None}]), encoding="utf-8")
    again, report = read_answers([path])
    assert len(again) == len(short) and report.skipped == {"labelstudio: task without annotation": 1}
    assert [(a.annotator, a.item_key, a.spans, a.tokens, a.html, a.primary) for a in short] == [
        (a.annotator, a.item_key, a.spans, a.tokens, a.html, a.primary) for a in full
    ]


def test_label_studio_annotator_from_the_file_the_task_came_from_or_the_user():
    names = lambda how: {a.annotator for a in read_answers(list(LS.values()), annotator_from=how)[0]}  # noqa: E731
    assert names("auto") == {"ann1", "ann2"}  # assigned_to, written by the campaign
    assert names("user") == {"2", "3"}  # Label Studio's completed_by: user ids in this export
    assert names("file") == {"label-studio-ann1", "label-studio-ann2"}


def test_doccano_export_gives_the_same_agreement_and_the_gold_needs_the_notes_for_a_sloppy_selection(campaign):
    assert detect_format(DOCCANO["ann2"]) == "doccano"
    doccano = agreement_from_files(list(DOCCANO.values()), n_bootstrap=50)
    annotations, _ = read_answers(list(DOCCANO.values()))
    assert {a.annotator for a in annotations} == {"ann1", "ann2"}  # from assigned_to, not the file names
    # The same corrections as in Label Studio, plus a leading space selected before a date (no token
    # changes) and no skipped sentence: one item more, the same tokens disagreeing.
    assert doccano.n_items == 4 and 0.5 < doccano.value < 1.0

    with pytest.raises(InputError, match=r"doccano-ann2.jsonl:1 \(id 60\): a span does not start and end on token"):
        gold_from_files([DOCCANO["ann2"]], strategy="review")
    frame, summary = gold_from_files([DOCCANO["ann2"]], strategy="review", notes=campaign["notes"])
    assert summary.notes == {"sentence index": 1}
    first = _lines(DOCCANO["ann2"])[0]
    date = frame[(frame["id_document"] == "D1") & (frame["label"] == "DATE")].iloc[0]
    assert date["text"] == " 03/02/1960"  # what was selected, mapped exactly into the HTML
    assert (date["html_start"], date["html_end"]) == _html_offsets("D1", first["text"], " 03/02/1960")
    ville = frame[(frame["id_document"] == "D1") & (frame["label"] == "VILLE")].iloc[0]
    second = _lines(DOCCANO["ann2"])[1]
    assert (ville["html_start"], ville["html_end"]) == _html_offsets("D1", second["text"], "Lannion")
    assert set(frame["annotators"]) == {"ann2"}


def test_label_studio_offsets_in_utf16_are_converted(tmp_path):
    text = "Vu 🙂 par Yann KERBRAT."
    start16 = len(text[: text.index("Yann")].encode("utf-16-le")) // 2  # one more than the character index
    export = [
        {
            "id": 1,
            "data": {"text": text, "id_document": "D9", "sentence_index": 0},
            "annotations": [
                {
                    "id": 1,
                    "completed_by": 1,
                    "was_cancelled": False,
                    "lead_time": 3.2,
                    "result": [
                        {
                            "id": "a1",
                            "from_name": "label",
                            "to_name": "text",
                            "type": "labels",
                            "value": {
                                "start": start16,
                                "end": start16 + 12,
                                "text": "Yann KERBRAT",
                                "labels": ["DOCTOR"],
                            },
                        }
                    ],
                }
            ],
        }
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export, ensure_ascii=False), encoding="utf-8")
    (annotation,), report = read_answers([path])
    assert text[annotation.spans[0].start : annotation.spans[0].end] == "Yann KERBRAT"
    assert report.skipped == {"labelstudio: region offsets in UTF-16 code units (converted)": 1}


def test_agreement_and_gold_commands_on_the_exports(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        main, ["agreement", *map(str, LS.values()), "--bootstrap", "20", "--json", str(tmp_path / "a.json")]
    )
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "a.json").read_text())["fleiss_kappa"]["value"] < 1.0
    out = tmp_path / "gold.parquet"
    result = runner.invoke(main, ["gold", *map(str, DOCCANO.values()), "--strategy", "majority", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "VILLE" in result.output and out.is_file()


def test_doccano_older_labels_field_is_read(tmp_path):
    """doccano 1.0-1.2 exported the labels as ``labels`` with ``meta`` nested."""
    line = {
        "id": 7,
        "text": "Vu par Yann KERBRAT.",
        "meta": {"id_document": "D9", "sentence_index": 0},
        "annotation_approver": None,
        "labels": [[7, 19, "DOCTOR"]],
    }
    path = tmp_path / "alice.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert detect_format(path) == "doccano"
    (annotation,), _ = read_answers([path])
    assert (annotation.annotator, annotation.item_key, annotation.spans[0].label) == ("alice", "D9#0", "DOCTOR")
