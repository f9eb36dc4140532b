"""Every spelling of an identifier, through ``deid-ds deidentify``: decomposed (NFD) accents, fullwidth
letters, percent-encoding and base64 ``data:`` URLs, the birthdate as the labeller reads it, metadata in the
types warehouses export, and surrogates that stay one per person or place whatever the spelling."""

from __future__ import annotations

import base64
import json
import re
import unicodedata

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.deidentification.keyed import KEY_ENV

KEY = "spellings-test-key-0123456789"
SIGNATURE = "<p>Dr Le Goff</p>"
NFD = lambda text: unicodedata.normalize("NFD", text)  # noqa: E731
PATIENT = {
    "firstname": "Hélène",
    "lastname": "KERDRAON",
    "birthdate": "1961-04-12",
    "zip": "29350",
    "city": "Moëlan-sur-Mer",
    "phone": "02 98 12 34 56",
}


def run(tmp_path, notes: list[dict], spans: list[tuple[str, str, str]] = (), *options: str):
    """``deidentify`` on ``notes`` (rows: id_document, html, metadata...) with spans ``(id_document, label,
    text)`` located by their text; returns the output html per note, the documents rows, the report and the
    command's result. A note given no span here is signed by a doctor the spans name: ``deidentify`` refuses
    spans that leave the notes without any (the residual-leak check is what these notes are about)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    named = {id_document for id_document, _, _ in spans}
    notes = [row if row["id_document"] in named else {**row, "html": row["html"] + SIGNATURE} for row in notes]
    spans = [*spans, *((row["id_document"], "DOCTOR", "Le Goff") for row in notes if row["id_document"] not in named)]
    notes_path, spans_path, out = tmp_path / "notes.parquet", tmp_path / "spans.parquet", tmp_path / "out"
    pd.DataFrame(notes).to_parquet(notes_path)
    html = {row["id_document"]: row["html"] for row in notes}
    rows = []
    taken: dict[str, list[range]] = {}
    for id_document, label, text in spans:  # the first occurrence in the text no earlier span covers
        start = html[id_document].index(text, html[id_document].index(">"))
        while any(start in r or start + len(text) - 1 in r for r in taken.get(id_document, ())):
            start = html[id_document].index(text, start + 1)
        taken.setdefault(id_document, []).append(range(start, start + len(text)))
        rows.append(
            {
                "id_document": id_document,
                "label": label,
                "html_start": start,
                "html_end": start + len(text),
                "text": text,
            }
        )
    columns = ["id_document", "label", "html_start", "html_end", "text"]
    pd.DataFrame(rows, columns=columns).astype({"html_start": "int64", "html_end": "int64"}).to_parquet(spans_path)
    args = ["deidentify", str(notes_path), "--spans", str(spans_path), "--out", str(out), "-j", "1", *options]
    result = CliRunner().invoke(main, args, env={KEY_ENV: KEY})
    assert result.exit_code == 0, result.output
    written = pd.read_parquet(out / "notes.parquet")
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    report = json.loads((out / "report.json").read_text())
    return dict(zip(written["id_document"], written["html"])), documents, report, result


def note(id_document: str, html: str, patient: str = "P1", **metadata) -> dict:
    return {"id_document": id_document, "id_patient": patient, "html": html, **{**PATIENT, **metadata}}


def fold_text(text: str) -> str:
    """Compatibility forms read, accents removed, lower case: the test's own reading (not the code's)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def holds(html: str, value: str) -> bool:
    """Whether ``value`` is in ``html`` as words, read folded (case, NFD accents and fullwidth ignored)."""
    words = r"[\s\-]+".join(map(re.escape, fold_text(value).split()))
    return re.search(rf"(?<![\w]){words}(?![\w])", fold_text(html)) is not None


# ------------------------------------------------------------------------------------- the residual-leak check


@pytest.mark.parametrize(
    "written",
    [
        "né le 12041961",
        "né le 19610412",
        "né le 12-avr-1961",
        "né le 12 AVR 1961",
        "né le 12avr.1961",
        "né le 12.04.61",
    ],
)
def test_the_check_finds_the_birthdate_in_every_form_the_labeller_reads(tmp_path, written):
    _, documents, report, _ = run(tmp_path, [note("d1", f"<p>Patient {written}.</p>")])
    assert documents.loc["d1", "n_leaks"] == 1 and documents.loc["d1", "leak_check"] == "checked"
    assert report["leaks"]["per_field"]["birthdate"]["exact"] == 1


