"""The BAN and Annuaire Santé readers on the real sample rows, generated files and bad input."""

from __future__ import annotations

import gzip
import zipfile

import pytest

from deid_ds.kb.annuaire import read_directory
from deid_ds.kb.ban import read_ban
from deid_ds.kb.source_files import SourceError
from tests.conftest import FORMATS

BAN_SAMPLE = FORMATS / "ban_csv_sample_StreetWorks-SDK.csv"
RPPS_SAMPLE = FORMATS / "rpps_small.txt"


def gz(path, text: str):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(text)
    return path


def ban_lines() -> list[str]:
    return BAN_SAMPLE.read_text(encoding="utf-8").splitlines()


def directory_lines() -> list[str]:
    extra = [
        line
        for line in (FORMATS / "rpps_extra_lines.txt").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    return RPPS_SAMPLE.read_text(encoding="utf-8").splitlines() + extra


def test_real_ban_rows_give_streets_lieux_dits_communes_and_postcodes(tmp_path):
    tables, stats = read_ban(gz(tmp_path / "adresses-01.csv.gz", "\n".join(ban_lines()) + "\n"))
    assert (stats.rows_read, stats.rows_kept, stats.rejected, stats.columns) == (6, 6, {}, 23)
    streets = tables.streets.result().to_pylist()
    assert {
        "nom_voie": "Le Mas Renouard",
        "code_insee": "48003",
        "code_postal": "48190",
        "nom_commune": "Allenc",
        "n": 1,
    } in streets
    communes = {(r["nom_commune"], r["code_insee"]) for r in tables.communes.result().to_pylist()}
    assert ("L'Abergement-de-Varey", "01002") in communes
    postcodes = tables.postcodes.result().to_pylist()
    assert any(
        r["code_postal"] == "01640" and r["libelle_acheminement"] == "ABERGEMENT-DE-VAREY (L )" for r in postcodes
    )


def test_an_old_20_column_ban_file_is_read_by_column_names(tmp_path):
    header, *rows = ban_lines()
    names = header.split(";")
    dropped = [names.index(c) for c in ("type_position", "certification_commune", "cad_parcelles")]
    keep = [i for i in range(len(names)) if i not in dropped]
    text = "\n".join(";".join(line.split(";")[i] for i in keep) for line in [header, *rows]) + "\n"
    tables, stats = read_ban(gz(tmp_path / "adresses-01.csv.gz", text))
    assert stats.columns == 20 and stats.rows_kept == 6
    assert tables.streets.result().num_rows == 6


def test_bad_rows_are_skipped_counted_and_shown_with_their_line(tmp_path):
    header, *rows = ban_lines()
    text = (
        "\n".join([header, rows[0], "bad;line;with;few;fields", *rows[1:], ";;;;Rue X;35000;;;;;;;;;;;;;;;;;"]) + "\n"
    )
    _, stats = read_ban(gz(tmp_path / "adresses-35.csv.gz", text))
    assert stats.rejected == {"wrong number of fields": 1, "missing nom_commune or code_insee": 1}
    assert stats.examples == ["line 3: expected 23 fields, got 5: bad;line;with;few;fields"]
    assert stats.rows_read == 7 and stats.rows_kept == 6


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p.write_bytes(b""), "empty file"),
        (lambda p: p.write_text("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"), "HTML page"),
        (lambda p: gz(p, ban_lines()[0].replace(";", ",") + "\n"), "separated by commas, expected ';'"),
        (
            lambda p: gz(p, "id;numero;nom_commune\n1;2;3\n"),
            r"missing column\(s\) 'nom_voie', 'code_postal', 'code_insee'",
        ),
        (
            lambda p: p.write_bytes(gzip.compress(("\n".join(ban_lines() * 200) + "\n").encode())[:-40]),
            "truncated or corrupt",
        ),
    ],
)
def test_a_wrong_ban_file_is_refused_with_its_name(tmp_path, make, message):
    path = tmp_path / "adresses-35.csv.gz"
    make(path)
    with pytest.raises(SourceError, match=message) as error:
        read_ban(path)
    assert str(path) in str(error.value)


