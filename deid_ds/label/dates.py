"""DATE labelling functions: numeric, ISO and written French dates, and years that date an event.

What is a date follows ``docs/guidelines.md``: every calendar date or part of one (day-month-year,
day-month, month-year, a year standing for when something happened), numeric or written, with the
weekday inside the span and the preposition outside. Times, ages, durations and relative days are not
dates, and a month or a season alone is not one (``l'été 2022`` gives only ``2022``).

Numbers in clinical notes look like dates all the time (``TA 13/8``, ``EVA 8/10``, ``15/20``,
``1.5.2``), so every numeric match is *validated* (month 1–12, day 1–31 and possible in the month,
plausible year) and the forms that stay ambiguous (``12/03`` with no year, a bare ``2014``) are
decided from the words just before them or returned with ``needs_context``.
"""

from __future__ import annotations

import re
import unicodedata
from calendar import isleap
from collections.abc import Iterator
from functools import lru_cache

from deid_ds.label import _numbers
from deid_ds.label._text import BLANK, BLANKS, QUANTITY_AFTER, after_identifier_name, alternation, not_after
from deid_ds.label.candidate import Candidate
from deid_ds.label.occupied import Occupied

LABEL = "DATE"

MONTHS: tuple[str, ...] = (
    "janvier", "février", "mars", "avril", "mai", "juin",
    "juillet", "août", "septembre", "octobre", "novembre", "décembre",
)  # fmt: skip
#: Abbreviations as French typists write them (with or without the period).
MONTH_ABBREVIATIONS: dict[str, int] = {
    "janv": 1, "jan": 1, "févr": 2, "fév": 2, "mar": 3, "avr": 4, "juil": 7, "aoû": 8, "sept": 9, "sep": 9,
    "oct": 10, "nov": 11, "déc": 12,
    # the three capitals of mainframe and lab exports ("12 JUN 2020", "03-AOU-2019")
    "fev": 2, "jun": 6, "jul": 7, "aou": 8, "dec": 12,
}  # fmt: skip
WEEKDAYS: tuple[str, ...] = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")

#: Plausible years of a clinical note: births of the oldest patients to appointments a few years ahead.
MIN_YEAR, MAX_YEAR = 1890, 2099


@lru_cache(maxsize=256)  # month words repeat from note to note ("mars", "Mars", "MARS")
def _month_number(word: str) -> int:
    """Month number of a full or abbreviated month name, whatever its case and accents."""
    number = _MONTH_NUMBERS.get(_fold(word.rstrip(".")))
    if number is None:
        raise KeyError(word)
    return number


# The month regexes are IGNORECASE, which also reads "ı" as an "i" and "ſ" as an "s": the fold must too,
# or a month the regex found ("3 ſept. 2021") has no number.
_IGNORECASE_LETTERS = str.maketrans({"ı": "i", "ſ": "s"})


def _fold(word: str) -> str:
    lowered = word.lower().translate(_IGNORECASE_LETTERS)
    return "".join(c for c in unicodedata.normalize("NFD", lowered) if not unicodedata.combining(c))


def _month_numbers() -> dict[str, int]:
    """Folded month name or abbreviation → month number; a full name wins over an abbreviation."""
    numbers: dict[str, int] = {}
    for number, name in enumerate(MONTHS, start=1):
        numbers.setdefault(_fold(name), number)
    for abbr, number in MONTH_ABBREVIATIONS.items():
        numbers.setdefault(_fold(abbr), number)
    return numbers


# Built once: looking a month up used to fold all 23 names and abbreviations on every call.
_MONTH_NUMBERS = _month_numbers()


_MONTH_FULL = alternation(MONTHS)
_MONTH_ABBR = alternation(tuple(MONTH_ABBREVIATIONS))
_WEEKDAY = alternation(WEEKDAYS)
# A day number: "1er" (and its superscript or spelled forms), or 1 to 31 with an optional leading zero.
_DAY = r"(?:1\s?er|1ᵉʳ|1ier|1°|premier|[0-3]?\d)"  # "1°": the first as hand-written letters mark it
# The first digit of a numeric date, not continuing a number, written digit first (see ``not_after``); a colon
# glued before it ends a label ("Date:12/04/2019", "DDN:03/08/1950"), unless a figure or a sign comes before it
# ("10:12/04": a time).
_FIRST_DIGIT = not_after(r"\d", r"[\d/.,]") + r"(?<![\d_/.,:]:\d)"

# -- written dates: [weekday] [day] month [year]; the month alone is never enough ----------------------
# The day may be glued to the month ("12fév", "12MAR2020") or joined by a dash ("12-MAR-2020"), as
# exports and hurried typists write them; the year too. A month is then followed by no letter (a digit
# may be its glued year).
_WRITTEN = re.compile(
    rf"""
    (?<![\w])
    (?:(?P<weekday>{_WEEKDAY}),?{BLANKS})?
    (?:(?P<day>{_DAY})(?P<glue>{BLANKS}|-|(?<=\d)))?
    (?:(?P<month>{_MONTH_FULL})(?![^\W\d_])|(?P<abbr>{_MONTH_ABBR})(?P<period>\.)?(?![^\W\d_]))
    (?:(?:,?{BLANKS}|-|(?<=[^\W\d_.]))(?P<year>\d{{4}})(?![\d]|[.,/:]\d))?
    """,
    re.IGNORECASE | re.VERBOSE,
)
# Where a month name starts a word, as every _WRITTEN match has one: _WRITTEN itself starts with a
# lookbehind and three alternations, which the regex engine tried at every character of the note.
# A letter that starts a month (any case; "ſ" is an "s" to IGNORECASE), not after a word character,
# then the month's name read from that letter (a lookahead inside a one-character lookbehind).
_MONTH_AT_WORD_START = re.compile(
    not_after("[jJfFmMaAsSſoOnNdD]", r"[^\W\d]")
    + rf"(?<=(?=(?i:(?:{_MONTH_FULL})(?![^\W\d_])|(?:{_MONTH_ABBR})\.?(?![^\W\d_]))).)"
)


def _month_stems() -> frozenset[str]:
    """The first three characters of every spelling of a month that _MONTH_AT_WORD_START reads, lowered:
    accented, unaccented and decomposed (no month has two accents in its first three letters)."""
    words = MONTHS + tuple(MONTH_ABBREVIATIONS)
    return frozenset(spelling[:3] for w in words for spelling in (w, _fold(w), unicodedata.normalize("NFD", w)))


