"""De-identifying the views of a note besides its visible text (``--hidden``).

The spans to replace are offsets in the visible text; a name can also sit in the ``<title>``, a comment,
``<meta content>``, an ``alt``/``title`` attribute, a ``mailto:`` link, a ``data-*`` attribute, a script.
After the spans, every region outside the visible text (:mod:`deid_ds.deidentification.regions`) is
handled by kind, with the default policy ``deidentify``:

* **blanked** (content removed, the delimiters kept): comments and ``<script>`` content. A comment can
  hold anything (commented-out HTML, a dictation header) and a script hides values behind string escapes
  no search reads reliably; neither is ever shown to a reader, so removing them loses nothing visible;
* **searched and replaced**: ``<title>``, ``<style>``, ``<template>`` content, attribute values, junk in end
  tags, the doctype and processing instructions, read decoded (references, soft hyphens and zero-width
  characters dropped, percent-encoding read back: ``Kerdr%61on``) and folded (case, accents, decomposed
  NFD accents and fullwidth letters: :func:`deid_ds.kb.normalize.fold_mapped`). The text of a base64
  ``data:`` URL is decoded, searched the same way and, when something is replaced in it, encoded again
  (:mod:`deid_ds.deidentification.spellings`); a payload that is not text (an image) is left alone. What is
  searched for: (1) every text a span covered
  in the visible text, whole or, for a name, word by word, replaced by the *same* replacement as in the
  text; (2) the patient's own metadata values (what the residual-leak check looks for); (3) the e-mail,
  phone and date patterns of the weak labeller (:mod:`deid_ds.label`), which need no knowledge base;
  (4) the direct identifiers (:mod:`deid_ds.deidentification.identifiers`: NIR, IPP, RPPS...), by their
  cues and checksums and wherever a value the note holds is written again.
  The replacement is escaped for where it is written (an unquoted attribute value keeps its one word);
* **left alone**: tag and attribute *names* (renaming them would change the document's structure; the
  leak check still reads them and reports what it finds there).

``blank`` also blanks ``<title>``, ``<style>`` and ``<template>`` content (attribute values are still
searched: blanking them would break links and images); ``keep`` leaves every view as it was (the
residual-leak check still reads them all). Pure functions apart from the pools the surrogates read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from typing import NamedTuple
from urllib.parse import quote

from deid_ds.deidentification.context import Context
from deid_ds.deidentification.identifier_surrogates import identifier_replacement
from deid_ds.deidentification.identifiers import KINDS, Identifier, find_identifiers, find_values, resolve
from deid_ds.deidentification.leaks import PHONE_RUN, national_number, needles_for
from deid_ds.deidentification.regions import Decoded, Region, decode, regions
from deid_ds.deidentification.spellings import data_url_payloads, encode_payload, percent_decoded
from deid_ds.deidentification.surrogates import DEFAULT_MASK, mask, surrogate
from deid_ds.kb.normalize import fold_key, fold_mapped, name_particles
from deid_ds.segmentation.html_text import ParsedHtml

HIDDEN_POLICIES = ("deidentify", "blank", "keep")
#: Kinds of region whose content ``deidentify`` removes rather than searches (module docstring).
BLANKED = frozenset({"comment", "script"})
#: Kinds of hidden region ``blank`` also removes.
BLANKED_TOO = frozenset({"title", "style", "template"})
#: Kinds searched and replaced (the others are read by the leak check only).
SEARCHED = frozenset({"title", "style", "template", "attribute", "unquoted", "end-tag", "declaration", "pi"})
#: Metadata fields of :func:`deid_ds.deidentification.leaks.needles_for` and the label of their entities.
_FIELD_LABELS = {
    "firstname": "PATIENT",
    "lastname": "PATIENT",
    "birthdate": "DATE",
    "email": "EMAIL",
    "address": "STR",
    "zip": "ZIP",
    "city": "VILLE",
}
_NAME_LABELS = ("PATIENT", "DOCTOR")
_WORD = re.compile(r"[^\W\d_]+")
_MIN_LENGTH = 3
_UNQUOTED_UNSAFE = re.compile(r"[\s=`]")


@dataclass(frozen=True, slots=True)
class ViewEdit:
    """One change outside the visible text: ``html[start:end]`` becomes ``written`` (already escaped)."""

    start: int
    end: int
    written: str
    view: str
    kind: str
    label: str | None  # None: blanked content
    source: str  # what found it: span, metadata, a pattern, or blank
    original: str  # decoded, for the audit with --audit-originals only
    replacement: str  # unescaped


@dataclass(frozen=True, slots=True)
class _Match:
    start: int  # decoded offsets
    end: int
    label: str
    source: str
    replacement: str | None = None  # known already (a span's); else drawn from the matched text


@lru_cache(maxsize=4096)
def _phrase(key: str) -> re.Pattern[str]:
    """A folded value as a whole-word regex, any run of spaces/hyphens/apostrophes matching any other.

    Cached: a note has dozens of values, mostly the same from note to note (its doctors, its town), and
    compiling them was most of the cost of searching the other views. The pattern reads folded text, where
    ``’`` is ``'`` (:func:`~deid_ds.kb.normalize.fold`): without it, the class compiles in a third of the time
    (docs/benchmarks.md, *deidentify*)."""
    words = [re.escape(w) for w in re.split(r"[\s\-'’]+", key) if w]
    return re.compile(r"(?<![\w])" + r"[\s\-']+".join(words) + r"(?![\w])")


def _first_word(key: str) -> str:
    return re.split(r"[\s\-'’]+", key, maxsplit=1)[0]


def _particle_units(key: str, particles: frozenset[str]) -> list[str]:
    """The surnames with their particles in a folded name (``yann le ny`` → ``le ny``, ``de la tour``)."""
    words = list(_WORD.finditer(key))
    units = []
    for i, word in enumerate(words):
        if word.group() not in particles or (i and words[i - 1].group() in particles):
            continue
        j = i
        while j < len(words) and words[j].group() in particles:
            j += 1
        if j < len(words):
            units.append(key[word.start() : words[j].end()])
    return units


class Replacer:
    """What one note's other views are searched for, and with what each match is replaced."""

    def __init__(
        self,
        known: Iterable[tuple[str, str, str]],
        ctx: Context,
        mode: str,
        mask_format: str = DEFAULT_MASK,
        identifiers: Mapping[str, str] | None = None,
    ) -> None:
        """``known``: ``(label, original, replacement)`` of the note's spans, as replaced in its text;
        ``identifiers``: the note's direct identifiers (compact value -> kind) to replace too, or ``None``
        to keep them (``--keep-identifiers``)."""
        self.ctx, self.mode, self.mask_format = ctx, mode, mask_format
        self.identifiers = identifiers
        self.cache: dict[tuple[str, str], str] = {}
        particles = name_particles()
        phrases: dict[str, tuple[str, str | None, str]] = {}  # folded text -> label, replacement, source
        self.words: dict[str, tuple[str, str | None, str]] = {}  # folded word -> label, replacement, source
        for label, original, replacement in known:
            key = fold_key(original)
            if len(key.replace(" ", "")) >= _MIN_LENGTH and key not in phrases:
                phrases[key] = (label, replacement, "span")
            if label in _NAME_LABELS:
                for word in _WORD.findall(key):
                    if len(word) >= _MIN_LENGTH and word not in particles:
                        self.words.setdefault(word, (label, None, "span"))
                for unit in _particle_units(key, particles):  # "le ny" of "Yann LE NY": too short word by word
                    phrases.setdefault(unit, (label, None, "span"))
        for value in (ctx.patient.lastname, ctx.patient.firstname):
            key = fold_key(value or "")
            if len(key.replace(" ", "")) >= _MIN_LENGTH:
                phrases.setdefault(key, ("PATIENT", None, "metadata"))
        self.phrases = [
            (key, _first_word(key), *hit) for key, hit in sorted(phrases.items(), key=lambda item: -len(item[0]))
        ]
        needles = needles_for(ctx.patient)
        for parts in needles.names.values():
            for part in parts:
                self.words.setdefault(part, ("PATIENT", None, "metadata"))
        self.patterns = [(name, pattern, _FIELD_LABELS[name]) for name, pattern in needles.patterns.items()]
        self.needles = needles
        self.phone = needles.phone
        self.any_word = True  # whether a region may hold one of :attr:`words` (:meth:`narrowed`)

    def replacement(self, label: str, original: str) -> str:
        """The same replacement the text would get for ``original`` labelled ``label`` (cached per note)."""
        key = (label, fold_key(original))
        if key not in self.cache:
            if label in KINDS:
                self.cache[key] = identifier_replacement(self.ctx, label, original, self.mode, self.mask_format)
            elif self.mode == "mask":
                self.cache[key] = mask(label, self.mask_format).text
            else:
                paired = self.ctx.patient.city if label == "ZIP" else None
                self.cache[key] = surrogate(self.ctx, label, original, paired).text
        return self.cache[key]

    def narrowed(self, texts: Sequence[str], foldings: Sequence[tuple[str, list[int] | None]]) -> Replacer:
        """This replacer with only what ``texts`` (every text :meth:`matches` will read in one note, ``foldings``
        their :func:`~deid_ds.kb.normalize.fold_mapped`) can match, tested once on all of them joined.

        A note's regions are dozens of short texts (``right``, ``100%``, a class name) and most hold none of its
        values: each phrase, the name words, each pattern's hint, the patient's phone and each direct identifier
        tested once on the joined texts instead of once per region. Exact: what a region holds, the joined texts
        hold (a NUL between two texts ends every word, number and phone run, and no value holds one), so only
        what no region can match is left out, and what is kept is tried in the same order."""
        joined = "\x00".join(folded for folded, _ in foldings)
        narrow = copy(self)  # the same replacements (its cache is shared)
        narrow.phrases = [phrase for phrase in self.phrases if phrase[1] in joined]
        narrow.any_word = not self.words.keys().isdisjoint(_WORD.findall(joined))
        narrow.patterns = [p for p in self.patterns if self.needles.searched(p[0], joined)]
        if self.phone and not _holds_phone(self.phone, "\x00".join(texts)):
            narrow.phone = None
        if self.identifiers:
            raw = "\x00".join(texts)
            narrow.identifiers = {v: k for v, k in self.identifiers.items() if find_values(raw, {v: k})}
        return narrow

    def matches(self, text: str, folding: tuple[str, list[int] | None] | None = None) -> list[_Match]:
        """Non-overlapping matches in a decoded region (longest first where they overlap); ``folding``: its
        :func:`~deid_ds.kb.normalize.fold_mapped`, when already made."""
        folded, index = folding or fold_mapped(text)  # index: None where folding kept every offset
        found: list[_Match] = []
        for key, first, label, replacement, source in self.phrases:
            if first in folded:  # cheap test first: most regions hold none of the note's values
                found += [_Match(m.start(), m.end(), label, source, replacement) for m in _phrase(key).finditer(folded)]
        for m in _WORD.finditer(folded) if self.any_word else ():
            hit = self.words.get(m.group())
            if hit is not None:
                found.append(_Match(m.start(), m.end(), hit[0], hit[2], hit[1]))
        for name, pattern, label in self.patterns:
            if self.needles.searched(name, folded):
                found += [_Match(m.start(), m.end(), label, "metadata") for m in pattern.finditer(folded)]
        if index is not None:  # back to the offsets of ``text`` (a dropped accent stays with its letter)
            found = [_Match(index[m.start], index[m.end], m.label, m.source, m.replacement) for m in found]
        if self.phone:
            for m in PHONE_RUN.finditer(text):
                if _is_phone(self.phone, m.group()):
                    found.append(_Match(m.start(), m.end(), "PHONE", "metadata"))
        patterns, numbers = _text_matches(text)
        found += patterns
        if self.identifiers is not None:
            numbers = resolve([*numbers, *find_values(text, self.identifiers)])
            found += [_Match(n.start, n.end, n.kind, "identifier") for n in numbers]
        found.sort(key=lambda m: (m.start, -(m.end - m.start)))
        kept: list[_Match] = []
        for match in found:
            if not kept or match.start >= kept[-1].end:
                kept.append(match)
        return kept


