"""Direct identifiers that are not one of the eight labels: the numbers that name a person by themselves.

The guidelines keep the eight labels of the reference study for training and evaluation, but a released
note must not keep a social-security number (it encodes sex, birth year and month, and birthplace, so it
also undoes the date shift), a record number, a professional's registry number, a mutual's member number, an
identity document's number or a bank account. ``deidentify`` finds
them itself, in every view of a note, with no span needed. Kinds (:data:`KINDS`, the audit ``label``):

* ``NIR``: the social-security number, 13 characters and a 2-digit key ``97 - (n mod 97)`` (Corsica's
  ``2A``/``2B`` read as 19/18 for the key), written with any spaces, dots or dashes between its groups
  (``1 84 12 75 123 456 78``). Found after a cue (``NIR``, ``N° SS``, ``n° de sécurité sociale``...), or
  anywhere when its key is valid;
* ``INS``: the national health identifier, the NIR or NIA in the same shape, after ``INS``, ``INS-NIR``,
  ``matricule INS``;
* ``RPPS``: 11 digits (or ``8`` and the 11 digits of the national identifier), after ``RPPS`` or
  ``ID.PS``, or anywhere when it starts with ``10`` and its Luhn checksum holds;
* ``ADELI``: 9 digits after ``ADELI``;
* ``IPP`` (``IPP``, ``NIP``, ``N° patient``, ``identifiant patient``), ``NDA`` (``NDA``, ``n° de séjour``,
  ``de venue``, ``d'admission``, ``de passage``), ``DOSSIER`` (``n° de dossier``, ``N.DOSSIER``),
  ``EXAMEN`` (``n° d'examen``, ``de demande``, ``de prélèvement``), ``MUTUELLE`` (``n° adhérent``,
  ``n° d'adhérent``, ``n° de mutuelle``, ``n° AMC``, ``n° d'affiliation``; ``n° de contrat`` within 80
  characters after ``mutuelle``, ``complémentaire``, ``AMC``, ``adhérent`` or ``tiers payant``): a number of four
  digits or more (letters, dots, dashes and slashes allowed inside: ``B21-01234``) after the cue, never a date or
  a year alone. After ``Séjour`` or ``Venue`` alone (no ``n°``: ``Séjour 22012345``,
  ``Venue : V2022-88123``), words that also start a sentence, six digits or more and no date inside
  (``séjour 2021-2022``, ``venue 15/03`` are no stay numbers);
* ``PIECE_IDENTITE``: an identity document's number after ``CNI``, ``carte (nationale) d'identité``, ``pièce
  d'identité``, ``passeport``, ``titre de séjour``, ``carte de séjour``/``de résident``, ``permis de conduire``
  (with or without ``n°``), ``n° AME``: one word of six letters and digits or more holding two digits
  (``12AB34567``, ``X4RTBPFW4``) or digit groups, never a date or a year (``passeport vaccinal``, ``permis de
  conduire B`` hold none);
* ``IBAN``: a bank account, after ``IBAN``, ``RIB``, ``relevé d'identité bancaire``, ``coordonnées bancaires``,
  ``n° de compte`` (an IBAN or a French RIB: ``30006 00001 12345678901 89``, checksum or not), or anywhere when it
  is an IBAN of a country of :data:`IBAN_LENGTHS`, of that country's length, whose ISO 13616 checksum holds (mod
  97; groups of four with or without a space between them: ``FR76 3000 6000 0112 3456 7890 189``, or a French
  one grouped as its RIB: ``FR76 30006 00001 12345678901 89``).

Cues are read folded (case and accents ignored: ``N°``, ``No``, ``n°``, ``Num.``, ``numéro``), with or
without a colon, across a table cell (``IPP :\\t80092945``), before the number or right after it
in brackets (``80092945 (IPP, 1.2.250...)``), and as a column header of a text table (``IPP`` over a
column of numbers, tab-separated or fixed-width). Every other occurrence of a number found this way
(six characters or more) in the note is the same identifier (``how`` ``repeat``).

**Kept**: FINESS, SIRET and SIREN numbers identify institutions, not people; a number after one of these
cues is never taken, even when its shape or checksum would fit another kind. A bare ``N°`` is no cue.
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from html import unescape

from deid_ds.deidentification.regions import INVISIBLE, INVISIBLE_RE
from deid_ds.kb.normalize import fold
from deid_ds.segmentation.html_text import ParsedHtml

#: The kinds of direct identifier, in report order.
KINDS = ("NIR", "INS", "IPP", "NDA", "DOSSIER", "EXAMEN", "RPPS", "ADELI", "MUTUELLE", "PIECE_IDENTITE", "IBAN")
#: Kinds whose value is the NIR's shape (a NIR surrogate is drawn for them).
NIR_KINDS = frozenset({"NIR", "INS"})
#: Kinds of a health professional (their surrogates are the same in every patient's notes).
PROFESSIONAL_KINDS = frozenset({"RPPS", "ADELI"})
#: A found value this long (letters and digits) is also searched elsewhere in the note.
REPEAT_MIN = 6
MIN_DIGITS = 4


@dataclass(frozen=True, slots=True)
class Identifier:
    """``text[start:end]`` is an identifier of ``kind``; ``how``: cue, checksum, column or repeat."""

    start: int
    end: int
    kind: str
    how: str


# ------------------------------------------------------------------------------------------ checksums


def compact(value: str) -> str:
    """The letters and digits of a value, upper case: ``1 84 12 2a 123`` → ``184122A123``."""
    return "".join(c for c in value if c.isalnum()).upper()


def nir_number(body: str) -> int:
    """The 13 characters of a NIR as the number its key is computed on (``2A`` → 19, ``2B`` → 18)."""
    body = body.upper()
    if body[5:7] == "2A":
        body = body[:5] + "19" + body[7:]
    elif body[5:7] == "2B":
        body = body[:5] + "18" + body[7:]
    return int(body)


def nir_key(body: str) -> str:
    """The two-digit key of a 13-character NIR body: ``97 - (n mod 97)``."""
    return f"{97 - nir_number(body) % 97:02d}"


def is_valid_nir(value: str) -> bool:
    """Whether ``value`` (separators allowed) is a 15-character NIR whose key holds."""
    chars = compact(value)
    if len(chars) != 15 or not _NIR_BODY.fullmatch(chars[:13]) or not chars[13:].isdigit():
        return False
    return nir_key(chars[:13]) == chars[13:]


def luhn_digit(digits: str) -> str:
    """The Luhn check digit to append to ``digits``."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)


