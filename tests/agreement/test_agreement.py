"""Agreement: kappa on textbook examples, the bootstrap, the three readers, the command."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from deid_ds.agreement.compute import agreement, agreement_from_files
from deid_ds.agreement.kappa import (
    BootstrapKappa,
    bootstrap_kappa,
    category_kappas,
    cohen_kappa,
    fleiss_kappa,
    fleiss_kappa_varying,
)
from deid_ds.agreement.readers import detect_format, read_answers, strip_dataset
from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.segmentation.tokens import tokenize

# Wikipedia's worked example of Fleiss' kappa: 10 subjects, 14 raters, 5 categories, κ ≈ 0.210
# (P̄ = 0.378, P̄e = 0.213).
WIKIPEDIA = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


# --------------------------------------------------------------------------------------------------
# Kappa


def test_fleiss_kappa_wikipedia_example():
    n = 14
    p_i = ((WIKIPEDIA**2).sum(axis=1) - n) / (n * (n - 1))
    p_j = WIKIPEDIA.sum(axis=0) / WIKIPEDIA.sum()
    by_hand = (p_i.mean() - (p_j**2).sum()) / (1 - (p_j**2).sum())
    assert by_hand == pytest.approx(0.2099, abs=1e-4)
    assert fleiss_kappa(WIKIPEDIA) == pytest.approx(by_hand, abs=1e-12)
    assert fleiss_kappa_varying(WIKIPEDIA) == pytest.approx(by_hand, abs=1e-12)


def test_overall_kappa_is_the_weighted_mean_of_category_kappas():
    p = WIKIPEDIA.sum(axis=0) / WIKIPEDIA.sum()
    weights = p * (1 - p)
    kappas = np.array(category_kappas(WIKIPEDIA))
    assert (weights * kappas).sum() / weights.sum() == pytest.approx(fleiss_kappa(WIKIPEDIA), abs=1e-12)
    # Category 1 by hand (Fleiss 1971, eq. 11): 1 - Σ n_i1 (n - n_i1) / (N n (n - 1) p_1 q_1).
    column = WIKIPEDIA[:, 0]
    by_hand = 1 - (column * (14 - column)).sum() / (10 * 14 * 13 * p[0] * (1 - p[0]))
    assert kappas[0] == pytest.approx(by_hand, abs=1e-12)


def test_perfect_agreement_is_one():
    counts = np.array([[3, 0, 0], [0, 3, 0], [0, 0, 3], [3, 0, 0]])
    assert fleiss_kappa(counts) == pytest.approx(1.0)
    assert category_kappas(counts) == pytest.approx([1.0, 1.0, 1.0])


def test_chance_agreement_constructed_case_is_exactly_zero():
    # Two raters, every combination once: observed agreement 1/2 = chance agreement 1/2.
    counts = np.array([[2, 0], [1, 1], [1, 1], [0, 2]])
    assert fleiss_kappa(counts) == pytest.approx(0.0, abs=1e-12)
    assert fleiss_kappa_varying(counts) == pytest.approx(0.0, abs=1e-12)


def test_random_labels_give_kappa_near_zero():
    rng = np.random.default_rng(1)
    ratings = rng.integers(0, 3, size=(20_000, 4))
    counts = np.stack([(ratings == c).sum(axis=1) for c in range(3)], axis=1)
    assert abs(fleiss_kappa(counts)) < 0.01


def test_undefined_kappa_is_none():
    everyone_says_o = np.array([[2, 0], [3, 0]])
    assert fleiss_kappa(everyone_says_o) is None
    assert category_kappas(everyone_says_o) == [None, None]
    assert cohen_kappa(np.array([[5, 0], [0, 0]])) is None
    assert fleiss_kappa(np.zeros((0, 2))) is None


def test_unequal_raters_hand_computed():
    # Subject 1: three raters, all A; subject 2: two raters, A and B; subject 3: two raters, both B.
    # Pairs 6 + 2 + 2 = 10, disagreeing ordered pairs 2: P̄ = 0.8; p = (4/7, 3/7): P̄e = 25/49.
    counts = np.array([[3, 0], [1, 1], [0, 2]])
    expected = (0.8 - 25 / 49) / (1 - 25 / 49)
    assert expected == pytest.approx(0.591667, abs=1e-6)
    assert fleiss_kappa(counts) == pytest.approx(expected, abs=1e-12)
    assert category_kappas(counts) == pytest.approx([expected, expected])
    # A subject with a single rater carries no pair and changes nothing.
    assert fleiss_kappa(np.vstack([counts, [[1, 0]]])) == pytest.approx(expected, abs=1e-12)


def test_varying_raters_version_reduces_to_statsmodels_with_equal_raters():
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    rng = np.random.default_rng(7)
    for raters in (2, 3, 5):
        truth = rng.integers(0, 4, size=500)
        ratings = np.where(rng.random((500, raters)) < 0.7, truth[:, None], rng.integers(0, 4, size=(500, raters)))
        counts = np.stack([(ratings == c).sum(axis=1) for c in range(4)], axis=1)
        assert fleiss_kappa_varying(counts) == pytest.approx(statsmodels_fleiss(counts, method="fleiss"), abs=1e-12)


def _krippendorff_alpha_nominal(counts: np.ndarray) -> float:
    """Reference: Krippendorff's alpha for nominal data from the coincidence matrix (units with m ≥ 2)."""
    counts = counts[counts.sum(axis=1) >= 2].astype(float)
    m = counts.sum(axis=1)
    # o_ck = Σ_u (n_uc n_uk − [c = k] n_uc) / (m_u − 1)
    coincidence = np.einsum("uc,uk,u->ck", counts, counts, 1 / (m - 1)) - np.diag(
        (counts / (m - 1)[:, None]).sum(axis=0)
    )
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    observed = coincidence.sum() - np.trace(coincidence)
    return 1 - (n - 1) * observed / (n * n - (n_c**2).sum())


