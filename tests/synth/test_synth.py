"""The synthetic sample generator (``deid-ds synth``): gold that reads back exactly, official KB formats,
reproducibility, realism traps, and a held-out phrasing family that really is new wording."""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import re
from collections import Counter
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.model import LABELS, PATIENT_FIELDS
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.synth import SynthConfig, generate_corpus, pools, write_corpus
from deid_ds.synth.corpus import NOTE_COLUMNS
from deid_ds.synth.documents import DOCUMENT_TYPES
from deid_ds.synth.kb import ANNUAIRE_HEADER, BAN_HEADER
from deid_ds.synth.pools import strip_accents
from tests.conftest import FORMATS


@pytest.fixture(scope="module")
def corpus():
    """A small, noisy corpus mixing both phrasing families."""
    return generate_corpus(SynthConfig(notes=150, seed=7, noise=0.8, phrasing="all"))


@pytest.fixture(scope="module")
def written(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    write_corpus(corpus, out)
    return out


def _spans_by_doc(corpus):
    by_doc: dict[str, list[dict]] = {}
    for row in corpus.gold:
        by_doc.setdefault(row["id_document"], []).append(row)
    return by_doc


def _spans_in_text(corpus):
    """(extracted text, gold span, text start, text end) for every gold span."""
    by_doc = _spans_by_doc(corpus)
    for note in corpus.notes:
        parsed = html_to_text(note["html"])
        for span in by_doc.get(note["id_document"], []):
            yield (parsed.text, span, *parsed.text_span(span["html_start"], span["html_end"]))


def _masked_lines(corpus, family=None):
    """Text lines holding an entity, entities replaced by their label and digits by 0: the wording."""
    by_doc = _spans_by_doc(corpus)
    lines = Counter()
    for note in corpus.notes:
        if family is not None and corpus.families[note["id_document"]] != family:
            continue
        parsed = html_to_text(note["html"])
        text, parts, position = parsed.text, [], 0
        for span in by_doc.get(note["id_document"], []):
            start, end = parsed.text_span(span["html_start"], span["html_end"])
            parts += [text[position:start], f"<{span['label']}>"]
            position = end
        parts.append(text[position:])
        for line in "".join(parts).split("\n"):
            if re.search(r"<[A-Z]+>", line):
                lines[re.sub(r"\d+", "0", line.strip())] += 1
    return lines


# -- gold ----------------------------------------------------------------------------------------------


def _assert_gold_reads_back(corpus) -> None:
    by_doc = _spans_by_doc(corpus)
    checked = 0
    for note in corpus.notes:
        parsed = html_to_text(note["html"])
        for span in by_doc.get(note["id_document"], []):
            start, end = parsed.text_span(span["html_start"], span["html_end"])
            assert parsed.text[start:end] == span["text"], span
            # the span starts and ends on real characters: mapping back gives the very same offsets
            assert parsed.html_span(start, end) == (span["html_start"], span["html_end"]), span
            checked += 1
    assert checked == len(corpus.gold) > 1000


def test_every_gold_span_reads_back_exactly_through_html_to_text(corpus):
    _assert_gold_reads_back(corpus)


def test_spans_never_start_or_end_on_a_tag_a_space_or_nbsp(corpus):
    html_of = {n["id_document"]: n["html"] for n in corpus.notes}
    for span in corpus.gold:
        html, start, end = html_of[span["id_document"]], span["html_start"], span["html_end"]
        assert html[start] != "<" and not html.startswith("&nbsp;", start), span
        assert html[end - 1] != ">" and not html[:end].endswith("&nbsp;"), span
        assert span["text"] == span["text"].strip(" \xa0\n\t") and span["text"], span


def test_spans_never_overlap(corpus):
    for spans in _spans_by_doc(corpus).values():
        ordered = sorted(spans, key=lambda s: s["html_start"])
        for left, right in itertools.pairwise(ordered):
            assert left["html_end"] <= right["html_start"], (left, right)


def test_every_label_and_at_least_ten_document_types_appear(corpus):
    assert set(corpus.label_counts()) == set(LABELS)
    assert all(n > 0 for n in corpus.label_counts().values()), corpus.label_counts()
    assert len(DOCUMENT_TYPES) >= 10
    assert {n["doc_type"] for n in corpus.notes} == set(DOCUMENT_TYPES)


def test_entities_split_by_markup_and_written_with_references_are_in_the_gold(corpus):
    html_of = {n["id_document"]: n["html"] for n in corpus.notes}
    raw = [html_of[s["id_document"]][s["html_start"] : s["html_end"]] for s in corpus.gold]
    assert any("<" in r for r in raw), "no entity split by markup (<b>Jean</b> DUPONT)"
    assert any(re.search(r"&(#\d+|#x[0-9A-F]+|[a-z]+);", r) for r in raw), "no character reference inside an entity"
    assert any("&nbsp;" in r for r in raw), "no &nbsp; inside an entity"


def test_eponyms_homonyms_times_and_ages_stay_unannotated(corpus):
    texts = " ".join(html_to_text(n["html"]).text for n in corpus.notes)
    for word in ("Parkinson", "Crohn", "Glasgow", "Babinski", "médecin de garde", "voile du palais", "taillis"):
        assert word in texts, word
    gold_text = " ".join(s["text"] for s in corpus.gold)
    for word in ("Parkinson", "Crohn", "Glasgow", "Babinski", "palais", "taillis"):
        assert word not in gold_text
    for span in corpus.gold:
        if span["label"] == "DATE":
            assert not re.search(r"\d\s?h\s?\d|\bans\b|jours|^J\d", span["text"]), span
            assert not re.fullmatch(r"[a-zéû]+", span["text"]), span  # a month or weekday alone is not a date


def test_relatives_are_patient_and_nurses_are_doctor(corpus):
    relative_seen = nurse_seen = False
    for text, span, start, _ in _spans_in_text(corpus):
        before = text[max(0, start - 20) : start]
        if re.search(r"(sa fille|son fils|son époux|sa sœur|sa voisine)[ ,]+(M\.|Mme)? ?$", before):
            assert span["label"] == "PATIENT", (before, span)
            relative_seen = True
        if re.search(r"(IDE :?|infirmière|infirmier) $", before):
            assert span["label"] == "DOCTOR", (before, span)
            nurse_seen = True
    assert relative_seen and nurse_seen


# -- notes table and metadata -----------------------------------------------------------------------------


def test_notes_table_follows_the_input_contract(written):
    table = pq.read_table(written / "notes.parquet")
    assert (
        tuple(table.column_names) == NOTE_COLUMNS == ("id_document", "id_patient", "doc_type", "html", *PATIENT_FIELDS)
    )
    assert all(str(t) == "string" for t in table.schema.types)
    rows = table.to_pylist()
    assert len({r["id_document"] for r in rows}) == len(rows)
    for row in rows:
        if row["birthdate"] is not None:
            date.fromisoformat(row["birthdate"])
    assert any(r["email"] is None for r in rows) and any(r["email"] for r in rows)


def test_metadata_disagrees_with_the_text_as_cdw_metadata_does(corpus):
    by_doc = _spans_by_doc(corpus)
    unmatched_last = accentless_caps = 0
    for note in corpus.notes:
        patient_texts = strip_accents(
            " ".join(s["text"] for s in by_doc.get(note["id_document"], []) if s["label"] == "PATIENT")
        ).upper()
        if note["lastname"] and strip_accents(note["lastname"]).upper() not in patient_texts:
            unmatched_last += 1  # maiden name in the CDW, married name in the letter (or a typo)
        if note["firstname"] and note["firstname"] == strip_accents(note["firstname"]).upper():
            accentless_caps += 1
    assert unmatched_last > 0 and accentless_caps > 0
    assert any(v is None for n in corpus.notes for k, v in n.items() if k in ("address", "phone", "zip"))


def test_several_notes_per_patient():
    corpus = generate_corpus(SynthConfig(notes=60, patients=12, seed=3))
    per_patient = Counter(n["id_patient"] for n in corpus.notes)
    assert len(per_patient) == 12 and max(per_patient.values()) >= 3


# -- knowledge-base files ----------------------------------------------------------------------------------


def test_ban_files_parse_with_the_official_23_column_header(written, corpus):
    official = (FORMATS / "ban_csv_sample_StreetWorks-SDK.csv").read_text(encoding="utf-8").splitlines()[0].split(";")
    assert list(BAN_HEADER) == official
    pairs = set()
    for dep in pools.DEPARTEMENTS:
        with gzip.open(written / "kb" / f"adresses-{dep}.csv.gz", "rt", encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f, delimiter=";"))
        assert rows[0] == official
        assert len(rows) > 1000  # thousands of distractors, as in the national files
        for row in rows[1:]:
            record = dict(zip(official, row, strict=True))
            assert record["code_insee"].startswith(dep) and re.fullmatch(r"\d{5}", record["code_postal"])
            pairs.add((record["code_postal"], record["nom_commune"]))
            pairs.add((record["code_postal"], record["libelle_acheminement"]))
    # the postcode and city of every patient belong together in the generated gazetteer
    for note in corpus.notes:
        if note["zip"] and note["city"]:
            assert (note["zip"], note["city"]) in pairs, (note["zip"], note["city"])