_MONTH_STEMS = _month_stems()
# How far before its month a written date is looked for first (weekday, day and blanks), and the
# characters such a head can hold, a superset (IGNORECASE: "İ" and "ı" are an "i", "ſ" an "s").
_HEAD_WINDOW = 24
_NOT_IN_HEAD = re.compile(r"[^lundimarcejvshpLUNDIMARCEJVSHPİıſᵉʳ°\d\s,\-]")

# -- numeric dates: d/m/y with one separator repeated, 2- or 4-digit years; ISO y-m-d ------------------
# The first digit comes before the alternatives, so that the pattern starts with it: the day, or the
# ISO year, runs from the match's start to its separator.
_NUMERIC = re.compile(
    rf"""
    {_FIRST_DIGIT}
    (?:
        \d?(?P<sep>[/.\-])(?P<month>\d{{1,2}})(?P=sep)(?P<year>\d{{4}}|\d{{2}})
      | \d{{3}}(?P<iso_sep>[\-/.])(?P<iso_month>\d{{2}})(?P=iso_sep)(?P<iso_day>\d{{2}})
      | (?P<glued>\d{{7}})
    )
    (?!\d)
    """,
    re.VERBOSE,
)

# -- partial numeric dates: dd/mm and mm/yyyy ----------------------------------------------------------
# (a one-digit day or month, "le 4/10", "le 3/4", only after a date word: "3/10" alone is a score as often as a date)
_DAY_MONTH_NUM = re.compile(rf"(?P<day>{_FIRST_DIGIT}\d?)/(?P<month>\d{{1,2}})(?![\d]|[/.,:]\d)")
# A weekday just before a numeric date belongs to it ("samedi 21/01/2023"). Looked for only where a
# numeric date was found: an optional weekday at the head of the date patterns made the regex engine
# try the seven names at every character of the note.
# Abbreviated weekdays ("ven. 17/02/2023" in emergency and agenda exports) only with their period, and only
# here, before a numeric date: "mar." before a word is also March's.
# (agendas also drop the period: "lun 12/04/2021", "SAM 18/02/2023"; before digits "mar" is no March)
_WEEKDAY_BEFORE = re.compile(rf"(?<![\w])(?:{_WEEKDAY}|(?:lun|mar|mer|jeu|ven|sam|dim)\.?),?{BLANKS}$", re.IGNORECASE)
_MONTH_YEAR_NUM = re.compile(rf"(?P<month>{_FIRST_DIGIT}\d?)/(?P<year>\d{{4}})(?![\d]|[/.,:]\d)")

# -- a year on its own ---------------------------------------------------------------------------------
# A dash may join two years ("1999-2000", a range, two DATE spans); any other dash, slash or dot
# attached to the number makes it part of something else (an ISO date, a phone, a version). Written
# first digit first (see ``not_after``), the dash test looking back from it: 18xx, 19xx or 20xx.
_YEAR = re.compile(
    r"(?P<year>" + not_after("[12]", r"[\w/.,:+]") + r"(?:(?<=\d\d\d\d-.)|(?<!-.))(?:(?<=1)[89]|(?<=2)0)\d\d)"
    r"(?![\w]|[/.,:]\d|-(?!(?:1[89]|20)\d\d(?!\d))\d)"
)

# The words just before a bare year that make it a date: "en 2015", "depuis 2019", "l'été 2022",
# "(2014)", "fin 2019", "né en 1950", "de 2010 à 2014", "année 2012", "courant 2018"; like a season, a feast
# or a quarter dates its year ("Noël 2019", "Pâques 2021", "2e trimestre 2020").
_YEAR_CUE_BEFORE = re.compile(
    rf"""(?:
        \b(?:en|depuis|dès|des|depuis\ l'année|avant|après|apres|vers|jusqu'en|jusqu’en|courant|début|debut|fin|mi
          |année|annee|été|ete|hiver|automne|printemps|de|à|a|et|entre|ou|né|née|né\(e\)|an
          |noël|noel|pâques|paques|toussaint|trimestre|semestre)
        |[(\[]
        |(?:1[89]|20)\d\d[ \u00a0]?[-–][ \u00a0]?
        |mi-
    ){BLANK}*$""",
    re.IGNORECASE | re.VERBOSE,
)
# A number just after these is a quantity or an identifier: "n° 2014", "x 2000", "à 1950 mg" is caught
# by the unit; "IPP 2015" by the label.
_NOT_YEAR_BEFORE = re.compile(
    r"(?:n°|no\.?|x|×|IPP|NIP|ID|lot|chambre|ch\.|lit|poste|bip|DECT|bureau|porte)\s*$", re.IGNORECASE
)

# Streets and squares named after a date ("avenue du 11 Novembre", "place du 19 Mars 1962") are STR.
_STREET_BEFORE = re.compile(
    r"\b(?:rue|avenue|av\.?|bd|boulevard|allée|allee|impasse|place|pl\.|square|quai|cours|chemin|route|"
    r"esplanade|promenade|parvis|pont|résidence|residence|cité|cite|lotissement|carrefour|rond-point)"
    r"[ \t\u00a0\u202f]+(?:du|de\s+la|des)?[ \t\u00a0\u202f]*$",
    re.IGNORECASE,
)
# Words before an "dd/mm" that make it a day-month date ("le 12/03", "du 12/03 au 15/03", "lundi 12/03"), and
# the obstetric dates (last period, conception, due date: "DDR 14/05", "DPA 18/02")
_DAY_MONTH_CUE_BEFORE = re.compile(
    rf"(?:\b(?:le|du|au|depuis\ le|jusqu'au|jusqu’au|dès\ le|avant\ le|après\ le|RDV|rendez-vous|prévu|prevu|"
    rf"date|J\d+|DDR|DDG|DPA|DG)|{_WEEKDAY}|[(\[])\W{{0,3}}$",
    re.IGNORECASE,
)
# A time just after a day and month makes it a date, as agendas and tables write them ("26/04 05h00",
# "26/04 - 14:30", a time in the next cell).
_TIME_AFTER = re.compile(r"[ \t\n\u00a0,\-–|]{1,6}(?:à[ \u00a0])?(?:[01]?\d|2[0-3])[ \u00a0]?[hH:][ \u00a0]?[0-5]\d")
# Words before a slash pair that make it a measure: blood pressure, pain scale, scores, visual acuity.
_MEASURE_BEFORE = re.compile(
    r"(?:\b(?:TA|PA|PAS|PAD|tension|pression|EVA|EN|ENS|score|note|Glasgow|GCS|MMS|MMSE|MoCA|acuité|AV|OD|OG|"
    r"dilution|ratio|rapport|sur|Apgar|Fagerström|NIHSS|HAD|IMC|SpO2|FC)|=)[^\n\w]{0,3}(?:\w+[^\n\w]{1,3})?$",
    re.IGNORECASE,
)


