"""The pattern and cue regexes find exactly what their plain forms find.

Each is written to be searched fast (a lookbehind moved after the first character, written dates
searched from their month, partial numeric dates matched from their "/", e-mail addresses from their
"@", cue phrases grouped by first letter and read in a lookahead); each is compared with the plain regex
it stands for, as that regex was written before: on tricky examples, then on text generated from the
pieces dates, phones, addresses and cues are made of.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.kb.normalize import fold
from deid_ds.label import cues, dates, emails, phones, zips
from deid_ds.label._text import BLANK

# -- the plain forms ---------------------------------------------------------------------------------------
_PLAIN_WRITTEN = dates._WRITTEN  # unchanged: it is now run from the month names only
_PLAIN_NUMERIC = re.compile(
    r"""
    (?<![\d/.,])(?<![\d_/.,:]:)
    (?:
        (?P<day>\d{1,2})(?P<sep>[/.\-])(?P<month>\d{1,2})(?P=sep)(?P<year>\d{4}|\d{2})
      | (?P<iso_year>\d{4})(?P<iso_sep>[\-/.])(?P<iso_month>\d{2})(?P=iso_sep)(?P<iso_day>\d{2})
      | \d(?P<glued>\d{7})
    )
    (?!\d)
    """,
    re.IGNORECASE | re.VERBOSE,
)
_PLAIN_DATES = {
    "_DAY_MONTH_NUM": re.compile(r"(?<![\d/.,])(?<![\d_/.,:]:)(?P<day>\d{1,2})/(?P<month>\d{1,2})(?![\d]|[/.,:]\d)"),
    "_MONTH_YEAR_NUM": re.compile(r"(?<![\d/.,])(?<![\d_/.,:]:)(?P<month>\d{1,2})/(?P<year>\d{4})(?![\d]|[/.,:]\d)"),
    "_YEAR": re.compile(
        r"(?<![\w/.,:+])(?:(?<=\d\d\d\d-)|(?<!-))(?P<year>1[89]\d\d|20\d\d)"
        r"(?![\w]|[/.,:]\d|-(?!(?:1[89]|20)\d\d(?!\d))\d)"
    ),
}
_SEP = r"[ \u00a0\u202f.\-]"
_PLAIN_PHONES = {
    "_NATIONAL": re.compile(rf"(?<![\w+/,\-])(?<![\d_+/,\-][.:])0[1-9](?:{_SEP}?\d{{2}}){{4}}(?!\d|[.,/:\-]\d)"),
    "_FRENCH_INTL": re.compile(
        rf"(?<![\w+/,\-])(?<![\d_+/,\-][.:])(?:\+|00){_SEP}?33{_SEP}?(?:\(0\){_SEP}?)?[1-9](?:{_SEP}?\d{{2}}){{4}}(?!\d|[.,/:\-]\d)"
    ),
    "_OTHER_INTL": re.compile(
        rf"(?<![\w+])\+(?!33)[1-9]\d{{0,2}}(?:{_SEP}?\(\d{{1,4}}\))?(?:{_SEP}?\d{{1,4}}){{2,6}}(?!\d|[.,/:\-]\d)"
    ),
}
_PLAIN_ZIP = re.compile(r"(?<![\w/.,:\-+])(?P<zip>\d{5})(?![\w]|[/.,:\-]\d)")


def _plain_cue(phrases, separator: str) -> re.Pattern[str]:
    # a whole word, or after an elided "l'" or "d'" ("l'infirmière")
    lead = r"(?:(?<![\w'])|(?<=(?<![\w'])[ld]'))"
    return re.compile(lead + "(?P<cue>" + "|".join(phrases) + ")" + cues._WORD_END + "(?P<sep>" + separator + ")")


def _by_length(phrases):
    return sorted(phrases, key=len, reverse=True)


_PLAIN_CUES = {
    "DOCTOR_CUE": _plain_cue(_by_length(cues.DOCTOR_PHRASES), cues._SEP),
    "RECIPIENT_CUE": _plain_cue(cues.RECIPIENT_PHRASES, r"[ \t:]*"),
    "PATIENT_CUE": _plain_cue(_by_length(cues.PATIENT_PHRASES), cues._SEP),
    "RELATIVE_CUE": _plain_cue(
        (r"(?:son|sa|ses|leur)[ \u00a0]+(?:" + "|".join(_by_length(cues.RELATIVE_WORDS)) + ")", *cues.RELATIVE_PHRASES),
        r"[ \t\u00a0]*[,:(]?[ \t\u00a0]*",  # "sa fille (Sophie)"
    ),
    "CITY_CUE": _plain_cue(_by_length(cues.CITY_PHRASES), cues._SEP),
}


def _plain_cue_matches(pattern: re.Pattern[str], folded: str, text: str) -> list[tuple[int, int]]:
    found = []
    for match in pattern.finditer(folded):
        if "\n" in text[match.start("cue") : match.end("cue")]:
            continue
        cut = text[match.end("cue") : match.end()].find("\n")
        found.append((match.start(), match.end() if cut < 0 else match.end("cue") + cut))
    return found


def _groups(matches) -> list[tuple]:
    return [(m.span(), m.groupdict()) for m in matches]


# -- checks ------------------------------------------------------------------------------------------------
def check_dates(text: str) -> None:
    assert dates._month_starts(text) == [m.start() for m in dates._MONTH_AT_WORD_START.finditer(text)]
    assert _groups(dates._written_matches(text)) == _groups(_PLAIN_WRITTEN.finditer(text))
    groups = ("sep", "month", "year", "iso_sep", "iso_month", "iso_day", "glued")
    fast = [(m.span(), *m.group(*groups)) for m in dates._NUMERIC.finditer(text)]
    plain = [(m.span(), *m.group(*groups)) for m in _PLAIN_NUMERIC.finditer(text)]
    assert fast == plain
    for name, plain_regex in _PLAIN_DATES.items():
        assert _groups(getattr(dates, name).finditer(text)) == _groups(plain_regex.finditer(text)), name
    for name in ("_DAY_MONTH_NUM", "_MONTH_YEAR_NUM"):
        plain = _groups(_PLAIN_DATES[name].finditer(text))
        assert _groups(dates._slash_matches(getattr(dates, name), text)) == plain, name
    for name in ("_ODD_NUMERIC", "_SPACED_DIGITS"):
        plain = _groups(getattr(dates, name).finditer(text))
        assert _groups(dates._matches_at(getattr(dates, name), text, dates._odd_starts(text))) == plain, name


def check_phones_emails_zips(text: str) -> None:
    for name, plain_regex in _PLAIN_PHONES.items():
        assert _groups(getattr(phones, name).finditer(text)) == _groups(plain_regex.finditer(text)), name
    for folded in (fold(text), text.lower()):
        assert _groups(phones._extension_matches(text, folded)) == _groups(phones._EXTENSION.finditer(text))
    assert _groups(zips._ZIP.finditer(text)) == _groups(_PLAIN_ZIP.finditer(text))
    assert _groups(emails._addresses(text)) == _groups(emails._EMAIL.finditer(text))


def check_cues(text: str) -> None:
    folded = fold(text)
    for name, plain_regex in _PLAIN_CUES.items():
        fast = list(cues.cue_matches(getattr(cues, name), folded, text))
        assert fast == _plain_cue_matches(plain_regex, folded, text), name


@pytest.mark.parametrize(
    "text",
    [
        "lundi 3 mars 2021, mardi 1er avril, 1ᵉʳ mai, premier juin, le 1\ner juillet",
        "jeudi" + " " * 40 + "12 mars 2020 et samedi" + "\u00a0" * 30 + "mai",  # heads longer than the window
        "Lundİ 3 JANVİER 2020, ſamedi 4 ſept. 2021, 3 ſept 2021",  # what IGNORECASE reads as i and s
        "fe\u0301vrier 2020, 3 de\u0301c. 2019, DÉCEMBRE 2018, 3 sept 2021, 3 sept, maintenant, mars",
        "45 mars 2020, lundi mars 2020, mars 1850, rue du 11 novembre, 3 mai 1789",
        "12MAR2020 12-MAR-2020 12fév2020 2012mars x3mai douze mars deux mille vingt mars2020 1-3 mars",
        "03/02/2021 1.02.03.2021 02-12-05-06-07 2021-02-03 ٣/٣/٢٠٢١ 12/03 03/2021 1999-2000 2015-16 +2014",
        "Tél 02 99 28 43 21, +33 (0)2 99 28 43 21, 0033 2 99 28 43 21, +1 (212) 555-0100, 0299284321",
        "poste 4567, DECT 2345, bip 5318, BIP 53 18, tél. int. 45 67, p. 4567, ligne directe 4567, poſte 4567",
        "14|7|1931 12_03_2020 09 . 05 . 1952 le 21 / 06 1 2 / 0 3 / 2 0 2 0 12 | 3 | 2020 né le 17062019",
        "jean.dupont@chu-rennes.fr, a@b.fr.x@c.fr, @x.fr, -a@b.fr, é.é@é.fr, x@y.fr@z.fr",
        "35033 RENNES CEDEX 9, BP 59899, à Briec (29510), 25000 UI",
        "Dicté par Dr Jean MARTIN\nMédecin traitant : Dr Paul\nsa fille, Mme Anne\nNée à Brest\nFait à Rennes par Dr X",
        "Nom d'usage : LE GALL\nPrénom(s) : Anne\nÀ l'intention de\nDocteur Y\nson époux: Jean",
        "medecin\ntraitant Dr A, signe electroniquement par X, valide par Y, sages-femmes : Z",
        "l'infirmiere Gaelle, d'ide X, aujourd'hui ide Y, presqu'interne Z, l'hopital de Brest, 'interne W",
    ],
)
def test_fast_forms_match_the_plain_ones_on_examples(text: str) -> None:
    check_dates(text)
    check_phones_emails_zips(text)
    check_cues(text)


def test_the_month_and_head_letter_sets_hold_every_character_ignorecase_reads_as_theirs() -> None:
    every_character = "".join(map(chr, range(0x110000)))
    month_initials = "".join({w[0] for w in dates.MONTHS + tuple(dates.MONTH_ABBREVIATIONS)})
    read_as_initial = set(re.findall(f"(?i)[{month_initials}]", every_character))
    assert read_as_initial <= set(re.findall(r"[jJfFmMaAsSſoOnNdD]", every_character))
    head_letters = "".join(set("".join(dates.WEEKDAYS) + "premier"))
    in_a_head = set(re.findall(rf"(?i)[{head_letters}]|[\d\s,ᵉʳ\-]|{BLANK}", every_character))
    assert not in_a_head & set(dates._NOT_IN_HEAD.findall(every_character))


_DATE_PIECES = [
    "janvier", "Février", "fe\u0301vrier", "MARS", "mai", "août", "sept", "sept.", "déc.", "janv.", "lundi", "Mardi",
    "mercredi,", "1er", "1 er", "1ᵉʳ", "premier", "İ", "ſ", "maintenant", " ", "   ", "\u00a0", "\t", "\n", ",",
    ".", "/", "-", ":", "+", "x", "0", "1", "2", "3", "12", "31", "45", "03", "2021", "1999", "2000", "1850", "19",
    "20", "٣", "rue du", "MAR", "fév", "aoû", "douze", "|", "_", " / ", " . ", " /", "/ ", "17062019", "le ",
    "//", "1/", "/1",
]  # fmt: skip
_OTHER_PIECES = [
    "@", "jean", "é", "_", ".", "+", "-", "fr", "chu-rennes", ".fr", " ", "\n", "@@", "0", "00", "+", "33", "(0)", "06",
    "12", "99", "\u00a0", "/", ":", ",", "35000", "+32", "(212)", "555", "x", "[at]", "(dot)", "CEDEX",
    "poste", "DECT", "bip", "p.", "tél. int.", "Tel", "ligne directe", "4567", "ſ", "ı", "İ",
]  # fmt: skip
_CUE_PHRASES = cues.DOCTOR_PHRASES + cues.PATIENT_PHRASES + cues.CITY_PHRASES + cues.RECIPIENT_PHRASES
_CUE_PIECES = sorted({w for p in _CUE_PHRASES for w in re.findall(r"[a-z'\-]+", p)}) + [
    "son", "sa", "leur", "fille", "époux", "Médecin", "Née", " ", " ", "\n", "\t", ":", " : ", "-", "(e)", "'", "Dr",
    "Jean", ",",
]  # fmt: skip


def _texts(pieces: list[str]):
    return st.lists(st.sampled_from(pieces), max_size=16).map("".join)


@settings(max_examples=400, deadline=None)
@given(_texts(_DATE_PIECES))
def test_fast_date_forms_match_the_plain_ones(text: str) -> None:
    check_dates(text)


@settings(max_examples=400, deadline=None)
@given(_texts(_OTHER_PIECES))
def test_fast_phone_email_zip_forms_match_the_plain_ones(text: str) -> None:
    check_phones_emails_zips(text)


@settings(max_examples=400, deadline=None)
@given(_texts(_CUE_PIECES))
def test_fast_cue_forms_match_the_plain_ones(text: str) -> None:
    check_cues(text)
