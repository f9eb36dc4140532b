"""STR and VILLE: street addresses and cities from street-type words, postcodes, cues and the BAN.

* **STR** — a street type (``rue``, ``av.``, ``LIEU-DIT``, ``Résidence``: the shipped street-type
  lists) followed by a street name written like one (capitalised words, numbers, lower-case particles
  inside), with the house number and repetition index before it (``12 bis, avenue du Général de
  Gaulle``); ``BP 123`` / ``CS 10329``; a numbered line just above a ``ZIP City`` line; and the BAN's
  streets where the text writes them without a type word.
* **VILLE** — the words after a postcode up to ``CEDEX`` (``35033 RENNES CEDEX 9``), before a postcode
  in brackets, after a place cue (``né à``, ``domicilié à``, ``CHU de``, ``Fait à``), at the head of a
  letter's date line (``Brest, le 3 mars 2021``), and the BAN's communes — an ambiguous one (a common
  word such as ``Plaine``) only with a cue or a postcode next to it.

All France and abroad (each rule traced to its guideline line in ``tests/label/cases``):
arrondissements (``[Paris] 13e``, ``[LYON] 8``), contracted articles (``né au [Havre]``; with the KB,
``au [Havre]`` anywhere), foreign cities after ``né(e) à`` / ``originaire de`` (a country or a region is
not a city), foreign postcodes (``[1000] [Bruxelles]``); STR for number ranges (``[47-83 boulevard
Pasteur]``), buildings, staircases and sections (``[Bâtiment C]``, ``[Section Morne-Rouge]``, not a
hospital's own), lieux-dits between an address cue and a postcode, and streets broken over two lines of a
PDF export (``12 rue du Général`` / ``de Gaulle``). Every new rule is anchored on a set lookup per token
or on the postcodes already found, so a note without these words pays a scan in C, not a Python loop.
"""

from __future__ import annotations

import re
from itertools import compress

from deid_ds.kb.communes import CONTRACTED
from deid_ds.kb.normalize import street_type_abbreviations, street_type_words
from deid_ds.label.abroad import COUNTRIES_AND_REGIONS, FOREIGN_POSTCODE_CITIES, FRENCH_REGIONS
from deid_ds.label.candidate import Candidate
from deid_ds.label.cues import (
    CITY_CUE,
    CIVILITIES,
    DOCTOR_TITLES,
    NOT_NAME,
    PROFESSIONAL_TITLES,
    ROLE_WORDS,
    cue_matches,
)
from deid_ds.label.names import is_french_word
from deid_ds.label.view import CORE, DIGIT, INITIAL, INNER, LOWER, STOP, TITLE, UPPER, NoteView, run_end
from deid_ds.label.zips import valid_postcode

_NOT_STREET_TYPES = {"bp", "cs", "cedex"}
#: Abbreviations that are also ordinary words or tokens of prose (``car``, ``pas``, ``st``): they
#: announce a street only after a house number.
_RISKY_ABBREVIATIONS = {
    "r",
    "car",
    "pas",
    "ch",
    "lot",
    "dom",
    "st",
    "ste",
    "qu",
    "pl",
    "cr",
    "gr",
    "esp",
    "sen",
    "mte",
    "pte",
    "pla",
    "ven",
}
#: Care roles, which a street type word in prose may precede (``Passage IDE``, ``Passage kiné``); the
#: titles that name streets (``rue du Docteur Roux``) are kept.
_ROLES_NOT_STREETS = ROLE_WORDS - {"docteur", "professeur", "dr", "pr", "chef"}
_STREET_PARTICLES = frozenset("de du des la le les l' l’ d' d’ aux au en sur sous et".split())
_REPETITION = frozenset("bis ter quater quinquies b t q a c d".split())
_POSTBOX = frozenset({"bp", "b.p.", "cs", "tsa", "cp"})
_CITY_PARTICLES = frozenset("sur sous en les lès le la de du des d' d’ l' l’ aux et".split())
_CITY_STOP = frozenset({"cedex", "france", "tel", "tel.", "fax", "bp", "cs", "standard"})
#: Words that end a street name (what follows an address on a letterhead line).
_STREET_STOP = frozenset(
    {
        "cedex",
        "tel",
        "tel.",
        "telephone",
        "fax",
        "telecopie",
        "standard",
        "courriel",
        "email",
        "mail",
        "portable",
        "secretariat",
    }
)
MAX_STREET_TOKENS = 10
_RANGE_DASHES = frozenset({"-", "–", "/"})
#: Named places written on an address line, each its own STR (guidelines: building and staircase,
#: ``[Bâtiment C]``, ``[Escalier 2]``; overseas sections ``[Section Morne-Rouge]``; a building's name).
#: Capitalised only: ``le bâtiment B de l'hôpital`` in prose is part of an institution, not an address.
_PLACE_WORDS = frozenset({"batiment", "bat", "escalier", "esc", "immeuble", "section"})
#: Of these, the ones whose designator may be a short code (``C``, ``2``, ``B2``); ``Section`` and
#: ``Immeuble`` need a name (``Section 3`` is a document's heading).
_CODED_PLACE_WORDS = frozenset({"batiment", "bat", "escalier", "esc"})
_DESIGNATOR = re.compile(r"(?:[A-Z]{1,2}\d{0,2}|\d{1,3}[A-Z]?|[IVX]{1,4})")
_HOUSE_NUMBER = re.compile(r"\d{1,4}(?:bis|ter|[a-dA-D])?")
MAX_CITY_TOKENS = 6


#: Abbreviations of real letterheads missing from the shipped list: ``VEN.`` (venelle); risky, as ``ven.``
#: is also a weekday's.
_EXTRA_ABBREVIATIONS = frozenset({"ven"})


def _street_types() -> tuple[frozenset[str], frozenset[str]]:
    words = frozenset(street_type_words()) - _NOT_STREET_TYPES
    abbreviations = frozenset(k for k in street_type_abbreviations() if " " not in k) | _EXTRA_ABBREVIATIONS
    return words, abbreviations


_WORDS, _ABBREVIATIONS = _street_types()
#: Every folded token that may start a street type (with or without its period): a set lookup per
#: token before the finer test.
_TYPE_STARTS = frozenset(_WORDS | _ABBREVIATIONS | {w + "." for w in _WORDS | _ABBREVIATIONS} | {"lieu"})
#: Every folded token :func:`streets` looks at; the others (nearly all) are skipped by one C-level scan
#: (:func:`place_words`).
_STREET_TRIGGERS = _TYPE_STARTS | _POSTBOX | _PLACE_WORDS | {"grand'rue", "grand’rue", "grand-rue", "grande-rue"}


def is_street_type(folded: str) -> bool:
    """Whether a folded token is a street-type word or abbreviation (``rue``, ``bd``, ``av.``) as the street
    rules read them (the knowledge features share this list: :mod:`deid_ds.label.features`)."""
    return folded in _TYPE_STARTS and folded != "lieu"


def _street_type_at(view: NoteView, i: int) -> tuple[int, bool] | None:
    """``(end, risky)`` of a street-type word at token ``i``, or None."""
    f = view.folded[i]
    if f == "lieu" and i + 1 < len(view) and view.folded[i + 1] == "dit" and view.joined(i):
        return i + 2, False
    bare = f.rstrip(".")
    end = i + 1
    if end < len(view) and view.words[end] == "." and view.gap(i) == "":
        end += 1  # "r." and "ch." are tokenised as a word and its period
    if f in _WORDS or bare in _WORDS:
        return end, False
    if bare in _ABBREVIATIONS:
        return end, bare in _RISKY_ABBREVIATIONS
    return None