# -- dates in words, as dictation is transcribed: "le douze mars deux mille vingt", "trente et un décembre" --
# A day in words just before a month (searched back from the month, so that the month-anchored search
# of written dates is unchanged), and a year in words just after it (a year starts with "mil", "mille" or
# "deux mille").
_DAY_WORDS_BEFORE = re.compile(rf"(?<![\w\-])(?P<day>{_numbers.NUMBER_WORDS}){BLANKS}$", re.IGNORECASE)
_YEAR_WORDS_AFTER = re.compile(
    rf",?{BLANKS}(?P<year>(?:deux{BLANKS}mille|deux{BLANKS}mil(?!\d)|mille|mil)(?![^\W\d_])"
    rf"(?:(?:-|{BLANKS})(?:et(?:-|{BLANKS}))?{_numbers.NUMBER_WORD})*)",
    re.IGNORECASE,
)

# A year in words on its own ("diagnostiqué en deux mille seize", "opérée en mil neuf cent
# quatre-vingt-dix-huit", "en l'an deux mil un" with the "mil" of many writers), after the words that make a
# bare year a date (not "a", "de": "il a deux mille euros").
_YEAR_WORDS_ALONE = re.compile(
    rf"(?<![\w\-])(?P<year>(?:deux{BLANKS}mille|deux{BLANKS}mil(?!\d)|mille|mil)(?![^\W\d_])"
    rf"(?:(?:-|{BLANKS})(?:et(?:-|{BLANKS}))?{_numbers.NUMBER_WORD})*)",
    re.IGNORECASE,
)
_YEAR_WORDS_CUE = re.compile(
    r"\b(?:en|depuis|dès|courant|début|debut|fin|année|annee|jusqu'en|jusqu’en|vers|avant|après|apres|l'an|l’an)"
    r"[ \t\u00a0]+$",
    re.IGNORECASE,
)


def _years_in_words(text: str) -> list[Candidate]:
    """DATE candidates for the years written in words after a year cue (``en deux mille seize``)."""
    found = []
    for m in _YEAR_WORDS_ALONE.finditer(text):
        if not _YEAR_WORDS_CUE.search(text, max(0, m.start() - 16), m.start()):
            continue
        end = _numbers.split_run_end(text, m.end())
        if MIN_YEAR <= (_numbers.value(text[m.start() : end]) or 0) <= MAX_YEAR:
            found.append(Candidate(m.start(), end, LABEL, "pattern:date_words", 0.9))
    return found


# -- a date range gives one DATE per end (docs/guidelines.md): "du [8] au [10 mars]", "[8]-[10 mars 2020]" --
# The first end is a bare day, a date only because the second end, found on its own, follows it.
# Two or more days before one month are dated the same way ("le [22] ou le [23/11]", "les [12], [13] et [14 juin]",
# "le [3] ou [4 mars]"): each day its DATE.
_RANGE_HEAD_BEFORE = re.compile(
    rf"(?<![\w])(?:du|entre|les?)(?:{BLANKS}le)?{BLANKS}(?P<list>(?:(?:1{BLANK}?er|[0-3]?\d),{BLANKS}){{0,4}})"
    rf"(?P<day>1{BLANK}?er|1ᵉʳ|[0-3]?\d){BLANKS}(?:au|et(?:{BLANKS}le)?|à|ou(?:{BLANKS}le)?){BLANKS}$",
    re.IGNORECASE,
)
_LISTED_DAY = re.compile(r"1[ \t\u00a0\u202f\u2007]?er|[0-3]?\d")
# (the dash glued to both days: "1- 12 mars" is a numbered item)
_CONNECTORS = ("au", "et", "et le", "à", "ou", "ou le")  # the end of a range's head, just before its second end
# The same head in words, before a date in words: "du [trois] au [sept juin]", "entre le [premier] et le [dix mai]".
_RANGE_HEAD_WORDS_BEFORE = re.compile(
    rf"(?<![\w])(?:du|entre)(?:{BLANKS}le)?{BLANKS}(?P<day>premier|{_numbers.NUMBER_WORDS}){BLANKS}(?:au|et(?:{BLANKS}le)?)"
    rf"{BLANKS}$",
    re.IGNORECASE,
)
_RANGE_DASH_BEFORE = re.compile(r"(?<![\w/.,:\-])(?P<day>1er|[0-3]?\d)[-–]$")
_RANGE_PAIR_DASH_BEFORE = re.compile(r"(?<![\w/.,:\-])(?P<pair>(?P<day>[0-3]\d)/(?P<month>[01]\d))[-–]$")

# -- "le 1er/06", "1er/06/2020": a first of the month written with its ordinal, then the month ----------
_FIRST_SLASH = re.compile(r"(?<![\w])1(?:er|ᵉʳ)/(?P<month>[01]?\d)(?:/(?P<year>\d{4}|\d{2}))?(?![\d]|[/.,:]\d)")

# -- unusual separators: "14|7|1931", "12_03_2020", "09 . 05 . 1952", "21 / 06 / 2020", digits spaced out
# one by one "1 2 / 0 3 / 2 0 2 0" ("|" and "_" glued to the digits: "| 12 | 03 | 2020 |" is a table row).
# Matched only from the digits just before such a separator, found with
# str.find (see _odd_matches): a search of the whole note stopped at every digit.
_ODD_SEPARATORS = ("|", "_", " /", "/ ", " . ")
_ODD_NUMERIC = re.compile(
    r"(?<![\w/.,:|])(?P<day>[0-3]?\d)(?P<sep>\||_| / ?|/ | \. )"
    r"(?P<month>[01]?\d)(?:(?P=sep)(?P<year>\d{4}))?(?![\w]|[/.,:|]\d| ?[/.|_] ?\d)"
)
# ... or one blank on one side of one slash only, a slip of the typist: "12/04/ 2019", "12 /04/2019"
_SLASH_SLIP = re.compile(
    r"(?<![\w/.,:|])(?P<day>[0-3]?\d) ?/ ?(?P<month>[01]?\d) ?/ ?(?P<year>\d{4})(?![\w]|[/.,:|]\d| ?[/.|_] ?\d)"
)
_SPACED_DIGITS = re.compile(
    r"(?<![\w/.])(?P<d1>\d) (?P<d2>\d)(?P<sep> [/.] )(?P<m1>\d) (?P<m2>\d)(?P=sep)"
    r"(?P<year>\d \d(?: \d \d)?)(?![\w]| ?\d)"
)

