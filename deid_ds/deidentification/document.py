"""De-identifying one note: its spans checked, replaced in the HTML, and the audit rows of the changes.

Pure apart from the pools it reads: the pipeline calls it per note, in worker processes, and every
choice depends only on the key, the scope and the entity, so the result does not depend on batching.

A note is refused whole (``failed``, never written) when one of its spans cannot be replaced safely:
offsets outside the note or not on text, spans that overlap, or a span whose ``text`` column does not
read as the note does (spans made on another version of the notes). Writing the rest of such a note
would publish it half de-identified.

After the spans, the note's other views (title, comments, attribute values, scripts...) are handled by
:mod:`deid_ds.deidentification.other_views` under the ``hidden`` policy; their audit rows say which
``view`` they changed (``text`` for the spans).

The direct identifiers that are not one of the eight labels (NIR, INS, IPP, NDA, RPPS...:
:mod:`deid_ds.deidentification.identifiers`) need no span: they are found in every view and replaced
(:mod:`deid_ds.deidentification.identifier_surrogates`) unless ``identifiers`` is false. Their audit
rows carry the kind as ``label`` and ``identifier:<how>`` as ``source``. A span wins where it overlaps
one: the identifier's characters outside the span are masked (a part of a number has no surrogate).

With ``--privacy dp`` the ages and durations of the text (:mod:`deid_ds.deidentification.ages_durations`) that
no span or identifier covers are perturbed too (audit ``label`` ``AGE``/``DURATION``, ``source`` ``dp:age``...).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from deid_ds.deidentification.ages_durations import Quantity, find_quantities, perturb_quantity
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.html_replace import Edit, SpanError, apply_all, locate
from deid_ds.deidentification.identifier_surrogates import NOTE_IDENTIFIERS, identifier_replacement
from deid_ds.deidentification.identifiers import (
    Identifier,
    find_identifiers,
    find_values,
    note_identifiers,
    resolve,
)
from deid_ds.deidentification.names import (
    RELATIVE_GIVEN,
    is_dictation_side,
    relative_cue,
    remember,
    remember_names,
    sex_cue,
)
from deid_ds.deidentification.other_views import Replacer, view_edits
from deid_ds.deidentification.overlap import NoteOriginals
from deid_ds.deidentification.places import remember_town
from deid_ds.deidentification.surrogates import DEFAULT_MASK, Replacement, mask, surrogate
from deid_ds.kb.normalize import fold_key
from deid_ds.segmentation.html_text import ParsedHtml

#: Between a postcode and its city: ``35000 RENNES``, ``RENNES (35000)``, ``35000, Rennes``.
_ZIP_THEN_CITY = re.compile(r"^[\s,\u00a0]{1,3}$")
_CITY_THEN_ZIP = re.compile(r"^[\s\u00a0]*\(\s*$")
#: Between a street and its town: spaces, a comma, a dash or a line break (a postcode is blanked out first).
_STREET_THEN_CITY = re.compile(r"^[\s,;\-–\u00a0]{1,12}$")
_STREET_TO_CITY = 40


@dataclass(frozen=True, slots=True)
class SpanIn:
    """A span to replace, as read from the spans table (``text`` optional: checked when present)."""

    label: str
    html_start: int
    html_end: int
    source: str | None = None
    text: str | None = None


@dataclass
class DocumentOutcome:
    """The new HTML and what changed, or the reason the note was refused."""

    html: str | None
    error: str | None = None
    audit: list[dict] = field(default_factory=list)
    per_label: dict[str, int] = field(default_factory=dict)
    fallbacks: dict[str, int] = field(default_factory=dict)
    #: The spans (text view, the eight labels) per label, and those masked per label and reason (``LABEL\treason``).
    spans: dict[str, int] = field(default_factory=dict)
    span_fallbacks: dict[str, int] = field(default_factory=dict)
    per_view: dict[str, int] = field(default_factory=dict)  # replacements outside the visible text, per view
    blanked: dict[str, int] = field(default_factory=dict)  # regions emptied, per kind (comment, script...)
    #: The direct identifiers found in the input note (compact value -> kind), for the residual-leak check.
    identifiers: dict[str, str] = field(default_factory=dict)


def _normalised(text: str) -> str:
    return " ".join(text.split())


def _dictation_initials(text: str, start: int, end: int) -> bool:
    """Whether the name span ``text[start:end]`` is one side of dictation initials (``SL/LL``: the
    guidelines make each side its own span), so that its surrogate is initials too, not a surname."""
    beside = text[max(0, start - 1) : start] + text[end : end + 1]
    return "/" in beside and is_dictation_side(text[start:end])


def _paired_cities(located: list, spans: Sequence[SpanIn], text: str) -> dict[int, str]:
    """For each ZIP span (by index), the text of the VILLE span written right next to it; for each STR span, the
    VILLE of its address (after it, with at most a postcode and punctuation between: ``12 rue X, 29200 Brest``),
    which its surrogate follows under ``--privacy dp``."""
    cities = [(located[i].text_start, located[i].text_end) for i, s in enumerate(spans) if s.label == "VILLE"]
    pairs: dict[int, str] = {}
    for i, span in enumerate(spans):
        if span.label != "ZIP":
            continue
        start, end = located[i].text_start, located[i].text_end
        for city_start, city_end in cities:
            if city_start >= end and _ZIP_THEN_CITY.match(text[end:city_start]):
                pairs[i] = text[city_start:city_end]
                break
            if city_end <= start and _CITY_THEN_ZIP.match(text[city_end:start]):
                pairs[i] = text[city_start:city_end]
                break
    zips = [(located[i].text_start, located[i].text_end) for i, s in enumerate(spans) if s.label == "ZIP"]
    for i, span in enumerate(spans):
        if span.label == "STR":
            city = _city_of_street(located[i].text_end, cities, zips, text)
            if city is not None:
                pairs[i] = city
    # a postcode written alone stands for the town it is written with elsewhere in the note
    towns = {_digits(text, located[i]): city for i, city in pairs.items() if spans[i].label == "ZIP"}
    for i, span in enumerate(spans):
        if span.label == "ZIP" and i not in pairs and _digits(text, located[i]) in towns:
            pairs[i] = towns[_digits(text, located[i])]
    return pairs


#: Between the two ends of a range, or a day said and its correction: ``du 8 au 10 mars``, ``8-10 mars``,
#: ``le 12 et le 14/03``, ``le douze non pardon le treize mars``.
_DATE_PAIR_GAP = re.compile(
    r"^\s*(?:[-–]|au|et|à|a|jusqu['’]au|(?:(?:non|pardon|plutôt|plutot|euh|enfin|je veux dire|ou),?\s*){1,3})"
    r"\s*(?:le\s*)?$",
    re.IGNORECASE,
)


def _paired_dates(located: list, spans: Sequence[SpanIn], text: str) -> dict[int, str]:
    """For each DATE span (by index), the DATE span just after it joined as a range or a correction: a day alone
    (``du [8] au [10 mars]``) is shifted as a day of that date's month."""
    dates = sorted((located[i].text_start, located[i].text_end, i) for i, s in enumerate(spans) if s.label == "DATE")
    pairs: dict[int, str] = {}
    for (_, end, i), (start, next_end, _) in itertools.pairwise(dates):
        if 0 <= start - end <= 40 and _DATE_PAIR_GAP.match(text[end:start]):
            pairs[i] = text[start:next_end]
    return pairs