def luhn_ok(digits: str) -> bool:
    """Whether the last digit of ``digits`` is its Luhn check digit."""
    return len(digits) > 1 and digits.isdigit() and luhn_digit(digits[:-1]) == digits[-1]


def is_valid_rpps(value: str) -> bool:
    """An RPPS number (11 digits starting with 1, or ``8`` before them) whose Luhn checksum holds."""
    digits = compact(value)
    if len(digits) == 12 and digits.startswith("8"):
        digits = digits[1:]
    return len(digits) == 11 and digits.startswith("1") and luhn_ok(digits)


#: The length of an IBAN in each country that writes them (ISO 13616: the SWIFT registry, and the national IBANs
#: of the African and other countries French banks also accept). A checksummed IBAN is searched for in these only:
#: its country and length cut the chance matches of the mod-97 checksum (one in 97) further.
IBAN_LENGTHS = {
    **dict.fromkeys(("NO",), 15),
    **dict.fromkeys(("BE",), 16),
    **dict.fromkeys(("DK", "FI", "FK", "FO", "GL", "NL", "SD"), 18),
    **dict.fromkeys(("MK", "SI"), 19),
    **dict.fromkeys(("AT", "BA", "EE", "KZ", "LT", "LU", "MN", "XK"), 20),
    **dict.fromkeys(("CH", "HR", "LI", "LV"), 21),
    **dict.fromkeys(("BG", "BH", "CR", "DE", "GB", "GE", "IE", "ME", "RS", "VA"), 22),
    **dict.fromkeys(("AE", "GI", "IL", "IQ", "OM", "SO", "TL"), 23),
    **dict.fromkeys(("AD", "CZ", "ES", "MD", "PK", "RO", "SA", "SE", "SK", "TN", "VG"), 24),
    **dict.fromkeys(("AO", "CV", "GW", "LY", "MZ", "PT", "ST"), 25),
    **dict.fromkeys(("DZ", "IR", "IS", "TR"), 26),
    **dict.fromkeys(("BI", "CF", "CG", "CM", "DJ", "FR", "GA", "GQ", "GR", "IT", "KM", "MC", "MG", "MR"), 27),
    **dict.fromkeys(("SM", "TD"), 27),
    **dict.fromkeys(("AL", "AZ", "BF", "BJ", "BY", "CI", "CY", "DO", "GT", "HN", "HU", "LB", "MA", "ML"), 28),
    **dict.fromkeys(("NE", "NI", "PL", "SN", "SV", "TG"), 28),
    **dict.fromkeys(("BR", "EG", "PS", "QA", "UA"), 29),
    **dict.fromkeys(("JO", "KW", "MU", "YE"), 30),
    **dict.fromkeys(("MT", "SC"), 31),
    **dict.fromkeys(("LC",), 32),
    **dict.fromkeys(("RU",), 33),
}


def iban_remainder(chars: str) -> int:
    """An IBAN's letters and digits (country first, upper case) read as ISO 7064 asks, mod 97: the first four
    moved to the end, each letter its number (``A`` = 10 ... ``Z`` = 35). A valid IBAN gives 1."""
    moved = chars[4:] + chars[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97


def iban_check_digits(country: str, bban: str) -> str:
    """The two check digits of the IBAN of ``country`` and ``bban`` (upper case): ``98 - (n mod 97)``."""
    return f"{98 - iban_remainder(country + '00' + bban):02d}"


def is_valid_iban(value: str) -> bool:
    """Whether ``value`` (spaces allowed) is an IBAN of a known country, of its length, whose checksum holds."""
    chars = compact(value)
    if IBAN_LENGTHS.get(chars[:2]) != len(chars) or not chars[2:4].isdigit():
        return False
    return iban_remainder(chars) == 1


#: A letter of a French RIB account number read as a digit for its key (``A``/``J`` = 1 ... ``I``/``R``/``Z`` = 9).
_RIB_LETTERS = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "12345678912345678923456789")