def test_annuaire_file_has_the_official_header_trailing_bar_and_52_columns(written):
    official_header = (FORMATS / "rpps_small.txt").read_text(encoding="utf-8-sig").splitlines()[0]
    [path] = (written / "kb").glob("PS_LibreAcces_Personne_activite_*.txt")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == official_header == "|".join(ANNUAIRE_HEADER) + "|"
    assert len(lines) > 2000
    for line in lines:
        fields = line.split("|")
        assert len(fields) == 53 and fields[-1] == "", line[:60]
    professions = Counter(line.split("|")[10] for line in lines[1:])
    assert professions["Médecin"] > 500 and professions["Infirmier"] > 200


def _key(first: str, last: str) -> tuple[str, str]:
    return strip_accents(last).upper(), strip_accents(first).upper().replace("-", " ")


@pytest.mark.parametrize("missing", [0.0, 0.5, 1.0])
def test_missing_professionals_are_left_out_of_the_directory(missing):
    corpus = generate_corpus(SynthConfig(notes=40, seed=5, missing_professionals=missing, distractor_professionals=0))
    directory = {_key(line.split("|")[8], line.split("|")[7]) for line in corpus.annuaire[1:]}
    physicians = [p for p in corpus.world.professionals if p.role in ("praticien", "chef de service")]
    for pro in physicians:
        assert (_key(pro.first, pro.last) in directory) == pro.in_directory
    share_in = sum(p.in_directory for p in physicians) / len(physicians)
    assert abs(share_in - (1 - missing)) < 0.15
    secretaries = [p for p in corpus.world.professionals if p.role == "secrétaire"]
    assert secretaries and not any(p.in_directory for p in secretaries)  # not health professionals