#: Street types that are also a care visit in prose (``passage du Docteur X ce matin``).
_VISIT_TYPES = frozenset({"passage"})


def title_names_street(view: NoteView, i: int) -> bool:
    """Whether the title at token ``i`` is part of a street's name: right after a street type and ``du``
    (``place du Docteur Guérin``, ``BD DU PR LOUIS ROCHARD``), as streets are named after doctors in every
    French town; never after ``passage``, which is also a visit."""
    if i < 2 or view.folded[i] not in DOCTOR_TITLES or view.folded[i - 1] != "du" or not view.joined(i - 1):
        return False
    k = i - 2
    if k >= 1 and view.words[k] == "." and view.gap(k - 1) == "":
        k -= 1  # "bd. du Dr X": the abbreviation and its period
    typed = _street_type_at(view, k)
    return typed is not None and typed[0] == i - 1 and not typed[1] and view.folded[k] not in _VISIT_TYPES


_MONTHS = frozenset("janvier fevrier mars avril mai juin juillet aout septembre octobre novembre decembre".split())


def _street_name_end(view: NoteView, i: int) -> int:
    """End of the street name starting at token ``i`` (``i`` if none): ends on a name word or a number."""

    def kind(j: int, first: bool) -> int:
        f, shape = view.folded[j], view.shapes[j]
        if f in _STREET_PARTICLES:
            return INNER
        if shape == DIGIT:
            word = view.words[j]
            if (len(word) == 5 and word.isdigit()) or "/" in word:
                return STOP  # a postcode ends it, and a date ("CHE HEPATIQUE LE 14/02/2022") is no street's
            return CORE
        if shape in (TITLE, UPPER, INITIAL):
            return STOP if f in _STREET_STOP or f in _POSTBOX or f in _PLACE_WORDS else CORE
        if f in _MONTHS and j > i and view.shapes[j - 1] == DIGIT:
            return CORE  # "rue du 11 novembre", "place du 8 mai 1945": a date names the street, its month in lower case
        return STOP

    end = run_end(view, i, MAX_STREET_TOKENS, kind)
    if end >= len(view) or (
        end > 0 and view.joins[end - 1] and view.words[end] != "-" and view.folded[end] not in _STREET_PARTICLES
    ):
        return end  # the next token is on this line and continues nothing: most streets end here
    return _next_line_end(view, i, end, kind)


#: What may come between a street and the postcode of its address line (or the next line's).
_POSTCODE_NEXT = re.compile(r"[ \t\u00a0,\-–—]*(?:\n[ \t\u00a0]*)?(\d{5})(?!\d)")


def _dictated_street_end(view: NoteView, i: int) -> int:
    """End of a street name dictated in lower case (``5 rue de la mairie 29200 brest``), ``i`` if none: numbered, and
    right before its postcode on the line, which tells an address from prose (``2 voies veineuses``)."""
    j, n = i, len(view)
    while j < n and j - i < MAX_STREET_TOKENS and view.shapes[j] == LOWER and view.joined(j):
        j += 1
    if j == i or view.folded[j - 1] in _STREET_PARTICLES or j >= n:
        return i
    k = j + 1 if view.words[j] == "," and j + 1 < n and view.joined(j) else j
    word = view.words[k]
    return j if len(word) == 5 and word.isdigit() and valid_postcode(word) else i


def _name_with_a(view: NoteView, end: int) -> int:
    """``end``, or the end of a street name that goes on after ``à`` (``impasse du Moulin à Vent``, ``chemin de la
    Croix à l'Abbé``): only where the address's postcode follows it, on its line or at the head of the next, so that
    the town is the one after the postcode; in prose ``12 rue de Siam à Brest`` names the town after ``à``."""
    if end >= len(view) or view.words[end] not in ("à", "a") or not view.joined(end - 1) or not view.joined(end):
        return end
    more = _street_name_end(view, end + 1)
    if more == end + 1:
        return end
    m = _POSTCODE_NEXT.match(view.text, view.ends[more - 1])
    return more if m is not None and valid_postcode(m.group(1)) else end


def _next_line_end(view: NoteView, i: int, end: int, kind) -> int:
    """``end``, or the end of the street name's continuation on the next line (a PDF export's line break).

    guidelines: an address broken over two lines of a PDF export is one span. The next line continues
    the name only where the name is visibly unfinished: the line ends on particles
    (``12 rue de la`` / ``République``), on the street type itself (``47 boulevard`` / ``Pasteur``), or
    the next line starts with a lower-case particle before a capitalised word (``12 rue du Général`` /
    ``de Gaulle``), or a word is hyphenated across the lines (``rue du Géné-`` / ``ral de Gaulle``). One line
    break at most, never a tab (a table cell); a blank line (an export that sets each line of the PDF apart) only
    after a dangling line (``18 rue du Moulin des`` / / ``Prés``).
    """
    n = len(view)
    if (
        end > i
        and end + 1 < n
        and view.words[end] == "-"
        and view.gap(end - 1) == ""
        and view.gap(end).strip(" \u00a0") == "\n"
        and view.shapes[end + 1] == LOWER
        and view.folded[end + 1] not in _STREET_PARTICLES
    ):  # "rue du Géné-" / "ral de Gaulle": a word hyphenated across the lines
        more = run_end(view, end + 2, MAX_STREET_TOKENS, kind) if view.joined(end + 1) else end + 2
        return max(more, end + 2)
    j = end
    while j < n and view.folded[j] in _STREET_PARTICLES and view.joined(j - 1):
        j += 1  # the particles left at the end of the line
    if j >= n or view.joined(j - 1) or j == 0:
        return end
    gap = view.gap(j - 1)
    dangling = j > end or end == i
    # a PDF export's lines may be set apart by a blank line: one line break, or two under a dangling line
    if not 1 <= gap.count("\n") <= (2 if dangling else 1) or "\t" in gap:
        return end
    if not dangling and not (view.folded[j] in _STREET_PARTICLES and view.shapes[j] == LOWER):
        return end
    more = run_end(view, j, MAX_STREET_TOKENS, kind)
    if more == j or not any(view.shapes[k] in (TITLE, UPPER) for k in range(j, more)):
        return end
    return more


def _house_number_start(view: NoteView, i: int) -> int:
    """Start of the house number (repetition index and comma included) before the street type at ``i``."""
    k = i - 1
    if k >= 1 and view.folded[k] in ("le", "la", "les", "l'", "l’") and view.shapes[k] != LOWER and view.joined(k - 1):
        k -= 1  # "12 Le Clos du Verger": the article of the street's name, after its number
    if k >= 0 and view.words[k] == ",":
        k -= 1
    if k >= 1 and view.folded[k] in _REPETITION and view.shapes[k - 1] == DIGIT and view.joined(k - 1):
        k -= 1
    if k >= 0 and _HOUSE_NUMBER.fullmatch(view.words[k]):
        between = view.text[view.ends[k] : view.starts[i]]
        if "\n" not in between and "\t" not in between:
            # "47-83 boulevard Pasteur": a range of numbers is one STR (guidelines: street number ranges)
            if (
                k >= 2
                and view.words[k - 1] in _RANGE_DASHES
                and view.gap(k - 2) == ""
                and view.gap(k - 1) == ""
                and _HOUSE_NUMBER.fullmatch(view.words[k - 2])
            ):
                return k - 2
            if (
                k >= 2
                and view.folded[k - 1] == "et"
                and view.joined(k - 2)
                and view.joined(k - 1)
                and _HOUSE_NUMBER.fullmatch(view.words[k - 2])
            ):
                return k - 2  # "3 et 5 rue Victor Hugo": two numbers of one building
            return k
    return i


