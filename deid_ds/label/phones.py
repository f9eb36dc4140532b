"""PHONE labelling functions: French national and international numbers, in every layout.

A French number is ten digits starting with ``0`` and a non-zero digit, written in pairs separated by
spaces (often ``&nbsp;``), dots or dashes, or not separated; internationally ``+33`` or ``0033`` replaces
the leading ``0``, sometimes keeping it in brackets (``+33 (0)2 99 28 43 21``). Short numbers (``15``,
``3114``) are never phones. The span covers the whole number, ``+`` included, and nothing around it.

As warehouses export them: ``(33) 6 12 34 56 78``; a number broken over two lines of a PDF
rendering, one span over the line break; internal extensions, DECT and pager numbers, digits only
(``poste [4567]``, ``bip [5318]``: ``docs/guidelines.md``); a number dictated in words (``zéro deux
quatre-vingt-dix-neuf ...``), which is ``PHONE`` too.
"""

from __future__ import annotations

import re

from deid_ds.label import _numbers
from deid_ds.label._text import BLANK, BLANKS, after_identifier_name, not_after
from deid_ds.label.candidate import Candidate
from deid_ds.label.occupied import Occupied

LABEL = "PHONE"

_SEP = r"[ \u00a0\u202f.\-]"
# Every pattern starts with its first character ("0" or "+"), the lookbehind written after it, so that
# the regex engine skips to those characters (see ``not_after``).
# A dot or a colon glued before the number ends a label ("Tél.0298765432", "Tel:+33 6 ...", "Tél :02-98-..."),
# unless a figure or a sign comes before it ("12:02 98 ...", "1.02 ...": the number goes on).
_ZERO = not_after("0", r"[\w+/,\-]") + r"(?<![\d_+/,\-][.:]0)"
_PLUS = not_after(r"\+", r"[\w+/,\-]") + r"(?<![\d_+/,\-][.:]\+)"
# "02 99 28 43 21", "02.99.28.43.21", "0299284321", "02-99-28-43-21", "02 99284321" (any mix of
# separators between pairs, at most one separator character between two pairs).
_NATIONAL = re.compile(rf"{_ZERO}[1-9](?:{_SEP}?\d{{2}}){{4}}(?!\d|[.,/:\-]\d)")
# "+33 2 99 28 43 21", "+33 (0)2 99 28 43 21", "+33299284321", "0033 2 99 28 43 21", "+33 6.12.34.56.78"
_FRENCH_INTL = re.compile(
    rf"(?:{_PLUS}|{_ZERO}0){_SEP}?33{_SEP}?(?:\(0\){_SEP}?)?[1-9](?:{_SEP}?\d{{2}}){{4}}(?!\d|[.,/:\-]\d)"
)
# Other countries: "+32 2 555 12 34", "+41 22 372 33 11", "+1 (212) 555-0100"; 8 to 13 digits after the
# country code, in groups.
_OTHER_INTL = re.compile(
    not_after(r"\+", r"[\w+]")
    + rf"(?!33)[1-9]\d{{0,2}}(?:{_SEP}?\(\d{{1,4}}\))?(?:{_SEP}?\d{{1,4}}){{2,6}}(?!\d|[.,/:\-]\d)"
)
# "(33) 6 12 34 56 78", "(+33) 2 99 28 43 21": the country code in brackets (the brackets are in the span).
_PAREN_INTL = re.compile(rf"\((?:\+|00)?33\){_SEP}?(?:\(0\){_SEP}?)?[1-9](?:{_SEP}?\d{{2}}){{4}}(?!\d|[.,/:\-]\d)")
# "(02) 98 44 55 66", "(0)2 98 44 55 66": the area code in brackets, as hand-written letterheads put it (the
# brackets are in the span).
_PAREN_AREA = re.compile(rf"\((?:0[1-9]\)|0\){_SEP}?[1-9])(?:{_SEP}?\d{{2}}){{4}}(?!{_SEP}?\d|[,/:]\d)")
# "02/98/44/55/66": pairs joined by slashes, every one, after a phone word ("01/02/03/04/05" lists items).
_SLASHED = re.compile(rf"{_ZERO}[1-9](?:/\d{{2}}){{4}}(?!\d|[.,/:\-]\d)")
# The ten digits grouped otherwise than in pairs, after a phone word only: "0 800 123 456" (free numbers),
# "029 844 55 66", "02 98 445 566"; digit by digit, at most one separator between two digits.
_REGROUPED = re.compile(rf"{_ZERO}{_SEP}?[1-9](?:{_SEP}?\d){{8}}(?!{_SEP}?\d|[,/:]\d)")
# Another country's number with "00" for "+": "0032 2 555 12 34", "0041 22 123 45 67", "00212 6 21 43 65 87";
# in groups (a compact run of digits starting "00" is an identifier as often).
_OTHER_INTL_00 = re.compile(
    rf"{_ZERO}0(?!33)[1-9]\d{{0,2}}{_SEP}(?:\(\d{{1,4}}\){_SEP}?)?\d{{1,4}}(?:{_SEP}\d{{1,4}}){{1,5}}(?!\d|[.,/:\-]\d)"
)
# A number broken over two lines of a PDF export ("02 99 28" / "43 21"): one span over the line break,
# found only after a phone word (a column of figures breaks over lines too).
_LINE_BREAK = rf"{BLANK}*\n(?:{BLANK}*\n)?{BLANK}*"
_BROKEN_REST = rf"(?:{_SEP}?\d{{2}}){{0,3}}{_LINE_BREAK}\d{{2}}(?:{_SEP}?\d{{2}}){{0,3}}(?!\d|[.,/:\-]\d)"
# two patterns, each starting with its literal first character, which the regex engine skips to fast
_BROKEN = (
    re.compile(rf"{_ZERO}[1-9]{_BROKEN_REST}"),
    re.compile(rf"{_PLUS}33{_SEP}?(?:\(0\){_SEP}?)?[1-9]{_BROKEN_REST}"),
    # (or broken just after its country code, "+33" / "(0)6 21 43 65 87": a phone with no phone word before it)
    re.compile(rf"{_PLUS}33{_LINE_BREAK}(?:\(0\){_SEP}?)?[1-9](?:{_SEP}?\d{{2}}){{4}}(?!\d|[.,/:\-]\d)"),
)
# Internal extensions, DECT and pager numbers are PHONE, digits only: "poste [4567]", "DECT [2345]",
# "bip [5318]", "ligne directe [4567]", "tél. int. [45 67]", "(tél. [3429])", "ext. [4567]", "p. [4567]" after
# a number (docs/guidelines.md; a bare "P [4567]" just after a number is _BARE_P_AFTER);
# hospitals' five- and six-digit plans too, in groups ("DECT [31 207]", "poste [4 72 15]").
# Matched only where the folded note holds the start of a cue word (see _extension_matches).
# (in the folded note "Tél" reads "tel", in the lowered one "tél")
# (and "poste" as a scan misreads it, "P0STE", "PO5TE")
_EXTENSION_HINTS = ("poste", "dect", "bip", "p.", "tel", "tél", "ligne", "ext", "p0ste", "po5te")
_EXTENSION = re.compile(
    rf"(?<![\w])(?P<cue>poste|dect|bip(?:per)?|ligne{BLANKS}directe|t[ée]l\.?{BLANK}?int(?:erne)?\.?|t[ée]l\.|p\.|ext(?:ension|\.)|p[o0]5te|p0ste)"
    rf"{BLANK}?:?{BLANK}?(?:n°{BLANK}?)?"
    rf"(?P<number>\d{{1,3}}(?:{BLANK}\d{{2,3}}){{1,2}}|\d{{3,5}})(?![\w]|[ .,/:\-]?\d)",
    re.IGNORECASE,
)
# "la Poste" is a street or the postal service, not an extension.
_STREET_POSTE = re.compile(r"\bla[ \u00a0]+$", re.IGNORECASE)
# A "p." extension only just after a phone number or a phone word ("02 99 28 43 21 p. 4567"): a bare
# "p. 1234" is a page.
_NUMBER_JUST_BEFORE = re.compile(r"\d{2}[ ,;\-–\u00a0]*$")
_BARE_P_AFTER = re.compile(rf"[ ,;\-–\u00a0]*p{BLANKS}(?P<number>\d{{3,5}})(?![\w]|[ .,/:\-]?\d)", re.IGNORECASE)
# ... or opening a bracket, a line or a table cell: "Dr X (p. 4567)", a cell "p. 4567" of a list of staff
_OPENS_P = re.compile(r"(?:^|[(\n\t])[ \u00a0]*$")
# A number dictated in words: "zéro deux quatre-vingt-dix-neuf vingt-huit quarante-trois vingt et un",
# also with digit groups ("zéro six 12 34 56 78"). Each chunk is one spoken group: a number in words
# (hyphenated, or "vingt et un") or two digits.
_SPOKEN_ZERO = re.compile(r"(?<![\w])z(?:é|e\u0301?)ro(?![^\W\d_])", re.IGNORECASE)
_SPOKEN_CHUNK = re.compile(
    rf"[ ,\u00a0]+(?P<chunk>{_numbers.NUMBER_WORD}(?:-(?:et-)?{_numbers.NUMBER_WORD})*"
    rf"(?:{BLANKS}et{BLANKS}(?:un|onze)(?![^\W\d_]))?|\d\d(?!\d))",
    re.IGNORECASE,
)