def test_varying_raters_close_to_krippendorff_alpha():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, size=6000)
    raters = rng.integers(2, 6, size=6000)  # 2 to 5 raters, independent of the labels
    counts = np.zeros((6000, 3), dtype=int)
    for i in range(6000):
        labels = np.where(rng.random(raters[i]) < 0.8, truth[i], rng.integers(0, 3, size=raters[i]))
        counts[i] = np.bincount(labels, minlength=3)
    assert fleiss_kappa(counts) == pytest.approx(_krippendorff_alpha_nominal(counts), abs=0.01)


def test_cohen_kappa_hand_example():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15: p_o = 0.7, p_e = 0.5, κ = 0.4.
    assert cohen_kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4, abs=1e-12)


def test_bootstrap_is_deterministic_and_contains_the_estimate():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, size=3000)
    ratings = np.where(rng.random((3000, 3)) < 0.85, truth[:, None], rng.integers(0, 3, size=(3000, 3)))
    counts = np.stack([(ratings == c).sum(axis=1) for c in range(3)], axis=1)
    unit = np.repeat(np.arange(60), 50)
    first = bootstrap_kappa(unit, counts, n=1000, seed=5)
    again = bootstrap_kappa(unit, counts, n=1000, seed=5)
    other = bootstrap_kappa(unit, counts, n=1000, seed=6)
    assert first == again
    assert first != other
    value = fleiss_kappa(counts)
    assert first.low < value < first.high
    assert first.high - first.low < 0.1
    for j, kappa in enumerate(category_kappas(counts)):
        assert first.category_low[j] <= kappa <= first.category_high[j]
    with pytest.raises(ValueError):
        bootstrap_kappa(unit, counts, confidence=1.0)


def test_bootstrap_of_one_document_is_the_estimate():
    counts = np.array([[3, 0], [1, 1], [0, 2]])
    boot = bootstrap_kappa(np.zeros(3, dtype=int), counts, n=50, seed=0)
    assert boot.low == pytest.approx(fleiss_kappa(counts)) and boot.high == pytest.approx(fleiss_kappa(counts))
    assert bootstrap_kappa(np.zeros(0, dtype=int), np.zeros((0, 2)), n=10) == BootstrapKappa(
        None, None, [None, None], [None, None], 10
    )


