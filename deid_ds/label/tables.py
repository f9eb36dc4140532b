"""Names and dates read from the columns of a table, by the header above them.

Warehouses receive lists and tables: fixed-width listings of a mainframe in ``<pre>`` (columns padded with
spaces or separated by ``|``), and HTML tables whose cells the text view separates by tabs (CDA renderings,
lab reports, staff tables). A cell under a ``NOM`` or ``PRÉNOM`` header holds a name with no title and no
cue around it, often in capitals and cut at the column's width; the header says what it is, and a header
of roles or professional identifiers (``FONCTION``, ``QUALITÉ``, ``RPPS``) says whose (guidelines: "a name
split over two columns of a fixed-width table is two spans"; "every care professional is DOCTOR").

A header is a line of at least two cells that are all column titles (:data:`HEADER_WORDS`), one of them a
name or date column. The rows are the lines under it, up to a blank line, a rule of ``-``/``=`` or a line of
one cell. Cells are cut by the header's columns: by tab or ``|`` when the header uses them, else by the
character positions of the header's titles (a fixed-width value may fill its column up to the next one).

Pure functions of the note's text; searched only in notes with a tab, a ``|`` or a run of three blanks, the
rest of a line being checked only once a line of titles is found.
"""

from __future__ import annotations

import re

from deid_ds.kb.normalize import fold
from deid_ds.label.candidate import Candidate

#: Column titles (folded, punctuation-free words); a header line is made of these only.
HEADER_WORDS: frozenset[str] = frozenset(
    """nom noms prenom prenoms patient patiente nee ne naissance naiss ddn date dates le sexe sx ipp nip iep
    n no num numero dossier sejour intervenant intervenants praticien praticiens medecin medecins qualite
    fonction fonctions role roles rpps adeli id ps idps specialite profession signataire auteur usage
    d de du marital maritale jeune fille epouse heure age tel telephone adresse ville cp code postal ins nir
    identifiant service uf lit chambre statut e s heure cible cibles transmission transmissions signature
    observation observations""".split()
)
#: Titles of a name column (any word of the cell): ``NOM``, ``NOM PATIENT``, ``PRÉNOM``, ``NOM DE NAISSANCE``.
NAME_TITLES = frozenset({"nom", "noms", "prenom", "prenoms"})
#: Titles of a date column (the whole cell): ``DDN``, ``NÉ(E) LE``, ``DATE DE NAISSANCE``, ``DATE``.
DATE_TITLES = frozenset({"ddn", "ne le", "nee le", "ne e le", "date de naissance", "date naissance", "naissance"})
DATE_TITLES |= frozenset({"date", "date naiss", "ne", "nee", "dates"})
#: Titles of a column of who wrote each row (nurse transmissions): a professional, after a role or not.
SIGNER_TITLES = frozenset({"signature", "signataire", "auteur"})
#: Titles that make a table a list of professionals: its names are DOCTOR.
STAFF_TITLES = frozenset(
    "intervenant intervenants praticien praticiens medecin medecins qualite fonction fonctions role roles rpps "
    "adeli ps idps specialite profession signataire auteur".split()
)

_RULE = re.compile(r"^[\s|+]*[-=_*]{5,}[-=_*\s|+]*$")
_SPACE_COLUMNS = re.compile(r"\S+(?: \S+)*")  # cells of a fixed-width line: words one blank apart
_WORD = re.compile(r"[a-z]+")
_NAME_VALUE = re.compile(r"[^\W\d_]+(?:[-' .’]+[^\W\d_]+)*\.?")
_DATE_VALUE = re.compile(
    r"(?:0?[1-9]|[12]\d|3[01])[/.-](?:0?[1-9]|1[0-2])[/.-](?:\d{4}|\d{2})"
    r"|(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
    r"|(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|[12]\d|3[01])/(?:0?[1-9]|1[0-2])"  # a day and month under a date title
)
#: The role a signer is written after (``Inf. Louis-Hervé``, ``IDE Karine B.``, ``CDS Nour``): outside the name.
_ROLE_BEFORE = re.compile(
    r"(?:(?:inf|infirmi[eè]re?|ide|iade|ibode|as|ash|aide-soignante?|cds|cadre|dr|pr|sf|kin[eé]|int|interne)\.?\s+)+",
    re.IGNORECASE,
)


def _cells(line: str, offset: int, separator: str | None) -> list[tuple[int, int]]:
    """The stripped cells of ``line`` as text offsets (empty cells left out)."""
    if separator is None:
        return [(offset + m.start(), offset + m.end()) for m in _SPACE_COLUMNS.finditer(line)]
    cells, position = [], 0
    for part in line.split(separator):
        stripped = part.strip()
        if stripped:
            start = position + part.index(stripped)
            cells.append((offset + start, offset + start + len(stripped)))
        position += len(part) + 1
    return cells