def _city_of_street(end: int, cities: list, zips: list, text: str) -> str | None:
    """The VILLE span that ends the address a street ending at ``end`` starts, or None."""
    for city_start, city_end in sorted(cities):
        if city_start < end or city_start - end > _STREET_TO_CITY:
            continue
        between = text[end:city_start]
        for zip_start, zip_end in zips:  # the postcode between them, if any, read as punctuation
            if end <= zip_start and zip_end <= city_start:
                between = between.replace(text[zip_start:zip_end], " ", 1)
        return text[city_start:city_end] if _STREET_THEN_CITY.match(between) else None
    return None


def _alone(name: str) -> bool:
    """A name span of one word (or one hyphenated word): what a relative's given name alone looks like."""
    return bool(re.fullmatch(r"[^\W\d_]+(?:-[^\W\d_]+)*", name.strip()))


def _squeezed(name: str) -> str:
    return "".join(re.findall(r"[^\W\d_]+", name))


def _digits(text: str, where) -> str:
    return "".join(c for c in text[where.text_start : where.text_end] if c.isdigit())


#: Fallback of an identifier a span overlaps: its characters outside the span are masked.
IDENTIFIER_CUT = "identifier_cut_by_span->mask"


def _outside_spans(text: str, numbers: list[Identifier], located: Sequence) -> list[tuple[Identifier, bool]]:
    """The identifiers' parts outside every span (module docstring), each with whether it was cut."""
    spans = sorted((w.text_start, w.text_end) for w in located)
    out: list[tuple[Identifier, bool]] = []
    for number in numbers:
        pieces, cursor = [], number.start
        for start, end in spans:
            if end <= cursor or start >= number.end:
                continue
            if start > cursor:
                pieces.append((cursor, start))
            cursor = max(cursor, end)
        if cursor < number.end:
            pieces.append((cursor, number.end))
        if pieces == [(number.start, number.end)]:
            out.append((number, False))
            continue
        for start, end in pieces:
            while start < end and not text[start].isalnum():
                start += 1
            while end > start and not text[end - 1].isalnum():
                end -= 1
            if end > start:
                out.append((Identifier(start, end, number.kind, number.how), True))
    return out