# --------------------------------------------------------------------------------------------------
# Readers: hand-written answers of three annotators in the three formats

SENTENCES = [
    # (id_document, sentence_index, doc_type, text, {annotator: [(start, end, label)]})
    (
        "D1",
        0,
        "letter",
        "Vu par le Dr Yann KERBRAT le 03/02/2021.",
        {
            "alice": [(13, 25, "DOCTOR"), (29, 39, "DATE")],
            "bob": [(13, 25, "DOCTOR"), (29, 39, "DATE")],
            "carol": [(18, 25, "PATIENT"), (29, 39, "DATE")],
        },
    ),
    (
        "D1",
        1,
        "letter",
        "Mme Jeanne LE GALL, née à Quimper.",
        {
            "alice": [(4, 18, "PATIENT"), (26, 33, "VILLE")],
            "bob": [(4, 18, "PATIENT")],
            "carol": [(4, 18, "PATIENT"), (26, 33, "VILLE")],
        },
    ),
    (
        "D2",
        0,
        "report",
        "Tél : 02 99 28 43 21, 35033 RENNES.",
        {
            "alice": [(6, 20, "PHONE"), (22, 27, "ZIP"), (28, 34, "VILLE")],
            "bob": [(6, 20, "PHONE"), (22, 27, "ZIP"), (28, 34, "VILLE")],
        },
    ),
    (
        "D2",
        1,
        "report",
        "Revu le 12 mars par le Pr Le Bihan.",
        {
            "alice": [(8, 15, "DATE"), (26, 34, "DOCTOR")],
            "bob": [(8, 15, "DATE"), (26, 34, "DOCTOR")],
            "carol": [(8, 15, "DATE")],
        },
    ),
]
ANNOTATORS = ("alice", "bob", "carol")


def _prodigy_line(doc, index, doc_type, text, spans, name, answer="accept", n=0):
    tokens = [
        {"text": text[s:e], "start": s, "end": e, "id": i, "ws": e < len(text) and text[e] == " "}
        for i, (s, e) in enumerate(tokenize(text))
    ]
    prodigy_spans = []
    for start, end, label in spans:
        covered = [t["id"] for t in tokens if t["start"] < end and t["end"] > start]
        prodigy_spans.append(
            {"start": start, "end": end, "token_start": covered[0], "token_end": covered[-1], "label": label}
        )
    return {
        "text": text,
        "tokens": tokens,
        "spans": prodigy_spans,
        "meta": {"id_document": doc, "id_patient": "P" + doc, "doc_type": doc_type, "sentence_index": index},
        "answer": answer,
        "_input_hash": hash((doc, index)) % 10_000,
        "_task_hash": n,
        "_annotator_id": f"deid-campaign-{name}",
        "_session_id": f"deid-campaign-{name}",
        "_view_id": "ner_manual",
        "_timestamp": 1_700_000_000 + n,
    }


