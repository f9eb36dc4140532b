"""``deid-ds deidentify`` with gold spans leaves no identifier in any view of the file.

On the embedded sample and on generated corpora of every phrasing family (``deid-ds synth``: train,
heldout, unseen), each note also given identifiers of its patient in views a reader never sees (title,
comment, attributes, script, end-tag junk: appended after the body, so the gold offsets still hold),
each mode (mask, surrogate, and surrogate with ``--privacy dp``) is checked two ways:

* the residual-leak check's own definition: 0 values left;
* an independent brute check over the raw file (references decoded, soft hyphens and zero-width
  characters dropped, folded): no metadata value and no gold entity text of the note (3 characters or
  more) appears as a whole word anywhere in the file, outside the text the run wrote as replacements.

Inside the replacements, a surrogate must not coincide with any entity of its note either (a drawn city
that is also a city of the note, a doctor renamed with the patient's surname, an e-mail whose local part
keeps the original's words): the last test checks the surrogates' content strictly. DATE entities
without a day (``2017``, ``juillet 2022``) are left out of that check: shifting a date by days rightly
keeps its year and often its month.

The direct identifiers that are not one of the eight labels (NIR, INS, IPP, NDA, RPPS...: the exports
families write them, and each note is also given a NIR, an IPP, a stay number, an IBAN and a passport number
in its hidden views)
are checked the same two ways, with no span naming them: the leak check's count is 0, and, brute, no
number of eight characters or more that the input note holds after an identifier's cue (or with a valid
NIR key) is left anywhere in the output file, separators and markup ignored; nor is any valid NIR or
cued number left outside the replacements.
"""

from __future__ import annotations

import hashlib
import json
import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.deidentification.dates_shift import parse_date
from deid_ds.deidentification.identifiers import (
    KINDS,
    compact,
    find_identifiers,
    iban_check_digits,
    is_valid_nir,
    nir_key,
    note_identifiers,
)
from deid_ds.deidentification.regions import INVISIBLE_RE
from deid_ds.kb.normalize import fold_key
from deid_ds.model import PATIENT_FIELDS
from deid_ds.segmentation.html_text import html_to_text
from tests.conftest import REPO

pytestmark = pytest.mark.slow

CORPORA = ("sample", "train", "heldout", "unseen", "exports", "exports-heldout")
MODES = ("surrogate", "mask", "dp")
#: The options of each mode checked: ``dp`` is surrogate mode with ε·d-private dates, ages and durations.
MODE_OPTIONS = {
    "surrogate": ["--mode", "surrogate"],
    "mask": ["--mode", "mask"],
    "dp": ["--mode", "surrogate", "--privacy", "dp", "--epsilon", "0.3", "--dp-reference", "2026-11-27"],
}


def _numbers(row: pd.Series) -> tuple[str, str, str, str, str]:
    """A NIR (valid key), an IPP, a stay number, an IBAN (valid checksum) and a passport number of the note's
    patient, drawn from its ids."""
    seed = int(hashlib.sha256(str(row["id_patient"] or row["id_document"]).encode()).hexdigest()[:12], 16)
    body = f"{1 + seed % 2}{seed % 100:02d}{1 + seed % 12:02d}{1 + seed % 95:02d}{seed % 1000:03d}{seed % 997:03d}"
    nir = body + nir_key(body)
    bban = f"{seed % 10**12:012d}{seed % 10**11:011d}"
    iban = "FR" + iban_check_digits("FR", bban) + bban
    return (
        " ".join((nir[0], nir[1:3], nir[3:5], nir[5:7], nir[7:10], nir[10:13], nir[13:])),
        f"8{seed % 10**7:07d}",
        (f"23{seed % 10**7:07d}"),
        " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)),
        f"{seed % 100:02d}PA{seed % 10**5:05d}",
    )