def rib_key(bank_branch_account: str) -> str:
    """The two-digit key of a French RIB (5-digit bank, 5-digit branch, 11-character account, upper case):
    ``97 - (89 bank + 15 branch + 3 account) mod 97``."""
    bank, branch, account = bank_branch_account[:5], bank_branch_account[5:10], bank_branch_account[10:21]
    total = 89 * int(bank) + 15 * int(branch) + 3 * int(account.translate(_RIB_LETTERS))
    return f"{97 - total % 97:02d}"


# ------------------------------------------------------------------------------------------ patterns (folded)

_NIR_BODY = re.compile(r"[1-478]\d{4}(?:\d\d|2[AB])\d{6}")
_G = r"[ .\-]?"  # between the groups of a number as written
_NIR = rf"[1-478]{_G}\d\d{_G}\d\d{_G}(?:\d\d|2[ab]){_G}\d\d\d{_G}\d\d\d(?:{_G}\d\d)?"
_RPPS = r"(?:8[ ]?)?\d(?:[ .]?\d){10}"  # 11 digits, grouped or not: ``1 00 034 567 89``
_ADELI = r"\d(?:[ .]?\d){8}"
_GENERIC = r"[a-z]{0,4}\d[a-z0-9]*(?:[.\-/_][a-z0-9]+)*"
_ANY_VALUE = rf"{_NIR}|{_GENERIC}"
#: An identity document's number: one word holding a digit (``12AB34567``, ``X4RTBPFW4``), or digit groups.
_DOCUMENT = r"[a-z]*\d[a-z0-9]*(?:[ .\-]\d[a-z0-9]{2,})*"
#: An IBAN: the country, two check digits, then groups of four (a space or none between them), the last shorter;
#: or a French one grouped as its RIB (``FR76 30006 00001 12345678901 89``).
_IBAN_BODY = r"(?:(?:[ ]?[a-z0-9]{4}){2,7}(?:[ ]?[a-z0-9]{1,3})?|[ ]?\d{5}[ ]?\d{5}[ ]?[a-z0-9]{11}[ ]?\d\d)"
_IBAN = rf"[a-z]{{2}}\d\d{_IBAN_BODY}"
#: A French RIB: 5-digit bank, 5-digit branch, 11-character account, 2-digit key.
_RIB = r"\d{5}[ ]?\d{5}[ ]?[a-z0-9]{11}[ ]?\d\d"

_NO = r"(?:n\s?[°º]|no\.?|n\.|num\.?|numero|nr\.?)"
_DE = r"(?:\s*(?:de\s+la\s+|de\s+l'|du\s+|de\s+|d'|des\s+))?"
_ID_DOCUMENTS = (
    r"cni|c\.n\.i\.?|carte\s+(?:nationale\s+)?d'identite|piece\s+d'identite|passeport|titre\s+de\s+sejour"
    r"|carte\s+de\s+(?:sejour|resident)|permis\s+de\s+conduire"
)
#: What may follow a contract's cue (``n° de contrat mutuelle``), one of the words that make it a mutual's contract.
_MUTUAL_WORD = r"(?:\s+(?:mutuelle|complementaire(?:\s+sante)?|amc))"
#: ``sejour``/``venue`` starting a cue, not the end of a document's name (``titre de séjour`` is one).
_STAY = r"(?<!titre de )(?<!carte de )(?:sejour|venue)"
_CUES: dict[str, str] = {
    "INS": r"(?:matricule\s+)?ins(?:[\s\-](?:nir|nia))?|identifiant\s+national\s+de\s+sante",
    "NIR": rf"nir|nss|n\.s\.?s\.?|{_NO}\s*{_DE}\s*(?:securite\s+sociale|secu|s\.?s\.?|immatriculation|assure)"
    r"|securite\s+sociale|carte\s+vitale|matricule(?:\s+(?:de\s+l'|d')?assure)?|immatriculation",
    "RPPS": r"rpps|id[\s.\-]?ps|identifiant\s+national\s+ps",
    "ADELI": r"adeli",
    "IPP": rf"ipp|nip|i\.p\.p\.?|{_NO}\s*{_DE}\s*patient|identifiant\s+(?:permanent\s+)?(?:du\s+)?patient"
    r"|id[\s.\-]?patient|numero\s+d'identification|identifiant(?!\s+(?:national|rpps|ps|adeli|finess))",
    "NDA": rf"nda|{_NO}\s*{_DE}\s*(?:sejour|venue|passage|admission|hospitalisation|hospit\.?|entree|episode)"
    rf"|{_STAY}\s+{_NO}|episode|(?P<bare>{_STAY}(?![a-z0-9]))",
    "DOSSIER": rf"(?:{_NO}\s*{_DE}\s*|ref(?:erence)?\.?\s*{_DE}\s*)?dossier(?:\s+(?:patient|medical|administratif))?"
    rf"|dossier\s+{_NO}|n\.?dossier",
    "EXAMEN": rf"{_NO}\s*{_DE}\s*(?:examen|exam|demande|prelevement|accession)",
    "MUTUELLE": rf"{_NO}\s*{_DE}\s*(?:adh(?:erent|esion)?|mutuelle|amc|affiliation|affilie)(?![a-z])\.?{_MUTUAL_WORD}?"
    rf"|(?:adherent|mutuelle|amc)\s+{_NO}"
    rf"|(?P<contract>(?:{_NO}\s*{_DE}\s*contrat|contrat\s+{_NO}){_MUTUAL_WORD}?)",
    "PIECE_IDENTITE": rf"(?:{_NO}\s*{_DE}\s*)?(?:{_ID_DOCUMENTS})(?:\s+{_NO})?"
    rf"|{_NO}\s*{_DE}\s*ame(?![a-z])|ame\s+{_NO}",
    "IBAN": rf"iban|rib|releve\s+d'identite\s+bancaire|coordonnees\s+bancaires|{_NO}\s*{_DE}\s*compte(?:\s+bancaire)?",
}
#: Cues of the numbers kept (institutions).
_KEPT_CUE = rf"(?:{_NO}\s*)?(?:finess(?:\s+(?:et|ej|geographique|juridique))?|siret|siren)"
_VALUES = {
    **{"INS": _NIR, "NIR": _NIR, "RPPS": _RPPS, "ADELI": _ADELI},
    **{"PIECE_IDENTITE": _DOCUMENT, "IBAN": f"{_IBAN}|{_RIB}"},
}
_SEP = r"""[ :=#|>\-."']{0,12}"""  # quotes too: an attribute named by its cue (data-ipp="80092945")
_BEFORE = r"(?<![a-z0-9])"
_AFTER = r"(?![a-z0-9])"


