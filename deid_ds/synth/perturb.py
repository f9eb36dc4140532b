"""Text perturbations that carry entity offsets: the noise of scanned, re-typed and badly exported notes.

Real notes reach a warehouse through OCR, copy-paste and old exports: ``l``/``1``/``I`` and ``O``/``0``
confused, ``rn`` read ``m``, accents lost or mangled (``é`` -> ``e``, ``è``, ``Ã©``), a space lost between
two words or slipped inside one, a word cut by a hyphen at a line end (``Ker-`` / ``draon``), a line
typed in capitals or all in lower case, punctuation dropped. A tagger trained and measured only on clean
text meets none of that; these functions write it into a text whose entities are known, and carry the
entities along: the spans returned cover exactly the perturbed entities.

How the offsets stay exact: every perturbation is planned as an :class:`Edit` (replace ``text[start:end]``
by ``replacement``) on the original text, edits never overlap, and no edit crosses an entity boundary (an
edit lies wholly inside an entity or wholly outside). A boundary then moves by the length changes of the
edits before it, which :func:`map_offset` adds up.

The rules at entity boundaries (so that labels never merge wrongly):

* a space touching an entity (just before its first character or just after its last) is never lost:
  an entity never runs into its neighbour, so a tokenizer never has to give one token two labels;
  a space between two words of the same entity may be lost (the entity then reads ``JeanDUPONT``);
* nothing is inserted at a boundary: an inserted space or line-end hyphen goes strictly inside a word;
* punctuation is dropped outside entities only (a date or a phone without its separators is another
  entity, not a noisy one); every other perturbation may change an entity's own characters.

``protected`` ranges (in HTML: tags, character references, ``<head>``/``<style>``/``<script>``) are
never touched: no edit covers one of their characters, a space beside one is never lost and nothing is
inserted against one (a tag stays where it was in the words around it). Everything is drawn from the
``random.Random`` given, so the same seed gives the same perturbation.
"""

from __future__ import annotations

import random
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Look-alike characters a recognition engine confuses (one character read as another, or two).
CONFUSIONS: dict[str, tuple[str, ...]] = {
    "l": ("1", "I"),
    "1": ("l", "I"),
    "I": ("l", "1"),
    "i": ("l",),
    "O": ("0",),
    "0": ("O",),
    "o": ("0",),
    "m": ("rn",),
    "e": ("c",),
    "c": ("e",),
    "S": ("5",),
    "5": ("S",),
    "B": ("8",),
    "8": ("B",),
    "h": ("b",),
    "u": ("v",),
    "n": ("ri",),
}
#: Two characters read as one.
PAIR_CONFUSIONS: dict[str, str] = {"rn": "m", "cl": "d", "vv": "w"}
#: Accented letters written with the wrong accent.
WRONG_ACCENTS: dict[str, str] = {
    "é": "è",
    "è": "é",
    "ê": "é",
    "à": "a",
    "ç": "c",
    "É": "E",
    "È": "E",
    "ô": "o",
    "î": "i",
    "ï": "i",
    "ë": "e",
    "ù": "u",
    "û": "u",
}
PUNCTUATION = frozenset(",;:.!?")


@dataclass(frozen=True)
class Rates:
    """How often each perturbation strikes, per occasion (a character, a space, a word or a line)."""

    confusion: float = 0.0  # per character with a look-alike (CONFUSIONS, PAIR_CONFUSIONS)
    accent: float = 0.0  # per accented letter: dropped, wrong accent, or UTF-8 read as Latin-1 (é -> Ã©)
    space_lost: float = 0.0  # per single space between two words
    space_added: float = 0.0  # per word of 4 letters or more: a space inside it
    hyphen_cut: float = 0.0  # per word of 6 letters or more: cut by a hyphen and a line break
    line_case: float = 0.0  # per line: all capitals or all lower case (half each)
    punctuation: float = 0.0  # per punctuation mark outside entities: dropped


