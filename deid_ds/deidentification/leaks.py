"""The residual-leak check: are a patient's own metadata values still in their de-identified notes?

Run on the *output* of de-identification, it looks for what the warehouse knows of the patient — the
parts of their names (three letters or more, particles excluded), their birthdate in the usual numeric
and written renderings, their phone number (digits, whatever the separators, national or ``+33``),
e-mail address, street name, postcode and city — everywhere a person reading or parsing the file could
find them (:mod:`deid_ds.deidentification.regions`):

* ``text``: the text a reader sees (:func:`deid_ds.segmentation.html_text.html_to_text`);
* ``hidden``: content never rendered but present in the file (``<title>``, comments, scripts, styles);
* ``attribute``: attribute values of the tags (``title="..."``, ``alt``, ``href="mailto:..."``, ``src``);
* ``markup``: tag and attribute names, junk in end tags (``</p Dupont>``), the doctype, processing
  instructions.

Every view is read decoded (character references) and with soft hyphens and zero-width characters
dropped, so ``Du&shy;pont`` and ``Du\u200bpont`` read ``Dupont``; where such a character stood between
two words it is also read as a space; percent-encoding is decoded too (``Kerdr%61on``), and the larger
count of these readings is kept. The text of a base64 ``data:`` URL is decoded and searched as well
(:mod:`deid_ds.deidentification.spellings`). Matching is on folded text (case and accents ignored,
decomposed NFD accents and compatibility forms such as fullwidth letters too:
:func:`deid_ds.kb.normalize.fold_text`, so NFC metadata matches an NFD note and the other way round) and
whole words. The birthdate is looked for in the forms the weak labeller reads: ``12/04/1961``,
``12.04.61``, ``1961-04-12``, ``12041961``, ``19610412``, ``12 avril 1961``, ``12-AVR-1961``, ``12avr1961``.
Names are also matched *fuzzily*:
a word of five letters or more one edit away from a name part of five letters or more (a typo, a
dropped accent letter) counts, unless it is an ordinary French word (``matin`` is not ``Martin``).
The check errs on the side of reporting: a name that is also a word used in the note (``Petit``) is
counted when it appears. One exception: a name part written right after ``Saint-``/``Sainte-``
(``Clinique Sainte-Marie`` for a patient named Marie) is a place or an institution, not counted. It
returns counts per field and view, never the values themselves.

A patient without any metadata cannot be checked: the result then says so (``checked`` false), and the
callers report such notes as "not checked", never as "0 left". Metadata read by
:mod:`deid_ds.io.metadata`; a value it cannot read (a birthdate ``12 III 60``, a postcode ``29200-1``) is
named in ``unreadable`` and the note is reported "metadata unreadable", whatever else was checked.

**Direct identifiers** (:mod:`deid_ds.deidentification.identifiers`: NIR, INS, IPP, NDA, RPPS...) are
checked whether or not the patient has metadata: given the identifiers of the *input* note (compact value
-> kind), every view of the output is searched for each value (whatever its grouping, from eight
characters), and each one found counts as a leak of its kind (an extra "field" named by the kind). A
surrogate is never its original, so the surrogates written are not counted; an identifier kept with
``--keep-identifiers`` is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

from deid_ds.deidentification.regions import INVISIBLE_RE, VIEWS, view_texts
from deid_ds.deidentification.spellings import readings
from deid_ds.io.metadata import read_birthdate, read_phone, read_zip, unreadable_fields
from deid_ds.kb.ambiguity import is_common_word
from deid_ds.kb.normalize import fold, fold_key, fold_text, name_particles
from deid_ds.label.dates import MONTH_ABBREVIATIONS, MONTHS
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.html_text import ParsedHtml, html_to_text

#: Fields searched, in report order.
LEAK_FIELDS = ("firstname", "lastname", "birthdate", "phone", "email", "address", "zip", "city")
MIN_NAME_PART = 3
FUZZY_MIN = 5

_WORD = re.compile(r"[^\W\d_]+")
PHONE_RUN = re.compile(r"\+?\d(?:[\s.\-/()]{0,3}\d){7,}")
#: ``Saint-``/``Sainte-`` before a word makes it a saint's, place's or institution's name (``Clinique
#: Sainte-Marie``), not a person's, unless the patient's own name holds the word ``saint``.
_SAINTS = frozenset({"saint", "sainte", "st", "ste"})
_SAINT_BEFORE = re.compile(r"(?<![\w])(?:saint|sainte|st|ste)-$")
_HOUSE = re.compile(r"^\s*\d+\s*(?:bis|ter|quater|[a-d](?![a-z]))?[\s,]*", re.IGNORECASE)


@dataclass(frozen=True)
class Needles:
    """What to look for, prepared once per patient (folded; never printed). Shared by every note of the
    patient (:func:`needles_for` is cached): never changed once made."""

    names: Mapping[str, frozenset[str]] = field(default_factory=dict)  # field -> folded parts
    patterns: Mapping[str, re.Pattern[str]] = field(default_factory=dict)  # field -> regex on folded text
    phone: str | None = None  # national significant number
    unreadable: tuple[str, ...] = ()  # fields holding a value the metadata readers cannot read
    #: Per field of :attr:`patterns`, text that every match of its pattern holds (the two digits of the birth year,
    #: the first word of the city...): a text without it is not searched. The patterns start with a lookbehind,
    #: tried at every position of a view; ``in`` skips the views that cannot hold the value (0.23 -> 0.10 s counting
    #: in the views of 1,000 export-style notes: docs/benchmarks.md, *deidentify*).
    hints: Mapping[str, str] = field(default_factory=dict)

    def searched(self, name: str, folded: str) -> bool:
        """Whether ``folded`` may hold a match of the pattern of ``name`` (its hint is in it)."""
        return self.hints.get(name, "") in folded

    def empty(self) -> bool:
        return not (self.names or self.patterns or self.phone)


def national_number(digits: str) -> str:
    """``0299284321`` / ``33299284321`` / ``0033299284321`` → ``299284321``."""
    for prefix in ("0033", "33"):
        if digits.startswith(prefix) and len(digits) - len(prefix) in (9, 10):
            digits = digits[len(prefix) :]
            break
    return digits[1:] if digits.startswith("0") else digits


def _name_parts(value: str | None) -> set[str]:
    if not value:
        return set()
    particles = name_particles()
    return {w for w in _WORD.findall(fold_key(value)) if len(w) >= MIN_NAME_PART and w not in particles}


def _phrase(value: str) -> str:
    """A folded value as a whole-word regex, any run of spaces/hyphens matching any other."""
    words = [re.escape(w) for w in re.split(r"[\s\-'’]+", fold_key(value)) if w]
    return r"(?<![\w])" + r"[\s\-'’]+".join(words) + r"(?![\w])"


def _first_word(value: str) -> str:
    """The first word of :func:`_phrase`'s pattern of ``value``, as its matches hold it."""
    return next(w for w in re.split(r"[\s\-'’]+", fold_key(value)) if w)