#: A town's main street, named by its type and an adjective alone (``Grande Rue``, ``Grand'Rue``, ``Petite Rue``).
_RUE_ADJECTIVES = frozenset({"grande", "grand", "petite"})
_WHOLE_STREETS = frozenset({"grand'rue", "grand’rue", "grand-rue", "grande-rue"})


def _main_street(view: NoteView, i: int) -> Candidate | None:
    """The STR of a main street at token ``i`` (``rue`` after its adjective, or ``Grand'Rue``), with its number and
    article before and a name after (``103, Grande Rue``, ``15 La Grande Rue``, ``Grande Rue de Recouvrance``):
    capitalised, as a street's name is (``une grande rue`` is prose)."""
    head = i if view.folded[i] in _WHOLE_STREETS else i - 1
    if view.shapes[head] not in (TITLE, UPPER) or view.shapes[i] not in (TITLE, UPPER):
        return None
    if head >= 1 and view.folded[head - 1] in ("la", "le") and view.shapes[head - 1] in (TITLE, UPPER):
        head -= 1 if view.joined(head - 1) else 0
    end = i + 1
    if end < len(view) and view.joined(i) and view.folded[end] in _STREET_PARTICLES:
        end = max(end, _street_name_end(view, end))
    start = _house_number_start(view, head)
    return Candidate(view.starts[start], view.ends[end - 1], "STR", "address:street", 0.9 if start < head else 0.85)


def streets(view: NoteView) -> list[Candidate]:
    """STR candidates: street-type lines with their number, and post boxes."""
    found: list[Candidate] = []
    n = len(view)
    folded = view.folded
    for i in place_words(view):
        f = folded[i]
        if f not in _STREET_TRIGGERS:
            continue
        if f in _POSTBOX and i + 1 < n and view.shapes[i + 1] == DIGIT and view.joined(i):
            if f == "cp" and valid_postcode(view.words[i + 1]):
                continue  # "CP 29200 BREST": the code postal, not a Swiss case postale ("CP 1211")
            found.append(Candidate(view.starts[i], view.ends[i + 1], "STR", "address:postbox", 0.95))
            continue
        if f in _WHOLE_STREETS or (f == "rue" and i >= 1 and folded[i - 1] in _RUE_ADJECTIVES and view.joined(i - 1)):
            main = _main_street(view, i)
            if main is not None:
                found.append(main)
                continue
        if f not in _TYPE_STARTS:
            if f in _PLACE_WORDS:
                place = _named_place(view, i)
                if place is not None:
                    found.append(place)
            continue
        typed = _street_type_at(view, i)
        if typed is None or typed[0] >= n:
            continue
        type_end, risky = typed
        start = _house_number_start(view, i)
        numbered = start < i
        if risky and not numbered:
            continue  # tested first: most risky abbreviations are prose ("ne ... pas"), and this is cheap
        if not view.joined(type_end - 1) and not (
            numbered and view.gap(type_end - 1).strip(" \u00a0") in ("\n", "\n\n")
        ):
            continue  # "47 boulevard" / "Pasteur" over two lines of a PDF export is one street
        name_end = _street_name_end(view, type_end)
        if name_end == type_end and numbered and not risky and view.joined(type_end - 1):
            name_end = _dictated_street_end(view, type_end)
        if name_end == type_end:
            continue
        name_end = _name_with_a(view, name_end)
        named = any(view.shapes[k] in (TITLE, UPPER) for k in range(type_end, name_end))
        if not view.joined(type_end - 1) and not named:
            continue  # "N1R" / "2 77 05 5B...": a number's line under a type word that ends its line is no name
        lower_type = view.shapes[i] == LOWER
        if lower_type and not numbered and not named:
            continue  # "la route de 3 km": prose, not an address
        if not numbered and (
            folded[type_end] in _ROLES_NOT_STREETS
            or any(
                folded[k] in PROFESSIONAL_TITLES and not title_names_street(view, k) for k in range(type_end, name_end)
            )
        ):
            continue  # "Passage IDE à domicile", "Passage de Docteur X": a visit, not a street
        if not numbered and folded[type_end] == "en":
            continue  # "Passage en Salle de Réveil": a stay, not a street
        if not numbered and i > 0 and folded[i - 1] in ("de", "du", "d'", "d’", "en"):
            continue  # "DOSSIER DE PASSAGE AUX URGENCES", "MISE EN PLACE D'UNE SONDE": prose, not a street
        if (
            not numbered
            and f.rstrip(".") not in _NAMED_PLACE_TYPES
            and _in_capitals(view, i, name_end)
            and not _address_line(view, i, name_end)
        ):
            continue  # "VOIE VEINEUSE PERIPHERIQUE", "EN COURS DE REALISATION": prose of a note typed in capitals
        confidence = 0.95 if numbered else (0.8 if lower_type else 0.9)
        found.append(Candidate(view.starts[start], view.ends[name_end - 1], "STR", "address:street", confidence))
    return found


#: What shows an address on a line or the next: a postcode, a post box, CEDEX, an address field.
_ADDRESS_SIGN = re.compile(
    r"(?<!\d)\d{5}(?!\d)|\b(?:BP|CS|TSA|C[EÉ]DEX|[Cc][eé]dex)\b"
    r"|(?i:adresse|domicile(?:\s*:|\t)|domicili[ée]|demeurant|r[ée]sidant)"
)
#: The lines an address block spreads over after a street's (a residence, then the street, then the postcode).
_ADDRESS_LINES = 3
#: Types of named places, which prose does not use as words: no address sign needed in capitals.
_NAMED_PLACE_TYPES = frozenset({"residence", "res", "lieu", "lieu-dit", "quartier", "hameau", "lotissement", "domaine"})


def names_a_place(view: NoteView, start: int) -> bool:
    """Whether the STR starting at ``start`` opens with a named place's type (``lieu-dit``, ``Résidence``), which
    prose does not use as words: the town after it and ``à`` is one (``au lieu-dit Kerbrat à Plouarzel``)."""
    i = view.index_at(start)
    return i < len(view) and view.folded[i].rstrip(".") in _NAMED_PLACE_TYPES


def _in_capitals(view: NoteView, i: int, end: int) -> bool:
    """Whether tokens ``[i, end)`` are all written in capitals (or digits, punctuation): no case to tell a
    street's name from the words of a sentence."""
    return all(view.shapes[k] not in (TITLE, LOWER) for k in range(i, end))


def _address_line(view: NoteView, i: int, end: int) -> bool:
    """Whether the line of tokens ``[i, end)``, or the two after it, show an address (:data:`_ADDRESS_SIGN`): a
    letterhead's ``ROUTE DE KERVAO - BP 312 - 29107 QUIMPER CEDEX``, a ``DOMICILE :`` field, an address block's
    ``RESIDENCE LES PINS`` / ``10 BD DE LA POSTE`` / ``29000 QUIMPER``."""
    text = view.text
    line_start = text.rfind("\n", 0, view.starts[i]) + 1
    stop = view.ends[end - 1]
    for _ in range(_ADDRESS_LINES):
        stop = text.find("\n", stop + 1)
        if stop < 0:
            stop = len(text)
            break
    return _ADDRESS_SIGN.search(text, line_start, stop) is not None


#: Address fields and verbs after which a place's name is an address (``Domicile : Le Haut Bourg``).
_ADDRESS_FIELDS = frozenset({"adresse", "domicile"})
_ADDRESS_VERBS = frozenset(
    "residant residante demeurant demeurante habite habitant reside domicilie domiciliee".split()
)
_SEPARATORS_BEFORE_ZIP = frozenset({"-", ",", "–", "—"})