def test_streets_missing_from_the_ban_are_exactly_those_drawn_missing():
    corpus = generate_corpus(SynthConfig(notes=60, seed=9, missing_streets=0.5, distractor_professionals=0))
    in_ban = {(row[6], row[4]) for rows in corpus.ban.values() for row in rows}
    flags = []
    for streets in corpus.world.streets.values():
        for street in streets:
            assert ((street.commune.insee, street.name) in in_ban) == street.in_ban
            flags.append(street.in_ban)
    assert not all(flags) and any(flags)


# -- phrasing families ---------------------------------------------------------------------------------------


def test_held_out_family_uses_wording_the_training_family_never_uses():
    train_a = _masked_lines(generate_corpus(SynthConfig(notes=120, seed=11, phrasing="train")))
    train_b = _masked_lines(generate_corpus(SynthConfig(notes=120, seed=12, phrasing="train")))
    heldout = _masked_lines(generate_corpus(SynthConfig(notes=120, seed=12, phrasing="heldout")))

    def seen_share(reference: Counter, other: Counter) -> float:
        return sum(n for line, n in other.items() if line in reference) / sum(other.values())

    # another training corpus mostly reuses training wording; the held-out one mostly does not
    assert seen_share(train_a, train_b) > 0.8
    assert seen_share(train_a, heldout) < 0.2


# -- reproducibility and the command line -------------------------------------------------------------------