def _is_phone(phone: str, run: str) -> bool:
    """Whether a run of :data:`~deid_ds.deidentification.leaks.PHONE_RUN` is the patient's ``phone``."""
    return phone in national_number("".join(c for c in run if c.isdigit()))


def _holds_phone(phone: str, text: str) -> bool:
    return any(_is_phone(phone, m.group()) for m in PHONE_RUN.finditer(text))


@lru_cache(maxsize=4096)
def _text_matches(text: str) -> tuple[tuple[_Match, ...], tuple[Identifier, ...]]:
    """What a region's text holds whatever the note: the weak labeller's e-mail, phone and date patterns, and
    the direct identifiers found by their cues and checksums.

    Cached: the same attribute values, titles and style sheets (``right``, ``100%``, a template's ``<style>``)
    come back in note after note (2 % of the ``document`` stage: docs/benchmarks.md, *deidentify*)."""
    from deid_ds.label.dates import find_dates
    from deid_ds.label.emails import find_emails
    from deid_ds.label.phones import find_phones

    patterns = tuple(
        _Match(c.start, c.end, c.label, c.source)
        for finder in (find_emails, find_phones, find_dates)
        for c in finder(text)
        if not c.needs_context
    )
    return patterns, tuple(find_identifiers(text))


def _written(text: str, kind: str) -> str:
    """``text`` escaped for the place it is written (an unquoted attribute value stays one word)."""
    if kind == "unquoted":
        return _UNQUOTED_UNSAFE.sub(lambda m: f"&#{ord(m.group())};", escape(text, quote=True))
    return escape(text, quote=kind not in ("title", "style", "template"))


