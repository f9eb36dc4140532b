"""ZIP labelling function: French postcodes, CEDEX codes included.

A postcode is five digits whose first two name a département (``01``–``95``, Corsica's ``20``) or an
overseas territory (``971``–``976``, ``984``–``988``). Five-digit numbers are common in notes
(``plaquettes 25000``, ``12000 UI``), so the digits alone never decide: what does is the address
around them, a city or ``CEDEX`` after (``35033 RENNES CEDEX 9``, ``29200 Brest``) or a street, ``BP`` or
``CS`` line just before. ``CEDEX`` and its number are not part of the span (``docs/guidelines.md``).
"""

from __future__ import annotations

import re

from deid_ds.label._text import QUANTITY_AFTER, not_after
from deid_ds.label.candidate import Candidate

LABEL = "ZIP"

# Written first digit first, so that the regex engine skips to digits (see ``not_after``).
_ZIP = re.compile(r"(?P<zip>" + not_after(r"\d", r"[\w/.,:\-+]") + r"\d{4})(?![\w]|[/.,:\-]\d)")
# ... then a city: a capitalised word (Brest, BREST, Saint-Brieuc, L'Hermitage, ST BRIEUC, Le Rheu)
_CITY_AFTER = re.compile(r"[ \t\u00a0\u202f,\-–—]*(?P<word>(?:[A-ZÀ-Ý][\w'’\-]*|[Ll]['’]\w+|d['’]\w+))")
#: A dash between the digits and the word after them (``56000 - VANNES``), which an address writes only where the
#: postcode is set apart the same way, opens its line or a field: ``- 56000 -``, ``: 35000 –``; not
#: ``GB 12000 - Contrôle``.
_DASH = re.compile(r"[\-–—]")
_SET_APART = re.compile(r"(?:^|[\n\t,:\-–—])[ \u00a0\u202f]*\Z")
_CEDEX_AFTER = re.compile(r"[ \t\u00a0\u202f]*(?:C[EÉ]DEX|C[eé]dex|c[eé]dex)\b")
# Capitalised words after five digits that are not cities: units and lab vocabulary.
_NOT_CITY = frozenset(
    "UI U UFC G GB GR ML MG UL MM KG L VS CRP PNN PN PLQ PQ LDH CPK TSH DFG HB HBA1C NFS ECG IRM TDM RX EVA "
    "AU A ET OU PAR SUR AVEC SANS POUR ANS MOIS JOURS EUROS EUR CP TTC HT".split()
)
# The number of a post-office box or a "CS"/"TSA" sorting code: five digits, but not a postcode
# ("BP 59899", "CS 55584"); it is part of the STR span.
_BOX_BEFORE = re.compile(r"\b(?:BP|B\.P\.|CS|TSA|SP|CEDEX)[ \t\u00a0\u202f]*(?:n°[ \u00a0]*)?$", re.IGNORECASE)
# "à Briec (29510)", "Saint-Grégoire (35760)": the code in brackets right after a capitalised word.
_PAREN_AFTER_CITY = re.compile(r"[A-ZÀ-Ý][\w'’\-]*[ \t\u00a0\u202f]*\($")
# A street, post-office-box or "CS" line ending right before the digits (same line or the line above).
_ADDRESS_BEFORE = re.compile(
    r"(?:\b(?:rue|avenue|av|bd|boulevard|allée|allee|impasse|place|pl|chemin|route|rte|quai|cours|square|"
    r"résidence|residence|lieu-dit|lotissement|lot|hameau|voie|passage|parvis|esplanade|promenade|mail|"
    r"sentier|venelle|faubourg|cité|cite|village|zone|za|zi|zac)\b[^\n]{0,60}"
    r"|\b(?:BP|CS|B\.P\.|TSA)\s?\d+"
    r"|\b(?:code\s+postal|CP)\s*:?"
    r")[ \t\u00a0\u202f,\-]*\n?[ \t\u00a0\u202f]*$",
    re.IGNORECASE,
)


def valid_postcode(code: str) -> bool:
    """Whether five digits can be a French postcode (département or overseas prefix)."""
    if len(code) != 5 or not code.isdigit():
        return False
    dep = int(code[:2])
    if 1 <= dep <= 95:
        return True
    return code[:3] in {"971", "972", "973", "974", "975", "976", "984", "986", "987", "988"}


def find_zips(text: str) -> list[Candidate]:
    """Every ZIP candidate of ``text``.

    Sources: ``pattern:zip_cedex`` (``CEDEX`` after, directly or after the city), ``pattern:zip_city``
    (a capitalised word after), ``pattern:zip_paren`` (``Briec (29510)``), ``pattern:zip_address`` (a street,
    ``BP``/``CS`` or ``CP :`` just before), and ``pattern:zip_bare`` (a valid code with none of these:
    ``needs_context``, for the labeller to confirm with the patient's metadata or the BAN). Box numbers (``BP 59899``,
    ``CS 55584``) are never postcodes.
    """
    found: list[Candidate] = []
    for m in _ZIP.finditer(text):
        code = m.group("zip")
        if not valid_postcode(code):
            continue
        end = m.end()
        if _BOX_BEFORE.search(text, max(0, m.start() - 12), m.start()) or QUANTITY_AFTER.match(text, end):
            continue
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        city = _CITY_AFTER.match(text, end, line_end)
        word = city.group("word") if city else ""
        if _CEDEX_AFTER.match(text, end) or (
            city and re.search(r"\bC[EÉ]DEX\b", text[city.end() : line_end], re.IGNORECASE)
        ):
            found.append(Candidate(m.start(), end, LABEL, "pattern:zip_cedex", 0.99))
        elif (
            city
            and word.upper().strip("'’-") not in _NOT_CITY
            and not word.upper().startswith("UI")
            and (
                not _DASH.search(text, end, city.start("word"))
                or _SET_APART.search(text, max(0, m.start() - 10), m.start())
            )
        ):
            found.append(Candidate(m.start(), end, LABEL, "pattern:zip_city", 0.95))
        elif text.startswith(")", end) and _PAREN_AFTER_CITY.search(text, max(0, m.start() - 60), m.start()):
            found.append(Candidate(m.start(), end, LABEL, "pattern:zip_paren", 0.9))
        elif _ADDRESS_BEFORE.search(text, max(0, m.start() - 120), m.start()):
            found.append(Candidate(m.start(), end, LABEL, "pattern:zip_address", 0.85))
        else:
            found.append(Candidate(m.start(), end, LABEL, "pattern:zip_bare", 0.3, needs_context=True))
    return found


def confirm_zips(zips: list[Candidate], cities: list[Candidate]) -> list[Candidate]:
    """Bare five-digit numbers (``needs_context``) confirmed as postcodes by a city right after them."""
    city_starts = {c.start for c in cities}
    out = []
    for z in zips:
        if z.needs_context and (z.end + 1 in city_starts or z.end + 2 in city_starts):
            out.append(Candidate(z.start, z.end, LABEL, "pattern:zip_city_confirmed", 0.9))
    return out