def _cued(kind: str) -> re.Pattern[str]:
    value = _VALUES.get(kind, _GENERIC)
    return re.compile(rf"{_BEFORE}(?:{_CUES[kind]}){_SEP}(?P<val>{value}){_AFTER}")


#: INS before NIR: ``INS-NIR 1 84...`` is read as the INS its longer cue names.
_CUED = {kind: _cued(kind) for kind in ("INS", *(k for k in KINDS if k != "INS"))}
#: A value followed by its cue in brackets: ``184127512345678 (INS-NIR, ...)``, ``26752240 (IPP)``.
_CUE_AFTER = re.compile(
    rf"{_BEFORE}(?P<val>{_ANY_VALUE})\s*\(\s*(?P<cue>ins(?:-nir|-nia)?|nir|ipp|nip|nda|rpps|adeli){_AFTER}"
)
#: Soft hyphens and zero-width characters read as a dash inside a number (same length: offsets hold).
_INVISIBLE_AS_DASH = str.maketrans(dict.fromkeys(INVISIBLE, "-"))
_ANY_CUE = re.compile(rf"{_BEFORE}(?:{'|'.join(_CUES.values())}){_AFTER}")
#: What every cue of :data:`_CUES` starts with (``n`` then a space, ``°``, ``o``...: ``n°``, ``no``, ``nir``, ``nss``,
#: ``nda``, ``n.dossier``). The cue patterns try their thirty alternatives at every position of a text; this one,
#: made of literals, is skipped through by the regex engine: the cues are then tried only where it matches
#: (with the hints below, 1.30 -> 0.45 s for 1,000 export-style notes' texts and files: docs/benchmarks.md). Its
#: words are grouped by their first letter: a position is then tried against one group, not every word (0.14 ->
#: 0.08 s for the same texts, with the cues of the mutual, identity documents and bank accounts in).
_CUE_HINT = re.compile(
    r"n[\s°º.ourisd]|i(?:ns|d|mmatriculation|pp|\.p|ban)|c(?:arte|ni|\.n|ontrat|oordonnees)|s(?:ecurite|ejour)"
    r"|r(?:pps|ef|ib|eleve)|a(?:deli|dherent|m[ce])|m(?:atricule|utuelle)|dossier|venue|episode"
    r"|p(?:iece|asseport|ermis)|titre"
)
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_AFTER_KINDS = {"ins": "INS", "ins-nir": "INS", "ins-nia": "INS", "nir": "NIR", "ipp": "IPP", "nip": "IPP"}
_KEPT = re.compile(rf"{_BEFORE}{_KEPT_CUE}{_SEP}(?P<val>\d[\d ]*\d){_AFTER}")
_BARE_NIR = re.compile(rf"(?<![a-z0-9])(?<!\d[ .\-])(?P<val>{_NIR})(?![a-z0-9])(?![ .\-]\d)")
#: :data:`_BARE_NIR` with its lookbehinds moved after the first digit (``(?<!X)c`` is ``c(?<!X.)``): a pattern
#: that starts with a character class is skipped through by the regex engine to where the class matches,
#: one that starts with a lookbehind tries every position (twice as fast: docs/benchmarks.md, *deidentify*).
_BARE_NIR_FAST = re.compile(
    rf"(?P<val>[1-478](?<![a-z0-9].)(?<!\d[ .\-].){_NIR.removeprefix('[1-478]')})(?![a-z0-9])(?![ .\-]\d)"
)
#: An IBAN written anywhere (:func:`iban_end` cuts it at its country's length, :func:`is_valid_iban` checks it).
_BARE_IBAN = re.compile(rf"(?<![a-z0-9])(?P<val>{_IBAN})(?![a-z0-9])")
#: :data:`_BARE_IBAN` led by the first of its check digits (the country's letters then looked behind): a pattern that
#: starts with a digit is skipped through to the digits of a text, one that starts with a letter tries every letter.
_BARE_IBAN_FAST = re.compile(rf"\d(?<![a-z0-9][a-z][a-z].)(?<=[a-z][a-z].)\d{_IBAN_BODY}(?![a-z0-9])")
_BARE_RPPS = re.compile(r"(?<![a-z0-9])(?<!\d[ .\-])(?P<val>8?10\d{9})(?![a-z0-9])(?![ .\-]\d)")
#: What every match of :data:`_BARE_RPPS`, :data:`_CUE_AFTER` holds: when a text holds none, the
#: pattern (which starts with a lookbehind, tried at every position) is not run.
_RPPS_HINT = re.compile(r"10\d{9}")
_CUE_AFTER_HINT = re.compile(r"\(\s*(?:ins|nir|ipp|nip|nda|rpps|adeli)")
_KEPT_WORD = re.compile("finess|sire[tn]")
_DATE_LIKE = re.compile(r"\d{1,4}[/.\-]\d{1,2}[/.\-]\d{1,4}")
_YEAR = re.compile(r"(?:19|20)\d\d")
_YEARS = re.compile(r"(?:19|20)\d\d\s?[/\-]\s?(?:(?:19|20)\d\d|\d\d)")
#: Before ``n° de contrat`` (within :data:`_CONTEXT` characters), what makes it a mutual's contract number.
_MUTUAL_CONTEXT = re.compile(r"mutuelle|complementaire|amc|adherent|tiers[ \-]payant")
_CONTEXT = 80
#: What every identifier holds: a digit (an identity document's number may hold no two in a row: ``X4RTBPFW4``).
_HAS_NUMBER = re.compile(r"\d")