def places_before_zip(view: NoteView, zips: list[Candidate]) -> list[Candidate]:
    """STR for a lieu-dit written without a street type between an address cue and a postcode.

    guidelines: a lieu-dit is STR. ``Domicile : Le Haut Bourg - 22700 Perros-Guirec``, ``Résidant au
    LANHERVÉ - 29100 DOUARNENEZ``: the capitalised words between the cue (``Adresse :``, ``Domicile :``,
    ``résidant au``...) and a dash or comma before the postcode, on one line. Read from each postcode back,
    so it costs nothing on the notes without one.
    """
    found: list[Candidate] = []
    for z in zips:
        if z.needs_context:
            continue  # a bare five-digit number (a lab value, an identifier) is not a postcode yet
        k = view.index_at(z.start) - 1
        if k < 2 or not view.joined(k):
            continue
        if view.words[k] not in _SEPARATORS_BEFORE_ZIP:
            k += 1  # "Adresse : Le Bourg 29800 Landerneau": no separator before the postcode
        end = k  # the run ends before the separator
        i = k
        while i > 0 and k - i < MAX_STREET_TOKENS and view.joined(i - 1):
            f = view.folded[i - 1]
            cue_word = f in _ADDRESS_FIELDS or f in _ADDRESS_VERBS
            if (view.shapes[i - 1] in (TITLE, UPPER) and not cue_word) or f in _STREET_PARTICLES:
                i -= 1
                continue
            break
        while i < end and view.folded[i] in _STREET_PARTICLES and view.shapes[i] == LOWER:
            i += 1  # "au" or "à" of the cue is not part of the name
        if i >= end or i < 1 or not any(view.shapes[j] in (TITLE, UPPER) for j in range(i, end)):
            continue
        h = i - 2 if i >= 2 and view.words[i - 1] == "," and view.joined(i - 2) else i - 1
        if h >= 1 and _HOUSE_NUMBER.fullmatch(view.words[h]) and view.joined(h):
            i = h  # "Adresse : 2 Kerlann 29280 Plouzané": a lieu-dit's house number is part of it
        before = view.folded[i - 1]
        cue = (before == ":" and i >= 2 and view.folded[i - 2] in _ADDRESS_FIELDS) or (
            before in ("au", "aux", "a", "à") and i >= 2 and view.folded[i - 2] in _ADDRESS_VERBS
        )
        if not cue and not (i >= 2 and view.folded[i - 1] in _ADDRESS_FIELDS):
            continue
        found.append(Candidate(view.starts[i], view.ends[end - 1], "STR", "address:lieu_dit", 0.8))
    return found


def lines_between_street_and_zip(view: NoteView, found: list[Candidate], zips: list[Candidate]) -> list[Candidate]:
    """``found`` (the street lines), and STR for a lieu-dit written alone on its line between a street line and the
    postcode's line of an address block (``2 allée des Hortensias`` / ``Kerlann`` / ``56300 PONTIVY``).

    guidelines: a lieu-dit is STR. Only between the two: a line alone above a postcode may be a letterhead's
    institution or service. Read from each postcode at the head of its line, so it costs nothing without one.
    """
    if not found or not zips:
        return found
    street_ends = {c.end for c in found if c.source == "address:street"}
    extra: list[Candidate] = []
    for z in zips:
        if z.needs_context:
            continue
        k = view.index_at(z.start)
        if k < 2 or not view.line_start(k):
            continue
        i = k - 1
        while i > 0 and not view.line_start(i) and k - i <= 6:
            i -= 1
        if not view.line_start(i) or i == 0 or view.ends[i - 1] not in street_ends:
            continue
        if "\t" in view.text[view.ends[i - 1] : view.starts[i]] or "\t" in view.text[view.ends[k - 1] : view.starts[k]]:
            continue  # a table's cells, not an address block's lines
        words = range(i, k)
        if not all(view.shapes[j] in (TITLE, UPPER) or view.folded[j] in _STREET_PARTICLES for j in words):
            continue
        if view.shapes[i] not in (TITLE, UPPER) or any(_institution_word(view.folded[j]) for j in words):
            continue
        extra.append(Candidate(view.starts[i], view.ends[k - 1], "STR", "address:lieu_dit", 0.8))
    return found + extra


def _named_place(view: NoteView, i: int) -> Candidate | None:
    """The STR of a building, staircase, section or building name at token ``i`` (``Bâtiment C``), or None."""
    n = len(view)
    if view.shapes[i] not in (TITLE, UPPER) or _inside_institution(view, i):
        return None
    j = i + 1
    if j < n and view.words[j] == "." and view.gap(i) == "":
        j += 1  # "Bât." and "Esc." are a word and its period
    if j >= n or not view.joined(j - 1):
        return None
    word = view.words[j]
    if view.folded[i] in _CODED_PLACE_WORDS and _DESIGNATOR.fullmatch(word) and (j + 1 >= n or not _continues(view, j)):
        return Candidate(view.starts[i], view.ends[j], "STR", "address:place", 0.9)
    if view.shapes[j] not in (TITLE, UPPER) or (view.folded[j] in NOT_NAME and view.folded[j] not in _STREET_PARTICLES):
        return None
    end = run_end(view, j, MAX_STREET_TOKENS, _place_name_kind(view))
    if end == j:
        return None
    return Candidate(view.starts[i], view.ends[end - 1], "STR", "address:place", 0.85)


#: Words of a hospital's own places (folded): a building on the line of one is the institution's
#: (``Bâtiment B - UF 5326``, ``Bâtiment B, service Chirurgie vasculaire``), not an address's.
_INSTITUTION_WORDS = frozenset(
    """uf service services pole unite niveau etage aile secteur hopital clinique polyclinique chu chru ch chr
    consultation consultations accueil hall salle box chambre bureau ascenseur rdc urgences bloc departement
    laboratoire ehpad institut centre pavillon medecine chirurgie imagerie cardiologie neurologie pneumologie
    urologie pediatrie oncologie radiologie biologie pharmacie anesthesie reanimation geriatrie psychiatrie
    gynecologie obstetrique maternite endocrinologie nephrologie rhumatologie dermatologie hematologie
    ophtalmologie orl gastro-enterologie enterologie diabetologie hepatologie infectiologie addictologie
    allergologie angiologie stomatologie traumatologie orthopedie neurochirurgie soins explorations reeducation
    readaptation ssr usld""".split()
)
_LINE_WINDOW = 20


def _institution_word(word: str) -> bool:
    """A hospital's word, or a compound of one (``endocrinologie-diabetologie``)."""
    return word in _INSTITUTION_WORDS or ("-" in word and any(part in _INSTITUTION_WORDS for part in word.split("-")))


def _inside_institution(view: NoteView, i: int) -> bool:
    """Whether the line of token ``i``, or the line before or after it, names a hospital's own places.

    A letterhead writes ``Centre Hospitalier Universitaire de Brest`` / ``Bâtiment B`` / ``Service
    d'Urologie`` on three lines: the building is the institution's (guidelines: hospital and department
    names are not annotated). At most 40 tokens each way.
    """
    folded = view.folded
    k, lines = i, 0
    while k > 0 and i - k < 2 * _LINE_WINDOW:
        if view.line_start(k):
            lines += 1
            if lines > 1:
                break
        k -= 1
        if _institution_word(folded[k]):
            return True
    k, lines = i, 0
    while k + 1 < len(view) and k - i < 2 * _LINE_WINDOW:
        if view.line_end(k):
            lines += 1
            if lines > 1:
                break
        k += 1
        if _institution_word(folded[k]):
            return True
    return False


