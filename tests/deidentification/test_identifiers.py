"""The direct identifiers that are not one of the eight labels: checksums, cues, what is kept, and surrogates."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification.context import Context
from deid_ds.deidentification.dates_shift import date_offset
from deid_ds.deidentification.identifier_surrogates import identifier_replacement
from deid_ds.deidentification.identifiers import (
    IBAN_LENGTHS,
    compact,
    find_all,
    find_identifiers,
    iban_check_digits,
    is_valid_iban,
    is_valid_nir,
    is_valid_rpps,
    known_values,
    luhn_ok,
    nir_key,
    rib_key,
)
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.pools import load_pools
from deid_ds.model import PatientMetadata


def _found(text: str) -> list[tuple[str, str]]:
    """``(value as written, kind)`` of every identifier of ``text``, repeats included."""
    found = find_all(text, known_values(text, find_identifiers(text)))
    return [(text[i.start : i.end], i.kind) for i in found]


def _nir(body: str) -> str:
    return body + nir_key(body)


# ------------------------------------------------------------------------------------------ checksums


def test_the_nir_key_is_97_minus_the_number_mod_97():
    assert nir_key("1841275123456") == f"{97 - 1841275123456 % 97:02d}"
    assert is_valid_nir("1 84 12 75 123 456 " + nir_key("1841275123456"))
    assert not is_valid_nir("1 84 12 75 123 456 " + f"{(int(nir_key('1841275123456')) + 1) % 100:02d}")
    assert not is_valid_nir("1841275123456")  # no key: nothing to check


def test_corsica_reads_2a_as_19_and_2b_as_18_for_the_key():
    assert nir_key("269052A123456") == f"{97 - 2690519123456 % 97:02d}"
    assert nir_key("269052B123456") == f"{97 - 2690518123456 % 97:02d}"
    assert is_valid_nir(_nir("269052A123456")) and is_valid_nir(_nir("269052b123456").upper())
    assert not is_valid_nir("269052A123456" + nir_key("269052B123456"))


def test_an_iban_holds_its_mod_97_checksum_and_its_countrys_length():
    assert is_valid_iban("FR76 3000 6000 0112 3456 7890 189")
    assert is_valid_iban("GB82 WEST 1234 5698 7654 32") and is_valid_iban("be68539007547034")
    assert not is_valid_iban("FR76 3000 6000 0112 3456 7890 188")  # one digit off
    assert not is_valid_iban("FR76 3000 6000 0112 3456 7890 18")  # France's are 27 characters
    assert not is_valid_iban("ZZ76 3000 6000 0112 3456 7890 189")  # no such country
    assert iban_check_digits("FR", "30006000011234567890189") == "76"
    assert rib_key("300060000112345678901") == "89"  # the RIB of the IBAN above


def test_rpps_numbers_hold_their_luhn_checksum():
    assert luhn_ok("79927398713") and not luhn_ok("79927398710")
    assert is_valid_rpps("10000000009") and not is_valid_rpps("10000000008")
    assert is_valid_rpps("810000000009")  # the national identifier: 8 and the RPPS number
    assert not is_valid_rpps("20000000007")  # an RPPS number starts with 1


# ------------------------------------------------------------------------------------------ cues


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("NIR : 1 84 12 75 123 456 78", "1 84 12 75 123 456 78", "NIR"),
        ("N° de sécurité sociale: 184127512345678", "184127512345678", "NIR"),
        ("numero de securite sociale 1.84.12.75.123.456", "1.84.12.75.123.456", "NIR"),
        ("N.SS      : 2 00 06 44 433 116 32", "2 00 06 44 433 116 32", "NIR"),
        ("INS-NIR 2 69 05 2A 123 456 88", "2 69 05 2A 123 456 88", "INS"),
        ("matricule INS : 184127512345678", "184127512345678", "INS"),
        ("IPP : 26752240", "26752240", "IPP"),
        ("ipp:26752240", "26752240", "IPP"),
        ("NIP 0012345", "0012345", "IPP"),
        ("N° patient   26752240", "26752240", "IPP"),
        ("No Patient : 26752240", "26752240", "IPP"),
        ("NDA : 221234567", "221234567", "NDA"),
        ("N° séjour : 221234567", "221234567", "NDA"),
        ("n° de venue 2020123456", "2020123456", "NDA"),
        ("NUMERO DE SEJOUR 221234567", "221234567", "NDA"),
        ("n°séjour:221234567", "221234567", "NDA"),
        ("Nº dossier 4521", "4521", "DOSSIER"),
        ("Num. dossier : 2021/00123", "2021/00123", "DOSSIER"),
        ("N° DE DOSSIER 4521", "4521", "DOSSIER"),
        ("N° d'examen : B21-89899", "B21-89899", "EXAMEN"),
        ("N° demande :\t1508057618\tAdresse", "1508057618", "EXAMEN"),
        ("Dr KERBRAT, RPPS 10224953545.", "10224953545", "RPPS"),
        ("N° RPPS 41862369805", "41862369805", "RPPS"),
        ("ADELI 351234567", "351234567", "ADELI"),
        ("Né(e) le :\t26/09/1994\tIPP :\t80092945", "80092945", "IPP"),
        ("26752240 (IPP, 1.2.250.1.71.4.2.7.1234)", "26752240", "IPP"),
        ("IPP : 2675\u00ad2240", "2675\u00ad2240", "IPP"),  # a soft hyphen inside: one number
        ("Dossier : 2021-12345", "2021-12345", "DOSSIER"),  # the word alone, before a number
        ("Réf. dossier 123456", "123456", "DOSSIER"),
        ("Identifiant : 45678901", "45678901", "IPP"),
        ("Episode 12345678", "12345678", "NDA"),
        ("Matricule : 1841275123456", "1841275123456", "NIR"),  # 13 digits, no key
        ("RPPS : 1 00 034 567 89", "1 00 034 567 89", "RPPS"),  # grouped
        ("Séjour 22012345", "22012345", "NDA"),  # the word alone, before a number of six digits or more
        ("Venue : V2022-88123", "V2022-88123", "NDA"),
        ("N° adhérent 123456789", "123456789", "MUTUELLE"),
        ("n° d'adhérent : 12345678", "12345678", "MUTUELLE"),
        ("N° de mutuelle 987654321", "987654321", "MUTUELLE"),
        ("N° adhérent mutuelle : 987654321", "987654321", "MUTUELLE"),
        ("N° AMC : 07512345", "07512345", "MUTUELLE"),
        ("n° d'affiliation 98765432", "98765432", "MUTUELLE"),
        ("Mutuelle : MGEN, n° de contrat 123456789", "123456789", "MUTUELLE"),  # a contract, near a mutual
        ("CNI n° 123456789012", "123456789012", "PIECE_IDENTITE"),
        ("Carte nationale d'identité : 880692310285", "880692310285", "PIECE_IDENTITE"),
        ("N° de passeport : 12AB34567", "12AB34567", "PIECE_IDENTITE"),
        ("Passeport n° X4RTBPFW4", "X4RTBPFW4", "PIECE_IDENTITE"),  # letters, no two digits in a row
        ("titre de séjour n° 1234567890", "1234567890", "PIECE_IDENTITE"),  # a document, not a stay
        ("Permis de conduire : 123456789012", "123456789012", "PIECE_IDENTITE"),
        ("n° AME 1234567890123", "1234567890123", "PIECE_IDENTITE"),
        ("IBAN : FR76 3000 6000 0112 3456 7890 189", "FR76 3000 6000 0112 3456 7890 189", "IBAN"),
        ("IBAN FR76 3000 6000 0112 3456 7890 188", "FR76 3000 6000 0112 3456 7890 188", "IBAN"),  # a typo: cued
        ("RIB : 30006 00001 12345678901 89", "30006 00001 12345678901 89", "IBAN"),  # a French RIB
    ],
)
def test_a_number_after_its_cue_is_found_whatever_the_spelling(text, value, kind):
    assert (value, kind) in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "IPP : 12/03/2021",  # a date, not a number
        "n° de venue 2020",  # a year
        "N° patient 12",  # too short
        "Tél : 02 99 28 43 21, code postal 35000, Hb 11,6 g/dL, TA 13/8",
        "FINESS 290159611 - UF 1845",
        "N° FINESS : 290000017",
        "SIRET 26290159611234, SIREN 262901596",
        "N° 8-3360 COFRAC, Dictée n° 1234, réf. 12345",
        "Patient : 26752240",  # no number cue: "patient" alone names no identifier
        "184127512345679",  # a NIR-shaped number whose key does not hold
        "Dossier suivi depuis 2019, revu le 12/03/2021, dossier de 4 pages",  # a year, a date, a count
        "Episode dépressif en 2019",
        "Séjour de 3 semaines, venue aux urgences le 12/03/2021 à 10h30",
        "Dates du séjour : 12/03/2021 - 15/03/2021 ; séjour 2021-2022 ; venue 15/03",
        "Séjour 1234 en SSR",  # a bare séjour wants six digits
        "passeport vaccinal, CNI valide jusqu'au 12/03/2030, permis de conduire B depuis 2005",
        "titre de séjour 2021-2031, carte de séjour du 12/03/2021",  # a range of years, a date
        "Contrat de soins n° 12345678",  # a contract far from any mutual
        "SIRET 26290159611234 FR",
        "AB12 3456 7890 1234 5678",  # no country writes it: no IBAN
    ],
)
def test_no_cue_no_valid_key_or_a_kept_cue_is_no_identifier(text):
    assert _found(text) == []


def test_finess_and_siret_stay_even_when_their_digits_would_pass_a_checksum():
    assert _found("FINESS 10000000009 SIRET " + _nir("1841275123456")) == []


def test_without_a_cue_a_valid_nir_or_rpps_is_found_by_its_checksum():
    nir = _nir("1841275123456")
    spaced = " ".join([nir[0], nir[1:3], nir[3:5], nir[5:7], nir[7:10], nir[10:13], nir[13:]])
    assert _found(f"Assuré {spaced}, praticien 10000000009.") == [(spaced, "NIR"), ("10000000009", "RPPS")]
    assert _found(_nir("269052A123456")) == [(_nir("269052A123456"), "NIR")]


def test_without_a_cue_an_iban_is_found_by_its_checksum_cut_at_its_countrys_length():
    assert _found("virement sur GB82 WEST 1234 5698 7654 32 merci") == [("GB82 WEST 1234 5698 7654 32", "IBAN")]
    assert _found("BE68 5390 0754 7034 2024") == [("BE68 5390 0754 7034", "IBAN")]  # the year stays
    assert _found("FR76 30006 00001 12345678901 89, ok") == [("FR76 30006 00001 12345678901 89", "IBAN")]  # as a RIB
    assert _found("FINESS 290000017 ; fr7630006000011234567890189.") == [("fr7630006000011234567890189", "IBAN")]
    assert _found("FR76 3000 6000 0112 3456 7890 188") == []  # its checksum does not hold, and no cue


def test_a_contract_number_is_a_mutuals_only_near_a_word_of_one():
    assert _found("Complémentaire santé : Harmonie\nN° de contrat : 4455667788") == [("4455667788", "MUTUELLE")]
    assert _found("contrat n° 4455667788 mutuelle") == []  # the mutual after the number says nothing
    assert _found("N° de contrat mutuelle 4455667788") == [("4455667788", "MUTUELLE")]


def test_a_column_header_names_the_numbers_under_it():
    fixed = "IPP       NOM          PRENOM\n26752240  JACQ         CHARLOTTE\n"
    tabbed = "Nom\tRPPS\tService\nKERBRAT\t41862369805\tUrologie\nLE GALL\t41862369806\tORL\n\nRPPS 2"
    assert _found(fixed) == [("26752240", "IPP")]
    assert _found(tabbed) == [("41862369805", "RPPS"), ("41862369806", "RPPS")]
    assert _found("FINESS      UF\n290159611   1845\n") == []
    assert _found("Date\tSéjour\tUF\n12/03/2021\t22012345\t1845\n15/03/2021\t15/03\t1845\n") == [
        ("22012345", "NDA")  # a bare Séjour over a column: six digits or more, never a date
    ]
    assert _found("Mutuelle\tN° contrat\nMGEN\t4455667788\n") == [("4455667788", "MUTUELLE")]
    assert _found("Objet\tN° contrat\nLocation\t4455667788\n") == []  # no mutual on the header line


def test_a_value_found_once_is_found_again_wherever_it_is_written():
    text = "IPP : 26752240. Étiquette 26 75 22 40 ; dossier 26752240"
    assert _found(text) == [("26752240", "IPP"), ("26 75 22 40", "IPP"), ("26752240", "IPP")]


# ------------------------------------------------------------------------------------------ surrogates


def _ctx(birthdate: str | None = "1984-12-03", scope: str = "patient:p1") -> Context:
    keyring = Keyring(b"identifier-test-key-0123456789")
    return Context(keyring, load_pools(None), scope, PatientMetadata(birthdate=birthdate))


def test_a_nir_surrogate_keeps_the_sex_and_carries_the_shifted_birth_month_and_year():
    ctx = _ctx("1984-12-03")
    original = "1 84 12 75 123 456 " + nir_key("1841275123456")
    new = identifier_replacement(ctx, "NIR", original, "surrogate")
    moved = dt.date(1984, 12, 3) + dt.timedelta(days=date_offset(ctx))
    assert is_valid_nir(new) and new != original
    assert [len(g) for g in new.split(" ")] == [1, 2, 2, 2, 3, 3, 2]  # written as it was
    assert new[0] == "1" and new[2:4] == f"{moved.year % 100:02d}" and new[5:7] == f"{moved.month:02d}"


def test_surrogates_are_keyed_by_scope_and_of_the_same_shape():
    ctx, other = _ctx(), _ctx(scope="patient:p2")
    assert identifier_replacement(ctx, "IPP", "26752240", "surrogate") == identifier_replacement(
        _ctx(), "IPP", "26752240", "surrogate"
    )
    assert identifier_replacement(ctx, "IPP", "26752240", "surrogate") != identifier_replacement(
        other, "IPP", "26752240", "surrogate"
    )
    exam = identifier_replacement(ctx, "EXAMEN", "B21-89899", "surrogate")
    assert exam[:1] == "B" and exam[3] == "-" and len(exam) == 9 and exam != "B21-89899"
    rpps = identifier_replacement(ctx, "RPPS", "10224953545", "surrogate")
    assert is_valid_rpps(rpps) and rpps != "10224953545"
    assert rpps == identifier_replacement(other, "RPPS", "10224953545", "surrogate")  # a professional's: everywhere
    assert luhn_ok(identifier_replacement(ctx, "ADELI", "351234567", "surrogate"))
    assert identifier_replacement(ctx, "NIR", "1 84 12 75 123 456", "mask", "[{label}]") == "[NIR]"


def test_an_iban_surrogate_is_a_valid_iban_of_the_same_country_grouped_as_the_original():
    ctx = _ctx()
    new = identifier_replacement(ctx, "IBAN", "FR76 3000 6000 0112 3456 7890 189", "surrogate")
    assert is_valid_iban(new) and new.startswith("FR") and [len(g) for g in new.split(" ")] == [4, 4, 4, 4, 4, 4, 3]
    assert compact(new) != "FR7630006000011234567890189" and rib_key(compact(new)[4:]) == compact(new)[-2:]
    assert new == identifier_replacement(_ctx(), "IBAN", "FR76 3000 6000 0112 3456 7890 189", "surrogate")  # keyed
    british = identifier_replacement(ctx, "IBAN", "GB82 WEST 1234 5698 7654 32", "surrogate")
    assert is_valid_iban(british) and british[:2] == "GB" and british[5:9].isalpha()  # letters for letters
    rib = compact(identifier_replacement(ctx, "IBAN", "30006 00001 12345678901 89", "surrogate"))
    assert len(rib) == 23 and rib.isdigit() and rib_key(rib) == rib[-2:] and rib != "30006000011234567890189"
    assert identifier_replacement(ctx, "IBAN", "FR76 3000", "mask", "[{label}]") == "[IBAN]"


@settings(max_examples=200, deadline=None)
@given(
    country=st.sampled_from(sorted(IBAN_LENGTHS)),
    chars=st.text(alphabet="0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=30, max_size=30),
    spaced=st.booleans(),
)
def test_every_iban_surrogate_holds_its_checksum_and_keeps_its_country_and_length(country, chars, spaced):
    bban = chars[: IBAN_LENGTHS[country] - 4]
    original = country + iban_check_digits(country, bban) + bban
    written = " ".join(original[i : i + 4] for i in range(0, len(original), 4)) if spaced else original
    new = identifier_replacement(_ctx(), "IBAN", written, "surrogate")
    assert is_valid_iban(new) and new[:2] == country and len(new) == len(written) and compact(new) != original
    assert [c.isdigit() for c in compact(new)[4:]] == [c.isdigit() for c in bban]  # a digit for a digit


@settings(max_examples=200, deadline=None)
@given(
    sex=st.sampled_from("12"),
    year=st.integers(0, 99),
    month=st.integers(1, 12),
    department=st.sampled_from([f"{d:02d}" for d in range(1, 96) if d != 20] + ["2A", "2B"]),
    rest=st.integers(1000, 999999),
    birthdate=st.sampled_from([None, "1984-12-03", "2003-02-28"]),
)
def test_a_surrogate_nir_is_always_valid_and_never_the_original(sex, year, month, department, rest, birthdate):
    body = f"{sex}{year:02d}{month:02d}{department}{rest:06d}"
    original = body + nir_key(body)
    new = identifier_replacement(_ctx(birthdate), "NIR", original, "surrogate")
    assert is_valid_nir(new) and compact(new) != compact(original) and new[0] == sex