# -- the month in Roman numerals, as older and hand-written letters date: "12.IV.2019", "3-XI-2021", "12 IV 2019",
# "1er.XII.20". The pattern starts at the numeral (capitals, rare in prose, which the regex engine skips to), the
# separator and the day read just before it: a numeral alone is a stage, a class or a king ("stade IV",
# "NYHA III", "Louis XIV"), a date only between a day and a year written with the same separator. (The
# lookbehind is written after the numeral's first letter, see ``not_after``: 4 against 20 µs a note.)
ROMAN_MONTHS = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")
_ROMAN_MONTH = re.compile(
    r"(?P<month>[IVX](?<=[\dr][ .\-/][IVX])[IVX]{0,3})(?P<sep>[ .\-/])(?P<year>\d{4}|\d{2})(?![\w]|[.,/:\-]\d)"
)
_ROMAN_DAY_BEFORE = re.compile(r"(?<![\w/.,:\-])(?P<day>1er|[0-3]?\d)$")
_ROMAN_BLANK_HEAD = re.compile(
    rf"(?:^|\n|[,:]|\b(?:le|du|au|depuis|dès|date|né|née|{_WEEKDAY})){BLANK}*$", re.IGNORECASE
)

# -- day, month and year separated by blanks, "né le 03 07 1950", "Date : 12 04 2019": two-digit day and month,
# a four-digit year, after a date word only (looked for just before each year the _YEAR pattern finds)
_BLANK_HEAD_BEFORE = re.compile(r"(?<![\w/.,:])(?P<day>[0-3]\d) (?P<month>[01]\d) $")  # before each year
_NUMBER_GOES_ON = re.compile(r"[ /.,:\-]?\d")
_DIGIT_BLANK_BEFORE = re.compile(r"\d[ \u00a0]$")
# -- two years of a school or a season joined by a slash, "en 2019/2020", the second the next: years of the
# patient's life as a range's ends are
_YEAR_PAIR = re.compile(r"(?<![\w/.,:])(?P<first>(?:1[89]|20)\d\d)/(?P<second>(?:1[89]|20)\d\d)(?![\w]|[/.,:]\d)")

# -- a month a scan misread, between a day and a year: "14 novembrc 2015", "9 0ctobre 2014", "26 jui1let 1979"
# (the day and the year make it a date; the word is read back as the month it is one or two letters from)
_SCANNED_HEAD_BEFORE = re.compile(
    r"(?<![\w/.,:])(?P<day>[0-3]?\d(?:er)?)[ \u00a0]+(?P<word>[^\W_]{3,10})[ \u00a0]+$"
)  # searched just before each year (see _scanned_months): the years of a note are few
SCANNED_LETTERS = str.maketrans({"0": "o", "1": "l", "5": "s", "8": "b"})
FOLDED_MONTHS = tuple(_fold(m) for m in MONTHS)

# -- eight glued digits, "17062019" (or "20190617"), a date only after a date word ("né le", "Date :"):
# the "glued" alternative of _NUMERIC.
_GLUED_CUE_BEFORE = re.compile(
    r"(?:\b(?:le|du|au|né|née|n[ée]\(e\))|\b(?:date|DDN|naissance)\b[^\n\d]{0,25})[ \t\u00a0:]*$", re.IGNORECASE
)

# ... or in the year-first order of exports ("20190929", "SIGNATURE ELECTRONIQUE 20220930"), anywhere but after
# the name of an identifier (an IPP, a stay or request number may look like one)
_ID_BEFORE = after_identifier_name(r"iep|n°|no|num[ée]ro|demande|uf|code|ref")

# -- a spoken correction: "le [12] non pardon le [13 mars]", "le [quinze] plutôt le quatorze juin": the day
# corrected is a date too (one DATE per day said, as a range's ends), found from the date said after it
_CORRECTION_HEAD_BEFORE = re.compile(
    rf"(?<![\w])le{BLANKS}(?P<day>1{BLANK}?er|[0-3]?\d|{_numbers.NUMBER_WORDS}),?{BLANKS}"
    rf"(?:(?:non|pardon|plutôt|plutot|euh|enfin|je veux dire),?{BLANKS}){{1,3}}le{BLANKS}$",
    re.IGNORECASE,
)

# A law or a decree is named by its date ("loi du 4 mars 2002", "décret n° 2016-1234 du 12 mars 2016",
# "loi n° 78-17 du 6 janvier 1978"): a reference to a text, not a date of the patient's life.
_LEGAL_BEFORE = re.compile(
    r"\b(?:loi|décret|decret|arrêté|arrete|ordonnance|circulaire|directive|règlement|reglement)\b"
    r"[^\n]{0,30}?\bdu[ \u00a0]+$",
    re.IGNORECASE,
)


def _legal(text: str, start: int) -> bool:
    """Whether the date at ``start`` names a law or decree (cheap test first: ``du`` just before it)."""
    if text[max(0, start - 3) : start].lower()[:2] != "du":
        return False
    return bool(_LEGAL_BEFORE.search(text, max(0, start - 60), start))


_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _valid_day(day: int, month: int, year: int | None) -> bool:
    """Whether ``day`` exists in ``month`` of ``year`` (with no year, the 29th of February does)."""
    if not 1 <= month <= 12 or day < 1:
        return False
    if month == 2:
        return day <= (29 if year is None or isleap(year) else 28)
    return day <= _DAYS_IN_MONTH[month]


def _full_year(year: str) -> int:
    """A two-digit year as a note means it: ``57`` is 1957, ``21`` is 2021 (pivot at 30 years ahead)."""
    if len(year) == 4:
        return int(year)
    y = int(year)
    return 2000 + y if y <= 40 else 1900 + y


def _day_number(day: str) -> int:
    digits = re.match(r"\d+", day)
    return int(digits.group()) if digits else 1  # "premier"