def _continues(view: NoteView, j: int) -> bool:
    """Whether token ``j + 1`` continues a designator (``Escalier 2 bis`` would; ``Escalier 2,`` does not)."""
    return view.joined(j) and view.shapes[j + 1] in (LOWER, TITLE) and view.folded[j + 1] not in _STREET_STOP


def _place_name_kind(view: NoteView):
    def kind(j: int, first: bool) -> int:
        f, shape = view.folded[j], view.shapes[j]
        if not first and f in _STREET_PARTICLES:
            return INNER
        if shape in (TITLE, UPPER):
            return STOP if f in _STREET_STOP or f in _POSTBOX or f in _PLACE_WORDS or f in _TYPE_STARTS else CORE
        return STOP

    return kind


#: Overseas regions a city's name may be followed by (``Saint-Denis de La Réunion``, ``Le Gosier en
#: Guadeloupe``): a region is not annotated.
_OVERSEAS_REGIONS = frozenset({"reunion", "guadeloupe", "martinique", "guyane", "mayotte"})


def _city_end(view: NoteView, i: int) -> int:
    """End of the city name starting at token ``i`` (``i`` if none)."""
    n = len(view)

    def kind(j: int, first: bool) -> int:
        f, shape = view.folded[j], view.shapes[j]
        if f in _CITY_STOP or (not first and (f in _OVERSEAS_REGIONS or len(view.gaps[j - 1]) > 1)):
            # "Saint-Denis de La Réunion": the region is not part of the city; "PARIS  ACCUEIL": a listing's next
            # column after two blanks (a town's words are one blank apart)
            return STOP
        if not first and f in _CITY_PARTICLES:
            return INNER
        if shape in (TITLE, UPPER) or (shape == INITIAL and j + 1 < n and view.joined(j)):
            return STOP if f in NOT_NAME and f not in _CITY_PARTICLES else CORE
        return STOP

    return run_end(view, i, MAX_CITY_TOKENS, kind)


def _city_start(view: NoteView, j: int) -> int:
    """Start of the city name ending just before token ``j`` (``j`` if none)."""
    i = j
    while i > 0 and j - i < MAX_CITY_TOKENS:
        k = i - 1
        if k < j - 1 and not view.joined(k):
            break
        f, shape = view.folded[k], view.shapes[k]
        if k < j - 1 and f in _CITY_PARTICLES:
            i = k
            continue
        if shape in (TITLE, UPPER) and f not in NOT_NAME and f not in _CITY_STOP:
            i = k
            continue
        break
    while i < j and view.folded[i] in _CITY_PARTICLES and view.shapes[i] == LOWER:
        i += 1  # "à" is not part of the name, "Le" in "Le Faou" is
    return i


#: Postcodes an address shows (a street line or CEDEX): a lower-case word after them is a dictated town.
_ADDRESS_ZIPS = frozenset({"pattern:zip_address", "pattern:zip_cedex"})


def _dictated_city_end(view: NoteView, i: int) -> int:
    """End of a town dictated in lower case after its address's postcode (``29200 brest``, ``29680 le
    relecq-kerhuon``), ``i`` if none: one word after an article at most, no French word (``35000 euros``)."""
    j = i + 1 if view.folded[i] in ("le", "la", "les") and i + 1 < len(view) and view.joined(i) else i
    if j >= len(view) or view.shapes[j] != LOWER or is_french_word(view.words[j]):
        return i
    return j + 1


def _led_by_a(view: NoteView, start: int, end: int) -> bool:
    """Whether the words ``[start, end)`` follow an ``À`` (or ``A``) that opens their line: a letter's date line
    written ``À Lorient, le 3 mars`` (guidelines: a city wherever it appears); a word with digits is no town."""
    return (
        start >= 1
        and view.folded[start - 1] == "a"
        and view.line_start(start - 1)
        and view.joined(start - 1)
        and not any(c.isdigit() for c in view.text[view.starts[start] : view.ends[end - 1]])
    )


def _town_before_zip(view: NoteView, k: int, after: int) -> Candidate | None:
    """The town written before its postcode that ends the line (``3 rue de Siam, BREST 29200``): the town's words
    open the line or follow a comma, and nothing but the line's end or a comma follows the postcode (a town after
    it makes the words before a street's or a lieu-dit's)."""
    if after < len(view) and view.joined(after - 1) and view.words[after] != ",":
        return None
    start = _city_start(view, k + 1)
    if start > k or not (view.line_start(start) or (view.words[start - 1] == "," and view.joined(start - 1))):
        return None
    if view.folded[start] in _ADDRESS_PART_WORDS or any(view.folded[j] in NOT_NAME for j in range(start, k + 1)):
        return None
    return Candidate(view.starts[start], view.ends[k], "VILLE", "address:city_before_zip", 0.8)


_SET_APART_BY = _SEPARATORS_BEFORE_ZIP | {":"}


def _separated_city(view: NoteView, z: Candidate, i: int) -> bool:
    """Whether token ``i``, right after the postcode ``z``, is a dash or a comma before its town, the postcode being
    set apart the same way, after a field's colon or alone at the head of its line (``7 impasse X - 56000 - VANNES``,
    ``Domicile : 35000 - Rennes``, ``29200 - Brest``): not
    a number in prose (``GB 12000 - Contrôle``)."""
    if z.needs_context or i + 1 >= len(view) or view.words[i] not in _SEPARATORS_BEFORE_ZIP or not view.joined(i):
        return False
    if view.starts[i] < z.end or view.text[z.end : view.starts[i]].strip(" \u00a0\t") != "":
        return False
    k = view.index_at(z.start) - 1
    return k < 0 or view.line_start(k + 1) or (view.words[k] in _SET_APART_BY and view.joined(k))


