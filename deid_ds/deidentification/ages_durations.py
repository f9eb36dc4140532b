"""Ages and durations written in a note (``45 ans``, ``depuis 3 semaines``), found and perturbed with ``--privacy dp``.

An age gives the birth year back from the note's date, and a duration (``opéré il y a 2 mois``) one event's date
from another's: under ``--privacy dp`` they are perturbed like the dates (:mod:`.dp_dates`), in the unit they are
written in (years, months, weeks, days), memoised per patient, counted in the privacy accounting and in the audit
(labels ``AGE`` and ``DURATION``). They are not among the eight labels, so ``deidentify`` finds them itself, as it
finds the direct identifiers: only a number of one to three digits followed by a unit of time, and only after a
clear cue, so that clinical numbers are never rewritten (a dose, a size, ``3 fois``, ``J+5``, ``2 à 3 ans``):

* ``AGE``: after ``âgé(e) de``, ``âge :``, ``patient(e) de``, ``homme``/``femme``/``enfant``... ``de``, or
  between punctuation as identity lines write it (``M. X, 45 ans,``, ``(45 ans)``, ``— 45 ans``);
* ``DURATION``: after ``depuis``, ``il y a``, ``pendant``, ``durant``, ``voici``, ``dans``, ``après``, ``en``
  (with ``environ``, ``plus de``, ``moins de``, ``près de`` allowed between).

A surrogate is 1 or more (``depuis 0 jour`` is not written), an age in years at most :data:`MAX_AGE_YEARS`
(bounds conditioned on, like the reference day of the dates), and never the original; the unit word follows its
number (``1 an``, ``2 ans``). A number written in words (``âgé de soixante-trois ans``, as dictation is
transcribed) gets a surrogate in words. The views outside the visible text are left as they are; an age is
perturbed on its own, not recomputed from the perturbed birthdate and note date (docs/privacy.md). Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deid_ds.deidentification.context import Context
from deid_ds.deidentification.date_words import number_words
from deid_ds.deidentification.dp_dates import Bounds, perturb
from deid_ds.label._numbers import NUMBER_WORDS
from deid_ds.label._numbers import value as words_value

#: The oldest age in years a surrogate may be (an age of 45 perturbed at a small ε never becomes 160).
MAX_AGE_YEARS = 110
#: The unit of each unit word (folded), and its singular and plural.
_UNITS = {"an": "year", "ans": "year", "annee": "year", "annees": "year", "mois": "month"}
_UNITS |= {"semaine": "week", "semaines": "week", "jour": "day", "jours": "day"}
_SINGULAR = {"ans": "an", "années": "année", "annees": "annee", "semaines": "semaine", "jours": "jour"}
_PLURAL = {v: k for k, v in _SINGULAR.items()}

_S = r"[ \t\u00a0\u202f]"
_NUMBER = rf"(?P<n>\d{{1,3}}|{NUMBER_WORDS})(?P<sep>{_S}?)(?P<u>ans?|ann[ée]es?|mois|semaines?|jours?)\b"
_AGE_CUE = re.compile(
    rf"(?:\b(?:[âa]g[ée]e?s?{_S}+de|[âa]ge{_S}*:|patiente?s?{_S}+de|homme{_S}+de|femme{_S}+de|enfant{_S}+de"
    rf"|gar[çc]on{_S}+de|fille{_S}+de|nourrisson{_S}+de|b[ée]b[ée]{_S}+de)|[,(—–]){_S}*{_NUMBER}",
    re.IGNORECASE,
)
_DURATION_CUE = re.compile(
    rf"\b(?:depuis|il{_S}+y{_S}+a|pendant|durant|voici|dans|apr[èe]s|en)"
    rf"(?:{_S}+(?:environ|plus{_S}+de|moins{_S}+de|pr[èe]s{_S}+de|presque|au{_S}+moins))?{_S}+{_NUMBER}",
    re.IGNORECASE,
)
#: After an age cued by punctuation only: the end of the identity phrase.
_AGE_END = re.compile(rf"{_S}*(?:[,;)?!.]|—|–|$)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Quantity:
    """``text[start:end]`` is ``number``, a space or none, and ``word``: an age or duration of ``value`` ``unit``s."""

    start: int
    end: int
    label: str  # AGE or DURATION
    value: int
    unit: str  # year, month, week, day
    sep: str
    word: str
    in_words: bool = False  # ``soixante-trois ans``, as dictation is transcribed: its surrogate is in words too
    number: str = ""  # the number as written


def find_quantities(text: str) -> list[Quantity]:
    """The cued ages and durations of ``text`` (module docstring), in text order, never overlapping."""
    found: dict[int, Quantity] = {}
    for label, pattern in (("DURATION", _DURATION_CUE), ("AGE", _AGE_CUE)):
        for m in pattern.finditer(text):
            if m.start("n") in found:
                continue
            if label == "AGE" and m.group(0)[:1] in ",(—–" and not _AGE_END.match(text, m.end()):
                continue  # ", 3 ans après": not an identity line's age
            word, number = m["u"], m["n"]
            unit = _UNITS.get(word.lower().replace("é", "e"))
            if unit is None or (label == "AGE" and m.group(0)[:1] in ",(—–" and unit not in ("year", "month")):
                continue
            in_words = not number.isdigit()
            value = words_value(number) if in_words else int(number)
            if value is None or (in_words and (not m["sep"] or not 1 <= value < 1000)):
                continue
            found[m.start("n")] = Quantity(
                m.start("n"), m.end("u"), label, value, unit, m["sep"], word, in_words, number
            )
    return [found[start] for start in sorted(found)]


def _word(word: str, value: int) -> str:
    """The unit word agreeing with ``value`` (``an``/``ans``...), in the original's case."""
    lower = word.lower()
    new = _SINGULAR.get(lower, lower) if value <= 1 else _PLURAL.get(lower, lower)
    return new.upper() if word.isupper() and len(word) > 1 else new


def quantity_key(q: Quantity) -> tuple[str, str]:
    """The accounting kind (``age:year``, ``duration:week``...) and memo key of a quantity."""
    return f"{q.label.lower()}:{q.unit}", str(q.value)


def perturb_quantity(ctx: Context, q: Quantity) -> str:
    """The ε·d-private surrogate of ``q`` (memoised per patient, its cost recorded), rendered as it was written."""
    kind, key = quantity_key(q)
    up = max(MAX_AGE_YEARS - q.value, 0) if q.label == "AGE" and q.unit == "year" and q.value <= MAX_AGE_YEARS else None
    new = perturb(ctx.keyring, ctx.scope, kind, q.value, ctx.privacy.epsilon, Bounds(max(q.value - 1, 0), up))
    ctx.spend(kind, key, ctx.privacy.epsilon)
    return f"{_number(q, new)}{q.sep}{_word(q.word, new)}"


def _number(q: Quantity, new: int) -> str:
    """``new`` as ``q`` wrote its number: digits, or words (``une`` before a feminine unit, the original's case)."""
    if not q.in_words:
        return str(new)
    words = number_words(new)
    if q.word.lower().startswith(("semaine", "année", "annee")) and words.endswith("un"):
        words += "e"  # une semaine, vingt et une années
    if q.number.isupper():
        return words.upper()
    return words[:1].upper() + words[1:] if q.number[:1].isupper() else words
