"""``deid-ds deidentify`` removes the direct identifiers no span names (NIR, INS, IPP, NDA, RPPS...) in every
view, counts them per kind, keeps FINESS/SIRET, and the leak check reports any left (through the CLI)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.deidentification.identifiers import is_valid_nir, is_valid_rpps, nir_key

NIR = "2 57 08 44 227 896 " + nir_key("2570844227896")
HEAD = "<html><head><title>IPP 26752240</title></head><body>"
BODY = (
    "<p>Mme <b>Jeanne</b> KERBRAT, IPP : 26752240, NIR : {nir}</p>"
    '<p title="N° de séjour : 221234567">Séjour n° 221234567</p>'
    "<table><tr><td>N° d'examen</td><td>B21-89899</td></tr></table>"
    "<p>Dr LE GALL (RPPS 10224953545), CHU FINESS 290000017, SIRET 26290159611234.</p>"
    '<img alt="INS {nir}" src="x.png"></body></html>'
)


def _note(id_document: str, id_patient: str | None, metadata: bool = True) -> dict:
    html = HEAD + BODY.format(nir=NIR)
    row = {"id_document": id_document, "id_patient": id_patient, "html": html}
    if metadata:
        row |= {"firstname": "Jeanne", "lastname": "Kerbrat", "birthdate": "1957-08-12"}
    else:
        row |= {"firstname": None, "lastname": None, "birthdate": None}
    return row


def _spans(rows: list[dict]) -> pd.DataFrame:
    spans = []
    for row in rows:
        html = row["html"]
        for text, label in (("Jeanne</b> KERBRAT", "PATIENT"), ("LE GALL", "DOCTOR")):
            start = html.index(text)
            spans.append(
                {"id_document": row["id_document"], "label": label, "html_start": start, "html_end": start + len(text)}
            )
    return pd.DataFrame(spans)


def _run(tmp_path, rows: list[dict], *options: str):
    notes, spans, out = tmp_path / "notes.parquet", tmp_path / "spans.parquet", tmp_path / "out"
    pd.DataFrame(rows).to_parquet(notes)
    _spans(rows).to_parquet(spans)
    args = ["deidentify", str(notes), "--spans", str(spans), "--out", str(out), "--key", "identifier-key-0123456789"]
    result = CliRunner().invoke(main, [*args, "-j", "1", "-q", *options])
    return result, out


ORIGINALS = ("26752240", "221234567", "B21-89899", "10224953545", NIR, NIR.replace(" ", ""), "KERBRAT")


def _written(out) -> list[str]:
    return pd.read_parquet(out / "notes.parquet")["html"].tolist()


def test_mask_mode_masks_every_identifier_in_every_view_and_keeps_finess_and_siret(tmp_path):
    result, out = _run(tmp_path, [_note("d1", "p1")], "--mode", "mask", "--fail-on-leak", "--verbose")
    assert result.exit_code == 0, result.output
    (html,) = _written(out)
    assert not [value for value in ORIGINALS if value in html]
    for mask in ("<title>IPP [IPP]</title>", "IPP : [IPP]", "NIR : [NIR]", 'title="N° de séjour : [NDA]"', "n° [NDA]"):
        assert mask in html
    assert "<td>[EXAMEN]</td>" in html and "(RPPS [RPPS])" in html and 'alt="INS [INS]"' in html
    assert "FINESS 290000017" in html and "SIRET 26290159611234" in html
    audit = pd.read_parquet(out / "audit.parquet")
    kinds = audit[audit["source"].str.contains("identifier")]
    assert set(kinds["label"]) == {"IPP", "NIR", "NDA", "EXAMEN", "RPPS", "INS"}
    assert {"text", "hidden", "attribute"} <= set(kinds["view"])
    report = json.loads((out / "report.json").read_text())
    assert report["identifiers_per_kind"] == {"EXAMEN": 1, "INS": 1, "IPP": 2, "NDA": 2, "NIR": 1, "RPPS": 1}
    assert set(report["replacements_per_label"]) == {"PATIENT", "DOCTOR"}  # the eight labels only
    assert report["replacements"] == len(audit)
    assert "direct identifiers (NIR, IPP...)" in result.output and "NDA" in result.output
    assert "direct identifiers (NIR, IPP...) left: 0" in result.output


def test_surrogate_mode_writes_valid_keyed_numbers_of_the_same_shape(tmp_path):
    rows = [_note("d1", "p1"), _note("d2", "p1"), _note("d3", "p2")]
    result, out = _run(tmp_path, rows, "--mode", "surrogate", "--fail-on-leak", "--audit-originals")
    assert result.exit_code == 0, result.output
    htmls = _written(out)
    assert not [value for html in htmls for value in ORIGINALS if value in html]
    audit = pd.read_parquet(out / "audit.parquet")
    nirs = audit[(audit["label"] == "NIR") & (audit["view"] == "text")]
    assert all(is_valid_nir(new) and new != old for new, old in zip(nirs["replacement"], nirs["original"]))
    assert all(len(new) == len(NIR) and new[0] == "2" for new in nirs["replacement"])  # same sex, same layout
    by_patient = nirs.groupby("id_patient")["replacement"].agg(set)
    assert len(by_patient["p1"]) == 1 and by_patient["p1"] != by_patient["p2"]  # keyed by patient
    rpps = set(audit.loc[audit["label"] == "RPPS", "replacement"])
    assert len(rpps) == 1 and is_valid_rpps(rpps.pop())  # a professional's: the same in every patient's notes
    ipps = audit[audit["label"] == "IPP"]
    assert all(len(new) == 8 and new.isdigit() for new in ipps["replacement"])
    assert ipps.groupby("id_patient")["replacement"].nunique().to_dict() == {"p1": 1, "p2": 1}


def test_keep_identifiers_warns_keeps_them_and_the_leak_check_counts_them_even_without_metadata(tmp_path):
    result, out = _run(tmp_path, [_note("d1", None, metadata=False)], "--mode", "mask", "--keep-identifiers", "-v")
    assert result.exit_code == 0, result.output
    assert "not checked (1 document(s) without metadata); direct identifiers (NIR, IPP...) left: 8" in result.output
    assert "WARNING --keep-identifiers" in result.output
    (html,) = _written(out)
    assert "IPP : 26752240" in html and NIR in html
    documents = pd.read_parquet(out / "documents.parquet")
    assert documents["n_leaks"].iloc[0] > 0  # not "not checked": the identifiers are checked without metadata
    leaks = json.loads((out / "report.json").read_text())["leaks"]["per_field"]
    assert leaks["IPP"]["exact"] == 2 and leaks["NIR"]["exact"] == 2  # the text's and the alt's


def test_fail_on_leak_refuses_an_output_that_keeps_identifiers(tmp_path):
    result, out = _run(tmp_path, [_note("d1", "p1")], "--mode", "mask", "--keep-identifiers", "--fail-on-leak")
    assert result.exit_code == 3 and not out.exists()


@pytest.mark.parametrize("mode", ["mask", "surrogate"])
def test_an_identifier_a_span_overlaps_is_masked_outside_the_span(tmp_path, mode):
    row = _note("d1", "p1")
    notes, spans, out = tmp_path / "notes.parquet", tmp_path / "spans.parquet", tmp_path / "out"
    pd.DataFrame([row]).to_parquet(notes)
    start = row["html"].index("IPP : 26752240") + 9  # a span over the end of the IPP (a model's mistake)
    span = {"id_document": "d1", "label": "PHONE", "html_start": start, "html_end": start + 5}
    pd.DataFrame([span]).to_parquet(spans)
    args = ["deidentify", str(notes), "--spans", str(spans), "--out", str(out), "--mode", mode]
    result = CliRunner().invoke(main, [*args, "--key", "identifier-key-0123456789", "-j", "1", "-q"])
    assert result.exit_code == 0, result.output
    (html,) = _written(out)
    assert "26752240" not in html and "IPP : [IPP]" in html  # "267" masked, "52240" the span's replacement


def test_an_attribute_named_by_its_cue_is_read_as_one(tmp_path):
    row = _note("d1", "p1")
    row["html"] = row["html"].replace("<body>", "<body><div data-ipp=\"80092945\" data-nda='2112345678'>")
    result, out = _run(tmp_path, [row], "--mode", "mask", "--fail-on-leak")
    assert result.exit_code == 0, result.output
    (html,) = _written(out)
    assert "80092945" not in html and "2112345678" not in html
    assert "<div data-ipp=\"[IPP]\" data-nda='[NDA]'>" in html
