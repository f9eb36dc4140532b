"""``deid-ds deidentify`` removes the stay numbers after a bare ``Séjour``/``Venue``, the mutual's member numbers,
the identity documents' numbers and the IBANs in every view, and the leak check counts any left (through the CLI)."""

from __future__ import annotations

import json
import re
from html import unescape

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.deidentification.identifiers import is_valid_iban

IBAN = "FR76 3000 6000 0112 3456 7890 189"  # its checksum holds: found with no cue
HTML = (
    "<html><head><title>Séjour 22012345</title></head><body>"
    "<p>Mme <b>Jeanne</b> KERBRAT. Séjour 22012345. Venue : V2022-88123.</p>"
    "<p>Mutuelle : MGEN, n° d'adhérent : 448812345. CNI n° 880692310285. Passeport n° X4RTBPFW4.</p>"
    f"<p>Allocation versée sur le compte {IBAN} (virement mensuel).</p>"
    f'<p data-iban="{IBAN.replace(" ", "")}">Séjour de 3 semaines, venue aux urgences, passeport vaccinal.</p>'
    '<img alt="titre de séjour 1234567890" src="x.png"></body></html>'
)
ORIGINALS = ("22012345", "V202288123", "448812345", "880692310285", "X4RTBPFW4", IBAN.replace(" ", ""), "1234567890")


def _run(tmp_path, *options: str):
    notes, spans, out = tmp_path / "notes.parquet", tmp_path / "spans.parquet", tmp_path / "out"
    row = {"id_document": "d1", "id_patient": "p1", "html": HTML, "firstname": "Jeanne", "lastname": "Kerbrat"}
    pd.DataFrame([row | {"birthdate": "1957-08-12"}]).to_parquet(notes)
    start = HTML.index("Jeanne</b> KERBRAT")
    span = {"id_document": "d1", "label": "PATIENT", "html_start": start, "html_end": start + len("Jeanne</b> KERBRAT")}
    pd.DataFrame([span]).to_parquet(spans)
    args = ["deidentify", str(notes), "--spans", str(spans), "--out", str(out), "--key", "identifier-key-0123456789"]
    result = CliRunner().invoke(main, [*args, "-j", "1", "-q", *options])
    return result, out


def _squashed(html: str) -> str:
    """Every view of a file as one run of letters and digits: a number left anywhere shows whole."""
    return re.sub(r"[^0-9A-Z]", "", unescape(html).upper())


@pytest.mark.parametrize("mode", ["mask", "surrogate"])
def test_no_stay_member_document_or_bank_number_is_left_in_any_view(tmp_path, mode):
    result, out = _run(tmp_path, "--mode", mode, "--fail-on-leak", "--verbose")
    assert result.exit_code == 0, result.output
    (html,) = pd.read_parquet(out / "notes.parquet")["html"]
    assert [value for value in ORIGINALS if value in _squashed(html)] == []
    assert "Séjour de 3 semaines, venue aux urgences, passeport vaccinal." in html  # words without a number stay
    report = json.loads((out / "report.json").read_text())
    assert report["identifiers_per_kind"] == {"IBAN": 2, "MUTUELLE": 1, "NDA": 3, "PIECE_IDENTITE": 3}
    assert "direct identifiers (NIR, IPP...) left: 0" in result.output
    if mode == "mask":
        for masked in ("<title>Séjour [NDA]</title>", "Venue : [NDA]", "adhérent : [MUTUELLE]"):
            assert masked in html
        assert "CNI n° [PIECE_IDENTITE]" in html and 'alt="titre de séjour [PIECE_IDENTITE]"' in html
        assert "compte [IBAN] (virement" in html and 'data-iban="[IBAN]"' in html
    else:
        text_iban = re.search(r"compte (.+?) \(virement", html).group(1)
        assert is_valid_iban(text_iban) and text_iban[:2] == "FR" and len(text_iban) == len(IBAN)
        assert re.search(r'data-iban="(\w+)"', html).group(1) == text_iban.replace(" ", "")  # one IBAN, one surrogate


def test_kept_with_keep_identifiers_the_leak_check_counts_each_kind(tmp_path):
    result, out = _run(tmp_path, "--mode", "mask", "--keep-identifiers", "--verbose")
    assert result.exit_code == 0, result.output
    leaks = json.loads((out / "report.json").read_text())["leaks"]["per_field"]
    counted = {kind: leaks[kind]["exact"] for kind in ("NDA", "MUTUELLE", "PIECE_IDENTITE", "IBAN")}
    assert counted == {"NDA": 3, "MUTUELLE": 1, "PIECE_IDENTITE": 3, "IBAN": 2}
    (tmp_path / "again").mkdir()
    result, out = _run(tmp_path / "again", "--mode", "mask", "--keep-identifiers", "--fail-on-leak")
    assert result.exit_code == 3 and not out.exists()