def find_dates(text: str) -> list[Candidate]:
    """Every DATE candidate of ``text``, as text offsets, non-overlapping, sorted by start.

    Sources: ``pattern:date_numeric`` (``03/02/2021``, ``3.2.21``, ``2021-02-03``, weekday included),
    ``pattern:date_written`` (``lundi 1er février 2021``, ``3 févr. 2021``, ``février 2021``,
    ``3 FÉVRIER``, ``12MAR2020``, ``12-MAR-2020``, ``12fév``), ``pattern:date_daymonth_num`` (``12/03``;
    confident only after ``le``/``du``/``au`` or a weekday; ``4/10`` only after them),
    ``pattern:date_monthyear_num`` (``03/2021``) and ``pattern:date_year`` (``2015``; confident only after
    a cue such as ``en``, ``depuis``, ``l'été``). Exports and dictation: ``pattern:date_words``
    (``douze mars deux mille vingt``), ``pattern:date_numeric_odd`` (``1er/06``, ``14|7|1931``,
    ``09 . 05 . 1952``, ``1 2 / 0 3 / 2 0 2 0``, ``le 21 / 06``), ``pattern:date_glued`` (``17062019``
    after a date word) and ``pattern:date_range`` (the bare first day of ``du [8] au [10 mars]``). A date
    naming a law or a decree (``loi n° 78-17 du 6 janvier 1978``) is none.
    """
    text = _numbers.read_look_alikes(text)  # "l2/O4/2019": a scan's letters for figures (offsets unchanged)
    found: list[Candidate] = []
    # Ranges that are not dates although they hold one ("avenue du 11 Novembre", "place du 19 Mars 1962");
    # nothing inside them is a candidate, not even the year.
    blocked: list[tuple[int, int]] = []
    for m in _NUMERIC.finditer(text):
        start_digits = m.start()
        if m.group("glued") is not None:
            before = text[start_digits - 1] if start_digits else " "
            if (
                not (before.isalnum() or before in "_-+")
                and not _continues(text, m.end(), "-")
                and (
                    _GLUED_CUE_BEFORE.search(text, max(0, start_digits - 40), start_digits)
                    or (
                        m.group()[:2] in ("19", "20")
                        and _valid_day(int(m.group()[6:]), int(m.group()[4:6]), int(m.group()[:4]))
                        and not _ID_BEFORE.search(text, max(0, start_digits - 20), start_digits)
                    )
                )
                and _glued_date(m.group())
            ):
                found.append(Candidate(start_digits, m.end(), LABEL, "pattern:date_glued", 0.9))
            continue
        if m.group("sep") is not None:
            day, month, year_text, sep = (
                int(text[start_digits : m.start("sep")]),
                int(m.group("month")),
                m.group("year"),
                m.group("sep"),
            )
            year = _full_year(year_text)
            end_digits = m.end("year")
        else:
            day, month, year = (
                int(m.group("iso_day")),
                int(m.group("iso_month")),
                int(text[start_digits : m.start("iso_sep")]),
            )
            sep = m.group("iso_sep")
            end_digits = m.end("iso_day")
        if not (MIN_YEAR <= year <= MAX_YEAR and _valid_day(day, month, year)):
            continue
        # part of a longer chain of numbers ("1.02.03.2021", a dashed phone "02-12-05-06-07"): not a date
        if _continues(text, end_digits, sep) or (start_digits > 0 and text[start_digits - 1] == sep == "-"):
            continue
        if _legal(text, m.start()):
            blocked.append((m.start(), m.end()))
            continue
        found.append(Candidate(_with_weekday(text, m.start()), m.end(), LABEL, "pattern:date_numeric", 0.97))

    for m in _written_matches(text):
        day_text, year_text = m.group("day"), m.group("year")
        month_word = m.group("month") or m.group("abbr")
        start, end = m.start(), m.end()
        source = "pattern:date_written"
        words_day = words_year = None
        if day_text is None and m.group("weekday") is None:
            # "douze mars", "lundi trente et un décembre": the day in words
            month_start = m.start("month") if m.group("month") else m.start("abbr")
            words = _day_words_before(text, month_start)
            if words is not None and _numbers.word_count(words.group("day")) > (
                1 if _numbers.fold_word(words.group("day")) in ("un", "une") else 0
            ):
                words_day = _numbers.value(words.group("day"))
                start = _with_weekday(text, words.start())
        if year_text is None:
            words = _YEAR_WORDS_AFTER.match(text, end)
            words_end = _numbers.split_run_end(text, words.end()) if words is not None else end
            year_value = _numbers.value(text[words.start("year") : words_end]) if words is not None else None
            if year_value is not None and MIN_YEAR <= year_value <= MAX_YEAR:
                words_year = year_value
                end = words_end
        if words_day is not None or words_year is not None:
            source = "pattern:date_words"
        if day_text is None and year_text is None and words_day is None and words_year is None:
            continue  # "en avril", "mois de mars": a month alone is not a date
        glued = day_text is not None and m.group("glue") in ("", "-")
        if m.group("abbr") and not m.group("period") and year_text is None and words_year is None and not glued:
            continue  # "3 sept" could be a number; "3 sept. ", "3 sept 2021" or "12fév" is a date
        month = _month_number(month_word)
        if words_day is not None and not _valid_day(words_day, month, words_year):
            start, words_day = m.start(), None
            if words_year is None and year_text is None:
                continue
        year = words_year if words_year is not None else int(year_text) if year_text else None
        if year is not None and not MIN_YEAR <= year <= MAX_YEAR:
            end = m.end("period") if m.group("period") else m.end("month") if m.group("month") else m.end("abbr")
            year = None
            if day_text is None:
                continue
        if day_text is not None:
            if not _valid_day(_day_number(day_text), month, year):
                if year is None:
                    continue
                # "45 mars 2020": the day is not one, keep "mars 2020"
                start = m.start("month") if m.group("month") else m.start("abbr")
        elif m.group("weekday"):
            start = m.start("month") if m.group("month") else m.start("abbr")  # "lundi mars 2020"
        if _STREET_BEFORE.search(text, max(0, start - 30), start) or _legal(text, start):
            blocked.append((start, end))
            continue
        found.append(Candidate(start, end, LABEL, source, 0.97))

    for m in _slash_matches(_MONTH_YEAR_NUM, text):
        month, year = int(m.group("month")), int(m.group("year"))
        if 1 <= month <= 12 and MIN_YEAR <= year <= MAX_YEAR:
            found.append(Candidate(m.start(), m.end(), LABEL, "pattern:date_monthyear_num", 0.9))

    for m in _slash_matches(_DAY_MONTH_NUM, text):
        day, month = int(m.group("day")), int(m.group("month"))
        if not _valid_day(day, month, None):
            continue
        start = _with_weekday(text, m.start())
        before = text[max(0, m.start() - 40) : m.start()]
        cue = start < m.start() or bool(_DAY_MONTH_CUE_BEFORE.search(before))
        if not cue and len(m.group("day")) == len(m.group("month")) == 2 and _TIME_AFTER.match(text, m.end()):
            cue = not _MEASURE_BEFORE.search(before)  # "26/04 05h00", a table's date cell then its time cell
        if (len(m.group("day")) == 1 or len(m.group("month")) == 1) and (not cue or _MEASURE_BEFORE.search(before)):
            continue  # "le 4/10", "du 12/3"; without a date word "3/10" is a score as often as a date
        if len(m.group("month")) == 1 and (day < month or text[m.end() : m.end() + 1].isalnum()):
            continue  # "le 1/2 comprimé", "le 3/4 de la dose": a fraction (a date "le 12/3" reads day > month);
            # "du 02/1l/14": a scanned date's month, not a month of one digit
        if not cue and _MEASURE_BEFORE.search(before):
            continue
        found.append(
            Candidate(start, m.end(), LABEL, "pattern:date_daymonth_num", 0.9 if cue else 0.5, needs_context=not cue)
        )

    years = []
    for m in _YEAR.finditer(text):
        year = int(m.group("year"))
        if not MIN_YEAR <= year <= MAX_YEAR:
            continue
        years.append(m)
        if QUANTITY_AFTER.match(text, m.end()) or _NOT_YEAR_BEFORE.search(text, max(0, m.start() - 12), m.start()):
            continue
        before = text[max(0, m.start() - 30) : m.start()]
        cue = bool(_YEAR_CUE_BEFORE.search(before))
        found.append(
            Candidate(m.start(), m.end(), LABEL, "pattern:date_year", 0.9 if cue else 0.5, needs_context=not cue)
        )

    if "mil" in text or "MIL" in text or "Mil" in text:  # a C-level test: most notes write no year in words
        found += _years_in_words(text)
    found += _export_forms(text)
    found += _roman_dates(text)
    found += _scanned_months(text, years)
    found += _blank_dates(text, years)
    found += _range_starts(text, found)
    found += _corrected_days(text, found)

    if blocked:
        streets = Occupied(len(text))
        for s, e in blocked:
            streets.take(s, e)
        found = [c for c in found if not streets.overlaps(c.start, c.end)]
    return _non_overlapping(found, len(text))