def _replaced(text: str, replacer: Replacer, folding=None) -> tuple[str, list[_Match]]:
    """``text`` with every match of ``replacer`` replaced, and the matches."""
    matches = replacer.matches(text, folding)
    out, cursor = [], 0
    for match in matches:
        original = text[match.start : match.end]
        replacement = (
            match.replacement if match.replacement is not None else replacer.replacement(match.label, original)
        )
        out += [text[cursor : match.start], replacement]
        cursor = match.end
    out.append(text[cursor:])
    return "".join(out), matches


class _Read(NamedTuple):
    """A region to search, read: its decoded text, the text of its ``data:`` URLs, and the text searched (its
    ``%XX`` read back; ``None`` for an embedded file). A named tuple: a note reads dozens (a frozen dataclass
    cost 0.8 % of the command, its ``__init__`` alone)."""

    region: Region
    decoded: Decoded
    payloads: list[tuple[int, int, str]]
    encoded: object  # the percent-decoded text (spellings.Mapped) or None
    text: str | None

    def texts(self) -> list[str]:
        return [payload for _, _, payload in self.payloads] + ([self.text] if self.text is not None else [])


def _read(html: str, region: Region) -> _Read:
    decoded: Decoded = decode(html, region.start, region.end)
    payloads = data_url_payloads(decoded.text)
    if region.view == "attribute" and decoded.text.lstrip().lower().startswith("data:"):
        return _Read(region, decoded, payloads, None, None)  # an embedded file: its text searched, its bytes no text
    encoded = percent_decoded(decoded.text)  # a URL's %XX read back, and replaced encoded
    return _Read(region, decoded, payloads, encoded, encoded.text if encoded is not None else decoded.text)