@pytest.mark.parametrize(
    ("html", "view"),
    [
        ("<p>Patiente ＫＥＲＤＲＡＯＮ, vue ce jour.</p>", "text"),  # fullwidth letters
        (f"<p>Patiente {NFD('Hélène')}, vue ce jour.</p>", "text"),  # NFD note, NFC metadata
        ('<p>Vue ce jour.</p><a href="https://dossier.example/?nom=Kerdr%61on">dossier</a>', "attribute"),
        (
            '<p>Vue ce jour.</p><img alt="" src="data:text/plain;base64,'
            + base64.b64encode(b"Mme Kerdraon").decode()
            + '">',
            "attribute",
        ),
    ],
)
def test_the_check_reads_names_in_every_spelling(tmp_path, html, view):
    _, documents, report, _ = run(tmp_path, [note("d1", html)], (), "--hidden", "keep")
    assert documents.loc["d1", "n_leaks"] == 1
    assert report["leaks"]["per_view"][view] == 1


def test_nfd_metadata_is_found_in_an_nfc_note(tmp_path):
    html = "<p>Mme Léger, née à Moëlan-sur-Mer.</p>"
    _, documents, report, _ = run(
        tmp_path, [note("d1", html, lastname=NFD("LÉGER"), city=NFD("Moëlan-sur-Mer"))], (), "--hidden", "keep"
    )
    assert documents.loc["d1", "n_leaks"] == 2
    assert report["leaks"]["per_field"]["lastname"]["exact"] == 1 and report["leaks"]["per_field"]["city"]["exact"] == 1


# ------------------------------------------------------------------------------------------ the other views


def test_nfd_percent_encoded_and_data_url_names_are_rewritten_in_the_attributes(tmp_path):
    name = NFD("Hélène KERDRAON")
    payload = base64.b64encode("Mme Hélène Kerdraon, 29350 Moëlan-sur-Mer".encode()).decode()
    html = (
        f'<p title="Dossier de {name}">Patiente {name}, vue ce jour.</p>'
        '<a href="https://dossier.example/?nom=Kerdr%61on&amp;prenom=H%C3%A9l%C3%A8ne">dossier</a>'
        f'<img alt="" src="data:text/plain;base64,{payload}">'
    )
    for mode in ("mask", "surrogate"):
        written, documents, _, _ = run(tmp_path / mode, [note("d1", html)], [("d1", "PATIENT", name)], "--mode", mode)
        out = written["d1"]
        assert documents.loc["d1", "n_leaks"] == 0, out
        decoded = base64.b64decode(re.search(r"base64,([^\"]+)", out).group(1)).decode()
        for value in ("Kerdraon", "Hélène", "Moëlan-sur-Mer", "29350"):
            assert not holds(out, value) and not holds(decoded, value), (mode, value, out, decoded)
        assert "Kerdr%61on" not in out and "H%C3%A9l%C3%A8ne" not in out
        assert out.count('href="https://dossier.example/?nom=') == 1  # the link is still a link


# --------------------------------------------------------------------------------- metadata as exported


def test_metadata_in_the_types_warehouses_export_is_read(tmp_path):
    html = "<p>Née le 12/04/1961, domiciliée 29350 Moëlan-sur-Mer, tél 02 98 12 34 56.</p>"
    row = note("d1", html, birthdate=19610412, zip=29350.0, phone=298123456)
    _, documents, report, _ = run(tmp_path, [row], (), "--hidden", "keep")
    fields = report["leaks"]["per_field"]
    assert (fields["birthdate"]["exact"], fields["zip"]["exact"], fields["phone"]["exact"]) == (1, 1, 1)
    assert documents.loc["d1", "leak_check"] == "checked"


@pytest.mark.parametrize("birthdate", ["12/04/1961", "1961-04-12T00:00:00", "12041961", "19610412.0"])
def test_birthdates_in_text_forms_are_read(tmp_path, birthdate):
    _, documents, _, _ = run(tmp_path, [note("d1", "<p>Née le 12 avril 1961.</p>", birthdate=birthdate)])
    assert documents.loc["d1", "n_leaks"] == 1 and documents.loc["d1", "leak_check"] == "checked"