def _hidden_views(row: pd.Series) -> str:
    """The patient's identifiers where no reader looks, written the way exports do (references, soft hyphen)."""
    first, last = row["firstname"] or "", row["lastname"] or ""
    shy = last[:2] + "&shy;" + last[2:] if len(last) > 3 else last
    values = " ".join(v for v in (row["phone"], row["city"]) if isinstance(v, str))
    nir, ipp, stay, iban, passport = _numbers(row)
    return (
        f"<title>{first} {last} - IPP {ipp}</title><!-- {last} {values} N° de séjour {stay} -->"
        f'<img alt="{first} {shy}" title="{row["city"] or ""}" data-patient="{last}" data-nir="{nir.replace(" ", "")}">'
        f'<meta name="ins" content="INS : {nir}"><a href="dossier.html?ipp={ipp}&amp;nda={stay}"></a>'
        f'<a href="mailto:{row["email"] or ""}"></a><script>var p = "{last}";</script><p>.</p {last}>'
        f'<div data-rib="{iban.replace(" ", "")}" title="Passeport n° {passport}"></div><p>Virement : {iban}</p>'
    )


def _corpus(name: str, base: Path) -> tuple[Path, Path]:
    if name == "sample":
        notes, gold = pd.read_parquet(REPO / "data" / "notes.parquet"), pd.read_parquet(REPO / "data" / "gold.parquet")
    else:
        from deid_ds.synth import SynthConfig, generate_corpus, write_corpus

        config = SynthConfig(notes=40, seed=7, phrasing=name, distractor_professionals=10, distractor_streets=1)
        paths = write_corpus(generate_corpus(config), base / "synth")
        notes, gold = pd.read_parquet(paths["notes"]), pd.read_parquet(paths["gold"])
    notes = notes.astype(dict.fromkeys(PATIENT_FIELDS, object)).where(notes.notna(), None)
    notes["html"] = [html + _hidden_views(row) for html, (_, row) in zip(notes["html"], notes.iterrows())]
    notes.to_parquet(base / "notes.parquet")
    gold.to_parquet(base / "gold.parquet")
    return base / "notes.parquet", base / "gold.parquet"