def cities(
    view: NoteView, zips: list[Candidate], dates: list[Candidate], folded_text: str, streets: list[Candidate] = ()
) -> list[Candidate]:
    """VILLE candidates from postcodes (after, or before in brackets), place cues, date lines, and after a
    numbered street (``12 rue de Siam à Brest``)."""
    found: list[Candidate] = []
    n = len(view)
    for z in zips:
        i = view.index_at(z.end)
        if _separated_city(view, z, i):
            i += 1  # "- 56000 - VANNES", ", 35000, Rennes": a dash or a comma between the postcode and its town
        if (
            i < n
            and view.starts[i] >= z.end
            and view.text[view.ends[i - 1] : view.starts[i]].strip(" \u00a0\t") == ""
            and "\n" not in view.text[z.end : view.starts[i]]
        ):
            end = _city_end(view, i)
            if end == i and z.source in _ADDRESS_ZIPS:
                end = _dictated_city_end(view, i)
            if end > i and not (end < n and view.words[end] == ":"):  # "29880\tCommune : X": a field's name
                found.append(Candidate(view.starts[i], view.ends[end - 1], "VILLE", "address:city_after_zip", 0.95))
        k = view.index_at(z.start) - 1  # "Cast (29150)"
        if not z.needs_context and k >= 0 and view.joined(k) and view.shapes[k] in (TITLE, UPPER):
            town = _town_before_zip(view, k, i)
            if town is not None:
                found.append(town)
        if k >= 1 and view.words[k] == "(":
            start = _city_start(view, k)
            if start < k:
                found.append(Candidate(view.starts[start], view.ends[k - 1], "VILLE", "address:city_before_zip", 0.85))
    for _, cue_end in cue_matches(CITY_CUE, folded_text, view.text):
        i = view.index_at(cue_end)
        if i < n and view.starts[i] >= cue_end and "\n" not in view.text[cue_end : view.starts[i]]:
            end = _city_end(view, i)
            if end > i and not _not_a_city(view, i, end):
                found.append(Candidate(view.starts[i], view.ends[end - 1], "VILLE", "context:city", 0.85))
    for m in _ELIDED_ORIGIN.finditer(folded_text):  # "originaire d'Oran": the cue regexes end on a word end
        i = view.index_at(m.end())
        if i < n and view.starts[i] == m.end():
            end = _city_end(view, i)
            if end > i and not _not_a_city(view, i, end):
                found.append(Candidate(view.starts[i], view.ends[end - 1], "VILLE", "context:city", 0.85))
    for street in streets:  # "12 rue de Siam à Brest", "25 quai des Chartrons, Bordeaux.", "lieu-dit X à Brest"
        j = view.index_at(street.end)
        if j + 1 < n and view.starts[j] >= street.end and view.folded[j] in _AFTER_STREET and view.joined(j):
            if view.folded[j] != "a" and not view.text[street.start].isdigit():
                continue  # a named place's town after "à" only
            if "\n" in view.text[street.end : view.starts[j]]:
                continue
            if view.folded[j + 1].rstrip(".") in _ADDRESS_PART_WORDS:
                continue  # "12 rue X, Cité Baduel", "…, Lotissement": the address goes on
            end = _city_end(view, j + 1)
            if (
                end > j + 1
                and not _not_a_city(view, j + 1, end)
                and (view.folded[j] == "a" or _ends_sentence(view, end))
                and not view.text[view.ends[end - 1] : view.ends[end - 1] + 1].isalnum()  # "SAINT-FRANÇ0IS"
            ):
                found.append(
                    Candidate(view.starts[j + 1], view.ends[end - 1], "VILLE", "address:city_after_street", 0.8)
                )
    if "paris" in folded_text or "lyon" in folded_text or "marseille" in folded_text:  # a C-level test per note
        found += arrondissement_cities(view)
    for d in dates:  # "Brest, le 3 mars 2021" / "Brest, 03/03/2021" at the head of a line
        k = view.index_at(d.start) - 1
        if k >= 1 and view.folded[k] in ("le", "ce"):  # "Quimper, ce 12 mars 2022"
            k -= 1
        if k >= 1 and view.words[k] == ",":
            start = _city_start(view, k)
            if start < k and (view.line_start(start) or _led_by_a(view, start, k)):
                found.append(Candidate(view.starts[start], view.ends[k - 1], "VILLE", "context:dateline", 0.8))
        elif k >= 1 and view.joined(k):  # "À Vannes le 12/03/2022": no comma, but led by "À"
            start = _city_start(view, k + 1)
            heading = start == k and is_french_word(view.words[k].lower())  # "A Noter le 12/03": a heading's verb
            if start <= k and _led_by_a(view, start, k + 1) and not heading:
                found.append(Candidate(view.starts[start], view.ends[k], "VILLE", "context:dateline", 0.8))
        # "Le 21/01/2023, à Brest"
        j = view.index_at(d.end)
        if j + 2 < n and view.words[j] == "," and view.folded[j + 1] == "a" and view.joined(j + 1):
            end = _city_end(view, j + 2)
            if end > j + 2:
                found.append(Candidate(view.starts[j + 2], view.ends[end - 1], "VILLE", "context:dateline", 0.8))
    return found


#: What joins a street to its town in prose: ``12 rue de Siam à Brest``, ``25 quai des Chartrons, Bordeaux``.
_AFTER_STREET = frozenset({"a", ","})


#: Words that continue an address after its street rather than name its town.
_ADDRESS_PART_WORDS = _TYPE_STARTS | _PLACE_WORDS | _NAMED_PLACE_TYPES | _POSTBOX | {"cite", "appt", "appartement"}


def _ends_sentence(view: NoteView, end: int) -> bool:
    """Whether the town ending before token ``end`` ends its phrase: the line, a period, a comma, a bracket
    (``, Quimper.``, ``, Bordeaux (33)``): a capitalised word after a comma may also start a name (``, Mme Le
    Gall est venue``); after ``à`` it is a place."""
    return end >= len(view) or not view.joined(end - 1) or view.words[end] in (".", ",", ";", "(", ")")


#: Words a place cue may announce that are not a city (``vit au Foyer Saint-Joseph``, ``né au Pavillon``).
_ABROAD_WORDS = COUNTRIES_AND_REGIONS | FOREIGN_POSTCODE_CITIES
_NOT_CITY_HEADS = frozenset(
    "foyer pavillon domicile sein service batiment etage rez nr nc nd inconnu inconnue non".split()
)  # and a form's empty field: "Commune : NR" (non renseigné), "Inconnue"


_ELIDED_ORIGIN = re.compile(r"originaire d['’]")


def _not_a_city(view: NoteView, i: int, end: int) -> bool:
    """Whether the words a place cue announces are a country, a region or an institution's part, not a city."""
    first = view.folded[i]
    if end == i + 1 and first in ("la", "le", "les"):
        return True  # an article alone: "CHU de La Réunion" (the region stopped the city after it)
    if end == i + 1 and len(first) == 1 and i + 1 < len(view) and view.words[i + 1] == "/":
        return True  # "Ville : N/A": an empty field
    last = view.folded[end - 1]
    return (
        first in COUNTRIES_AND_REGIONS
        or first in _NOT_CITY_HEADS
        or first in _INSTITUTION_WORDS  # "Hôpital de jour de Soins Palliatifs": a unit, not a town
        or last in COUNTRIES_AND_REGIONS
        or (end == i + 1 and first in FRENCH_REGIONS)
    )


_POSTCODE_ABROAD = re.compile(r"\d{4,5}")
_WINDOW_ABROAD = 8


def foreign_postcodes(view: NoteView) -> list[Candidate]:
    """Foreign postcodes in a foreign address (guidelines: ZIP = postal codes; a foreign city is VILLE).

    ``1000 Bruxelles``, ``4000-123 Porto``, ``1211 Genève (Suisse)``, ``00100 Rome, Italie``: anchored on the
    words of places abroad (a set lookup per token, a C-level scan), then the postcode before the city: four
    digits (or Portugal's ``NNNN-NNN``) before a city of the countries that write them
    (:data:`FOREIGN_POSTCODE_CITIES`), or, with a country later on the line, four digits, ``NNNN-NNN`` or
    five digits no French postcode starts with (a French-looking one is :mod:`deid_ds.label.zips`'s).
    """
    found: dict[int, Candidate] = {}
    folded = view.folded
    for k in place_words(view):
        if folded[k] not in _ABROAD_WORDS:
            continue
        if folded[k] in FOREIGN_POSTCODE_CITIES and view.shapes[k] in (TITLE, UPPER):
            zip_span = _postcode_before(view, k, five=False)
            if zip_span is not None:
                found[zip_span[0]] = Candidate(*zip_span, "ZIP", "address:zip_foreign", 0.9)
        if folded[k] in COUNTRIES_AND_REGIONS and DIGIT in view.shapes[max(0, k - _WINDOW_ABROAD) : k]:
            c = k - 1
            while c > 0 and k - c < _WINDOW_ABROAD and not view.line_start(c):
                if view.shapes[c] in (TITLE, UPPER):
                    zip_span = _postcode_before(view, c, five=True)
                    if zip_span is not None:
                        found[zip_span[0]] = Candidate(*zip_span, "ZIP", "address:zip_foreign", 0.9)
                        break
                c -= 1
    return list(found.values())