def _day_words_before(text: str, month_start: int) -> re.Match[str] | None:
    """The day in words just before the month at ``month_start`` ("douze mars"), searched only when the
    word just before the month is a number word (the regex search over the window costs ten times more)."""
    head = text[max(0, month_start - 16) : month_start]
    if not head[-1:].isspace():
        return None
    last = head.rsplit(None, 1)[-1] if head.strip() else ""
    if _numbers.fold_word(last.rsplit("-", 1)[-1]) not in _numbers.WORDS:
        return None
    return _DAY_WORDS_BEFORE.search(text, max(0, month_start - 40), month_start)


def _export_forms(text: str) -> list[Candidate]:
    """The numeric forms of exports and dictation, each searched only where its sign is in the note:
    ``1er/06`` (``er/``), unusual separators and spaced-out digits (``|``, ``_``, a spaced ``/`` or
    ``.``), eight glued digits after a date word (``né le 17062019``)."""
    found: list[Candidate] = []
    if "er/" in text or "ᵉʳ/" in text:
        for m in _FIRST_SLASH.finditer(text):
            year = m.group("year")
            if 1 <= int(m.group("month")) <= 12 and (year is None or MIN_YEAR <= _full_year(year) <= MAX_YEAR):
                found.append(Candidate(m.start(), m.end(), LABEL, "pattern:date_numeric_odd", 0.9))
    starts = _odd_starts(text)
    if starts:
        for m in _matches_at(_ODD_NUMERIC, text, starts):
            day, month, year = int(m.group("day")), int(m.group("month")), m.group("year")
            if year is not None:
                if MIN_YEAR <= int(year) <= MAX_YEAR and _valid_day(day, month, int(year)):
                    found.append(Candidate(m.start(), m.end(), LABEL, "pattern:date_numeric_odd", 0.95))
            # a day and month alone with a spaced slash ("le 21 / 06"): only after a date word
            elif (
                "/" in m.group("sep")
                and len(m.group("day")) == 2
                and _valid_day(day, month, None)
                and _DAY_MONTH_CUE_BEFORE.search(text, max(0, m.start() - 40), m.start())
                and not _MEASURE_BEFORE.search(text, max(0, m.start() - 40), m.start())
            ):
                found.append(Candidate(m.start(), m.end(), LABEL, "pattern:date_numeric_odd", 0.9))
        for m in _matches_at(_SLASH_SLIP, text, _slip_starts(text)):
            day, month, year = int(m.group("day")), int(m.group("month")), int(m.group("year"))
            if (
                MIN_YEAR <= year <= MAX_YEAR
                and _valid_day(day, month, year)
                and not _MEASURE_BEFORE.search(text, max(0, m.start() - 40), m.start())
            ):
                found.append(Candidate(m.start(), m.end(), LABEL, "pattern:date_numeric_odd", 0.95))
        for m in _matches_at(_SPACED_DIGITS, text, starts):
            year = _full_year(m.group("year").replace(" ", ""))
            day, month = int(m.group("d1") + m.group("d2")), int(m.group("m1") + m.group("m2"))
            if MIN_YEAR <= year <= MAX_YEAR and _valid_day(day, month, year):
                found.append(Candidate(m.start(), m.end(), LABEL, "pattern:date_numeric_odd", 0.95))
    return found


def _blank_dates(text: str, years: list[re.Match[str]]) -> list[Candidate]:
    """Day, month and year separated by blanks after a date word (``né le 03 07 1950``), looked for just
    before each of ``years`` (the _YEAR matches), and the two years of ``2019/2020`` (one DATE: the tokenizer
    keeps them one token, and a span never splits a token)."""
    found: list[Candidate] = []
    for y in years:
        m = _BLANK_HEAD_BEFORE.search(text, max(0, y.start() - 7), y.start())
        if m is None or _NUMBER_GOES_ON.match(text, y.end()):
            continue
        day, month, year = int(m.group("day")), int(m.group("month")), int(y.group("year"))
        if (
            _valid_day(day, month, year)
            and not _DIGIT_BLANK_BEFORE.search(text, max(0, m.start() - 2), m.start())
            and _GLUED_CUE_BEFORE.search(text, max(0, m.start() - 40), m.start())
        ):
            found.append(Candidate(_with_weekday(text, m.start()), y.end(), LABEL, "pattern:date_numeric_odd", 0.9))
    for m in _slash_matches_at(_YEAR_PAIR, text, 4):
        if int(m.group("second")) == int(m.group("first")) + 1:
            found.append(Candidate(m.start(), m.end(), LABEL, "pattern:date_year", 0.9))
    return found