@pytest.fixture
def prodigy_file(tmp_path) -> Path:
    lines = []
    for n, (doc, index, doc_type, text, answers) in enumerate(SENTENCES):
        for name, spans in answers.items():
            lines.append(_prodigy_line(doc, index, doc_type, text, spans, name, n=n))
    # Not annotations: a rejected and an ignored answer (counted, left out).
    lines.append(_prodigy_line("D3", 0, "letter", "Sans objet.", [], "alice", answer="reject", n=9))
    lines.append(_prodigy_line("D3", 1, "letter", "Rien.", [], "bob", answer="ignore", n=9))
    path = tmp_path / "deid-campaign.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def doccano_files(tmp_path) -> list[Path]:
    paths = []
    for name in ANNOTATORS:
        lines = []
        for n, (doc, index, doc_type, text, answers) in enumerate(SENTENCES):
            if name not in answers:
                continue
            spans = answers[name]
            record = {
                "id": n + 1,
                "text": text,
                "meta": {"id_document": doc, "doc_type": doc_type, "sentence_index": index},
            }
            if name == "bob":  # the newer export form
                record["entities"] = [
                    {"id": k, "start_offset": s, "end_offset": e, "label": label}
                    for k, (s, e, label) in enumerate(spans)
                ]
            else:
                record["label"] = [[s, e, label] for s, e, label in spans]
            lines.append(record)
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture
def labelstudio_file(tmp_path) -> Path:
    tasks = []
    for n, (doc, index, doc_type, text, answers) in enumerate(SENTENCES):
        annotations = []
        for name, spans in answers.items():
            result = [
                {
                    "id": f"r{k}",
                    "from_name": "label",
                    "to_name": "text",
                    "type": "labels",
                    "value": {"start": s, "end": e, "text": text[s:e], "labels": [label]},
                }
                for k, (s, e, label) in enumerate(spans)
            ]
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "completed_by": {"id": ANNOTATORS.index(name) + 1, "email": name},
                    "result": result,
                    "was_cancelled": False,
                }
            )
        tasks.append(
            {
                "id": 100 + n,
                "data": {"text": text, "meta": {"id_document": doc, "doc_type": doc_type, "sentence_index": index}},
                "annotations": annotations,
            }
        )
    tasks[0]["annotations"].append({"id": 99, "completed_by": 4, "result": [], "was_cancelled": True})
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def test_prodigy_reader_keeps_accepted_answers_and_strips_the_dataset(prodigy_file):
    annotations, report = read_answers([prodigy_file])
    assert {a.annotator for a in annotations} == set(ANNOTATORS)
    assert len(annotations) == sum(len(s[4]) for s in SENTENCES)
    assert report.skipped == {"prodigy: answer 'reject'": 1, "prodigy: answer 'ignore'": 1}
    first = next(a for a in annotations if a.annotator == "alice" and a.id_document == "D1" and a.sentence_index == 0)
    assert first.item_key == "D1#0" and first.doc_type == "letter" and first.id_patient == "PD1"
    assert first.tokens == tokenize(first.text)


def test_strip_dataset_rules():
    assert strip_dataset(["deid-campaign-alice", "deid-campaign-bob"]) == {
        "deid-campaign-alice": "alice",
        "deid-campaign-bob": "bob",
    }
    assert strip_dataset(["ds-anne", "ds-annie"]) == {"ds-anne": "anne", "ds-annie": "annie"}
    assert strip_dataset(["deid-jean-pierre"], dataset="deid") == {"deid-jean-pierre": "jean-pierre"}
    assert strip_dataset(["answers-jean-pierre"], stems=["answers"]) == {"answers-jean-pierre": "jean-pierre"}
    assert strip_dataset(["deid_x-alice"]) == {"deid_x-alice": "alice"}


def test_detect_format(prodigy_file, doccano_files, labelstudio_file):
    assert detect_format(prodigy_file) == "prodigy"
    assert all(detect_format(p) == "doccano" for p in doccano_files)
    assert detect_format(labelstudio_file) == "labelstudio"


def test_doccano_and_labelstudio_give_the_same_agreement_as_prodigy(prodigy_file, doccano_files, labelstudio_file):
    results = [
        agreement_from_files([prodigy_file], n_bootstrap=200),
        agreement_from_files(doccano_files, n_bootstrap=200),
        agreement_from_files([labelstudio_file], n_bootstrap=200),
    ]
    reference = results[0].to_dict()
    assert reference["fleiss_kappa"]["n_items"] == 4
    assert reference["fleiss_kappa"]["n_annotators"] == 3
    assert reference["fleiss_kappa"]["n_documents"] == 2
    assert 0.5 < reference["fleiss_kappa"]["value"] < 1
    for result in results[1:]:
        data = result.to_dict()
        for key in ("value", "ci_low", "ci_high", "n_items", "n_tokens", "n_annotators", "n_documents"):
            assert data["fleiss_kappa"][key] == pytest.approx(reference["fleiss_kappa"][key]), key
        assert list(data["per_label"]) == list(reference["per_label"])
        for label, values in reference["per_label"].items():
            assert data["per_label"][label] == pytest.approx(values), label
        assert data["per_pair"] == reference["per_pair"]
        assert data["per_doc_type"] == reference["per_doc_type"]
    assert results[2].read["skipped"] == {"labelstudio: annotation cancelled": 1}