#: ``--text-noise LEVEL`` (synth) and ``--augment-level`` (train): 0 changes nothing; 1 a lightly noisy
#: scan; 2 a poor one; 3 a very poor one (several errors per sentence).
LEVELS: dict[int, Rates] = {
    0: Rates(),
    1: Rates(0.005, 0.05, 0.01, 0.003, 0.005, 0.02, 0.05),
    2: Rates(0.015, 0.15, 0.03, 0.01, 0.015, 0.05, 0.15),
    3: Rates(0.04, 0.35, 0.08, 0.025, 0.03, 0.12, 0.35),
}


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``text[start:end]`` by ``replacement`` (``start == end``: an insertion)."""

    start: int
    end: int
    replacement: str


def rates_for(level: int) -> Rates:
    if level not in LEVELS:
        raise ValueError(f"noise level must be one of {', '.join(map(str, LEVELS))}")
    return LEVELS[level]


class _Planner:
    """Chooses non-overlapping edits under the boundary rules of the module docstring."""

    def __init__(
        self, text: str, spans: Iterable[tuple[int, int]], protected: Iterable[tuple[int, int]], rng: random.Random
    ) -> None:
        self.text, self.rng = text, rng
        self.used = bytearray(len(text))  # 1: protected or already edited
        for start, end in protected:
            self.used[max(0, start) : min(len(text), end)] = b"\x01" * max(0, min(len(text), end) - max(0, start))
        self.starts: set[int] = set()
        self.ends: set[int] = set()
        self.inside = bytearray(len(text))  # 1: the character belongs to an entity
        for start, end in spans:
            self.starts.add(start)
            self.ends.add(end)
            self.inside[start:end] = b"\x01" * (end - start)
        self.boundaries = self.starts | self.ends
        self.edits: list[Edit] = []
        self.insertions: set[int] = set()

    def free(self, start: int, end: int) -> bool:
        """Nothing protected or edited in ``[start, end)``, and no insertion strictly inside it (an insertion
        needs its two neighbours free)."""
        if not (0 <= start and end <= len(self.text)):
            return False
        if start == end:
            return start not in self.insertions and not any(self.used[max(0, start - 1) : start + 1])
        return not any(self.used[start:end]) and not any(start < p < end for p in self.insertions)

    def crosses(self, start: int, end: int) -> bool:
        """Whether an edit of ``[start, end)`` would straddle an entity boundary (or insert at one)."""
        if start == end:
            return start in self.boundaries
        return any(position in self.boundaries for position in range(start + 1, end))

    def add(self, start: int, end: int, replacement: str) -> bool:
        if not self.free(start, end) or self.crosses(start, end):
            return False
        self.used[start:end] = b"\x01" * (end - start)
        if start == end:
            self.insertions.add(start)
        self.edits.append(Edit(start, end, replacement))
        return True

    def word_char(self, position: int) -> bool:
        """A letter or digit of the text that nothing protects."""
        return 0 <= position < len(self.text) and self.text[position].isalnum() and not self.used[position]


def plan_edits(
    text: str,
    spans: Sequence[tuple[int, int]],
    rates: Rates,
    rng: random.Random,
    *,
    protected: Sequence[tuple[int, int]] = (),
    line_break: str = "\n",
) -> list[Edit]:
    """The edits that perturb ``text`` at ``rates``, sorted, none crossing a span of ``spans``.

    ``line_break`` is what a line-end hyphen cut inserts after the hyphen (``"\\n"`` in plain text,
    ``"<br>"`` in HTML, where a source newline would read as a space).
    """
    plan = _Planner(text, spans, protected, rng)
    if rates.line_case:
        _line_case(plan, rates.line_case)
    if rates.hyphen_cut or rates.space_added:
        _inside_words(plan, rates, line_break)
    if rates.space_lost:
        _lost_spaces(plan, rates.space_lost)
    if rates.accent or rates.confusion or rates.punctuation:
        _characters(plan, rates)
    return sorted(plan.edits, key=lambda edit: (edit.start, edit.end))


def _line_case(plan: _Planner, rate: float) -> None:
    text, rng = plan.text, plan.rng
    position = 0
    for line in text.split("\n"):
        start, position = position, position + len(line) + 1
        if not line.strip() or rng.random() >= rate:
            continue
        change = str.upper if rng.random() < 0.5 else str.lower
        for offset, char in enumerate(line, start):
            changed = change(char)
            if changed != char and len(changed) == 1 and not plan.used[offset]:
                plan.add(offset, offset + 1, changed)


_WORD = re.compile(r"[^\W\d_]+")  # letters only: numbers are not cut nor split


def _inside_words(plan: _Planner, rates: Rates, line_break: str) -> None:
    text, rng = plan.text, plan.rng
    for match in _WORD.finditer(text):
        word_start, word_end = match.span()
        length = word_end - word_start
        if length >= 6 and rng.random() < rates.hyphen_cut:
            cut = rng.randrange(word_start + 2, word_end - 2)
            if plan.word_char(cut - 1) and plan.word_char(cut):
                plan.add(cut, cut, "-" + line_break)
                continue
        if length >= 4 and rng.random() < rates.space_added:
            cut = rng.randrange(word_start + 1, word_end)
            if plan.word_char(cut - 1) and plan.word_char(cut):
                plan.add(cut, cut, " ")


def _lost_spaces(plan: _Planner, rate: float) -> None:
    text, rng = plan.text, plan.rng
    for position, char in enumerate(text):
        if char != " " or rng.random() >= rate:
            continue
        # a single space between two words, touching no entity boundary (the module's rule)
        if position in plan.ends or position + 1 in plan.starts:
            continue
        if plan.word_char(position - 1) and plan.word_char(position + 1):
            plan.add(position, position + 1, "")


def _characters(plan: _Planner, rates: Rates) -> None:
    text, rng = plan.text, plan.rng
    for position, char in enumerate(text):
        if plan.used[position]:
            continue
        if char in PUNCTUATION:
            if rates.punctuation and not plan.inside[position] and rng.random() < rates.punctuation:
                plan.add(position, position + 1, "")
            continue
        if not char.isalpha() and not char.isdigit():
            continue
        if ord(char) > 127 and unicodedata.decomposition(char)[:1] not in ("", "<"):
            if rates.accent and rng.random() < rates.accent:
                plan.add(position, position + 1, _mangled_accent(char, rng))
            continue
        if not rates.confusion:
            continue
        pair = text[position : position + 2]
        if pair in PAIR_CONFUSIONS and rng.random() < rates.confusion:
            if plan.add(position, position + 2, PAIR_CONFUSIONS[pair]):
                continue
        if char in CONFUSIONS and rng.random() < rates.confusion:
            plan.add(position, position + 1, rng.choice(CONFUSIONS[char]))


def _mangled_accent(char: str, rng: random.Random) -> str:
    """The accent dropped (most often), another accent, or the UTF-8 bytes read as Latin-1 (mojibake)."""
    draw = rng.random()
    if draw < 0.6 or (draw < 0.8 and char not in WRONG_ACCENTS):
        return unicodedata.normalize("NFD", char)[0]
    if draw < 0.8:
        return WRONG_ACCENTS[char]
    mojibake = char.encode("utf-8").decode("latin-1")  # latin-1 decodes every byte
    return mojibake if mojibake.isprintable() else unicodedata.normalize("NFD", char)[0]


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with ``edits`` (sorted, non-overlapping) applied."""
    parts: list[str] = []
    position = 0
    for edit in edits:
        parts += [text[position : edit.start], edit.replacement]
        position = edit.end
    parts.append(text[position:])
    return "".join(parts)