#: Column headers of a text table (a cell's whole text, folded).
_HEADERS = re.compile(rf"(?:{'|'.join(f'(?P<{k}>{c})' for k, c in _CUES.items())})\s*:?", re.IGNORECASE)
_KEPT_HEADER = re.compile(rf"{_KEPT_CUE}\s*:?")
_CELL_SPLIT = re.compile(r"\t|\s{2,}|\|")
_RULE = re.compile(r"^[\s\-=_|+*.]*$")
_COLUMN_ROWS = 60


def _acceptable(kind: str, value: str, strict: bool = False) -> bool:
    """Whether a cued value is a number of ``kind`` and not a date, a year or too short. ``strict``, after a
    word that also starts a sentence (``Séjour 22012345``, not ``séjour 2021-2022``, ``venue 15/03``): six
    digits or more, no date or range of years in it."""
    digits = sum(c.isdigit() for c in value)
    if kind in NIR_KINDS or kind in PROFESSIONAL_KINDS or kind == "IBAN":
        return True
    if _DATE_LIKE.fullmatch(value) or _YEAR.fullmatch(value):
        return False
    if kind == "PIECE_IDENTITE" or strict:  # never a date or a range of years inside (titre de séjour 2021-2031)
        if _DATE_LIKE.search(value) or _YEARS.fullmatch(value):
            return False
        if kind == "PIECE_IDENTITE":  # a document's number may hold letters: X4RTBPFW4
            return digits >= 2 and sum(c.isalnum() for c in value) >= 6
        return digits >= 6
    return digits >= MIN_DIGITS


def _accepts(kind: str, m: re.Match[str]) -> bool:
    """:func:`_acceptable` for a match of a cue pattern (:data:`_CUED`): strict after a bare ``séjour``/``venue``;
    a contract's number only near a word of a mutual (``Mutuelle : ... N° de contrat : 12345678``)."""
    groups = m.re.groupindex
    if "contract" in groups and m["contract"] is not None and not _mutual_contract(m.string, m.start(), m.start("val")):
        return False
    return _acceptable(kind, m["val"], strict="bare" in groups and m["bare"] is not None)


def _mutual_contract(folded: str, start: int, end: int) -> bool:
    """Whether ``n° de contrat`` at ``start`` (its number at ``end``) is a mutual's (:data:`_MUTUAL_CONTEXT`)."""
    return _MUTUAL_CONTEXT.search(folded, max(0, start - _CONTEXT), end) is not None


def _kept_ranges(folded: str, cues: list[int]) -> list[tuple[int, int]]:
    """The numbers of institutions (:data:`_KEPT`); ``cues``: :func:`cue_starts` of ``folded``, where the
    ``n°`` that may come first starts (the other starts are the institution's word)."""
    words = [m.start() for m in _KEPT_WORD.finditer(folded)]
    if not words:
        return []
    return [m.span("val") for m in matches_at(_KEPT, folded, sorted({*cues, *words}))]


