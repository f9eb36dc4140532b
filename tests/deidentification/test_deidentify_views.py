"""Every view of the file: de-identified beyond the visible text, checked everywhere, and the run's outputs
(``--hidden``, ``--fail-on-leak``, ``--keep-column``, "not checked") through the CLI."""

from __future__ import annotations

import json
import re
from html import unescape
from html.parser import HTMLParser

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.deidentification.context import Context, scope_of
from deid_ds.deidentification.document import SpanIn, deidentify_document
from deid_ds.deidentification.keyed import resolve_key
from deid_ds.deidentification.leaks import find_leaks
from deid_ds.deidentification.pools import load_pools
from deid_ds.deidentification.regions import INVISIBLE_RE
from deid_ds.io.output_dir import write_marker
from deid_ds.kb.normalize import fold_key
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.html_text import html_to_text

PATIENT = PatientMetadata(
    firstname="Jeanne",
    lastname="Kerbrat",
    birthdate="1957-08-12",
    phone="06 12 34 56 78",
    email="jeanne.kerbrat@orange.fr",
    city="Plouzané",
)
BODY = "<p>Mme <b>Jeanne</b> KERBRAT, vue ce jour.</p>"

#: One place outside the visible text per case, each holding an identifier of PATIENT.
VIEWS = {
    "title": "<title>CR Kerbrat</title>",
    "comment": "<!-- dicté par J. Kerbrat -->",
    "meta content": '<meta name="patient" content="KERBRAT Jeanne">',
    "alt": '<img src="x.png" alt="Photo Jeanne">',
    "title attribute": '<span title="Mme Kerbrat">.</span>',
    "mailto": '<a href="mailto:jeanne.kerbrat@orange.fr">écrire</a>',
    "src": '<img src="https://photos.example.fr/kerbrat.png">',
    "data-*": '<div data-birthdate="12/08/1957" data-phone="0612345678">.</div>',
    "unquoted attribute": "<span title=Kerbrat>.</span>",
    "script": '<script>var patient = "Kerbrat";</script>',
    "style": '<style>.x:after { content: "Plouzané" }</style>',
    "doctype": '<!DOCTYPE html SYSTEM "kerbrat.dtd">',
    "processing instruction": '<?xml-stylesheet href="kerbrat.xsl"?>',
    "end-tag junk": "<p>.</p Kerbrat>",
    "reference in an attribute": '<span title="Ker&#98;rat">.</span>',
    "soft hyphen in an attribute": '<span title="Ker&shy;brat">.</span>',
}


def _deidentify(html: str, mode: str = "surrogate", hidden: str = "deidentify"):
    start = html.index("Jeanne</b>")
    spans = [SpanIn("PATIENT", start, html.index(", vue"))]
    ctx = Context(resolve_key("k-test-key-not-secret"), load_pools(None), scope_of("P1", "d1"), PATIENT, False)
    return deidentify_document(html_to_text(html), spans, ctx, mode, hidden=hidden)


def readable(html: str) -> str:
    """The whole file as a person would search it: references decoded, invisible characters dropped, folded."""
    return fold_key(INVISIBLE_RE.sub("", unescape(html)))


def _identifiers_in(html: str) -> list[str]:
    text = readable(html)
    values = ["jeanne", "kerbrat", "12/08/1957", "0612345678", "06 12 34 56 78", "jeanne.kerbrat@orange.fr", "plouzane"]
    return [v for v in values if re.search(r"(?<![\w])" + re.escape(v) + r"(?![\w])", text)]