# Words announcing a number. They raise confidence; they are not required (letterheads list numbers in
# table cells with the label in another cell).
_CONTEXT_BEFORE = re.compile(
    r"\b(?:t[ée]l(?:[ée]phone)?|t[ée]l[ée]copie|fax|port(?:able)?|mobile|gsm|secr[ée]tariat|standard|ligne|"
    r"joindre|joignable|appeler|num[ée]ro|bip|astreinte|domicile|cabinet|accueil|rdv|rendez-vous)\b[^\n\d]{0,25}$|☎|📞",
    re.IGNORECASE,
)


# A compact ten-digit number after these is an identifier (file, stay, patient number), not a phone.
_IDENTIFIER_BEFORE = after_identifier_name(r"nda|venue|lot|r[ée]f(?:[ée]rence)?")


# A digit and a separator just before a number: it continues a longer one.
_DIGIT_BEFORE = re.compile(rf"\d{_SEP}?$")


def _digits(s: str) -> str:
    return re.sub(r"\D", "", s)


def find_phones(text: str, folded: str | None = None) -> list[Candidate]:
    """Every PHONE candidate of ``text`` (text offsets, sorted, non-overlapping).

    Sources: ``pattern:phone_fr`` (national ten-digit numbers), ``pattern:phone_intl_fr`` (``+33`` or
    ``0033``), ``pattern:phone_intl`` (other country codes, less certain). A compact ten-digit number
    with no separator and no phone word before it could be an identifier (IPP, NIR fragment), so its
    confidence is lower, and after ``IPP``, ``dossier``, ``séjour``... it is not a phone.
    Extensions (``poste [4567]``) are ``pattern:phone_extension``, numbers dictated in words
    ``pattern:phone_words``. ``folded`` is ``fold(text)`` when the caller has it (the labeller does).
    """
    text = _numbers.read_look_alikes(text)  # "O2 98 44 55 66": a scan's letters for figures (offsets unchanged)
    found: list[Candidate] = []
    taken = Occupied(len(text))

    def add(start: int, end: int, source: str, confidence: float) -> None:
        if taken.overlaps(start, end):
            return
        if _CONTEXT_BEFORE.search(text, max(0, start - 40), start):
            confidence = max(confidence, 0.99)
        taken.take(start, end)
        found.append(Candidate(start, end, LABEL, source, confidence))

    for m in _FRENCH_INTL.finditer(text):
        add(m.start(), m.end(), "pattern:phone_intl_fr", 0.97)
    for m in _NATIONAL.finditer(text):
        compact = m.end() - m.start() == 10
        if compact and _IDENTIFIER_BEFORE.search(text, max(0, m.start() - 30), m.start()):
            continue
        add(m.start(), m.end(), "pattern:phone_fr", 0.8 if compact else 0.95)
    for m in _OTHER_INTL.finditer(text):
        if 8 <= len(_digits(m.group())) <= 15:
            add(m.start(), m.end(), "pattern:phone_intl", 0.8)
    for m in _OTHER_INTL_00.finditer(text):
        if 8 <= len(_digits(m.group())) - 2 <= 15 and not _IDENTIFIER_BEFORE.search(
            text, max(0, m.start() - 30), m.start()
        ):
            add(m.start(), m.end(), "pattern:phone_intl", 0.8)
    if "(" in text:
        for m in _PAREN_INTL.finditer(text):
            add(m.start(), m.end(), "pattern:phone_intl_fr", 0.95)
    for pattern, digits, cue in zip(_BROKEN, (10, 11, 11), (True, True, False)):
        for m in pattern.finditer(text):
            if len(_digits(m.group().replace("(0)", ""))) == digits and (
                not cue or _CONTEXT_BEFORE.search(text, max(0, m.start() - 40), m.start())
            ):
                add(m.start(), m.end(), "pattern:phone_fr", 0.95)
    # (after the numbers broken over two lines: "+33" / "(0)6 21 43 65 87" is one number, not its second half)
    if "(" in text:
        for m in _PAREN_AREA.finditer(text):
            if not (m.start() and text[m.start() - 1].isalnum()):
                add(m.start(), m.end(), "pattern:phone_fr", 0.95)
    if "/" in text:
        for m in _SLASHED.finditer(text):
            if _CONTEXT_BEFORE.search(text, max(0, m.start() - 40), m.start()):
                add(m.start(), m.end(), "pattern:phone_fr", 0.9)
    for m in _REGROUPED.finditer(text):
        if (
            not taken.overlaps(m.start(), m.end())
            and not _DIGIT_BEFORE.search(text, max(0, m.start() - 2), m.start())
            and _CONTEXT_BEFORE.search(text, max(0, m.start() - 40), m.start())
            and not _IDENTIFIER_BEFORE.search(text, max(0, m.start() - 30), m.start())
        ):
            add(m.start(), m.end(), "pattern:phone_fr", 0.9)
    folded = text.lower() if folded is None else folded  # fold() costs more than lower() (a dict per character)
    for m in _extension_matches(text, folded):
        if _STREET_POSTE.search(text, max(0, m.start() - 4), m.start()):
            continue  # "rue de la Poste 35000": a street and its postcode
        cue = m.group("cue").lower()
        if cue == "p." and not (
            _NUMBER_JUST_BEFORE.search(text, max(0, m.start() - 6), m.start())
            or _CONTEXT_BEFORE.search(text, max(0, m.start() - 40), m.start())
            or _OPENS_P.search(text, max(0, m.start() - 3), m.start())
        ):
            continue
        if cue in ("tel.", "tél.") and not m.group("number").isdigit():
            continue  # "(tél. 3429)": an internal number of 3 to 5 figures; a grouped one is a phone's piece
        digits = len(_digits(m.group("number")))
        if not 3 <= digits <= 6 or (digits == 5 and m.group("number").isdigit() and m.group("cue").lower() != "dect"):
            continue  # "poste 35000" may be a postcode; "DECT 31207", "poste 47 215", "poste 4 72 15" are extensions
        add(m.start("number"), m.end("number"), "pattern:phone_extension", 0.95)
    for c in list(found):  # "02 96 96 09 52 P 9301": a bare "P" just after a number (a bare "p" is anything)
        m = _BARE_P_AFTER.match(text, c.end)
        if m is not None and c.source != "pattern:phone_extension":
            add(m.start("number"), m.end("number"), "pattern:phone_extension", 0.95)
    if "zero" in folded or "zéro" in folded or "ze\u0301ro" in folded:
        for m in _SPOKEN_ZERO.finditer(text):
            end = _spoken_number_end(text, m.end())
            if end is not None:
                add(m.start(), end, "pattern:phone_words", 0.95)
    found.sort(key=lambda c: c.start)
    return found