def _postcode_before(view: NoteView, k: int, *, five: bool) -> tuple[int, int] | None:
    """Offsets of a foreign postcode just before the city at token ``k`` on its line, or None."""
    d = k - 1
    if d < 0 or not view.joined(d) or view.shapes[d] != DIGIT:
        return None
    word = view.words[d]
    if len(word) == 3 and d >= 2 and view.words[d - 1] == "-" and view.gap(d - 1) == "" and view.gap(d - 2) == "":
        if len(view.words[d - 2]) == 4 and view.words[d - 2].isdigit():  # Portugal's "4000-123"
            return view.starts[d - 2], view.ends[d]
        return None
    if not _POSTCODE_ABROAD.fullmatch(word) or (d >= 1 and view.gap(d - 1) == "" and view.words[d - 1] in "-/.,:"):
        return None
    if len(word) == 5 and (not five or valid_postcode(word)):
        return None
    return view.starts[d], view.ends[d]


#: The communes written with an arrondissement number (guidelines: ``[Paris] 13e``, ``[LYON] 8``,
#: ``[Marseille] 5e``), and how many arrondissements each has.
ARRONDISSEMENTS = {"paris": 20, "lyon": 9, "marseille": 16}
_ORDINAL = frozenset({"e", "er", "eme", "ème", "è", "°", "ieme", "ième"})
_ROMAN_ARRONDISSEMENT = re.compile(r"(?P<n>[IVXL]{1,5})(?:e|er|ème|eme)?")
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50}


def _roman(numeral: str) -> int:
    total = 0
    for a, b in zip(numeral, numeral[1:] + " "):
        value = _ROMAN[a]
        total += -value if b != " " and _ROMAN[b] > value else value
    return total


#: Every folded word the place rules start from (street types, post boxes, named places, places abroad,
#: the cities with arrondissements): found once per note by :func:`place_words`.
_PLACE_TRIGGERS = frozenset(_STREET_TRIGGERS | _ABROAD_WORDS | ARRONDISSEMENTS.keys())


def place_words(view: NoteView) -> list[int]:
    """Indices of the note's tokens in :data:`_PLACE_TRIGGERS`, found by one C-level scan and kept in the view.

    The street, foreign-postcode and arrondissement rules each start from a few of these words; one
    scan for all of them costs what one of the three cost alone.
    """
    hits = view.cache.get("place_words")
    if hits is None:
        folded = view.folded
        hits = view.cache["place_words"] = list(compress(range(len(folded)), map(_PLACE_TRIGGERS.__contains__, folded)))
    return hits


def arrondissement_cities(view: NoteView) -> list[Candidate]:
    """VILLE for Paris, Lyon and Marseille written with an arrondissement number, the number left outside.

    Found by a set lookup per token (a C-level scan), then ``13e``, ``13``, ``13ème``, ``XIIIe`` checked:
    the number must be one of the city's arrondissements. After a title (``Dr Paris 13``) it is a name.
    """
    found: list[Candidate] = []
    n = len(view)
    folded = view.folded
    for i in place_words(view):
        if folded[i] not in ARRONDISSEMENTS:
            continue
        if i + 1 >= n or view.shapes[i] not in (TITLE, UPPER) or not view.joined(i):
            continue
        if i > 0 and (folded[i - 1] in PROFESSIONAL_TITLES or folded[i - 1] in CIVILITIES):
            continue
        word = view.words[i + 1]
        if word.isdigit() and len(word) <= 2:
            number = int(word)
            if i + 2 < n and view.gap(i + 1) == "" and folded[i + 2] not in _ORDINAL:
                continue  # "Paris 13h", "Lyon 8x"
        else:
            roman = _ROMAN_ARRONDISSEMENT.fullmatch(word)
            if roman is None:
                continue
            number = _roman(roman.group("n"))
        if 1 <= number <= ARRONDISSEMENTS[folded[i]]:
            found.append(Candidate(view.starts[i], view.ends[i], "VILLE", "address:arrondissement", 0.9))
    return found


#: Nouns that a person's or a place's name completes as an eponym (``drain de Redon``): never a VILLE.
EPONYM_HEADS = frozenset(
    """drain drains signe maladie syndrome score manoeuvre manœuvre test classification echelle critere criteres
    technique intervention operation procedure type stade reflexe triade sonde pince canule""".split()
)
#: Institutions named after a saint right after their head word (``Hôpital Saint-Louis``, ``EHPAD
#: Sainte-Anne``): the saint's name is the institution's, not a town's, even where a commune bears it.
INSTITUTION_HEADS = frozenset(
    """hopital clinique polyclinique ehpad institut fondation pavillon eglise chapelle lycee college ecole
    groupe residence maison hospice centre""".split()
)
_SAINTS = ("saint", "sainte", "st-", "ste-", "st ", "ste ")
_PLACE_KINDS = frozenset({"commune", "ancienne_commune", "acheminement", "site"})
_CITY_CONTEXT_BEFORE = frozenset({"a", "à", "de", "d'", "d’", "sur", "(", "vers", "pres", "près"})
#: What closes a bracketed place (``(Vannes)``, ``(Plaine, 22)``, ``(Redon -``).
_CLOSING_AFTER_PLACE = frozenset({")", ",", "-", "–", "/", ";"})
#: Hospitals' abbreviations, which name their town with or without "de" (``CH Vannes``, ``CHU de Rennes``).
PLACE_ABBREVIATIONS = frozenset({"ch", "chu", "chr", "chru", "chi", "chic", "chs"})
# a hospital named by its town with no "de" ("CH Vannes", "CHU Rennes"): the town is VILLE (guidelines)
_CITY_CONTEXT_BEFORE |= PLACE_ABBREVIATIONS


def gazetteer_places(view: NoteView, matches, zips: list[Candidate]) -> list[Candidate]:
    """VILLE candidates for the BAN's communes written like names; ambiguous ones need a cue or a postcode."""
    zip_ends = {z.end for z in zips}
    zip_starts = {z.start for z in zips}
    found: list[Candidate] = []
    for match in matches:
        contracted = False
        for c in match.categories:  # a loop, not any(): this runs for every gazetteer match of the note
            if c.table == "places":
                if c.kind in _PLACE_KINDS:
                    break
                contracted = contracted or c.kind == CONTRACTED
        else:
            if contracted:
                found += _contracted_commune(view, match)
            continue
        i, j = view.index_at(match.start), view.index_before(match.end) + 1
        if i >= j or view.starts[i] != match.start or view.ends[j - 1] != match.end:
            continue
        if view.shapes[i] not in (TITLE, UPPER) and not (
            view.shapes[i] == LOWER
            and (_next_to_zip(view, i, j, zip_starts, zip_ends) or _dictated_place(view, i, match))
        ):
            continue  # a commune in lower case only next to its postcode or after "à", as dictation writes it
        if i >= 2 and view.folded[i - 1] in ("de", "d'", "d’") and view.folded[i - 2] in EPONYM_HEADS:
            continue  # "drain de Redon", "signe de Lasègue": an eponym, not a place
        if _count_after(view, j):
            continue  # "REDON X1", "Redon x 2": a count of drains or devices named after a person, not a place
        if i >= 1 and view.folded[i - 1] in INSTITUTION_HEADS and view.folded[i].startswith(_SAINTS):
            continue  # "Hôpital Saint-Louis" is named after the saint, not the town (institution names: guidelines)
        ambiguous = all(c.ambiguous for c in match.categories if c.table == "places")
        if ambiguous:
            before = view.folded[i - 1] if i > 0 else ""
            # a postcode ending at most 2 characters before the name, or starting at most 3 after it
            # (looked up by position: a note may hold thousands of postcodes)
            near_zip = _next_to_zip(view, i, j, zip_starts, zip_ends) or _department_after(view, j)
            if not (before in _CITY_CONTEXT_BEFORE or near_zip or (j < len(view) and view.folded[j] == "cedex")):
                continue
            if before == "(" and not near_zip and (j >= len(view) or view.words[j] not in _CLOSING_AFTER_PLACE):
                continue  # "(VERS LE 12/09)": a word opening a bracketed phrase; "(Vers)", "(Plaine, 35)" a place
        found.append(
            Candidate(view.starts[i], view.ends[j - 1], "VILLE", "gazetteer:commune", 0.6 if ambiguous else 0.7)
        )
    return found