def _inside(start: int, end: int, ranges: Iterable[tuple[int, int]]) -> bool:
    return any(start < r_end and r_start < end for r_start, r_end in ranges)


def _folded(text: str) -> str:
    """``text`` as the patterns read it: folded, an invisible character as a dash (``2675&shy;2240`` is one
    number; the second pass only when there is one: most texts hold none)."""
    folded = fold(text)
    return folded.translate(_INVISIBLE_AS_DASH) if INVISIBLE_RE.search(folded) else folded


def find_identifiers(text: str) -> list[Identifier]:
    """The direct identifiers of one text (a note's visible text or one of its other views): cued,
    checksummed and table-column numbers (module docstring), non-overlapping, sorted by start."""
    if not _HAS_NUMBER.search(text):
        return []
    folded = _folded(text)
    starts = cue_starts(folded)
    kept = _kept_ranges(folded, starts)
    found: list[Identifier] = []
    cued = next(matches_at(_ANY_CUE, folded, starts), None) is not None  # most texts name no identifier
    for kind, pattern in _CUED.items() if cued else ():
        found += filter(None, (cued_identifier(kind, m, kept) for m in matches_at(pattern, folded, starts)))
    for m in _CUE_AFTER.finditer(folded) if cued and _CUE_AFTER_HINT.search(folded) else ():
        kind = _AFTER_KINDS.get(m["cue"], m["cue"].upper())
        start, end = m.span("val")
        if _acceptable(kind, m["val"]) and not _inside(start, end, kept):
            found.append(Identifier(start, end, kind, "cue"))
    for m in _BARE_NIR_FAST.finditer(folded):
        if is_valid_nir(m["val"]) and not _inside(*m.span("val"), kept):
            found.append(Identifier(*m.span("val"), "NIR", "checksum"))
    for m in _BARE_RPPS.finditer(folded) if _RPPS_HINT.search(folded) else ():
        if is_valid_rpps(m["val"]) and not _inside(*m.span("val"), kept):
            found.append(Identifier(*m.span("val"), "RPPS", "checksum"))
    for m in _BARE_IBAN_FAST.finditer(folded):  # the country's letters stand before the match's first digit
        found += filter(None, [iban_identifier(folded, m.start() - 2, m.end(), kept)])
    if cued and "\n" in text:
        found += [i for i in _columns(text, folded, starts) if not _inside(i.start, i.end, kept)]
    return resolve(found)


def iban_end(folded: str, start: int, end: int) -> int | None:
    """Where the IBAN written from ``start`` (a match of :data:`_IBAN` ending at ``end``) ends: after as many
    letters and digits as its country's IBAN has (``BE68 5390 0754 7034 2024``: the year is not in it), or
    ``None`` when that is not at the end of a word or the country writes no IBAN."""
    length = IBAN_LENGTHS.get(folded[start : start + 2].upper())
    if length is None:
        return None
    count, at = 0, start
    while at < end and count < length:
        count += folded[at] in _ALNUM
        at += 1
    if count < length or (at < len(folded) and folded[at] in _ALNUM):
        return None
    return at


def cued_identifier(kind: str, m: re.Match[str], kept: list[tuple[int, int]]) -> Identifier | None:
    """The identifier of a cue pattern's match (:data:`_CUED`), if its value is one (:func:`_accepts`) and not an
    institution's number (``kept``); an IBAN's cut at its country's length (:func:`iban_end`)."""
    start, end = m.span("val")
    if kind == "IBAN":
        end = iban_end(m.string, start, end) or end
    if _accepts(kind, m) and not _inside(start, end, kept):
        return Identifier(start, end, kind, "cue")
    return None


def iban_identifier(folded: str, start: int, end: int, kept: list[tuple[int, int]]) -> Identifier | None:
    """The IBAN written from ``start`` (a match of :data:`_IBAN` ending at ``end``) when its checksum holds."""
    end = iban_end(folded, start, end)
    if end is None or not is_valid_iban(folded[start:end]) or _inside(start, end, kept):
        return None
    return Identifier(start, end, "IBAN", "checksum")


def cue_starts(folded: str) -> list[int]:
    """The positions of a folded text where a cue of :data:`_CUES` may start (a superset: where
    :data:`_CUE_HINT` matches, not after a letter or a digit), in order."""
    return [m.start() for m in _CUE_HINT.finditer(folded) if not m.start() or folded[m.start() - 1] not in _ALNUM]


def matches_at(pattern: re.Pattern[str], folded: str, starts: list[int]) -> Iterator[re.Match[str]]:
    """``pattern.finditer(folded)`` for a pattern that matches only at one of ``starts`` (:func:`cue_starts`):
    the same non-overlapping matches, each tried only there."""
    end = 0
    for start in starts:
        if start >= end:
            m = pattern.match(folded, start)
            if m is not None:
                yield m
                end = max(m.end(), start + 1)


def resolve(found: list[Identifier]) -> list[Identifier]:
    """``found`` made non-overlapping, the earliest and then the longest first (a cue's reading before a checksum's)."""
    order = {"cue": 0, "column": 1, "checksum": 2, "repeat": 3}
    found.sort(key=lambda i: (i.start, -(i.end - i.start), order[i.how]))
    kept: list[Identifier] = []
    for identifier in found:
        if not kept or identifier.start >= kept[-1].end:
            kept.append(identifier)
    return kept