def _payload_edits(read: _Read, replacer: Replacer, foldings) -> list[ViewEdit]:
    """The base64 ``data:`` URLs of a region whose text holds something to replace, encoded again."""
    edits = []
    decoded, region = read.decoded, read.region
    for (start, end, payload), folding in zip(read.payloads, foldings):
        new, matches = _replaced(payload, replacer, folding)
        if matches:
            source_start, source_end = decoded.source(start, end)
            first = matches[0]
            edits.append(
                ViewEdit(
                    source_start,
                    source_end,
                    encode_payload(new, decoded.text[start:end]),
                    region.view,
                    region.kind,
                    first.label,
                    f"view:{first.source}",
                    payload,
                    new,
                )
            )
    return edits


def _search(read: _Read, replacer: Replacer, foldings) -> list[ViewEdit]:
    """The edits of one region read (``foldings``: those of :meth:`_Read.texts`, in order)."""
    edits = _payload_edits(read, replacer, foldings)
    if read.text is None:
        return edits
    text, decoded, encoded, region = read.text, read.decoded, read.encoded, read.region
    for match in replacer.matches(text, foldings[-1]):
        original = text[match.start : match.end]
        replacement = (
            match.replacement if match.replacement is not None else replacer.replacement(match.label, original)
        )
        if encoded is not None:
            start, end = decoded.source(*encoded.source(match.start, match.end))
            written = _written(quote(replacement, safe="@.-_~'"), region.kind)
        else:
            start, end = decoded.source(match.start, match.end)
            written = _written(replacement, region.kind)
        if any(start < e.end and e.start < end for e in edits):
            continue  # inside a data: URL already rewritten
        edits.append(
            ViewEdit(
                start,
                end,
                written,
                region.view,
                region.kind,
                match.label,
                f"view:{match.source}",
                original,
                replacement,
            )
        )
    return edits