@pytest.fixture(scope="module", params=CORPORA)
def runs(request, tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp(request.param)
    notes, gold = _corpus(request.param, base)
    outputs = {}
    for mode in MODES:
        out = base / mode
        result = CliRunner().invoke(
            main,
            [
                "deidentify",
                str(notes),
                "--spans",
                str(gold),
                "--out",
                str(out),
                *MODE_OPTIONS[mode],
                "--key",
                "acceptance-test-key-0001",
                "--fail-on-leak",
                "--verbose",
                "-j",
                "1",
            ],
        )
        outputs[mode] = (result, out)
    return {"notes": pd.read_parquet(notes), "gold": pd.read_parquet(gold), "outputs": outputs}


def _readable(html: str) -> str:
    return fold_key(INVISIBLE_RE.sub("", unescape(html)))


def _without(html: str, ranges: list[tuple[int, int]]) -> str:
    """``html`` with the given output ranges (the replacements written) cut out, a separator in their place."""
    parts, cursor = [], 0
    for start, end in sorted(ranges):
        parts += (html[cursor:start], " \x00 ")
        cursor = max(cursor, end)
    parts.append(html[cursor:])
    return "".join(parts)


def _values(row: pd.Series, gold: pd.DataFrame, strict: bool, dates: bool = True) -> list[tuple[str, str]]:
    values = [(f, row[f]) for f in PATIENT_FIELDS if isinstance(row[f], str)]
    for label, text in zip(gold["label"], gold["text"]):
        if strict and label == "DATE" and (parse_date(text) is None or parse_date(text).kind != "full" or not dates):
            continue
        values.append((label, text))
    return [(what, value) for what, value in values if len(fold_key(value).replace(" ", "")) >= 3]


def _found(runs: dict, mode: str, *, inside_replacements: bool, dates: bool = True) -> list[tuple[str, str]]:
    """Identifiers of each note found in its output file (what and the note's id, never printed values)."""
    _, out = runs["outputs"][mode]
    written = pd.read_parquet(out / "notes.parquet").set_index("id_document")["html"]
    audit = pd.read_parquet(out / "audit.parquet")
    replaced = {doc: list(zip(rows["out_start"], rows["out_end"])) for doc, rows in audit.groupby("id_document")}
    gold = dict(list(runs["gold"].groupby("id_document")))
    found = []
    for _, row in runs["notes"].iterrows():
        html = written[row["id_document"]]
        if not inside_replacements:
            html = _without(html, replaced.get(row["id_document"], []))
        text = _readable(html)
        for what, value in _values(
            row, gold.get(row["id_document"], runs["gold"].iloc[:0]), strict=inside_replacements, dates=dates
        ):
            if re.search(r"(?<![\w])" + re.escape(fold_key(value)) + r"(?![\w])", text):
                found.append((row["id_document"], what))
    return found


@pytest.mark.parametrize("mode", MODES)
def test_no_identifier_left_by_the_leak_check(runs, mode):
    result, out = runs["outputs"][mode]
    assert result.exit_code == 0, result.output  # --fail-on-leak: 3 on any leak
    assert "residual-leak check: 0 value(s)" in result.output
    documents = pd.read_parquet(out / "documents.parquet")
    assert set(documents["status"]) == {"ok"} and len(documents) == len(runs["notes"])
    audit = pd.read_parquet(out / "audit.parquet")
    assert {"hidden", "attribute", "markup"} <= set(audit["view"])  # the planted views were de-identified


@pytest.mark.parametrize("mode", MODES)
def test_no_metadata_value_or_gold_text_in_any_view_outside_the_replacements(runs, mode):
    assert _found(runs, mode, inside_replacements=False) == []


def test_masks_write_no_identifier_at_all(runs):
    assert _found(runs, "mask", inside_replacements=True) == []


def test_surrogates_write_no_identifier_of_the_note(runs):
    assert _found(runs, "surrogate", inside_replacements=True) == []


def test_dp_surrogates_write_no_identifier_of_the_note_but_perhaps_another_of_its_dates(runs):
    """Names, places and numbers as in shift mode. A dp date is never its own original, but a few days of noise may
    land on another date the note writes (its surrogate written in the same form): a randomised value, not a leak,
    and the residual-leak check (the metadata birthdate) still finds none."""
    assert _found(runs, "dp", inside_replacements=True, dates=False) == []


def _identifiers(runs: dict) -> dict[str, dict[str, str]]:
    """The direct identifiers of each input note (compact value -> kind), every view read."""
    return {row["id_document"]: note_identifiers(html_to_text(row["html"])) for _, row in runs["notes"].iterrows()}


def test_the_inputs_hold_direct_identifiers(runs):
    found = _identifiers(runs)
    kinds = {kind for values in found.values() for kind in values.values()}
    assert {"NIR", "IPP", "NDA", "IBAN", "PIECE_IDENTITE"} <= kinds  # at least the planted ones, in every note
    assert all(len(values) >= 5 for values in found.values())


@pytest.mark.parametrize("mode", MODES)
def test_no_direct_identifier_left_in_any_view(runs, mode):
    _, out = runs["outputs"][mode]
    report = json.loads((out / "report.json").read_text())
    assert report["identifiers_per_kind"] and not [
        kind for kind, counts in report["leaks"]["per_field"].items() if kind in KINDS and counts["exact"]
    ]
    written = pd.read_parquet(out / "notes.parquet").set_index("id_document")["html"]
    audit = pd.read_parquet(out / "audit.parquet")
    replaced = {doc: list(zip(rows["out_start"], rows["out_end"])) for doc, rows in audit.groupby("id_document")}
    left = []
    for id_document, values in _identifiers(runs).items():
        html = written[id_document]
        squashed = re.sub(r"[^0-9A-Z]", "", INVISIBLE_RE.sub("", unescape(html)).upper())
        left += [(id_document, kind) for value, kind in values.items() if len(value) >= 8 and value in squashed]
        outside = INVISIBLE_RE.sub("", unescape(_without(html, replaced.get(id_document, []))))
        left += [(id_document, f"{i.kind} outside") for i in find_identifiers(outside)]
        runs_of_digits = (compact(m.group()) for m in re.finditer(r"\d(?:[ .\-]?\d){12,14}", outside))
        left += [(id_document, "valid NIR outside") for digits in runs_of_digits if is_valid_nir(digits)]
    assert left == []