class OffsetMapper:
    """Maps an offset of the original text onto the perturbed one (for offsets no edit straddles)."""

    def __init__(self, edits: Sequence[Edit]) -> None:
        self.ends = [edit.end for edit in edits]
        self.shift: list[int] = []
        total = 0
        for edit in edits:
            total += len(edit.replacement) - (edit.end - edit.start)
            self.shift.append(total)

    def __call__(self, position: int) -> int:
        """``position`` moved by every edit ending at or before it (an insertion at ``position`` counts)."""
        index = bisect_right(self.ends, position)
        return position + (self.shift[index - 1] if index else 0)


def map_offset(edits: Sequence[Edit], position: int) -> int:
    return OffsetMapper(edits)(position)


def perturb(
    text: str,
    spans: Sequence[tuple[int, int, str]],
    level: int | Rates,
    rng: random.Random,
    *,
    protected: Sequence[tuple[int, int]] = (),
    line_break: str = "\n",
) -> tuple[str, list[tuple[int, int, str]]]:
    """``text`` perturbed at ``level`` (0-3, or explicit :class:`Rates`) and ``spans`` (start, end, label)
    mapped onto it: each returned span covers exactly its entity's perturbed characters."""
    rates = level if isinstance(level, Rates) else rates_for(level)
    edits = plan_edits(text, [(s, e) for s, e, _ in spans], rates, rng, protected=protected, line_break=line_break)
    mapped = OffsetMapper(edits)
    return apply_edits(text, edits), [(mapped(start), mapped(end), label) for start, end, label in spans]


# -- HTML ------------------------------------------------------------------------------------------------

#: What a perturbation of an HTML note never touches: comments, the head and style/script elements, tags,
#: character references.
_HTML_PROTECTED = re.compile(
    r"<!--.*?-->|<(head|style|script|title)\b.*?</\1\s*>|<[^>]*>|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?",
    re.DOTALL | re.IGNORECASE,
)


def html_protected(html: str) -> list[tuple[int, int]]:
    """The ranges of ``html`` a perturbation leaves alone (markup, references, invisible elements)."""
    return [match.span() for match in _HTML_PROTECTED.finditer(html)]


def perturb_html(
    html: str, spans: Sequence[tuple[int, int, str]], level: int | Rates, rng: random.Random
) -> tuple[str, list[tuple[int, int, str]]]:
    """Perturb the text of an HTML document (never its markup nor its character references), entity spans
    given and returned in HTML offsets; a line-end hyphen cut writes ``-<br>``."""
    return perturb(html, spans, level, rng, protected=html_protected(html), line_break="<br>")