#: Prepositions before a town in dictated text (``domiciliée à morlaix``); not ``de``, before which a lower-case
#: commune is as often a word the lexicon lacks (``entorse de cheville``: Cheville, Sarthe).
#: The sign of a count after a word (``X1``, ``x 2``, ``×3``): devices are counted, places are not.
_TIMES = frozenset({"x", "X", "×"})


def _count_after(view: NoteView, j: int) -> bool:
    """Whether tokens ``j`` on are a count (``x1``, ``X 2``), on the line of the word before them."""
    return (
        j + 1 < len(view)
        and view.words[j] in _TIMES
        and view.joined(j - 1)
        and view.joined(j)
        and view.shapes[j + 1] == DIGIT
        and len(view.words[j + 1]) <= 2
    )


_DICTATED_PLACE_BEFORE = frozenset({"a", "à"})


def _dictated_place(view: NoteView, i: int, match) -> bool:
    """Whether the lower-case commune at token ``i`` is one a dictation transcript wrote (``à morlaix``, ``à la
    baule``): after ``à``, a commune whose name is no French word nor a person's name. Not a participle after an
    unaccented ``a``, the verb (``elle a changé``: Changé, Mayenne). After ``de``, only a compound name
    (``de saint-pol-de-léon``: no French word is a commune's hyphenated name) or a hospital's town
    (``chu de brest``)."""
    if i < 1:
        return False
    before = view.folded[i - 1]
    if before in _DICTATED_PLACE_BEFORE:
        if view.words[i - 1] == "a" and view.words[i].endswith(_PARTICIPLE_ENDINGS):
            return False
    elif before in ("de", "d'", "d’"):
        if "-" not in view.words[i] and not (i >= 2 and view.folded[i - 2] in _HOSPITAL_BEFORE_DE):
            return False
    else:
        return False
    return all(not c.ambiguous for c in match.categories if c.table == "places") and not any(
        c.table == "names" for c in match.categories
    )


#: Endings of a past participle written with its accent (``changé``, ``fermées``), which after an unaccented ``a``
#: make the verb ``avoir``'s compound tense, not a place.
_PARTICIPLE_ENDINGS = ("é", "ée", "és", "ées")
#: Words a hospital's town follows with ``de`` (``chu de brest``, ``l'hôpital de morlaix``).
_HOSPITAL_BEFORE_DE = PLACE_ABBREVIATIONS | INSTITUTION_HEADS | {"chs", "gh", "ghu", "hospitalier", "hopitaux"}


_DEPARTMENT = re.compile(r"0[1-9]|[1-8]\d|9[0-5]|2[AB]|97[1-6]")


def _department_after(view: NoteView, j: int) -> bool:
    """Whether tokens ``j`` on are a département's number in brackets (``Quimper (29)``, ``Ajaccio (2A)``), which
    confirms the commune before it as a postcode does."""
    return (
        j + 2 < len(view)
        and view.words[j] == "("
        and view.words[j + 2] == ")"
        and view.joined(j - 1)
        and view.gap(j) == ""
        and view.gap(j + 1) == ""
        and _DEPARTMENT.fullmatch(view.words[j + 1]) is not None
    )


def _next_to_zip(view: NoteView, i: int, j: int, zip_starts: set[int], zip_ends: set[int]) -> bool:
    """Whether a postcode ends at most 2 characters before tokens ``[i, j)`` or starts at most 3 after them
    (looked up by position: a note may hold thousands of postcodes)."""
    start, end = view.starts[i], view.ends[j - 1]
    return any(e in zip_ends for e in range(start - 2, start + 1)) or any(s in zip_starts for s in range(end, end + 4))


_CONTRACTED_ARTICLES = frozenset({"au", "aux", "du", "des"})


def _dictated_contracted(view: NoteView, i: int, match) -> bool:
    """Whether the lower-case commune at token ``i`` after a contracted article is one dictation wrote after a verb of
    residence or birth (``elle vit au relecq-kerhuon``, ``domiciliée au conquet``): no common word (``vit au port``
    stays prose), nor a name."""
    return (
        i >= 2
        and view.folded[i - 2] in _RESIDENCE_VERBS
        and view.joined(i - 2)
        and all(not c.ambiguous for c in match.categories if c.table == "places")
        and not any(c.table == "names" for c in match.categories)
    )


_RESIDENCE_VERBS = _ADDRESS_VERBS | frozenset("vit vivant habitant ne nee originaire transfere transferee".split())


def _contracted_commune(view: NoteView, match) -> list[Candidate]:
    """VILLE for a commune named without its article after a contracted one (``au [Havre]``, ``du [Mans]``).

    guidelines: in a contracted article the article stays outside when it is not part of the commune's
    name as written. Only right after ``au``/``aux``/``du``/``des`` in lower case on the same line, and
    capitalised: the name alone is often a common word (``Havre``, ``Port``), which this context makes a
    place again (``sortie du port`` stays prose).
    """
    i, j = view.index_at(match.start), view.index_before(match.end) + 1
    if (
        i < 1
        or i >= j
        or (view.shapes[i] not in (TITLE, UPPER) and not _dictated_contracted(view, i, match))
        or view.starts[i] != match.start
        or view.ends[j - 1] != match.end
        or view.folded[i - 1] not in _CONTRACTED_ARTICLES
        or view.shapes[i - 1] != LOWER
        or not view.joined(i - 1)
    ):
        return []
    if i >= 2 and view.folded[i - 2] in EPONYM_HEADS:
        return []
    return [Candidate(view.starts[i], view.ends[j - 1], "VILLE", "gazetteer:commune", 0.65)]


def gazetteer_streets(view: NoteView, matches, zips: list[Candidate]) -> list[Candidate]:
    """STR candidates for BAN streets and lieux-dits found as written, extended to the house number.

    Without a house number, only where an address is expected: at the head of a line or a table cell,
    or right before a postcode (``Goasdual 35270 Combourg``).
    """
    zip_starts = {z.start for z in zips}
    found: list[Candidate] = []
    for match in matches:
        for c in match.categories:  # a loop, not any(): this runs for every gazetteer match of the note
            if c.table == "streets":
                break
        else:
            continue
        i, j = view.index_at(match.start), view.index_before(match.end) + 1
        if i >= j or (view.shapes[i] == LOWER and _street_type_at(view, i) is None):
            continue
        if not any(view.shapes[k] in (TITLE, UPPER) for k in range(i, j)):
            continue
        start = _house_number_start(view, i)
        before_zip = j < len(view) and view.starts[j] in zip_starts
        if start == i and not view.line_start(i) and not before_zip:
            continue  # an unnumbered BAN name in prose is too often an ordinary phrase
        found.append(Candidate(view.starts[start], view.ends[j - 1], "STR", "gazetteer:street", 0.7))
    return found