def _separator(line: str) -> str | None:
    if "\t" in line:
        return "\t"
    if line.count("|") >= 2:
        return "|"
    return None


def _title(text: str) -> tuple[str, ...] | None:
    """The folded words of a cell if it is a column title, else None."""
    words = tuple(_WORD.findall(fold(text)))
    if not words or len(words) > 4 or any(w not in HEADER_WORDS for w in words):
        return None
    return words


def _column_kind(words: tuple[str, ...]) -> str | None:
    joined = " ".join(words)
    if joined in DATE_TITLES:
        return "date"
    if NAME_TITLES.intersection(words):
        return "name"
    if joined in SIGNER_TITLES:
        return "signer"
    return None


def table_cells(text: str) -> list[Candidate]:
    """PATIENT, DOCTOR and DATE candidates of the cells under name and date column titles."""
    if "\t" not in text and "|" not in text and "   " not in text:
        return []
    found: list[Candidate] = []
    lines = text.split("\n")
    starts, position = [], 0
    for line in lines:
        starts.append(position)
        position += len(line) + 1
    k = 0
    while k < len(lines):
        header = _header(lines[k], starts[k])
        if header is None:
            k += 1
            continue
        separator, columns = header
        staff = any(STAFF_TITLES.intersection(words) for _, _, words in columns)
        k += 1
        while k < len(lines) and lines[k].strip() and not _RULE.match(lines[k]):
            row = _row_cells(lines[k], starts[k], separator, columns)
            if row is None:
                break
            for (start, end), (_, _, words) in zip(row, columns):
                if start < 0:
                    continue
                value = text[start:end]
                kind = _column_kind(words)
                if kind == "name" and _NAME_VALUE.fullmatch(value) and _title(value) is None:
                    label = "DOCTOR" if staff else "PATIENT"
                    found.append(Candidate(start, end, label, "context:table_column", 0.8))
                elif kind == "signer":
                    role = _ROLE_BEFORE.match(value)
                    skip = role.end() if role is not None else 0
                    if _NAME_VALUE.fullmatch(value, skip) and _title(value[skip:]) is None:
                        found.append(Candidate(start + skip, end, "DOCTOR", "context:table_column", 0.8))
                elif kind == "date" and _DATE_VALUE.fullmatch(value):
                    found.append(Candidate(start, end, "DATE", "context:table_date", 0.9))
            k += 1
    return found


def _header(line: str, offset: int) -> tuple[str | None, list[tuple[int, int, tuple[str, ...]]]] | None:
    """``(separator, columns)`` when ``line`` is a header with a name or date column; columns as
    ``(start, end, title words)``, offsets in the line."""
    separator = _separator(line)
    if separator is None and "   " not in line:
        return None
    cells = _cells(line, offset, separator)
    if len(cells) < 2:
        return None
    columns = []
    for start, end in cells:
        words = _title(line[start - offset : end - offset])
        if words is None:
            return None
        columns.append((start - offset, end - offset, words))
    if not any(_column_kind(words) for _, _, words in columns):
        return None
    return separator, columns


def _row_cells(
    line: str, offset: int, separator: str | None, columns: list[tuple[int, int, tuple[str, ...]]]
) -> list[tuple[int, int]] | None:
    """The cell of each column in a row (``(-1, -1)`` where empty), or None when the line is not a row."""
    if separator is not None:
        if _separator(line) != separator:
            return None
        if separator == "\t":  # HTML cells, in the header's order (an empty cell keeps its tab)
            cells, position = [], 0
            for part in line.split("\t"):
                stripped = part.strip()
                start = offset + position + (part.index(stripped) if stripped else 0)
                cells.append((start, start + len(stripped)) if stripped else (-1, -1))
                position += len(part) + 1
            return cells[: len(columns)] + [(-1, -1)] * (len(columns) - len(cells))
        return _by_position(line, offset, columns)
    if len(_cells(line, offset, None)) < 2:
        return None
    return _by_position(line, offset, columns)


def _by_position(line: str, offset: int, columns: list[tuple[int, int, tuple[str, ...]]]) -> list[tuple[int, int]]:
    """Each column's part of a fixed-width row: from its title's start to the next title's start, stripped."""
    out = []
    for index, (start, _, _) in enumerate(columns):
        stop = columns[index + 1][0] if index + 1 < len(columns) else len(line)
        piece = line[start:stop]
        stripped = piece.strip(" |")
        if not stripped:
            out.append((-1, -1))
            continue
        begin = offset + start + piece.index(stripped)
        out.append((begin, begin + len(stripped)))
    return out