def test_metadata_that_cannot_be_read_is_reported_never_zero_left(tmp_path):
    notes = [
        note("d1", "<p>Vue ce jour.</p>", birthdate="12 III 61"),
        note("d2", "<p>Vue ce jour.</p>", patient="P2", zip="29350-9"),
        note("d3", "<p>Vue ce jour.</p>", patient="P3"),
    ]
    _, documents, report, result = run(tmp_path, notes)
    assert documents["leak_check"].tolist() == ["metadata unreadable", "metadata unreadable", "checked"]
    assert report["documents_metadata_unreadable"] == 2
    assert report["leaks"]["metadata_unreadable"] == {"birthdate": 1, "zip": 1}
    assert "2 document(s) with patient metadata that could not be read (birthdate, zip" in result.output
    assert "metadata unreadable in 2 document(s)" in result.output


# ---------------------------------------------------------------------------------------------- surrogates


@pytest.mark.parametrize("written", ["LE DU Yann", "Yann LE DU", "Le Du Yann"])
def test_a_surname_of_short_words_never_comes_back(tmp_path, written):
    html = f"<p>Patient {written}, vu ce jour. M. LE DU va bien.</p>"
    written_notes, documents, _, _ = run(
        tmp_path,
        [note("d1", html, firstname="Yann", lastname="LE DU")],
        [("d1", "PATIENT", written), ("d1", "PATIENT", "LE DU")],
        "--mode",
        "surrogate",
    )
    out = written_notes["d1"]
    assert not holds(out, "le du") and not holds(out, "yann"), out
    assert documents.loc["d1", "n_leaks"] == 0


def test_one_commune_written_three_ways_gets_one_surrogate_and_its_postcode_one(tmp_path):
    spellings = ["MOELAN SUR MER", "Moelan sur Mer", "Moëlan-sur-Mer"]
    notes = [note(f"d{i}", f"<p>Domicile : 29350 {town}.</p>") for i, town in enumerate(spellings)]
    notes.append(note("d3", "<p>Code postal 29350.</p>"))
    spans = [(f"d{i}", "VILLE", town) for i, town in enumerate(spellings)]
    spans += [(f"d{i}", "ZIP", "29350") for i in range(4)]
    written, _, _, _ = run(tmp_path, notes, spans, "--mode", "surrogate")
    towns = {fold_text(re.search(r"\d{5} ([^.]+)\.", written[f"d{i}"]).group(1)).replace("-", " ") for i in range(3)}
    postcodes = {re.search(r"(\d{5})", html).group(1) for html in written.values()}
    assert len(towns) == 1 and len(postcodes) == 1 and postcodes != {"29350"}, written


def test_a_doctor_keeps_one_given_name_across_patients(tmp_path):
    notes = [
        note("a", "<p>Vue par Mme Camille DURAND.</p>", patient="A"),
        note("b", "<p>Vue par le Dr Camille DURAND.</p>", patient="B"),
        note("c", "<p>Camille DURAND, interne.</p>", patient="C"),
    ]
    spans = [(d, "DOCTOR", "Camille DURAND") for d in "abc"]
    written, _, _, _ = run(tmp_path, notes, spans, "--mode", "surrogate")
    names = {re.search(r"([A-ZÀ-Ý][\w\-]+ [A-Z\-]{2,})", html).group(1) for html in written.values()}
    assert len(names) == 1 and "Camille" not in names.pop(), written


def test_initials_of_one_person_stay_the_same_across_a_patient_s_notes(tmp_path):
    notes = [
        note("d1", "<p>Son fils Jean DUPONT est présent.</p>"),
        note("d2", "<p>Appel de J. DUPONT ce matin.</p>"),
    ]
    spans = [("d1", "PATIENT", "Jean DUPONT"), ("d2", "PATIENT", "J. DUPONT")]
    written, _, _, _ = run(tmp_path, notes, spans, "--mode", "surrogate")
    first, last = re.search(r"fils (\S+) (\S+) est", written["d1"]).groups()
    assert re.search(r"de (\S)\. (\S+) ce", written["d2"]).groups() == (first[0], last), written