class _Structure(HTMLParser):
    """Tag names, attribute names and the number of comments: what de-identification must not change."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list = []

    def handle_starttag(self, tag, attrs):
        self.items.append((tag, tuple(name for name, _ in attrs)))

    def handle_endtag(self, tag):
        self.items.append(("/" + tag,))

    def handle_comment(self, data):
        self.items.append(("comment",))


def _structure(html: str) -> list:
    parser = _Structure()
    parser.feed(html)
    parser.close()
    return parser.items


@pytest.mark.parametrize("where", list(VIEWS))
def test_the_leak_check_finds_an_identifier_in_every_view(where):
    html = f"<html><head></head><body>{VIEWS[where]}<p>Rien.</p></body></html>"
    assert find_leaks(html, PATIENT).total > 0
    assert find_leaks("<html><body><p>Rien.</p></body></html>", PATIENT).total == 0


@pytest.mark.parametrize(
    "html",
    [
        "<p>Mme Ker&shy;brat</p>",
        "<p>Mme Ker\u00adbrat</p>",
        "<p>Mme Ker\u200bbrat</p>",
        "<p>Mme Ker&#8203;brat</p>",
        "<p>Jeanne\u200bKerbrat</p>",
        '<p data-kerbrat="1">.</p>',
    ],
)
def test_the_leak_check_reads_through_invisible_characters_and_attribute_names(html):
    assert find_leaks(html, PATIENT).per_field["lastname"]["exact"] == 1


def test_a_patient_without_metadata_is_not_checked_rather_than_clean():
    assert not find_leaks("<p>Mme Kerbrat</p>", PatientMetadata()).checked
    assert find_leaks("<p>Mme Kerbrat</p>", PATIENT).checked


@pytest.mark.parametrize("mode", ["surrogate", "mask"])
@pytest.mark.parametrize("where", list(VIEWS))
def test_every_view_is_deidentified_and_the_structure_kept(where, mode):
    html = f"<html><head></head><body>{VIEWS[where]}{BODY}</body></html>"
    outcome = _deidentify(html, mode)
    assert outcome.error is None
    assert _identifiers_in(outcome.html) == []
    assert find_leaks(outcome.html, PATIENT).total == 0
    assert _structure(outcome.html) == _structure(html)  # same tags, same attributes, same comments
    assert outcome.html.endswith("</body></html>") and "vue ce jour" in outcome.html


def test_a_name_in_the_views_gets_the_replacement_it_has_in_the_text():
    html = (
        '<html><head><title>Jeanne KERBRAT</title></head><body><img alt="Kerbrat">'
        "<p>Mme <b>Jeanne</b> KERBRAT, vue ce jour.</p>"
    )
    outcome = _deidentify(html)
    text_row = next(row for row in outcome.audit if row["view"] == "text")
    first, last = text_row["replacement"].split()
    assert f"<title>{first} {last}</title>" in outcome.html
    assert f'alt="{last.title()}"' in outcome.html or f'alt="{last}"' in outcome.html
    views = sorted(row["view"] for row in outcome.audit)
    assert views == ["attribute", "hidden", "text"]


def test_a_replacement_is_escaped_for_an_unquoted_attribute():
    html = "<html><body><span title=Kerbrat class=x>.</span>" + BODY
    outcome = _deidentify(html, "mask")
    assert "title=&#91;PATIENT&#93;" in outcome.html or "title=[PATIENT]" in outcome.html
    assert _structure(outcome.html) == _structure(html)
    ctx_html = '<html><body><span title="Kerbrat &amp; fils">.</span>' + BODY
    assert 'title="[PATIENT] &amp; fils"' in _deidentify(ctx_html, "mask").html


@pytest.mark.parametrize("hidden", ["keep", "blank"])
def test_hidden_keep_leaves_the_views_and_blank_empties_the_hidden_elements(hidden):
    html = "<html><head><title>CR Kerbrat</title></head><body><!-- Kerbrat --><img alt='Kerbrat'>" + BODY
    outcome = _deidentify(html, "mask", hidden=hidden)
    if hidden == "keep":
        assert outcome.html.replace("[PATIENT]", "").count("Kerbrat") == 3
        assert find_leaks(outcome.html, PATIENT).total == 3  # still checked: the run reports them
    else:
        assert "<title></title>" in outcome.html and "<!---->" in outcome.html and "alt='[PATIENT]'" in outcome.html


def test_nothing_changes_in_a_note_without_identifiers_in_its_other_views():
    html = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Compte rendu</title>'
        "<style>td{vertical-align:top}</style>"
        '</head><body><table width="100%"><tr><td>' + BODY + "</td></tr></table></body></html>"
    )
    outcome = _deidentify(html)
    assert [row["view"] for row in outcome.audit] == ["text"]
    assert outcome.html.startswith(html[: html.index("Mme")])


# -------------------------------------------------------------------------------------------------- the command


@pytest.fixture
def planted(write_notes, tmp_path):
    """One note with a name in its title, an attribute and a comment; one whose patient has no metadata."""
    html = "<html><head><title>CR Kerbrat</title></head><body><!-- Kerbrat --><img alt='Kerbrat'>" + BODY
    rows = [
        {
            "id_document": "d1",
            "id_patient": "P1",
            "html": html,
            "firstname": "Jeanne",
            "lastname": "Kerbrat",
            "ward": "cardio",
            "nir": "2570835238012",
        },
        {
            "id_document": "d2",
            "id_patient": "P2",
            "html": "<p>Vu M. Le Goff.</p>",
            "firstname": None,
            "lastname": None,
            "ward": "neuro",
            "nir": "1570835238012",
        },
    ]
    notes = write_notes(rows)
    start = html.index("Jeanne</b>")
    pd.DataFrame(
        [{"id_document": "d1", "label": "PATIENT", "html_start": start, "html_end": html.index(", vue")}]
    ).to_parquet(tmp_path / "spans.parquet")
    return notes, tmp_path / "spans.parquet"


def _run(notes, spans, out, *args):
    return CliRunner().invoke(
        main,
        [
            "deidentify",
            str(notes),
            "--spans",
            str(spans),
            "--out",
            str(out),
            "--key",
            "k-test-key-not-secret",
            "--verbose",
            "-j",
            "1",
            *args,
        ],
    )


def test_the_views_are_deidentified_by_the_command_and_unchecked_notes_are_said_so(planted, tmp_path):
    notes, spans = planted
    result = _run(notes, spans, tmp_path / "out", "--mode", "mask")
    assert result.exit_code == 0, result.output
    html = pd.read_parquet(tmp_path / "out" / "notes.parquet")["html"].iloc[0]
    assert "Kerbrat" not in html and "<title>CR [PATIENT]</title>" in html and "<!---->" in html
    documents = pd.read_parquet(tmp_path / "out" / "documents.parquet").set_index("id_document")
    assert documents.loc["d1", "leak_check"] == "checked" and documents.loc["d1", "n_leaks"] == 0
    assert documents.loc["d2", "leak_check"] == "no metadata" and pd.isna(documents.loc["d2", "n_leaks"])
    assert "1 document(s) not checked (no metadata)" in result.output and "0 value(s)" in result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["documents_not_checked"] == 1 and report["replacements_per_view"] == {"attribute": 1, "hidden": 1}
    assert report["blanked"] == {"comment": 1}
    audit = pd.read_parquet(tmp_path / "out" / "audit.parquet")
    assert sorted(audit["view"]) == ["attribute", "hidden", "hidden", "text"]


def test_a_run_where_no_note_can_be_checked_says_not_checked(write_notes, tmp_path):
    notes = write_notes([{"id_document": "d1", "html": "<p>Vu M. Le Goff.</p>"}])
    pd.DataFrame({"id_document": ["d1"], "label": ["PATIENT"], "html_start": [8], "html_end": [15]}).to_parquet(
        tmp_path / "s.parquet"
    )
    result = _run(notes, tmp_path / "s.parquet", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "residual-leak check: not checked (1 document(s) without metadata)" in result.output
    assert "0 value(s)" not in result.output


def test_fail_on_leak_leaves_out_untouched_and_keeps_the_output_aside(planted, tmp_path):
    notes, spans = planted
    out = tmp_path / "out"
    out.mkdir()
    write_marker(out, "deidentify")  # an earlier output of deidentify: one this run may replace
    (out / "previous.txt").write_text("a previous run")
    result = _run(notes, spans, out, "--hidden", "keep", "--fail-on-leak")
    assert result.exit_code == 3
    assert (
        f"{out} left as it was" in result.output and f"{out}.leaks" in result.output and "Kerbrat" not in result.output
    )
    assert sorted(p.name for p in out.iterdir()) == [".deid-ds.json", "previous.txt"]  # OUT as it was
    aside = pd.read_parquet(tmp_path / "out.leaks" / "documents.parquet").set_index("id_document")
    assert aside.loc["d1", "n_leaks"] == 3
    assert json.loads((tmp_path / "out.leaks" / "report.json").read_text())["written_to"] == f"{out}.leaks"
    result = _run(notes, spans, out, "--fail-on-leak")  # d2: no span and no metadata, nothing says it is clean
    assert result.exit_code == 3 and "1 document(s) got no span and could not be checked" in result.output
    doctor = pd.DataFrame([{"id_document": "d2", "label": "DOCTOR", "html_start": 9, "html_end": 16}])
    pd.concat([pd.read_parquet(spans), doctor]).to_parquet(spans)
    result = _run(notes, spans, out, "--fail-on-leak")  # de-identified views: no leak, published at OUT
    assert result.exit_code == 0, result.output
    assert (out / "notes.parquet").exists() and not (out / "previous.txt").exists()


def test_unknown_columns_are_dropped_unless_kept(planted, tmp_path):
    notes, spans = planted
    result = _run(notes, spans, tmp_path / "out")
    assert result.exit_code == 0, result.output
    written = pd.read_parquet(tmp_path / "out" / "notes.parquet")
    assert list(written.columns) == ["id_document", "id_patient", "html"]
    assert json.loads((tmp_path / "out" / "report.json").read_text())["dropped_columns"] == ["ward", "nir"]
    assert "input columns dropped (--keep-column keeps one)" in result.output and "2570835238012" not in result.output
    result = _run(notes, spans, tmp_path / "kept", "--keep-column", "ward")
    assert result.exit_code == 0, result.output
    assert list(pd.read_parquet(tmp_path / "kept" / "notes.parquet")["ward"]) == ["cardio", "neuro"]


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("nowhere", "--keep-column nowhere: no such column in"),
        ("html", "--keep-column html: deid-ds writes this column itself"),
        ("lastname", "--keep-column lastname: deid-ds writes this column itself"),
    ],
)
def test_keep_column_refuses_a_missing_column_and_the_ones_deid_ds_writes(planted, tmp_path, column, message):
    notes, spans = planted
    result = _run(notes, spans, tmp_path / "out", "--keep-column", column)
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_keep_column_refuses_the_source_of_a_mapped_column(planted, tmp_path):
    notes, spans = planted
    frame = pd.read_parquet(notes).rename(columns={"html": "TEXTE"})
    frame.to_parquet(tmp_path / "renamed.parquet")
    result = _run(
        tmp_path / "renamed.parquet", spans, tmp_path / "out", "--column", "html=TEXTE", "--keep-column", "TEXTE"
    )
    assert result.exit_code == 1 and "--keep-column TEXTE: deid-ds writes this column itself" in result.output