def _slash_matches_at(pattern: re.Pattern[str], text: str, before: int) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern whose matches hold a "/" ``before`` characters after their start."""
    end = 0
    slash = text.find("/")
    while slash >= 0:
        start = slash - before
        if start >= end and start >= 0 and (m := pattern.match(text, start)) is not None:
            yield m
            end = m.end()
        slash = text.find("/", slash + 1)


def _scanned_months(text: str, years: list[re.Match[str]]) -> list[Candidate]:
    """A day, a month a scan misread and a year (``14 novembrc 2015``, ``17 N0VEMBRE 2022``), looked for just
    before each of ``years`` (the _YEAR matches): the word, its figures read as letters, is a month, or one
    letter from one (two for the long names: ``riovembre``)."""
    found: list[Candidate] = []
    for year in years:
        m = _SCANNED_HEAD_BEFORE.search(text, max(0, year.start() - 20), year.start())
        if m is None:
            continue
        word = _fold(m.group("word")).translate(SCANNED_LETTERS)
        if word in FOLDED_MONTHS and m.group("word").isalpha():
            continue  # a month as written: a written date
        month = _near_month(word)
        if month is not None and _valid_day(_day_number(m.group("day")), month, int(year.group("year"))):
            found.append(Candidate(m.start(), year.end(), LABEL, "pattern:date_written", 0.9))
    return found


def _near_month(word: str) -> int | None:
    """The first month ``word`` is or is near (:func:`near_months`)."""
    return next(iter(near_months(word)), None)


def near_months(word: str) -> dict[int, int]:
    """Month number -> edits, in the year's order, of the months the folded ``word`` (a scan's figures read as
    letters) is, or is one edit from, two for names of seven letters or more; months of four letters or fewer only
    as written (``mai`` is one letter from ``mal``). The labeller takes the first, the date shift the nearest."""
    from rapidfuzz.distance import Levenshtein  # only for the rare words before a year that are no month as written

    near: dict[int, int] = {}
    for number, month in enumerate(FOLDED_MONTHS, start=1):
        allowed = 2 if len(month) >= 7 else 1
        if word == month:
            near[number] = 0
        elif len(month) >= 5 and abs(len(word) - len(month)) <= allowed:
            if (edits := Levenshtein.distance(word, month, score_cutoff=allowed)) <= allowed:
                near[number] = edits
    return near


def _roman_dates(text: str) -> list[Candidate]:
    """The dates whose month is a Roman numeral (``12.IV.2019``, ``3-XI-2021``, ``le 12 IV 2019``): the day,
    numeral and year joined by one separator repeated (blanks only before a four-digit year, after a date
    word, a line start or a comma)."""
    found: list[Candidate] = []
    for m in _ROMAN_MONTH.finditer(text):
        sep, year_text = m.group("sep"), m.group("year")
        if m.group("month") not in ROMAN_MONTHS or text[m.start() - 1] != sep or (sep == " " and len(year_text) != 4):
            continue
        head = _ROMAN_DAY_BEFORE.search(text, max(0, m.start() - 5), m.start() - 1)
        if head is None:
            continue
        if sep == " " and not _ROMAN_BLANK_HEAD.search(text, max(0, head.start() - 40), head.start()):
            continue  # "stade 2 IV 2019": blanks join a date only after a date word, a line start or a comma
        year = _full_year(year_text)
        if MIN_YEAR <= year <= MAX_YEAR and _valid_day(
            _day_number(head.group("day")), ROMAN_MONTHS.index(m.group("month")) + 1, year
        ):
            found.append(Candidate(_with_weekday(text, head.start()), m.end(), LABEL, "pattern:date_numeric_odd", 0.95))
    return found


def _odd_starts(text: str) -> list[int]:
    """Where a date with an unusual separator may start: the digits up to four characters before each
    separator of _ODD_SEPARATORS (a day of one or two digits, or two spaced digits, then a blank)."""
    starts: set[int] = set()
    for sep in _ODD_SEPARATORS:
        at = text.find(sep)
        while at >= 0:
            # a digit ends the day just before the separator, or before the blank that opens it
            if (at and text[at - 1].isdigit()) or (at > 1 and text[at - 2].isdigit()):
                starts.update(p for p in range(max(0, at - 4), at) if text[p].isdigit())
            at = text.find(sep, at + 1)
    return sorted(starts)


def _slip_starts(text: str) -> list[int]:
    """Where a date with a blank beside one of its slashes may start: the digits up to seven characters
    before a blank next to a slash."""
    starts: set[int] = set()
    for sep in (" /", "/ "):
        at = text.find(sep)
        while at >= 0:
            starts.update(p for p in range(max(0, at - 7), at + 1) if text[p].isdigit())
            at = text.find(sep, at + 1)
    return sorted(starts)


def _matches_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern whose every match starts at one of ``starts`` (sorted):
    those places are tried, left to right, and no others (the two patterns of unusual separators: 20
    against 78-114 µs a note with ``finditer``, the 600 notes of two 300-note synth corpora, loaded machine)."""
    end = 0
    for start in starts:
        if start < end:
            continue
        m = pattern.match(text, start)
        if m is not None:
            yield m
            end = m.end()


def _glued_date(digits: str) -> bool:
    """Whether eight digits read as a valid date, day first (``17062019``) or year first (``20190617``)."""
    day, month, year = int(digits[:2]), int(digits[2:4]), int(digits[4:])
    if MIN_YEAR <= year <= MAX_YEAR and _valid_day(day, month, year):
        return True
    year, month, day = int(digits[:4]), int(digits[4:6]), int(digits[6:])
    return MIN_YEAR <= year <= MAX_YEAR and _valid_day(day, month, year)