def _lines(text: str) -> list[tuple[int, str]]:
    out, cursor = [], 0
    for line in text.split("\n"):
        out.append((cursor, line))
        cursor += len(line) + 1
    return out


def _header_cells(line: str) -> list[tuple[int, str, bool]]:
    """The cells of a header line: ``(start, kind, strict)`` for each cell that names an identifier (or ``KEPT``);
    ``strict``: a bare ``Séjour``/``Venue`` (:func:`_acceptable`). ``N° de contrat`` names one only on a line
    that names a mutual."""
    cells, cursor = [], 0
    for piece in _CELL_SPLIT.split(line):
        start = line.index(piece, cursor) if piece else cursor
        cursor = start + len(piece)
        cell = fold(piece.strip())
        if not cell:
            continue
        offset = start + len(piece) - len(piece.lstrip())
        m = _HEADERS.fullmatch(cell)
        if m:
            if m["contract"] is None or _MUTUAL_CONTEXT.search(fold(line)):
                cells.append((offset, next(k for k in KINDS if m.group(k)), m["bare"] is not None))
        elif _KEPT_HEADER.fullmatch(cell):
            cells.append((offset, "KEPT", False))
    return cells


def _columns(text: str, folded: str, cues: list[int]) -> list[Identifier]:
    """Numbers under a column header naming an identifier, in a tab-separated or fixed-width text table
    (``cues``: :func:`cue_starts` of ``folded``)."""
    lines = _lines(text)
    starts = [start for start, _ in lines]
    headers = sorted({bisect_right(starts, m.start()) - 1 for m in matches_at(_ANY_CUE, folded, cues)})
    found: list[Identifier] = []
    for row in headers:
        line = lines[row][1]
        cells = _header_cells(line)
        if not cells or len(_CELL_SPLIT.split(line.strip())) < 2:
            continue
        tabbed = "\t" in line
        for below_start, below in lines[row + 1 : row + 1 + _COLUMN_ROWS]:
            if not below.strip():
                break
            if _RULE.match(below):
                continue
            folded_below = folded[below_start : below_start + len(below)]
            for start, kind, strict in cells:
                if kind == "KEPT":
                    continue
                span = _cell_at(below, folded_below, start, tabbed, line, kind, strict)
                if span is not None:
                    found.append(Identifier(below_start + span[0], below_start + span[1], kind, "column"))
    return found


def _cell_at(
    line: str, folded: str, start: int, tabbed: bool, header: str, kind: str, strict: bool = False
) -> tuple[int, int] | None:
    """The span of the value in ``line`` under the header cell starting at ``start``, if it is one."""
    value_re = _COLUMN_VALUE[kind]
    if tabbed:
        index = header[:start].count("\t")
        cells = line.split("\t")
        if index >= len(cells):
            return None
        offset = sum(len(c) + 1 for c in cells[:index])
        cell = cells[index]
        m = value_re.fullmatch(fold(cell.strip()))
        if m is None or not _acceptable(kind, m.group(), strict):
            return None
        lead = len(cell) - len(cell.lstrip())
        return offset + lead, offset + lead + len(cell.strip())
    for shift in (0, -1, 1, -2, 2):
        at = start + shift
        if at < 0 or at >= len(line) or (at > 0 and line[at - 1].isalnum()):
            continue
        m = value_re.match(folded, at)
        if m and _acceptable(kind, m.group(), strict):
            return m.span()
    return None


_COLUMN_VALUE = {kind: re.compile(rf"(?:{_VALUES.get(kind, _GENERIC)})(?![a-z0-9])") for kind in KINDS}


# ------------------------------------------------------------------------------------------ known values


#: From this many characters, a known value is also found with separators anywhere inside it.
FLEXIBLE_FROM = 8


def value_pattern(value: str) -> re.Pattern[str]:
    """Where else the compact ``value`` (:func:`compact`) is written, as a whole token (any case):
    as it is, or, from :data:`FLEXIBLE_FROM` characters, with a space, dot, dash or slash anywhere inside
    (``1 84 12 75 123 456 78``, ``26.75.22.40``)."""
    if len(value) >= FLEXIBLE_FROM:
        body = r"[ .\-/]?".join(re.escape(c) for c in value)
    else:
        body = re.escape(value)
    if value.isascii() and value.isdigit():
        # The same pattern without IGNORECASE (a digit has no case; the four letters IGNORECASE adds to
        # ``[A-Za-z0-9]`` written out, each alone: in a class they cost as much as the flag). Compiling
        # takes 0.6 of the time, and a note's numbers are mostly new ones (docs/benchmarks.md, *deidentify*).
        return re.compile(rf"{_NOT_AFTER_ALNUM}(?:{body}){_NOT_BEFORE_ALNUM}")
    return re.compile(rf"(?<![A-Za-z0-9])(?:{body})(?![A-Za-z0-9])", re.IGNORECASE)