def _birthdate_pattern(value: str) -> str | None:
    """The birthdate in the forms of the module docstring, as a regex over folded text."""
    date = read_birthdate(value)
    if date is None:
        return None
    d, m, y = date.day, date.month, date.year
    day = rf"0?{d}" if d < 10 else str(d)
    month = rf"0?{m}" if m < 10 else str(m)
    year = rf"(?:{y}|{y % 100:02d})"
    first = r"(?:1\s?er|1|01|premier)" if d == 1 else day
    names = sorted({fold(MONTHS[m - 1]), *(fold(a) for a, n in MONTH_ABBREVIATIONS.items() if n == m)}, key=len)
    month_word = "(?:" + "|".join(map(re.escape, reversed(names))) + r")(?![^\W\d_])"
    alternatives = [
        rf"{day}\s?(?P<s1>[/.\-])\s?{month}\s?(?P=s1)\s?{year}",
        rf"{y}(?P<s2>[/.\-]){m:02d}(?P=s2){d:02d}",
        rf"{d:02d}{m:02d}{y}|{y}{m:02d}{d:02d}",
        rf"{first}(?:\s*|-){month_word}\.?(?:,?\s*|-){y}",
    ]
    return r"(?<![\d])(?:" + "|".join(alternatives) + r")(?![\d])"


