"""benchmarks/dp_downstream.py's pure parts: the gold carried through the audit, the stays a note writes, their
length; and, slow, the whole benchmark on a few generated notes.

The property tests apply random replacements to a random text as ``deidentify`` does (each input range replaced,
the rest copied) and check that :func:`map_spans` puts every untouched span on the same text and every replaced
span on its replacement.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "dp_downstream.py"
spec = importlib.util.spec_from_file_location("dp_downstream", SCRIPT)
downstream = importlib.util.module_from_spec(spec)
sys.modules["dp_downstream"] = downstream
spec.loader.exec_module(downstream)


def apply(text: str, replacements: list[tuple[int, int, str]]) -> tuple[str, list[tuple[int, int, int, int]]]:
    """The text with its ranges replaced, and the audit rows (input range, output range) of the replacements."""
    out, rows, last = [], [], 0
    for start, end, new in sorted(replacements):
        out.append(text[last:start])
        position = sum(map(len, out))
        out.append(new)
        rows.append((start, end, position, position + len(new)))
        last = end
    out.append(text[last:])
    return "".join(out), rows


@st.composite
def texts_with_replacements(draw):
    text = draw(st.text(alphabet="abcdé <>/", min_size=1, max_size=60))
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=8)))
    pairs = [(a, b) for a, b in zip(cuts[::2], cuts[1::2]) if a < b]
    replacements = [(a, b, draw(st.text(alphabet="XYZ", max_size=12))) for a, b in pairs]
    return text, replacements


@settings(deadline=None)  # a loaded machine: no per-example time limit
@given(texts_with_replacements(), st.data())
def test_a_span_of_untouched_text_keeps_its_text(case, data):
    text, replacements = case
    output, rows = apply(text, replacements)
    free = [i for i in range(len(text) + 1) if not any(a < i < b for a, b, _ in replacements)]
    start = data.draw(st.sampled_from(free))
    ends = [i for i in free if i >= start and not any(start <= a < i for a, b, _ in replacements)]
    end = data.draw(st.sampled_from(ends))
    ((out_start, out_end),) = downstream.map_spans([(start, end)], rows)
    assert output[out_start:out_end] == text[start:end]


@settings(deadline=None)
@given(texts_with_replacements())
def test_a_replaced_span_lands_on_its_replacement(case):
    text, replacements = case
    output, rows = apply(text, replacements)
    mapped = downstream.map_spans([(a, b) for a, b, _ in sorted(replacements)], rows)
    assert [output[s:e] for s, e in mapped] == [new for _, _, new in sorted(replacements)]


def test_a_span_around_replacements_takes_them_whole_and_one_cut_by_a_span_is_not_cut():
    text = "né le 03/02/2021 à Brest."
    output, rows = apply(text, [(6, 16, "14/05/2021"), (19, 24, "Quimperlé")])
    assert output == "né le 14/05/2021 à Quimperlé."
    ((start, end),) = downstream.map_spans([(3, 25)], rows)
    assert output[start:end] == "le 14/05/2021 à Quimperlé."
    ((start, end),) = downstream.map_spans([(8, 21)], rows)  # starts and ends inside the two replacements
    assert output[start:end] == "14/05/2021 à Quimperlé"


def test_overlapping_replacements_are_refused():
    with pytest.raises(ValueError, match="overlapping"):
        downstream.map_spans([(0, 1)], [(0, 5, 0, 3), (4, 8, 3, 6)])


def test_stays_are_pairs_of_dates_written_du_au():
    html = "<p>Hospitalisée du <b>03/02/2021</b> au 10/02/2021. Revue le 01/03/2021 au cabinet, puis le 02/03/2021.</p>"
    dates = [(html.index(d), html.index(d) + 10) for d in ("10/02/2021", "03/02/2021", "01/03/2021", "02/03/2021")]
    assert downstream.stay_pairs(html, dates) == [(1, 0)]
    assert downstream.length_of_stay("03/02/2021", "10/02/2021") == 7
    assert downstream.length_of_stay("mars 2021", "10/04/2021") is None  # not day-precise: no length


def test_the_carried_gold_follows_the_gold_row_for_row_and_flags_masks():
    gold = pd.DataFrame(
        {
            "id_document": ["b", "a", "a"],
            "label": ["DATE", "VILLE", "DATE"],
            "html_start": [0, 20, 3],
            "html_end": [10, 25, 13],
        }
    )
    audit = pd.DataFrame(
        {
            "id_document": ["a", "a", "b"],
            "html_start": [3, 20, 0],
            "html_end": [13, 25, 10],
            "out_start": [3, 16, 0],
            "out_end": [9, 25, 10],
            "replacement": ["[DATE]", "Quimperlé", "14/05/2021"],
            "fallback": ["unparsed_date->mask", None, None],
            "view": ["text"] * 3,
        }
    )
    carried = downstream.carried_gold(gold, audit)
    assert list(carried["text"]) == ["14/05/2021", "Quimperlé", "[DATE]"]
    assert list(carried["masked"]) == [False, False, True]
    assert list(zip(carried["html_start"], carried["html_end"])) == [(0, 10), (16, 25), (3, 9)]


def test_predictions_on_a_left_out_entity_are_left_out_with_it():
    spans = pd.DataFrame({"id_document": ["a", "a", "b"], "html_start": [0, 10, 0], "html_end": [5, 15, 5]})
    others = pd.DataFrame({"id_document": ["a"], "html_start": [4], "html_end": [10]})
    assert list(downstream.overlapping(spans, others)) == [True, False, False]


@pytest.mark.slow
def test_the_benchmark_runs_end_to_end_on_a_few_notes(tmp_path):
    out = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--workdir", str(tmp_path / "w"), "--notes", "12", "--epsilons", "1"]
        + ["--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(out.read_text())
    assert set(report["versions"]) == {"originals", "shift", "dp ε=1"}
    assert report["versions"]["shift"]["changes"]["gold_spans_not_one_replacement"] == 0
    assert report["versions"]["shift"]["changes"]["ages"] == 0  # the shift leaves ages as they are
    assert all(truth == got for truth, got in report["versions"]["shift"]["stays"])
    for entry in report["versions"].values():
        assert 0.5 < entry["scores_all"]["micro"]["f1"] <= 1
