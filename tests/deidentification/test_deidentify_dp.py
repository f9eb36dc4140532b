"""``deidentify --privacy dp``: dates in their own form but perturbed on their own, ages and durations of the text,
the kept date columns and the NIR following the dp dates, the privacy accounting, and the attack a shift cannot
resist (one true date known gives back all the others) that dp does."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from deid_ds.cli import main
from deid_ds.deidentification.ages_durations import find_quantities, perturb_quantity
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.dates_shift import parse_date, shift_date_text
from deid_ds.deidentification.document import deidentify_document
from deid_ds.deidentification.dp_accounting import SPENT, accounting, batch_spending, merge_spending
from deid_ds.deidentification.dp_dates import date_value
from deid_ds.deidentification.identifier_surrogates import identifier_replacement
from deid_ds.deidentification.identifiers import nir_key
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.pools import load_pools
from deid_ds.deidentification.privacy import Privacy
from deid_ds.errors import InputError
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.html_text import html_to_text
from tests.conftest import REPO

SCRIPT = REPO / "benchmarks" / "dp_dates.py"
spec = importlib.util.spec_from_file_location("dp_dates_benchmark", SCRIPT)
benchmark = importlib.util.module_from_spec(spec)
sys.modules.setdefault("dp_dates_benchmark", benchmark)
spec.loader.exec_module(benchmark)

REFERENCE = dt.date(2026, 11, 27)
PATIENT = PatientMetadata(firstname="JEANNE", lastname="LE GALL", birthdate="1957-08-12")


def context(epsilon: float = 0.3, mode: str = "dp", scope: str = "patient:P1", **kwargs) -> Context:
    privacy = Privacy(mode, epsilon, reference=REFERENCE)
    keyring = Keyring(b"dp-test-key-not-secret-0123456789")
    return Context(keyring, load_pools(None), scope, PATIENT, privacy=privacy, **kwargs)


# ------------------------------------------------------------------------------------------------ dates


@pytest.mark.parametrize(
    "original, form",
    [
        ("03/02/2021", r"\d\d/\d\d/\d{4}"),
        ("2021-02-03", r"\d{4}-\d\d-\d\d"),
        ("3 février 2021", r"(1er|\d{1,2}) [a-zéû]+ \d{4}"),
        ("lundi 3 février 2021", r"(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche) (1er|\d{1,2}) [a-zéû]+ \d{4}"),
        ("12/03", r"\d\d/\d\d"),
        ("02/2021", r"\d\d/\d{4}"),
        ("février 2021", r"[a-zéû]+ \d{4}"),
        ("2015", r"\d{4}"),
    ],
)
def test_dp_dates_keep_their_form_and_never_their_value(original, form):
    new = shift_date_text(context(), original)
    assert new is not None and re.fullmatch(form, new), new
    assert new != original


def test_each_unit_moves_in_its_own_unit_and_the_same_date_in_two_forms_gets_one_surrogate():
    ctx = context(epsilon=0.3)
    a, b = shift_date_text(ctx, "12/03/2021"), shift_date_text(ctx, "12 mars 2021")
    assert parse_date(a).date == parse_date(b.replace("1er", "1")).date
    year = parse_date(shift_date_text(ctx, "2015")).date
    assert year.month == 7 and year.day == 2 and year.year != 2015  # a year alone moves by whole years
    month = parse_date(shift_date_text(ctx, "03/2021")).date
    assert month.day == 15 and (month.year, month.month) != (2021, 3)
    # two days a week apart are perturbed independently, not by one offset: the interval changes for some pair
    days = [dt.date(2021, 3, 1) + dt.timedelta(days=7 * i) for i in range(10)]
    moved = [parse_date(shift_date_text(ctx, d.strftime("%d/%m/%Y"))).date for d in days]
    assert len({(m - d).days for m, d in zip(moved, days)}) > 1


def test_a_value_written_again_costs_once_and_is_recorded_by_kind():
    ctx = context()
    for text in ("12/03/2021", "12 mars 2021", "vendredi 12/03/2021", "2015", "03/2021"):
        shift_date_text(ctx, text)
    spent = ctx.memory[SPENT]
    assert sorted(kind for kind, _ in spent) == ["date:day", "date:month", "date:year"]
    assert set(spent.values()) == {0.3}


def test_the_weekday_and_the_birthdate_year_are_rendered_from_the_dp_date():
    ctx = context()
    weekday, rest = shift_date_text(ctx, "mercredi 3 février 2021").split(" ", 1)
    written = parse_date(rest).date
    assert weekday == ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")[written.weekday()]
    year_only = shift_date_text(context(birthdate_year=True), "12/08/1957")
    full = parse_date(shift_date_text(context(), "12/08/1957")).date
    assert year_only == str(full.year)


def test_shift_mode_is_unchanged_one_offset_for_all_dates():
    ctx = context(mode="shift")
    days = [dt.date(2021, 3, 1) + dt.timedelta(days=7 * i) for i in range(10)]
    moved = [parse_date(shift_date_text(ctx, d.strftime("%d/%m/%Y"))).date for d in days]
    assert len({(m - d).days for m, d in zip(moved, days)}) == 1 and SPENT not in ctx.memory


def test_the_nir_birth_year_and_month_follow_the_dp_birthdate():
    ctx = context(epsilon=0.02)  # a noise of weeks: the birth month moves with the birthdate
    body = "2570835123456"
    nir = body + nir_key(body)
    new = identifier_replacement(ctx, "NIR", nir, "surrogate")
    birth = parse_date(shift_date_text(context(epsilon=0.02), "12/08/1957")).date
    assert new[1:5] == f"{birth.year % 100:02d}{birth.month:02d}"


# ------------------------------------------------------------------------------------------------ ages, durations


@pytest.mark.parametrize(
    "text, found",
    [
        ("Patiente âgée de 45 ans, autonome.", [("45 ans", "AGE", "year")]),
        ("Monsieur X, 62 ans, est revu ce jour.", [("62 ans", "AGE", "year")]),
        ("Née le 12/03/1960 (63 ans)", [("63 ans", "AGE", "year")]),
        ("M. Tran Duc — 8 ans", [("8 ans", "AGE", "year")]),
        ("nourrisson de 18 mois", [("18 mois", "AGE", "month")]),
        (
            "douleur depuis 3 semaines, opérée il y a 2 mois",
            [("3 semaines", "DURATION", "week"), ("2 mois", "DURATION", "month")],
        ),
        ("tabac arrêté depuis environ 10 ans", [("10 ans", "DURATION", "year")]),
        ("Amoxicilline 1 g x 3/j pendant 7 jours", [("7 jours", "DURATION", "day")]),
        ("il s'agit de M. X âgé de soixante-trois ans", [("soixante-trois ans", "AGE", "year")]),
        ("pendant vingt et un jours", [("vingt et un jours", "DURATION", "day")]),
        # clinical numbers never rewritten: doses, sizes, counts, post-operative days, ranges, uncued numbers
        ("3 fois par jour, 5 mg, nodule de 3 mm, J+5", []),
        ("2 à 3 ans", []),
        ("revu, 3 ans après la chirurgie", []),
        ("traitement de 6 mois", []),
        ("à 45 ans", []),
        ("un an", []),
        ("il y a deux mille vingt ans", []),
    ],
)
def test_only_clearly_cued_ages_and_durations_are_found(text, found):
    assert [(text[q.start : q.end], q.label, q.unit) for q in find_quantities(text)] == found


def test_an_age_is_perturbed_in_years_memoised_at_least_one_and_its_unit_agrees():
    ctx = context(epsilon=0.5)
    (q,) = find_quantities("âgé de 45 ans")
    first = perturb_quantity(ctx, q)
    assert first != "45 ans" and re.fullmatch(r"\d+ ans?", first) and perturb_quantity(ctx, q) == first
    assert ctx.memory[SPENT] == {("age:year", "45"): 0.5}
    for i in range(40):
        (one,) = find_quantities("depuis 1 an")
        new = perturb_quantity(context(scope=f"patient:{i}"), one)
        count = int(new.split()[0])
        assert count >= 2 and new == f"{count} ans"


@given(
    cue=st.sampled_from(["depuis", "il y a", "pendant", "âgé de", "patient de", ",", "(", "dans", "en", ""]),
    number=st.integers(0, 999),
    unit=st.sampled_from(["mg", "mm", "cm", "kg", "ml", "fois", "cp", "UI", "%", "h", "min", "mmHg", "g/dl", "/j"]),
    after=st.sampled_from(["", ".", ",", " par jour", ")"]),
)
def test_a_clinical_number_is_never_taken_for_an_age_or_a_duration(cue, number, unit, after):
    assert find_quantities(f"{cue} {number} {unit}{after}") == []
    assert find_quantities(f"{cue} {number}{unit}{after}") == []


@pytest.mark.parametrize(
    "text, written",
    [
        ("âgé de soixante-trois ans", r"(?!soixante-trois )[a-z\-]+( et un)? ans"),
        ("depuis une semaine", r"[a-z\-]+( et une)? semaines?"),
        ("DEPUIS TROIS SEMAINES", r"[A-Z\-]+( ET UNE)? SEMAINES"),
    ],
)
def test_a_number_in_words_gets_a_surrogate_in_words(text, written):
    (q,) = find_quantities(text)
    new = perturb_quantity(context(), q)
    assert re.fullmatch(written, new), new
    assert new.split()[0].lower() not in ("un", "une", "trois", "soixante-trois")


def test_dp_documents_replace_ages_and_durations_outside_the_spans_and_audit_them():
    html = "<p>Mme <b>Jeanne</b> LE GALL, 45 ans, vue le 12/03/2021 pour une douleur depuis 3 semaines, 5 mg.</p>"
    parsed = html_to_text(html)
    date = html.index("12/03")
    from deid_ds.deidentification.document import SpanIn

    spans = [SpanIn("DATE", date, date + 10)]
    dp = deidentify_document(parsed, spans, context(), "surrogate")
    assert [row["label"] for row in dp.audit] == ["DATE", "AGE", "DURATION"]
    assert [row["source"] for row in dp.audit[1:]] == ["dp:age", "dp:duration"]
    assert "45 ans" not in dp.html and "3 semaines" not in dp.html and "5 mg" in dp.html
    shift = deidentify_document(html_to_text(html), spans, context(mode="shift"), "surrogate")
    assert [row["label"] for row in shift.audit] == ["DATE"] and "45 ans" in shift.html


# ------------------------------------------------------------------------------------------------ accounting


def test_accounting_composes_distinct_values_per_patient_and_hides_them():
    keyring = Keyring(b"dp-test-key-not-secret-0123456789")
    spent: dict = {}
    # two notes of P1 sharing a date (memoised: counted once), one note of P2
    merge_spending(spent, batch_spending(keyring, "patient:P1", {("date:day", "full:1"): 0.5, ("age:year", "45"): 0.5}))
    merge_spending(spent, batch_spending(keyring, "patient:P1", {("date:day", "full:1"): 0.5}))
    merge_spending(spent, batch_spending(keyring, "patient:P2", {("date:day", "full:1"): 0.5}))
    assert "P1" not in json.dumps(spent) and "full:1" not in json.dumps(spent)
    report = accounting(Privacy("dp", 0.5, reference=REFERENCE), spent)
    assert report["patients"] == 2 and report["values"] == 3
    assert report["epsilon_per_patient"] == {"max": 1.0, "median": 0.75, "mean": 0.75}
    assert report["values_per_kind"] == {"age:year": 1, "date:day": 2}
    assert accounting(Privacy(), spent) == {"mode": "shift"}


# ------------------------------------------------------------------------------------------------ the attack


def _patient_dates(mode: str, epsilon: float = 0.3) -> dict[dt.date, dt.date]:
    ctx = context(epsilon=epsilon, mode=mode)
    days = [dt.date(2019, 1, 7) + dt.timedelta(days=11 * i + i * i) for i in range(30)]
    return {d: parse_date(shift_date_text(ctx, d.strftime("%d/%m/%Y"))).date for d in days}


def test_one_known_date_gives_back_every_shifted_date_but_few_dp_ones():
    recovered, tried = benchmark.one_known_date_attack(_patient_dates("shift"))
    assert recovered == tried == 29
    recovered, tried = benchmark.one_known_date_attack(_patient_dates("dp", epsilon=0.3))
    assert tried == 29 and recovered / tried < 0.25
    # dp reorders few of these events a week or more apart; the shift none
    assert benchmark.reordered(_patient_dates("shift")) == (0, 435)
    flipped, pairs = benchmark.reordered(_patient_dates("dp", epsilon=0.3))
    assert pairs == 435 and flipped < 0.02 * pairs


# ------------------------------------------------------------------------------------------------ the command


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("dp-sample")
    notes = pq.read_table(REPO / "data" / "notes.parquet").slice(0, 30).to_pandas()
    gold = pd.read_parquet(REPO / "data" / "gold.parquet")
    notes.to_parquet(base / "notes.parquet")
    gold[gold["id_document"].isin(notes["id_document"])].to_parquet(base / "gold.parquet")
    return base / "notes.parquet", base / "gold.parquet"


def _run(sample, out, *options):
    notes, gold = sample
    args = ["deidentify", str(notes), "--spans", str(gold), "--out", str(out), "-q", "-j", "1"]
    return CliRunner().invoke(main, [*args, "--key", "k-test-key-not-secret", *options])


def test_the_command_writes_the_accounting_reproducibly_and_leaves_no_leak(sample, tmp_path):
    options = ["--privacy", "dp", "--epsilon", "0.25", "--dp-reference", "2026-11-27", "--keep-metadata", "surrogate"]
    first = _run(sample, tmp_path / "a", *options)
    second = _run(sample, tmp_path / "b", *options, "-j", "2", "--batch-size", "7")  # two workers, small batches
    assert first.exit_code == 0 and second.exit_code == 0, first.output
    for name in ("notes", "audit"):  # the same key and reference day: the same outputs, whatever the batching
        a, b = (pq.read_table(tmp_path / run / f"{name}.parquet") for run in ("a", "b"))
        assert a.equals(b), name
    assert (
        json.loads((tmp_path / "a" / "report.json").read_text())["privacy"]
        == (json.loads((tmp_path / "b" / "report.json").read_text())["privacy"])
    )
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    privacy = report["privacy"]
    assert privacy["mode"] == "dp" and privacy["epsilon_per_value"] == 0.25 and privacy["reference_day"] == "2026-11-27"
    assert privacy["values"] >= privacy["patients"] > 0
    assert privacy["epsilon_per_patient"]["max"] == pytest.approx(0.25 * max_values(tmp_path / "a"))
    # no --kb: the communes cannot be drawn among similar ones, so they are counted apart, never as ε-protected
    assert privacy["unprotected_values_per_kind"]["commune:unprotected"] > 0
    assert 0 < privacy["patients_with_unprotected_values"] <= privacy["patients"]
    assert report["leaks"]["total"] == 0 and report["replacements_per_label"]["AGE"] > 0
    shifted = _run(sample, tmp_path / "s")
    assert shifted.exit_code == 0
    report = json.loads((tmp_path / "s" / "report.json").read_text())
    assert report["privacy"] == {"mode": "shift"} and "AGE" not in report["replacements_per_label"]


def max_values(out: Path) -> int:
    return json.loads((out / "report.json").read_text())["privacy"]["values_per_patient"]["max"]


def test_dp_with_mask_mode_or_a_bad_reference_day_is_refused(sample, tmp_path):
    result = _run(sample, tmp_path / "m", "--privacy", "dp", "--mode", "mask")
    assert result.exit_code == 1 and "--privacy dp" in result.output and "--mode mask" in result.output
    result = _run(sample, tmp_path / "r", "--privacy", "dp", "--dp-reference", "27/11/2026")
    assert result.exit_code == 1 and "YYYY-MM-DD" in result.output
    with pytest.raises(InputError):
        Privacy("dp", epsilon=0)


def test_a_kept_date_column_takes_the_dp_date_the_note_writes(tmp_path):
    from tests.deidentification.test_deidentify_kept_columns import KEEP, write_dated_notes

    write_dated_notes(tmp_path / "notes.parquet", tmp_path / "spans.parquet")
    result = _run((tmp_path / "notes.parquet", tmp_path / "spans.parquet"), tmp_path / "out", "--privacy", "dp", *KEEP)
    assert result.exit_code == 0, result.output
    out = pd.read_parquet(tmp_path / "out" / "notes.parquet")
    for _, row in out.iterrows():
        written = re.search(r"\d\d/\d\d/\d{4}", row["html"]).group()
        assert written == row["seen"] != "12/03/2021"
        assert row["admission"] == parse_date(written).date == row["stamp"].date()
        assert row["stamp"].time() == dt.time(10, 30)
    assert date_value("full", dt.date(2021, 3, 12)) > 0


@pytest.mark.slow
def test_spark_gives_the_local_engines_dp_outputs(sample, tmp_path):
    pytest.importorskip("pyspark")
    options = ["--privacy", "dp", "--epsilon", "0.5", "--dp-reference", "2026-11-27"]
    local = _run(sample, tmp_path / "local", *options)
    spark = _run(sample, tmp_path / "spark", *options, "--engine", "spark", "--spark-master", "local[2]")
    assert local.exit_code == 0 and spark.exit_code == 0, spark.output
    for name in ("notes", "audit", "documents"):  # (the ids: large_string as pandas wrote them locally)
        written, expected = (pq.read_table(tmp_path / e / f"{name}.parquet") for e in ("spark", "local"))
        assert written.to_pylist() == expected.to_pylist(), name
    local_report, spark_report = (json.loads((tmp_path / e / "report.json").read_text()) for e in ("local", "spark"))
    assert spark_report["privacy"] == local_report["privacy"]