@lru_cache(maxsize=4096)
def needles_for(patient: PatientMetadata) -> Needles:
    """The patient's values, prepared for :func:`find_leaks` and for searching a note's other views
    (:mod:`deid_ds.deidentification.other_views`). Cached: a patient has several notes, and each note used
    to compile them twice (0.15 s -> 0.09 s for 1,000 notes of 250 patients: docs/benchmarks.md)."""
    names: dict[str, frozenset[str]] = {}
    patterns: dict[str, re.Pattern[str]] = {}
    hints: dict[str, str] = {}
    for name in ("firstname", "lastname"):
        parts = _name_parts(getattr(patient, name))
        if parts:
            names[name] = frozenset(parts)
    if patient.birthdate:
        pattern = _birthdate_pattern(patient.birthdate)
        if pattern:
            patterns["birthdate"] = re.compile(pattern)
            year = read_birthdate(patient.birthdate).year  # every form holds it, whole or as its two last digits
            hints["birthdate"] = f"{year % 100:02d}" if year >= 10 else str(year)
    phone = read_phone(patient.phone)
    if phone:
        phone = national_number("".join(c for c in fold_text(phone) if c.isdigit()))
    if patient.email and "@" in patient.email:
        patterns["email"] = re.compile(r"(?<![\w.\-])" + re.escape(fold_key(patient.email)) + r"(?![\w\-])")
        hints["email"] = fold_key(patient.email)
    if patient.address:
        from deid_ds.deidentification.pools import strip_street_type

        _, name = strip_street_type(_HOUSE.sub("", patient.address))
        if len(_WORD.findall(fold_key(name))) and len(fold_key(name).replace(" ", "")) >= MIN_NAME_PART:
            patterns["address"] = re.compile(_phrase(name))
            hints["address"] = _first_word(name)
    code = read_zip(patient.zip)
    if code:
        patterns["zip"] = re.compile(rf"(?<!\d){code[:2]}\s?{code[2:]}(?!\d)")
        hints["zip"] = code[2:]
    if patient.city and len(fold_key(patient.city)) >= MIN_NAME_PART:
        patterns["city"] = re.compile(_phrase(patient.city))
        hints["city"] = _first_word(patient.city)
    return Needles(names, patterns, phone or None, unreadable_fields(patient), hints)


def views(parsed: ParsedHtml) -> dict[str, list[str]]:
    """The views of a note searched by the check (module docstring), decoded."""
    return view_texts(parsed)


def _count_in(text: str, needles: Needles, counts: dict[str, dict[str, int]]) -> None:
    """Count the needles in ``text`` read every way it reads (module docstring): as written and
    percent-decoded, each without its invisible characters and, if it has some, with them as spaces
    too; the larger count of these readings is kept per field (a name cut by a soft hyphen, two names
    joined by a zero-width space, a name in a URL). The decoded text of a ``data:`` URL adds its own."""
    alternatives, payloads = readings(text)
    _count_max([text, *alternatives], needles, counts)
    for payload in payloads:
        _count_max([payload], needles, counts)


def _count_max(texts: list[str], needles: Needles, counts: dict[str, dict[str, int]]) -> None:
    """Count in the readings of one text: the larger count of them, per field."""
    variants = [
        v
        for t in texts
        for v in ((INVISIBLE_RE.sub("", t), INVISIBLE_RE.sub(" ", t)) if INVISIBLE_RE.search(t) else (t,))
    ]
    if len(variants) == 1:
        _count_in_reading(variants[0], needles, counts)
        return
    found_all = []
    for reading in variants:
        found = {f: {"exact": 0, "fuzzy": 0} for f in LEAK_FIELDS}
        _count_in_reading(reading, needles, found)
        found_all.append(found)
    for name in LEAK_FIELDS:
        for kind in ("exact", "fuzzy"):
            counts[name][kind] += max(r[name][kind] for r in found_all)


def _count_in_reading(text: str, needles: Needles, counts: dict[str, dict[str, int]]) -> None:
    folded = fold_text(text)
    if needles.names:
        # each distinct word is compared with the name parts once, however often the note repeats it; only
        # the words found are then looked for one by one (the Saint- test needs where each one stands)
        words = set(_WORD.findall(folded))
        for name, parts in needles.names.items():
            saints_too = not parts.isdisjoint(_SAINTS)
            long_parts = [part for part in parts if len(part) >= FUZZY_MIN]
            near = {len(part) + d for part in long_parts for d in (-1, 0, 1)}  # one edit changes the length by 1
            found = dict.fromkeys(words & parts, "exact")
            for word in words if long_parts else ():
                if (
                    len(word) >= FUZZY_MIN
                    and len(word) in near
                    and word not in found
                    and any(Levenshtein.distance(word, part, score_cutoff=1) <= 1 for part in long_parts)
                    and not is_common_word(word, accents_known=False)
                ):
                    found[word] = "fuzzy"
            for match in _WORD.finditer(folded) if found else ():
                kind = found.get(match.group())
                if kind is None:
                    continue
                if not saints_too and _SAINT_BEFORE.search(folded, max(0, match.start() - 7), match.start()):
                    continue  # Sainte-Marie, Saint-Pierre: a place or an institution, not the patient's Marie
                counts[name][kind] += 1
    for name, pattern in needles.patterns.items():
        if needles.searched(name, folded):
            counts[name]["exact"] += len(pattern.findall(folded))
    if needles.phone:
        for run in PHONE_RUN.finditer(folded):
            if needles.phone in national_number("".join(c for c in run.group() if c.isdigit())):
                counts["phone"]["exact"] += 1