def _range_starts(text: str, found: list[Candidate]) -> list[Candidate]:
    """The bare first day of a range whose second end is a date found: ``du [8] au [10 mars]``,
    ``du [07] au [15/11/2023]``, ``[8]-[10 mars 2020]``, ``du [trois] au [sept juin]`` (one DATE per end,
    ``docs/guidelines.md``)."""
    starts: list[Candidate] = []
    for c in found:
        if c.source == "pattern:date_words" and text[c.start].isalpha():
            head = _RANGE_HEAD_WORDS_BEFORE.search(text, max(0, c.start - 60), c.start)
            day = (1 if head.group("day").lower() == "premier" else _numbers.value(head.group("day"))) if head else None
            if day is not None and 1 <= day <= 31:
                starts.append(Candidate(head.start("day"), head.end("day"), LABEL, "pattern:date_range", 0.9))
            continue
        if c.needs_context or not text[c.start].isdigit() or c.source == "pattern:date_year":
            continue
        if text[c.start : c.start + 4].isdigit() or c.start < 2:
            continue  # an ISO date starts with its year
        before = text[c.start - 1]
        head = None
        if before not in "-–":
            # a connector ("au", "et", "à") just before the second end, or no range (the common case)
            if not before.isspace() or not text[max(0, c.start - 8) : c.start].rstrip().lower().endswith(_CONNECTORS):
                continue
            head = _RANGE_HEAD_BEFORE.search(text, max(0, c.start - 40), c.start)
            if head is not None and head.group("list"):
                for day in _LISTED_DAY.finditer(text, head.start("list"), head.end("list")):
                    if 1 <= _day_number(day.group()) <= 31:
                        starts.append(Candidate(day.start(), day.end(), LABEL, "pattern:date_range", 0.9))
        else:
            # "12/04-14/04/2019": a day and month, uncertain alone, starts the range of a full date
            pair = _RANGE_PAIR_DASH_BEFORE.search(text, max(0, c.start - 7), c.start)
            if pair is not None and _valid_day(int(pair.group("day")), int(pair.group("month")), None):
                starts.append(Candidate(pair.start("pair"), pair.end("pair"), LABEL, "pattern:date_range", 0.9))
                continue
            # "8-10 mars": a dash joins two days of one month, the first before the second
            head = _RANGE_DASH_BEFORE.search(text, max(0, c.start - 5), c.start)
            if head is None or _day_number(head.group("day")) >= _day_number(text[c.start : c.end]):
                continue
        if head is None or not 1 <= _day_number(head.group("day")) <= 31:
            continue
        starts.append(Candidate(head.start("day"), head.end("day"), LABEL, "pattern:date_range", 0.9))
    return starts


def _corrected_days(text: str, found: list[Candidate]) -> list[Candidate]:
    """The day a dictation corrects before the date it says instead: ``le [12] non pardon le [13 mars]``."""
    days: list[Candidate] = []
    for c in found:
        if c.needs_context or c.start < 8 or not text[max(0, c.start - 4) : c.start].rstrip().lower().endswith("le"):
            continue
        head = _CORRECTION_HEAD_BEFORE.search(text, max(0, c.start - 80), c.start)
        if head is None:
            continue
        day = head.group("day")
        number = _day_number(day) if day[0].isdigit() else _numbers.value(day)
        if number is not None and 1 <= number <= 31:
            days.append(Candidate(head.start("day"), head.end("day"), LABEL, "pattern:date_range", 0.9))
    return days


def _written_matches(text: str) -> Iterator[re.Match[str]]:
    """``_WRITTEN.finditer(text)``, the same matches, with the regex run only near month names.

    Every match holds a month name at a word start; the first one at or after ``pos`` is found with
    :func:`_month_starts`, and the match is searched for from a few characters before it. That
    finds the leftmost match unless one starts before the window, which would need a weekday, day and
    blanks head covering the whole window: when the window holds a character no head can, there is
    none; otherwise the search starts from ``pos``, as ``finditer`` would. Worth it: 352
    against 1,479 µs a note for ``_WRITTEN.finditer``, side by side on the notes of ``benchmarks/weak_label.py``.
    """
    pos = 0
    for month in _month_starts(text):
        if month < pos:
            continue
        start = max(pos, month - _HEAD_WINDOW)
        if start > pos and not _NOT_IN_HEAD.search(text, start, month):
            start = pos
        m = _WRITTEN.search(text, start)  # never None: the month matches on its own
        if m is None:
            return
        yield m
        pos = m.end()


def _month_starts(text: str) -> list[int]:
    """Where _MONTH_AT_WORD_START matches in ``text``, in order.

    Its places are found by looking for the month stems in the lowered note with ``str.find``, then
    checked with the regex: a regex search stops at every j, f, m, a, s, o, n and d of the note.
    Lowering keeps offsets and reads letters as IGNORECASE does, except where a note holds "İ" (two
    characters lowered), "ı" or "ſ" (an i and an s to IGNORECASE only): such a note is searched.
    """
    lowered = text.lower()
    if len(lowered) != len(text) or "ı" in text or "ſ" in text:
        return [m.start() for m in _MONTH_AT_WORD_START.finditer(text)]
    places = set()
    for stem in _MONTH_STEMS:
        at = lowered.find(stem)
        while at >= 0:
            places.add(at)
            at = lowered.find(stem, at + 1)
    return [at for at in sorted(places) if _MONTH_AT_WORD_START.match(text, at)]


def _slash_matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern whose matches hold a "/" one or two characters after
    their start (``12/03``, ``3/2021``): those starts are tried, left to right, and no others.

    The partial numeric dates start with a digit, which the regex engine stops at all over a note;
    slashes are few.
    """
    end = tried = 0
    slash = text.find("/")
    while slash >= 0:
        for start in (slash - 2, slash - 1):
            if start < end or start < tried:
                continue
            tried = start + 1
            m = pattern.match(text, start)
            if m is not None:
                yield m
                end = m.end()
        slash = text.find("/", slash + 1)


def _with_weekday(text: str, start: int) -> int:
    """``start`` moved back over a weekday written just before it, if there is one."""
    w = _WEEKDAY_BEFORE.search(text, max(0, start - 14), start)
    return w.start() if w else start


def _continues(text: str, end: int, sep: str) -> bool:
    """Whether a number chain goes on after ``end``: a digit, or a separator followed by a digit."""
    if end < len(text) and text[end].isdigit():
        return True
    if end + 1 < len(text) and text[end + 1].isdigit() and text[end] in "/.,:" + sep:
        return True
    return False


def _non_overlapping(found: list[Candidate], size: int) -> list[Candidate]:
    """Longest candidate wins where candidates overlap (``3 février 2021`` over its ``2021``).

    ``size`` is the length of the text the candidates are in.
    """
    found.sort(key=lambda c: (-(c.end - c.start), -c.confidence, c.start))
    kept: list[Candidate] = []
    taken = Occupied(size)
    for c in found:
        if taken.overlaps(c.start, c.end):
            continue
        kept.append(c)
        taken.take(c.start, c.end)
    kept.sort(key=lambda c: c.start)
    return kept
