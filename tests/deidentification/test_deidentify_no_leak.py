"""Surrogates that never give the original back and never invent content.

Each reported case is reproduced: e-mail addresses kept whole or in part, a town glued in an address,
non-dates labelled DATE rewritten with random digits, given names of the wrong sex, short keys.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.cli import main
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.date_words import number_words
from deid_ds.deidentification.dates_shift import date_offset
from deid_ds.deidentification.document import SpanIn, deidentify_document
from deid_ds.deidentification.keyed import KEY_ENV, MIN_KEY_BYTES, Keyring, resolve_key
from deid_ds.deidentification.metadata import surrogate_metadata
from deid_ds.deidentification.names import first_name, sex_cue
from deid_ds.deidentification.overlap import NoteOriginals, keeps_original, normalise
from deid_ds.deidentification.places import surrogate_city
from deid_ds.deidentification.pools import load_pools, squash
from deid_ds.deidentification.surrogates import (
    KEPT_ORIGINAL,
    UNCHANGED_DATE,
    UNPARSED_DATE,
    Replacement,
    surrogate,
)
from deid_ds.errors import DeidError
from deid_ds.kb.normalize import fold_key
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.html_text import html_to_text

KEY = b"test-key-not-secret-0001"
NOBODY = PatientMetadata()


def context(patient: PatientMetadata = NOBODY, scope: str = "patient:P1", key: bytes = KEY) -> Context:
    return Context(Keyring(key), load_pools(None), scope, patient)


def run_note(html: str, spans: list[tuple[str, str]], patient: PatientMetadata = NOBODY, scope: str = "patient:P1"):
    """De-identify one note whose spans are given as (label, text), each at its first occurrence."""
    located = [SpanIn(label, html.index(text), html.index(text) + len(text)) for label, text in spans]
    ctx = context(patient, scope)
    return deidentify_document(html_to_text(html), located, ctx, "surrogate"), ctx


def letters_of(text: str) -> str:
    return "".join(re.findall(r"[^\W\d_]+", normalise(text)))


# ------------------------------------------------------------------------------------------------ e-mails


def test_an_unknown_address_shares_nothing_but_its_top_level_domain():
    new = surrogate(context(), "EMAIL", "zeb.quag@example.org").text
    assert new.endswith(".org") and "@" in new
    for piece in ("zeb", "quag", "example"):
        assert piece not in letters_of(new), new


def test_the_patients_address_is_rebuilt_from_the_surrogate_names():
    patient = PatientMetadata(firstname="Jeanne", lastname="LE GALL")
    ctx = context(patient)
    new = surrogate(ctx, "EMAIL", "jeanne.legall@orange.fr").text
    local, domain = new.split("@")
    assert domain == "orange.fr"  # a public provider identifies nobody
    assert local.split(".")[0] == squash(first_name(ctx, "Jeanne")) and "gall" not in local and "jeanne" not in local


def test_a_town_in_an_address_becomes_the_town_the_text_gets():
    html = "<p>Cabinet médical de Plouzané. Contact : cabinet.plouzane@example.org</p>"
    outcome, ctx = run_note(html, [("VILLE", "Plouzané"), ("EMAIL", "cabinet.plouzane@example.org")])
    town = squash(surrogate_city(ctx, "Plouzané"))
    email = outcome.audit[1]["replacement"]
    assert email.startswith(f"cabinet.{town}@") and email.endswith(".org") and "plouzane" not in email
    assert "plouzane" not in fold_key(outcome.html)


def test_a_town_of_the_note_outside_the_pools_is_recognised_in_an_address():
    assert "montelimar" not in load_pools(None).squashed_communes  # known only because the note writes it
    html = "<p>Domicile : MONTÉLIMAR. Courriel : secretariat@mairie-montelimar.fr</p>"
    outcome, ctx = run_note(html, [("VILLE", "MONTÉLIMAR"), ("EMAIL", "secretariat@mairie-montelimar.fr")])
    town = squash(surrogate_city(ctx, "MONTÉLIMAR"))
    assert outcome.audit[1]["replacement"] == f"secretariat@mairie-{town}.fr"


def test_a_town_in_a_domain_and_service_words():
    ctx = context()
    town = squash(surrogate_city(ctx, "Vitré"))
    assert surrogate(ctx, "EMAIL", "accueil@mairie-vitre.fr").text == f"accueil@mairie-{town}.fr"
    department = surrogate(ctx, "EMAIL", "secretariat.neurologie@chu-rennes.fr").text
    assert department.startswith("secretariat.neurologie@chu-") and "rennes" not in department


def test_a_note_doctors_name_in_an_address_becomes_the_doctors_surrogate():
    html = "<p>Dr Yann KERBRAT (yann.kerbrat@clinique-zebulon.fr)</p>"
    outcome, _ = run_note(html, [("DOCTOR", "Yann KERBRAT"), ("EMAIL", "yann.kerbrat@clinique-zebulon.fr")])
    first, last = outcome.audit[0]["replacement"].split(" ", 1)
    assert outcome.audit[1]["replacement"].startswith(f"{squash(first)}.{squash(last)}@clinique-")
    assert "zebulon" not in outcome.audit[1]["replacement"]


# ------------------------------------------------------------------------------------------------ the guard


def test_the_comparison_ignores_case_accents_and_unicode_normalisation():
    nfd = unicodedata.normalize("NFD", "Élodie")
    assert nfd != "Élodie" and keeps_original(nfd, "ELODIE", "PATIENT")
    assert keeps_original("Élodie", nfd.lower(), "PATIENT")
    assert keeps_original("Jean-Pierre MARTIN", "Pierre DURAND", "PATIENT")  # a token of the original
    assert keeps_original("MARTIN", "Martinez", "PATIENT")  # four letters or more: anywhere in the letters
    assert not keeps_original("LE GALL", "LE BIHAN", "PATIENT")  # particles identify nobody
    assert not keeps_original("12 rue de la Paix", "3 rue du Port", "STR")
    assert keeps_original("zeb.quag@example.org", "zeb.quag@wrwonwg.org", "EMAIL")


def test_a_compound_name_whose_parts_swap_is_drawn_again():
    """Old code: a part drawn for ``A`` could be ``B`` of ``A-B``, putting ``B`` back in the note."""
    ctx = context()
    names = ctx.pools.first_names["F"]
    pairs = [(a, first_name(ctx, a)) for a in names]
    a, b = next((a, b) for a, b in pairs if b in names and "-" not in b)  # "A" is drawn as "B"
    new = surrogate(ctx, "PATIENT", f"{a}-{b} TARTEMPION").text
    assert not keeps_original(f"{a}-{b} TARTEMPION", new, "PATIENT"), new
    assert fold_key(b) not in fold_key(new)


_CASES = st.sampled_from([str.upper, str.lower, str.title, lambda s: s])
_FORMS = st.sampled_from(["NFC", "NFD"])


@given(data=st.data(), case=_CASES, form=_FORMS, label=st.sampled_from(["PATIENT", "DOCTOR", "VILLE", "EMAIL"]))
@settings(max_examples=200, deadline=None)
def test_no_surrogate_gives_back_its_original(data, case, form, label):
    pools = load_pools(None)
    communes = [c.name for c in pools.communes[:40]]
    words = st.sampled_from([*pools.first_names["*"][:80], *pools.surnames[:80], *communes])
    parts = data.draw(st.lists(words, min_size=1, max_size=3))
    if label == "EMAIL":
        original = ".".join(squash(p) for p in parts) + "@" + data.draw(words).replace(" ", "-").lower() + ".fr"
    elif label == "VILLE":
        original = parts[0]
    else:
        original = data.draw(st.sampled_from([" ", "-"])).join(parts)
    original = unicodedata.normalize(form, case(original))
    new = surrogate(context(scope=f"patient:{data.draw(st.integers(0, 5))}"), label, original)
    assert new.fallback in (None, KEPT_ORIGINAL)
    assert not keeps_original(original, new.text, label), (original, new.text)
    if label == "EMAIL":
        assert new.text.lower().endswith(".fr")


# ------------------------------------------------------------------------------------------------ never invent


@pytest.mark.parametrize(
    "text", ["Glasgow à 15/15", "15/15", "11,6", "Hb 11,6", "11.6", "01:15", "à 01:15", "2019-0042-17"]
)
def test_a_date_that_does_not_read_as_one_is_masked(text):
    new = surrogate(context(), "DATE", text, mask_format="[{label}]")
    assert new.text == "[DATE]" and new.fallback == UNPARSED_DATE


def test_a_date_the_shift_leaves_as_it_was_is_masked():
    # a day alone moved by whole months (8 March 2020 to 8 April or 8 February) would print its original day
    scope = next(
        f"patient:{i}"
        for i in range(3000)
        if (dt.date(2020, 3, 8) + dt.timedelta(days=date_offset(context(scope=f"patient:{i}")))).day == 8
    )
    new = surrogate(context(scope=scope), "DATE", "8", paired_date="10 mars 2020")
    assert new.text == "[DATE]" and new.fallback == UNCHANGED_DATE


def test_a_day_alone_is_shifted_with_the_date_it_goes_with_and_masked_without_one():
    ctx = context()
    offset = dt.timedelta(days=date_offset(ctx))
    assert surrogate(ctx, "DATE", "8", paired_date="10 mars 2020").text == str((dt.date(2020, 3, 8) + offset).day)
    day = (dt.date(2020, 3, 12) + offset).day
    words = "premier" if day == 1 else number_words(day)
    assert surrogate(ctx, "DATE", "douze", paired_date="treize mars 2020").text == words  # words stay words
    assert surrogate(ctx, "DATE", "22") == Replacement("[DATE]", UNPARSED_DATE)  # a bare number: maybe no date


def test_a_year_alone_moves_one_year_in_the_direction_of_the_shift():
    for i in range(40):
        ctx = context(scope=f"patient:{i}")
        step = 1 if date_offset(ctx) > 0 else -1
        assert surrogate(ctx, "DATE", "2015").text == str(2015 + step)
        assert surrogate(ctx, "DATE", "deux mille quinze").text == number_words(2015 + step)


@pytest.mark.parametrize(
    ("label", "text"),
    [
        ("PHONE", "15"),
        ("PHONE", "2 99 28 4"),
        ("ZIP", "350"),
        ("EMAIL", "zeb.quag"),
        ("PATIENT", "123"),
        ("NUMERO", "0042"),
    ],
)
def test_what_is_not_a_value_of_its_label_is_masked(label, text):
    new = surrogate(context(), label, text, mask_format="XXX")
    assert new.text == "XXX" and new.fallback and new.fallback.endswith("->mask")


def test_fallbacks_are_listed_per_document_and_in_the_summary(write_notes, tmp_path):
    html = "<p>Glasgow à 15/15, Hb 11,6 g/dL, vu à 01:15 le 03/02/2021.</p>"
    notes = write_notes([{"id_document": "d1", "id_patient": "P", "html": html}])
    spans = pd.DataFrame(
        [
            {"id_document": "d1", "label": "DATE", "html_start": html.index(t), "html_end": html.index(t) + len(t)}
            for t in ("15/15", "11,6", "01:15", "03/02/2021")
        ]
    )
    spans.to_parquet(tmp_path / "spans.parquet")
    args = [
        "deidentify",
        str(notes),
        "--spans",
        str(tmp_path / "spans.parquet"),
        "--out",
        str(tmp_path / "out"),
        "--verbose",
        "-j",
        "1",
    ]
    result = CliRunner().invoke(main, args, env={KEY_ENV: KEY.decode()})
    assert result.exit_code == 0, result.output
    out = pd.read_parquet(tmp_path / "out" / "notes.parquet")["html"].iloc[0]
    assert out.startswith("<p>Glasgow à [DATE], Hb [DATE] g/dL, vu à [DATE] le ") and "03/02/2021" not in out
    audit = pd.read_parquet(tmp_path / "out" / "audit.parquet")
    assert list(audit["fallback"].fillna("")) == [UNPARSED_DATE] * 3 + [""]
    assert pd.read_parquet(tmp_path / "out" / "documents.parquet")["n_fallbacks"].tolist() == [3]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["fallbacks"] == {UNPARSED_DATE: 3}
    assert re.search(r"fallbacks \(masked, see audit\)\s*\|?\s*3", result.output) and UNPARSED_DATE in result.output
    # per label: 3 of the 4 DATE spans masked, with the reason; the summary flags it and a warning says so
    assert report["fallbacks_per_label"] == {
        "DATE": {"spans": 4, "masked": 3, "share": 75.0, "reasons": {UNPARSED_DATE: 3}}
    }
    assert re.search(r"DATE masked: 75\.00 % of 4 span\(s\) \(above 2 %\)\s*\|?\s*3", result.output)
    assert f"DATE: 75.00 % of the spans masked instead of replaced (above 2 %; 3 of 4: {UNPARSED_DATE} 3" in (
        result.output
    )


# ------------------------------------------------------------------------------------------------ sex of given names


@pytest.mark.parametrize(
    ("before", "after", "sex"),
    [
        ("Vu ce jour Madame ", " pour", "F"),
        ("Mme ", "", "F"),
        ("M. ", "", "M"),
        ("Monsieur ", "", "M"),
        ("la patiente ", "", "F"),
        ("le patient ", "", "M"),
        ("", ", née le 3 mai", "F"),
        ("", ", né le 3 mai", "M"),
        ("Dr ", "", None),
        ("J.-M. ", "", None),
        ("", " ne souhaite pas", None),
        ("vu avec ", "", None),
    ],
)
def test_the_sex_a_note_gives_a_name(before, after, sex):
    assert sex_cue(before, after) == sex


UNKNOWN = ("Zorna", "Quillevic", "Brivaelle", "Ondrel", "Taziou", "Meurvane")  # in no given-name list


def _first_name_of(html: str, name: str) -> str:
    outcome, _ = run_note(html, [("PATIENT", f"{name} TARTEMPION")])
    return outcome.audit[0]["replacement"].split(" ")[0]


def test_given_names_agree_with_the_sex_the_note_gives():
    pools = load_pools(None)
    assert not set(map(fold_key, UNKNOWN)) & pools.first_name_keys
    for name in UNKNOWN:
        assert _first_name_of(f"<p>Madame {name} TARTEMPION</p>", name) in pools.first_names["F"], name
        assert _first_name_of(f"<p>{name} TARTEMPION, née le 12/08/1957</p>", name) in pools.first_names["F"], name
        assert _first_name_of(f"<p>{name} TARTEMPION, né le 12/08/1957</p>", name) in pools.first_names["M"], name
        assert _first_name_of(f"<p>M. {name} TARTEMPION</p>", name) in pools.first_names["M"], name


@pytest.mark.parametrize(
    "html",
    [
        "<p>Contacter son neveu {name} au 06 00 05 35 85.</p>",
        "<p>Aidant principal : son fils ({name}).</p>",
        "<p>Ses enfants, Maurice et {name}, sont informés.</p>",
        "<p>Contacts : {name} (petite-fille).</p>",
        "<p>VIT AVEC SA SOEUR, {name}, À DOMICILE.</p>",
    ],
)
def test_a_relative_called_by_a_given_name_alone_is_given_a_given_name(html):
    # names no list holds: only the words around them say they are given names ("Zorna" alone elsewhere: a surname)
    pools = load_pools(None)
    for name in UNKNOWN:
        written = name.upper() if "SOEUR" in html else name
        outcome, _ = run_note(html.format(name=written), [("PATIENT", written)])
        assert fold_key(outcome.audit[0]["replacement"]) in pools.first_name_keys, (html, name)
    outcome, _ = run_note("<p>Vu par le Dr Zorna ce jour.</p>", [("DOCTOR", "Zorna")])
    assert fold_key(outcome.audit[0]["replacement"]) in {fold_key(n) for n in pools.surnames}


def test_a_given_name_of_unknown_sex_gets_an_epicene_one():
    pools = load_pools(None)
    assert {"Camille", "Dominique", "Claude", "Sacha"} <= set(pools.first_names["E"])
    for name in (*UNKNOWN, "Dominique"):  # Dominique: both lists
        assert _first_name_of(f"<p>Dr {name} TARTEMPION</p>", name) in pools.first_names["E"], name


def test_the_sex_cue_holds_for_the_whole_note_and_its_metadata():
    patient = PatientMetadata(firstname="Zorna", lastname="Tartempion")
    html = "<p>Zorna TARTEMPION, vue ce jour. Mme Zorna Tartempion revue.</p>"  # the cue is on the second mention
    spans = [SpanIn("PATIENT", m.start(), m.end()) for m in re.finditer("Zorna TARTEMPION", html, re.IGNORECASE)]
    ctx = context(patient)
    outcome = deidentify_document(html_to_text(html), spans, ctx, "surrogate")
    firsts = {row["replacement"].split(" ")[0] for row in outcome.audit}
    assert len(firsts) == 1 and firsts <= set(load_pools(None).first_names["F"]) - set(
        load_pools(None).first_names["E"]
    )
    assert surrogate_metadata(ctx)["firstname"] == firsts.pop()


# ------------------------------------------------------------------------------------------------ keys


def test_empty_and_short_keys_are_refused():
    with pytest.raises(DeidError, match="empty"):
        resolve_key("", {})
    with pytest.raises(DeidError, match="empty"):
        resolve_key(None, {KEY_ENV: ""})
    with pytest.raises(DeidError, match=f"shorter than {MIN_KEY_BYTES} bytes"):
        resolve_key("demo-key", {})
    with pytest.raises(DeidError, match=KEY_ENV):
        resolve_key(None, {KEY_ENV: "demo-key"})
    short = resolve_key("demo-key", {}, allow_short=True)
    assert short.key == b"demo-key" and short.fingerprint() == ""  # nothing written to test guesses against
    long = resolve_key("x" * MIN_KEY_BYTES, {})
    assert long.fingerprint().startswith("scrypt$") and long.matches(long.fingerprint())


def _cli(notes, spans, out, *extra):
    args = ["deidentify", str(notes), "--spans", str(spans), "--out", str(out), "--quiet", "-j", "1", *extra]
    return CliRunner().invoke(main, args)


def test_the_cli_refuses_an_empty_or_short_key_and_writes_nothing(write_notes, tmp_path):
    html = "<p>Mme Jeanne LE GALL</p>"
    notes = write_notes([{"id_document": "d1", "id_patient": "P", "html": html}])
    span = {"id_document": "d1", "label": "PATIENT", "html_start": html.index("Jeanne"), "html_end": html.index("</p>")}
    pd.DataFrame([span]).to_parquet(tmp_path / "spans.parquet")
    spans = tmp_path / "spans.parquet"
    for key in ("", "demo-key"):
        result = _cli(notes, spans, tmp_path / "out", "--key", key)
        assert result.exit_code == 1 and "Traceback" not in result.output and "--key" in result.output
        assert not (tmp_path / "out").exists()
    result = _cli(notes, spans, tmp_path / "out", "--key", "demo-key", "--allow-short-key")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["key_fingerprint"] == "" and "demo-key" not in json.dumps(report)


# ------------------------------------------------------------------------------- the note's other entities


def test_a_surrogate_is_never_another_entity_of_its_note():
    """A town drawn for Brest is never the Quimper the same note names, whatever the key."""
    from deid_ds.deidentification.overlap import NoteOriginals

    towns = ("Quimper", "Vannes")
    drawn = set()
    for n in range(24):
        ctx = Context(Keyring(f"test-key-not-secret-{n:04d}".encode()), load_pools(None), "patient:P1", NOBODY)
        drawn.add(ctx.draw(towns, ("VILLE", "brest"), "Brest"))
        ctx.note_originals = NoteOriginals.of([("VILLE", "Brest"), ("VILLE", "QUIMPER")])
        assert ctx.draw(towns, ("VILLE", "brest"), "Brest") == "Vannes"
    assert drawn == set(towns)  # without the note's entities, some keys do draw Quimper


def test_note_originals_cover_words_glued_into_other_entities():
    from deid_ds.deidentification.overlap import NoteOriginals

    note = NoteOriginals.of(
        [("VILLE", "Lorient"), ("PATIENT", "M. LE PAGE"), ("ZIP", "29000"), ("DATE", "12 mars 2020")]
    )
    assert note.given_back("rue de Lorient") and note.given_back("Page") and note.given_back("29000")
    assert note.given_back("12 MARS 2020")
    assert not note.given_back("rue de Brest") and not note.given_back("mars") and not note.given_back("Le Goff")


def test_every_surrogate_of_a_note_avoids_the_note_s_other_entities():
    html = (
        "<p>Patient : M. Yann GILBERT, 12 rue de Lorient, 56100 Lorient. Adressé par le Dr LEDUC et le Dr Thébault.</p>"
    )
    spans = [
        ("PATIENT", "Yann GILBERT"),
        ("STR", "12 rue de Lorient"),
        ("ZIP", "56100"),
        ("VILLE", "Lorient."),
        ("DOCTOR", "LEDUC"),
        ("DOCTOR", "Thébault"),
    ]
    spans = [(label, text.rstrip(".")) for label, text in spans]
    for n in range(12):
        located = [SpanIn(label, html.index(text), html.index(text) + len(text)) for label, text in spans]
        ctx = Context(Keyring(f"test-key-not-secret-{n:04d}".encode()), load_pools(None), "patient:P1", NOBODY)
        outcome = deidentify_document(html_to_text(html), located, ctx, "surrogate")
        written = " ".join(row["replacement"] for row in outcome.audit)
        for word in ("gilbert", "yann", "lorient", "leduc", "thebault", "56100"):
            assert word not in letters_of(written) + written, (n, word)


def test_an_address_cut_by_a_scan_does_not_make_its_service_words_identifiers():
    # the same address written cut ("i magerie", "ho pital") in another of the patient's notes
    scanned = NoteOriginals.of([("EMAIL", "secretariat.i magerie@ho pital-vitre.fr")])
    assert not scanned.given_back("secretariat.imagerie@hopital-combourg.fr")
    assert scanned.given_back("secretariat.imagerie@hopital-vitre.fr")  # the town still counts
    assert NoteOriginals.of([("EMAIL", "ines.martin@orange.fr")]).given_back("Inès")  # a name is no service piece


def test_an_address_keeps_its_top_level_domain_whatever_the_note_writes():
    # another entity of the note writes "fr" as a word: the ".fr" every surrogate keeps is nobody's
    ctx = context()
    ctx.note_originals = NoteOriginals.of([("STR", "12 rue du Fr Jean"), ("EMAIL", "accueil.dermato@clinique-ker.fr")])
    new = surrogate(ctx, "EMAIL", "accueil.dermato@clinique-ker.fr")
    assert new.fallback is None and new.text.endswith(".fr") and "clinique-ker" not in new.text