def _foldings(texts: list[str]) -> list[tuple[str, list[int] | None]]:
    """:func:`~deid_ds.kb.normalize.fold_mapped` of each text: one fold of them all, cut, where folding keeps every
    offset (nearly always); else each text folded on its own."""
    folded, index = fold_mapped("\x00".join(texts))
    if index is not None:
        return [fold_mapped(text) for text in texts]
    out, at = [], 0
    for text in texts:
        out.append((folded[at : at + len(text)], None))
        at += len(text) + 1
    return out


def view_edits(parsed: ParsedHtml, replacer: Replacer, policy: str = "deidentify") -> list[ViewEdit]:
    """The changes to make outside the visible text of ``parsed`` under ``policy`` (module docstring).

    The regions searched are read first, then searched with what their texts can hold (:meth:`Replacer.narrowed`).
    """
    if policy == "keep":
        return []
    html = parsed.html
    steps: list[ViewEdit | _Read] = []  # in the order of the regions
    for region in regions(parsed, tags=False):  # a tag's name is never rewritten (module docstring)
        if region.kind in BLANKED or (policy == "blank" and region.kind in BLANKED_TOO):
            if html[region.start : region.end].strip():
                steps.append(
                    ViewEdit(
                        region.start,
                        region.end,
                        "",
                        region.view,
                        region.kind,
                        None,
                        "view:blank",
                        decode(html, region.start, region.end).text,
                        "",
                    )
                )
        elif region.kind in SEARCHED:
            steps.append(_read(html, region))
    reads = [step for step in steps if isinstance(step, _Read)]
    texts = [text for read in reads for text in read.texts()]
    foldings = _foldings(texts)
    narrow = replacer.narrowed(texts, foldings) if texts else replacer
    edits: list[ViewEdit] = []
    at = 0
    for step in steps:
        if isinstance(step, ViewEdit):
            edits.append(step)
            continue
        count = len(step.payloads) + (step.text is not None)
        edits += _search(step, narrow, foldings[at : at + count])
        at += count
    return edits