#: What ``[A-Za-z0-9]`` matches under ``re.IGNORECASE`` besides itself: İ ı ſ K (Kelvin), which fold to i, s, k.
_CASELESS_EXTRA = "\u0130\u0131\u017f\u212a"
_NOT_AFTER_ALNUM = "(?<![A-Za-z0-9])" + "".join(f"(?<!{c})" for c in _CASELESS_EXTRA)
_NOT_BEFORE_ALNUM = "(?![A-Za-z0-9])" + "".join(f"(?!{c})" for c in _CASELESS_EXTRA)


def find_values(text: str, known: Mapping[str, str], shortest: int = REPEAT_MIN) -> list[Identifier]:
    """Occurrences in ``text`` of the known values (``compact value -> kind``) of ``shortest`` characters
    or more (the residual-leak check looks for all of them)."""
    if not known or not _HAS_NUMBER.search(text):
        return []
    folded = _folded(text)
    squeezed = None
    found = []
    for value, kind in known.items():
        if len(value) < shortest:
            continue
        if value.isascii() and value.isdigit():
            # A number (most identifiers) is looked for without compiling its pattern: a note's numbers are mostly
            # new ones, and compiling was most of the search (0.34 -> 0.07 s for 1,000 export-style notes:
            # docs/benchmarks.md, *deidentify*).
            squeezed = folded.translate(_NO_SEPARATORS) if squeezed is None else squeezed
            found += [Identifier(start, end, kind, "repeat") for start, end in _number_spans(folded, squeezed, value)]
        else:
            found += [Identifier(m.start(), m.end(), kind, "repeat") for m in _pattern(value).finditer(folded)]
    return found


_SEPARATORS = " .-/"  # what :func:`value_pattern` lets stand between two characters of a long value
_NO_SEPARATORS = str.maketrans("", "", _SEPARATORS)
#: What :func:`value_pattern` lets stand on neither side of a value: ``[A-Za-z0-9]`` and its caseless extras.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + _CASELESS_EXTRA)


def _number_spans(folded: str, squeezed: str, value: str) -> list[tuple[int, int]]:
    """The spans of ``value_pattern(value).finditer(folded)`` for a ``value`` of ASCII digits, without the pattern
    (``squeezed``: ``folded`` without :data:`_SEPARATORS`, where every occurrence shows whole).

    The pattern has no choice to backtrack into: a digit is never a separator, so at each step either the next
    character is the digit wanted, or a separator and then the digit, or there is no match from that start."""
    if value not in squeezed:
        return []
    flexible, first, size = len(value) >= FLEXIBLE_FROM, value[0], len(folded)
    spans = []
    start = folded.find(first)
    while start != -1:
        end = start + 1
        for digit in value[1:]:
            if end < size and folded[end] == digit:
                end += 1
            elif flexible and end + 1 < size and folded[end] in _SEPARATORS and folded[end + 1] == digit:
                end += 2
            else:
                end = -1
                break
        if (
            end != -1
            and (start == 0 or folded[start - 1] not in _WORD_CHARS)
            and (end == size or folded[end] not in _WORD_CHARS)
        ):
            spans.append((start, end))
            start = folded.find(first, end)
        else:
            start = folded.find(first, start + 1)
    return spans


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _pattern(value: str) -> re.Pattern[str]:
    if value not in _PATTERNS:
        if len(_PATTERNS) > 4096:
            _PATTERNS.clear()
        _PATTERNS[value] = value_pattern(value)
    return _PATTERNS[value]


def known_values(text: str, identifiers: Iterable[Identifier], known: dict[str, str] | None = None) -> dict[str, str]:
    """``compact value -> kind`` of the identifiers found in ``text`` (the first kind found wins)."""
    known = {} if known is None else known
    for identifier in identifiers:
        known.setdefault(compact(text[identifier.start : identifier.end]), identifier.kind)
    return known


def find_all(text: str, known: Mapping[str, str]) -> list[Identifier]:
    """:func:`find_identifiers` and the other occurrences of ``known`` values, non-overlapping; a value keeps
    the kind it was first found as (``IPP : 26752240 ... dossier 26752240``: one number, one surrogate)."""
    found = resolve([*find_identifiers(text), *find_values(text, known)])
    return [replace(i, kind=known.get(compact(text[i.start : i.end]), i.kind)) for i in found]


def note_identifiers(parsed: ParsedHtml, found_in_text: Iterable[Identifier] | None = None) -> dict[str, str]:
    """``compact value -> kind`` of the identifiers found in every view of a parsed note (the visible
    text's already found may be given): what de-identification replaces everywhere and what the
    residual-leak check then looks for.

    The views besides the text are read at once, as the whole file decoded (references, invisible
    characters dropped): a cue and its number sit in one attribute value, comment or title, and only the
    values matter here, not where they are."""
    text_found = find_identifiers(parsed.text) if found_in_text is None else found_in_text
    known = known_values(parsed.text, text_found)
    if _HAS_NUMBER.search(parsed.html):
        whole = INVISIBLE_RE.sub("", unescape(parsed.html))
        known_values(whole, find_identifiers(whole), known)
    return known