def test_real_directory_rows_give_people_and_practice_sites(tmp_path):
    path = tmp_path / "PS_LibreAcces_Personne_activite_202401150830.txt"
    path.write_text("\n".join(directory_lines()) + "\n", encoding="utf-8")
    tables, stats = read_directory(path)
    assert stats.columns == 52 and stats.rows_read == 22 and not stats.rejected
    people = {r["id"]: r for r in tables.people.result().to_pylist()}
    leger = people["10100271385"]
    assert (leger["lastname"], leger["firstname"], leger["profession"], leger["civilite_exercice"]) == (
        "LEGER",
        "ROMAIN",
        "Médecin",
        "Docteur",
    )
    streets = {r["street"] for r in tables.streets.result().to_pylist()}
    assert "Faubourg SAINT ETIENNE" in streets
    contacts = {(r["value"], r["kind"]) for r in tables.contacts.result().to_pylist()}
    assert {
        ("0381385454", "phone"),
        ("0381385480", "fax"),
        ("contact@chi-hautecomte.fr", "email"),
        ("CS 10329", "mention"),
    } <= contacts


def test_one_line_per_activity_gives_one_person(tmp_path):
    lines = directory_lines()
    path = tmp_path / "PS_LibreAcces_Personne_activite_x.txt"
    path.write_text(
        "\n".join([lines[0], lines[-1], lines[-1].replace("0381385454", "0381000000")]) + "\n", encoding="utf-8"
    )
    tables, _ = read_directory(path)
    people = tables.people.result().to_pylist()
    assert len({p["id"] for p in people}) == 1


def test_the_published_zip_is_read_without_extracting_and_a_bom_is_tolerated(tmp_path):
    archive = tmp_path / "PS_LibreAcces_202401150830.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr(
            "PS_LibreAcces_Personne_activite_202401150830.txt", "\ufeff" + "\n".join(directory_lines()) + "\n"
        )
        handle.writestr("PS_LibreAcces_Dipl_AutExerc_202401150830.txt", "ignored|\n")
    tables, stats = read_directory(archive)
    assert stats.rows_read == 22 and tables.people.result().num_rows == 22


def test_newer_56_column_files_are_read(tmp_path):
    header, *rows = directory_lines()
    extra = "Code rôle|Libellé rôle|Code genre activité|Libellé genre activité|"
    path = tmp_path / "PS_LibreAcces_Personne_activite_new.txt"
    path.write_text("\n".join([header + extra, *(r + "||||" for r in rows)]) + "\n", encoding="utf-8")
    _, stats = read_directory(path)
    assert stats.columns == 56 and stats.rows_read == 22 and not stats.rejected


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty file"),
        (b"<html><head><title>Erreur</title></head></html>", "HTML page"),
        (b"Identifiant PP;Nom d'exercice\n", "separated by semicolons, expected '|'"),
        ("Identifiant PP|Nom d'exercice|Prénom d'exercice|Libellé profession\n".encode(), "does not end with '|'"),
    ],
)
def test_a_wrong_directory_file_is_refused(tmp_path, content, message):
    path = tmp_path / "PS_LibreAcces_Personne_activite_x.txt"
    path.write_bytes(content)
    with pytest.raises(SourceError, match=message):
        read_directory(path)


def test_a_zip_without_the_activity_file_is_refused(tmp_path):
    archive = tmp_path / "PS_LibreAcces.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("other.txt", "x")
    with pytest.raises(SourceError, match="holds no PS_LibreAcces_Personne_activite"):
        read_directory(archive)


def test_missing_names_are_counted(tmp_path):
    header, first, *_ = directory_lines()
    fields = first.split("|")
    fields[7] = ""  # Nom d'exercice
    path = tmp_path / "PS_LibreAcces_Personne_activite_x.txt"
    path.write_text("\n".join([header, first, "|".join(fields)]) + "\n", encoding="utf-8")
    tables, stats = read_directory(path)
    assert stats.rejected == {"missing Nom d'exercice": 1}
    assert tables.people.result().num_rows == 1