def test_synth_command_is_deterministic_and_prints_only_counts(tmp_path):
    runner = CliRunner()
    outputs = []
    for name in ("a", "b"):
        result = runner.invoke(
            main, ["synth", "--notes", "300", "--seed", "1", "--out", str(tmp_path / name), "--verbose"]
        )
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    assert {str(p) for p in files_a} >= {
        "notes.parquet",
        "gold.parquet",
        "gold.jsonl",
        "README.md",
        "kb/adresses-35.csv.gz",
    }
    for rel in files_a:
        if rel.name != "README.md":  # the README quotes the --out path
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    # the summary is counts only: no name, no identifier from the notes
    notes = pq.read_table(tmp_path / "a" / "notes.parquet").to_pylist()
    assert "PATIENT" in outputs[0] and "hospitalisation_report" in outputs[0]
    for note in notes[:50]:
        assert note["id_document"] not in outputs[0]
        if note["lastname"]:
            assert note["lastname"] not in outputs[0]
    gold = pq.read_table(tmp_path / "a" / "gold.parquet").to_pylist()
    jsonl = list((tmp_path / "a" / "gold.jsonl").read_text(encoding="utf-8").splitlines())
    assert len(jsonl) == len(gold) > 0


def test_different_seeds_give_different_corpora():
    a = generate_corpus(SynthConfig(notes=20, seed=1, distractor_professionals=0))
    b = generate_corpus(SynthConfig(notes=20, seed=2, distractor_professionals=0))
    assert [n["html"] for n in a.notes] != [n["html"] for n in b.notes]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--noise", "2"], "--noise"),
        (["--notes", "0"], "--notes"),
        (["--notes", "10", "--patients", "20"], "--patients"),
        (["--phrasing", "nope"], "--phrasing"),
        (["--missing-streets", "-0.1"], "--missing-streets"),
    ],
)
def test_bad_options_give_a_clear_error(tmp_path, args, message):
    result = CliRunner().invoke(main, ["synth", "--out", str(tmp_path / "x"), *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_readme_of_a_sample_counts_what_the_gold_holds(written, corpus):
    readme = (written / "README.md").read_text(encoding="utf-8")
    assert "deid-ds synth --notes 150" in readme
    for label, n in corpus.label_counts().items():
        assert f"| {label} | {n:,} |" in readme


# -- pools ----------------------------------------------------------------------------------------------------


def test_pools_are_large_and_communes_coherent():
    assert len(pools.surnames()) >= 500
    assert sum(len(v) for v in pools.first_names().values()) >= 300
    communes = pools.communes()
    assert len({c.insee for c in communes}) == len(communes) >= 100
    for commune in communes:
        assert commune.departement in pools.DEPARTEMENTS
        assert all(pc.startswith(commune.departement) and len(pc) == 5 for pc in commune.postcodes)


def test_committed_sample_matches_its_readme():
    """data/ is regenerated by the command its README quotes; its counts are those of its gold."""
    data = Path(__file__).resolve().parents[2] / "data"
    assert (data / "gold.parquet").is_file(), "the 300-note sample is committed under data/"
    gold = pq.read_table(data / "gold.parquet").to_pylist()
    readme = (data / "README.md").read_text(encoding="utf-8")
    counts = Counter(row["label"] for row in gold)
    for label in LABELS:
        assert f"| {label} | {counts[label]:,} |" in readme
    assert re.search(r"deid-ds synth --notes \d+ --patients \d+ --seed \d+", readme)


# -- family 2: the `unseen` house style -------------------------------------------------------------------


@pytest.fixture(scope="module")
def unseen():
    """A small, noisy corpus in the third house style (family 2)."""
    return generate_corpus(SynthConfig(notes=150, seed=13, noise=0.8, phrasing="unseen", distractor_professionals=0))


def test_unseen_gold_reads_back_exactly_and_spans_are_clean(unseen):
    assert set(unseen.families.values()) == {2}
    _assert_gold_reads_back(unseen)
    test_spans_never_start_or_end_on_a_tag_a_space_or_nbsp(unseen)
    test_spans_never_overlap(unseen)


def test_unseen_has_every_label_every_document_type_and_its_own_markup(unseen):
    assert all(n > 0 for n in unseen.label_counts().values()), unseen.label_counts()
    assert {n["doc_type"] for n in unseen.notes} == set(DOCUMENT_TYPES)
    assert all("class=MsoNormal" in n["html"] for n in unseen.notes)


def test_unseen_writes_the_constructs_it_promises(unseen):
    texts = {label: [s["text"] for s in unseen.gold if s["label"] == label] for label in LABELS}
    assert any(re.fullmatch(r"[A-ZÀ-Ý' -]{2,} [A-Z][a-zà-ÿ-]+", t) for t in texts["PATIENT"])  # NOM Prénom
    assert any(t == t.lower() and t.isalpha() for t in texts["DOCTOR"])  # "vu avec dr kerbrat"
    assert any(re.fullmatch(r"\d{1,2}/\d{1,2}/\d\d", t) for t in texts["DATE"])  # 3/2/21
    assert any(" fév. " in t or " janv. " in t or " déc. " in t for t in texts["DATE"])
    assert any(t.startswith("+33 (0)") for t in texts["PHONE"])
    assert any(re.search(r"\b(Av\.|Bld|Chem\.|Rte|Imp\.|Pl\.|LD)\s", t) for t in texts["STR"])
    full = " ".join(html_to_text(n["html"]).text for n in unseen.notes)
    for cue in ("Praticien responsable :", "Rédigé par", "Résidant au", "Tél portable", "Destinataires", "IPP"):
        assert cue in full, cue
    ipps = re.findall(r"IPP :? (\d{8})", full)
    assert ipps and not set(ipps) & {s["text"] for s in unseen.gold}  # administrative numbers are not entities


def test_unseen_relatives_are_patient_and_roles_after_a_name_are_outside_it(unseen):
    relative_seen = role_seen = False
    for text, span, start, end in _spans_in_text(unseen):
        if re.search(
            r"(sa fille|son fils|son époux|sa sœur|sa voisine) (M\.|Mme|Madame|Monsieur) $",
            text[max(0, start - 25) : start],
        ):
            assert span["label"] == "PATIENT", span
            relative_seen = True
        if re.match(r" \((IDE|interne|kiné)\)", text[end : end + 10]):
            assert span["label"] == "DOCTOR" and "(" not in span["text"], span
            role_seen = True
        if span["label"] == "STR":  # street type words, "lieu-dit" and "LD" included, are inside the span
            assert not re.search(r"(lieu-dit|Lieu dit|LD|rue|Av\.) $", text[max(0, start - 10) : start]), span
    assert relative_seen and role_seen


def test_unseen_wording_is_new_to_both_other_families(unseen):
    train = _masked_lines(
        generate_corpus(SynthConfig(notes=120, seed=11, phrasing="train", distractor_professionals=0))
    )
    heldout = _masked_lines(
        generate_corpus(SynthConfig(notes=120, seed=11, phrasing="heldout", distractor_professionals=0))
    )
    lines = _masked_lines(unseen, family=2)
    # what is shared is what every French letter writes alike: bare address lines, "Docteur <DOCTOR>", "CHU de <VILLE>"
    for reference in (train, heldout):
        assert sum(n for line, n in lines.items() if line in reference) / sum(lines.values()) < 0.1


def test_unseen_is_deterministic_and_leaves_the_other_families_unchanged(unseen):
    again = generate_corpus(SynthConfig(notes=150, seed=13, noise=0.8, phrasing="unseen", distractor_professionals=0))
    assert again.notes == unseen.notes and again.gold == unseen.gold
    # family 2 has its own writers and random stream: the committed sample (family 0) is still what it was
    data = Path(__file__).resolve().parents[2] / "data"
    assert (data / "gold.jsonl").is_file(), "the 300-note sample is committed under data/"
    sample = generate_corpus(SynthConfig(notes=300, patients=80, seed=1))
    committed = [json.loads(line) for line in (data / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sample.gold == committed
    assert [n["html"] for n in sample.notes] == pq.read_table(data / "notes.parquet", columns=["html"]).column(
        "html"
    ).to_pylist()


def test_synth_command_accepts_unseen_and_its_readme_says_so(tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "synth",
            "--notes",
            "12",
            "--seed",
            "4",
            "--phrasing",
            "unseen",
            "--out",
            str(tmp_path),
            "--distractor-professionals",
            "0",
            "--distractor-streets",
            "1",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "--phrasing unseen" in readme and "family 2" in readme