def _quantities(text: str, located: Sequence, numbers: list[tuple[Identifier, bool]]) -> list[Quantity]:
    """The ages and durations of the text (:mod:`.ages_durations`) that no span or identifier covers."""
    taken = sorted([(w.text_start, w.text_end) for w in located] + [(n.start, n.end) for n, _ in numbers])
    return [q for q in find_quantities(text) if not any(s < q.end and q.start < e for s, e in taken)]


def _quantity_edit(parsed: ParsedHtml, ctx: Context, q: Quantity) -> Edit:
    """An age or duration's surrogate in place of its number and unit word (or of its number alone, when the word
    is in another element of the HTML)."""
    written = perturb_quantity(ctx, q)
    try:
        return Edit(locate(parsed, *parsed.html_span(q.start, q.end)), written)
    except SpanError:
        number_end = q.end - len(q.word) - len(q.sep)
        digits = re.match(r"\d+", written)
        return Edit(locate(parsed, *parsed.html_span(q.start, number_end)), digits.group() if digits else written)


def deidentify_document(
    parsed: ParsedHtml,
    spans: Sequence[SpanIn],
    ctx: Context,
    mode: str,
    *,
    mask_format: str = DEFAULT_MASK,
    audit_originals: bool = False,
    hidden: str = "deidentify",
    scope_entities: Sequence[tuple[str, str]] = (),
    identifiers: bool = True,
) -> DocumentOutcome:
    """Replace every span of one parsed note, then its other views under the ``hidden`` policy, and its
    direct identifiers unless ``identifiers`` is false (module docstring); ``mode`` is ``mask`` or
    ``surrogate``."""
    try:
        located = [locate(parsed, span.html_start, span.html_end) for span in spans]
    except SpanError as error:
        return DocumentOutcome(None, str(error))
    text = parsed.text
    for span, where in zip(spans, located):
        if span.text is not None and _normalised(span.text) != _normalised(text[where.text_start : where.text_end]):
            return DocumentOutcome(
                None, "span text does not match the note (spans made on another version of the notes?)"
            )
    found = find_identifiers(text)
    known = note_identifiers(parsed, found)
    ctx.memory[NOTE_IDENTIFIERS] = frozenset(known)
    numbers = _outside_spans(text, resolve([*found, *find_values(text, known)]), located) if identifiers else []
    quantities = _quantities(text, located, numbers) if mode == "surrogate" and ctx.privacy.is_dp else []
    if mode == "surrogate":
        # No surrogate is one of the note's entities, nor one of its patient's other notes' (``scope_entities``,
        # the same in each of them: a patient's surrogates stay the same from note to note).
        mine = [(s.label, text[w.text_start : w.text_end]) for s, w in zip(spans, located)]
        ctx.note_originals = NoteOriginals.of_note(tuple(scope_entities), mine)
        # the names of all the patient's notes first, in the same order in each: an initial (``J. DUPONT``)
        # then stands for the same given name (``Jean DUPONT`` of another note) in every note of the patient
        remember_names(ctx, scope_entities)
        for span, where in zip(spans, located):
            if span.label in ("PATIENT", "DOCTOR"):
                start, end = where.text_start, where.text_end
                cue = sex_cue(text[max(0, start - 40) : start], text[end : end + 20])
                if _alone(text[start:end]) and relative_cue(text[max(0, start - 60) : start], text[end : end + 30]):
                    key = RELATIVE_GIVEN.format(label=span.label, key=fold_key(_squeezed(text[start:end])))
                    ctx.memory[key] = True
                remember(ctx, text[start:end], span.label, cue)
            elif span.label == "VILLE":
                remember_town(ctx, text[where.text_start : where.text_end])
        pairs = _paired_cities(located, spans, text)
        paired_dates = _paired_dates(located, spans, text)
    replacements: list[Replacement] = []
    seen: dict[tuple, Replacement] = {}  # a note repeats its entities (letterhead, signature): one draw each
    for i, (span, where) in enumerate(zip(spans, located)):
        original = text[where.text_start : where.text_end]
        if mode == "mask":
            replacements.append(mask(span.label, mask_format))
            continue
        initials = span.label in ("PATIENT", "DOCTOR") and _dictation_initials(text, where.text_start, where.text_end)
        key = (span.label, original, pairs.get(i), initials, paired_dates.get(i))
        if key not in seen:
            seen[key] = surrogate(ctx, span.label, original, pairs.get(i), mask_format, initials, paired_dates.get(i))
        replacements.append(seen[key])
    originals = [text[where.text_start : where.text_end] for where in located]
    replacer = Replacer(
        ((s.label, o, r.text) for s, o, r in zip(spans, originals, replacements)),
        ctx,
        mode,
        mask_format,
        known if identifiers else None,
    )
    others = view_edits(parsed, replacer, hidden)
    number_edits = []
    try:
        for number, cut in numbers:
            try:
                where = locate(parsed, *parsed.html_span(number.start, number.end))
            except SpanError:
                return DocumentOutcome(None, f"a direct identifier ({number.kind}) cannot be replaced safely")
            original = text[number.start : number.end]
            written = (
                mask(number.kind, mask_format).text
                if cut
                else identifier_replacement(ctx, number.kind, original, mode, mask_format)
            )
            number_edits.append(Edit(where, written))
        quantity_edits = [_quantity_edit(parsed, ctx, q) for q in quantities]
        html, ranges, other_ranges = apply_all(
            parsed,
            [*(Edit(where, r.text) for where, r in zip(located, replacements)), *number_edits, *quantity_edits],
            [(e.start, e.end, e.written) for e in others],
        )
    except SpanError as error:
        return DocumentOutcome(None, str(error))
    outcome = DocumentOutcome(html, identifiers=known)
    for span, where, replacement, (out_start, out_end) in zip(spans, located, replacements, ranges):
        row = {
            "label": span.label,
            "source": span.source,
            "html_start": span.html_start,
            "html_end": span.html_end,
            "out_start": out_start,
            "out_end": out_end,
            "replacement": replacement.text,
            "replacement_length": len(replacement.text),
            "fallback": replacement.fallback,
            "view": "text",
        }
        if audit_originals:
            row["original"] = text[where.text_start : where.text_end]
        outcome.audit.append(row)
        outcome.per_label[span.label] = outcome.per_label.get(span.label, 0) + 1
        outcome.spans[span.label] = outcome.spans.get(span.label, 0) + 1
        if replacement.fallback:
            outcome.fallbacks[replacement.fallback] = outcome.fallbacks.get(replacement.fallback, 0) + 1
            kind = f"{span.label}\t{replacement.fallback}"
            outcome.span_fallbacks[kind] = outcome.span_fallbacks.get(kind, 0) + 1
    # what deidentify found itself in the text: direct identifiers, then (dp) ages and durations
    found = [
        (number.kind, f"identifier:{number.how}", number.start, number.end, IDENTIFIER_CUT if cut else None)
        for number, cut in numbers
    ] + [(q.label, f"dp:{q.label.lower()}", q.start, q.end, None) for q in quantities]
    for (label, source, start, end, fallback), edit, (out_start, out_end) in zip(
        found, [*number_edits, *quantity_edits], ranges[len(spans) :]
    ):
        row = {
            "label": label,
            "source": source,
            "html_start": edit.span.html_start,
            "html_end": edit.span.html_end,
            "out_start": out_start,
            "out_end": out_end,
            "replacement": edit.text,
            "replacement_length": len(edit.text),
            "fallback": fallback,
            "view": "text",
        }
        if audit_originals:
            row["original"] = text[start:end]
        outcome.audit.append(row)
        outcome.per_label[label] = outcome.per_label.get(label, 0) + 1
        if fallback:
            outcome.fallbacks[fallback] = outcome.fallbacks.get(fallback, 0) + 1
    for edit, (out_start, out_end) in zip(others, other_ranges):
        row = {
            "label": edit.label,
            "source": edit.source,
            "html_start": edit.start,
            "html_end": edit.end,
            "out_start": out_start,
            "out_end": out_end,
            "replacement": edit.replacement,
            "replacement_length": len(edit.replacement),
            "fallback": None,
            "view": edit.view,
        }
        if audit_originals:
            row["original"] = edit.original
        outcome.audit.append(row)
        if edit.label is None:
            outcome.blanked[edit.kind] = outcome.blanked.get(edit.kind, 0) + 1
        else:
            outcome.per_label[edit.label] = outcome.per_label.get(edit.label, 0) + 1
            outcome.per_view[edit.view] = outcome.per_view.get(edit.view, 0) + 1
    return outcome