def test_agreement_by_hand_on_the_small_campaign(prodigy_file):
    """Recompute the token matrix of the four sentences by hand-written rules and compare."""
    annotations, report = read_answers([prodigy_file])
    result = agreement(annotations, report, n_bootstrap=100)
    categories = ["O", "PATIENT", "DOCTOR", "DATE", "PHONE", "ZIP", "VILLE"]
    rows = []
    for _, _, _, text, answers in SENTENCES:
        for start, end in tokenize(text):
            row = [0] * len(categories)
            for spans in answers.values():
                label = next((lab for s, e, lab in spans if s < end and e > start), "O")
                row[categories.index(label)] += 1
            rows.append(row)
    counts = np.array(rows)
    assert result.n_tokens == len(rows)
    assert result.value == pytest.approx(fleiss_kappa_varying(counts), abs=1e-12)
    assert result.method.startswith("Fleiss, varying raters")  # sentence D2#0 has two annotators
    assert result.per_label["VILLE"]["kappa"] == pytest.approx(category_kappas(counts)[categories.index("VILLE")])
    pair = next(p for p in result.per_pair if p["annotators"] == ["alice", "bob"])
    # alice has 9 spans, bob 8, all of bob's are alice's: F1 = 2·8 / 17.
    assert pair["entities"] == {"a": 9, "b": 8, "matching": 8, "f1": pytest.approx(16 / 17)}
    assert pair["items"] == 4
    carol = next(p for p in result.per_pair if p["annotators"] == ["alice", "carol"])
    assert carol["items"] == 3  # carol did not answer D2#0
    assert set(result.per_doc_type) == {"letter", "report"}
    assert result.per_doc_type["report"]["kappa"] is not None


def test_single_annotator_items_and_duplicates_are_counted(tmp_path):
    lines = [
        _prodigy_line("D1", 0, "t", "Dr Martin.", [(3, 9, "DOCTOR")], "alice", n=1),
        _prodigy_line("D1", 0, "t", "Dr Martin.", [(3, 9, "PATIENT")], "bob", n=1),
        _prodigy_line("D1", 0, "t", "Dr Martin.", [(3, 9, "DOCTOR")], "bob", n=5),  # bob's revised answer
        _prodigy_line("D1", 1, "t", "Vu le 3 mai.", [], "alice", n=2),
    ]
    path = tmp_path / "x.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = agreement_from_files([path], n_bootstrap=10)
    assert result.value is None or result.value == pytest.approx(1.0)
    assert result.per_label["DOCTOR"]["kappa"] == pytest.approx(1.0)
    assert result.items == {"total": 2, "rated_by_2_or_more": 1, "single_annotator": 1}
    assert result.read["skipped"] == {"duplicate answer of one annotator on one item (latest kept)": 1}


# --------------------------------------------------------------------------------------------------
# Malformed input: errors name file and line, never the content


def test_malformed_json_line_names_file_and_line(prodigy_file):
    lines = prodigy_file.read_text(encoding="utf-8").splitlines()
    lines.insert(2, '{"text": "Mme SECRET", "answer": "accept", ')
    prodigy_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{prodigy_file.name}:3: malformed JSON") as error:
        read_answers([prodigy_file])
    assert "SECRET" not in str(error.value)


def test_span_outside_text_names_file_and_line(doccano_files):
    path = doccano_files[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["label"].append([0, 999, "PATIENT"])
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path.name}:2 \(id 2\): span \[0, 999\) outside the text"):
        read_answers([path], "doccano")