def _extension_matches(text: str, folded: str) -> list[re.Match[str]]:
    """``_EXTENSION.finditer(text)``, matched only where a cue word starts in ``folded`` (``fold(text)`` or
    ``text.lower()``): every match starts with one, and a search of the whole note tried the regex at
    every character (12 against 52 µs a note, the 600 notes of two 300-note synth corpora, on a loaded
    machine)."""
    if len(folded) != len(text) or "ı" in text or "ſ" in text:
        # offsets moved by lowering ("İ"); IGNORECASE reads "ı" as i and "ſ" as s, fold() and lower() keep them
        return list(_EXTENSION.finditer(text))
    starts: set[int] = set()
    for hint in _EXTENSION_HINTS:
        at = folded.find(hint)
        while at >= 0:
            if not (at and folded[at - 1].isalnum()):  # the cue starts a word ("trop ", "texte" do not)
                starts.add(at)
            at = folded.find(hint, at + 1)
    found: list[re.Match[str]] = []
    end = 0
    for start in sorted(starts):
        if start < end:
            continue
        m = _EXTENSION.match(text, start)
        if m is not None:
            found.append(m)
            end = m.end()
    return found


def _spoken_number_end(text: str, at: int) -> int | None:
    """Where a French number dictated from its ``zéro`` (which ends at ``at``) ends: after its tenth digit.

    A chunk of value 10 or more says two digits, a smaller one a digit; the digit after ``zéro`` is 1
    to 9, as in every French number. None if the chunks run out before ten digits or overshoot them.
    """
    digits = 1
    first = True
    while digits < 10:
        chunk = _SPOKEN_CHUNK.match(text, at)
        if chunk is None:
            return None
        words = chunk.group("chunk")
        value = int(words) if words.isdigit() else _numbers.value(words)
        if value is None or value > 99 or (first and not 1 <= value <= 9):
            return None
        digits += 2 if words.isdigit() or value >= 10 else 1
        first = False
        at = chunk.end()
    return at if digits == 10 else None