@dataclass
class LeakCounts:
    """Leaks of one note or many: per field ``exact``/``fuzzy`` counts, per view totals."""

    per_field: dict[str, dict[str, int]] = field(
        default_factory=lambda: {f: {"exact": 0, "fuzzy": 0} for f in LEAK_FIELDS}
    )
    per_view: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VIEWS, 0))
    checked: bool = True  # False: the patient has no metadata to look for (not "0 left")
    #: Per field, the notes whose patient's value could not be read (one note: 1 per such field).
    unreadable: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(c["exact"] + c["fuzzy"] for c in self.per_field.values())

    def add(self, other: LeakCounts) -> None:
        for name, counts in other.per_field.items():
            mine = self.per_field.setdefault(name, {"exact": 0, "fuzzy": 0})  # an identifier kind (NIR...)
            for kind, n in counts.items():
                mine[kind] += n
        for view, n in other.per_view.items():
            self.per_view[view] = self.per_view.get(view, 0) + n
        for name, n in other.unreadable.items():
            self.unreadable[name] = self.unreadable.get(name, 0) + n

    def to_dict(self) -> dict:
        return {
            "total": self.total,
            "per_field": self.per_field,
            "per_view": self.per_view,
            "metadata_unreadable": dict(sorted(self.unreadable.items())),
        }


def find_leaks(
    note: str | ParsedHtml, patient: PatientMetadata | Needles, identifiers: Mapping[str, str] | None = None
) -> LeakCounts:
    """Count the patient's own values left in one (de-identified) note, and the input note's direct
    ``identifiers`` (compact value -> kind: :func:`deid_ds.deidentification.identifiers.note_identifiers`
    of the input) left in it. Usable on its own."""
    parsed = note if isinstance(note, ParsedHtml) else html_to_text(note)
    needles = patient if isinstance(patient, Needles) else needles_for(patient)
    result = LeakCounts(unreadable=dict.fromkeys(needles.unreadable, 1))
    read = views(parsed) if identifiers or not needles.empty() else {}  # nothing to look for: none read
    if identifiers:
        result.add(identifier_leaks(read, identifiers))
    if needles.empty():
        result.checked = False
        return result
    for view, texts in read.items():
        counts = {f: {"exact": 0, "fuzzy": 0} for f in LEAK_FIELDS}
        for text in texts:
            _count_in(text, needles, counts)
        found = LeakCounts(per_field=counts)
        found.per_view[view] = found.total
        result.add(found)
    return result


def identifier_leaks(read: dict[str, list[str]], identifiers: Mapping[str, str]) -> LeakCounts:
    """The input note's direct identifiers (compact value -> kind) left in any view of a note (``read``: its
    :func:`views`; module docstring), counted per kind as ``exact`` leaks of a field named by the kind, and
    per view."""
    from deid_ds.deidentification.identifiers import find_values

    result = LeakCounts()
    for view, texts in read.items():
        for text in texts:
            for found in find_values(INVISIBLE_RE.sub("", text), identifiers, shortest=1):
                result.per_field.setdefault(found.kind, {"exact": 0, "fuzzy": 0})["exact"] += 1
                result.per_view[view] += 1
    return result


def check_leaks(
    deidentified: str,
    originals: str,
    *,
    column_map: dict[str, str] | None = None,
    batch_size: int = 256,
) -> tuple[LeakCounts, int]:
    """The check on its own: a de-identified notes table against the original one's metadata.

    Notes are joined on ``id_document`` (``column_map`` maps the *original* table's columns, as
    ``--column`` does); the original notes' direct identifiers are looked for too. Returns the totals and the
    number of documents with at least one leak.
    """
    from deid_ds.deidentification.identifiers import note_identifiers
    from deid_ds.io.notes import open_notes

    metadata: dict[str, PatientMetadata] = {}
    identifiers: dict[str, dict[str, str]] = {}
    for batch in open_notes(originals, column_map).iter_batches(batch_size):
        for note in batch:
            metadata[note.id_document] = note.patient
            if isinstance(note.html, (str, bytes)):
                identifiers[note.id_document] = note_identifiers(html_to_text(note.html))
    totals, leaky = LeakCounts(), 0
    for batch in open_notes(deidentified).iter_batches(batch_size):
        for note in batch:
            patient = metadata.get(note.id_document)
            if patient is None or note.html is None:
                continue
            found = find_leaks(
                note.html if isinstance(note.html, str) else html_to_text(note.html),
                patient,
                identifiers.get(note.id_document),
            )
            totals.add(found)
            leaky += found.total > 0
    return totals, leaky


def iter_fields(counts: LeakCounts) -> Iterable[tuple[str, int, int]]:
    for name in LEAK_FIELDS:
        yield name, counts.per_field[name]["exact"], counts.per_field[name]["fuzzy"]