def test_errors_name_the_task_by_the_tool_s_own_id_through_the_cli(prodigy_file, doccano_files, labelstudio_file):
    """The id the annotator sees in the tool (Label Studio's task and annotation ids, doccano's example id,
    Prodigy's _task_hash) comes first; the position in the file follows."""
    tasks = json.loads(labelstudio_file.read_text(encoding="utf-8"))
    tasks[2]["annotations"][0]["result"] = "broken"
    labelstudio_file.write_text(json.dumps(tasks), encoding="utf-8")
    result = CliRunner().invoke(main, ["agreement", str(labelstudio_file)])
    assert result.exit_code == 1
    assert "task id 102 (task 3 of the file): annotation id 1: 'result' is not a list" in result.output

    lines = doccano_files[0].read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["label"].append([0, 999, "PATIENT"])
    lines[1] = json.dumps(record)
    doccano_files[0].write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["agreement", "--format", "doccano", str(doccano_files[0])])
    assert result.exit_code == 1 and f"{doccano_files[0].name}:2 (id {record['id']}): span [0, 999)" in result.output

    lines = prodigy_file.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["spans"] = "broken"
    lines[0] = json.dumps(record)
    prodigy_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["agreement", str(prodigy_file)])
    assert result.exit_code == 1
    assert f"{prodigy_file.name}:1 (_task_hash {record['_task_hash']}): 'spans' is not a list" in result.output


def test_labelstudio_errors_name_the_task(labelstudio_file):
    tasks = json.loads(labelstudio_file.read_text(encoding="utf-8"))
    del tasks[1]["data"]["text"]
    labelstudio_file.write_text(json.dumps(tasks), encoding="utf-8")
    with pytest.raises(
        InputError, match=rf"{labelstudio_file.name}: task id 101 \(task 2 of the file\): no 'text' string"
    ):
        read_answers([labelstudio_file])
    labelstudio_file.write_text('[\n{"data": \n', encoding="utf-8")
    with pytest.raises(InputError, match=rf"{labelstudio_file.name}:3: malformed JSON"):
        read_answers([labelstudio_file], "labelstudio")


def test_doccano_line_without_labels_is_an_error(tmp_path):
    path = tmp_path / "dan.jsonl"
    path.write_text('{"text": "a"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"dan.jsonl:1: no 'label', 'entities' or 'annotations'"):
        read_answers([path], "doccano")


# --------------------------------------------------------------------------------------------------
# Command


def test_agreement_command_writes_json_and_figure(tmp_path, prodigy_file):
    out_json, out_png = tmp_path / "agreement.json", tmp_path / "kappa.png"
    result = CliRunner().invoke(
        main, ["agreement", str(prodigy_file), "--json", str(out_json), "--figure", str(out_png), "--bootstrap", "200"]
    )
    assert result.exit_code == 0, result.output
    assert "Fleiss' kappa" in result.output and "bootstrap over documents" in result.output
    assert "not independent" in result.output
    assert "prodigy: answer 'reject'" in result.output
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert list(data)[:4] == ["fleiss_kappa", "per_label", "per_pair", "per_doc_type"]
    assert list(data["fleiss_kappa"])[:6] == ["value", "ci_low", "ci_high", "n_items", "n_tokens", "n_annotators"]
    assert data["fleiss_kappa"]["ci_low"] <= data["fleiss_kappa"]["value"] <= data["fleiss_kappa"]["ci_high"]
    assert len(data["per_pair"]) == len(list(combinations(ANNOTATORS, 2)))
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = CliRunner().invoke(
        main, ["agreement", str(prodigy_file), "--json", str(tmp_path / "again.json"), "--bootstrap", "200"]
    )
    assert again.exit_code == 0
    assert json.loads((tmp_path / "again.json").read_text(encoding="utf-8")) == data


def test_agreement_command_reports_malformed_input(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "x", "answer": "accept", "_annotator_id": "d-a"}\nnot json\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["agreement", str(path), "--format", "prodigy"])
    assert result.exit_code == 1
    assert "bad.jsonl:2: malformed JSON" in result.output
    assert "Traceback" not in result.output
