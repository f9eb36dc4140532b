"""The case files of ``tests/label/cases/`` read into :class:`Case` objects (the format is in
``cases/README.md``), and the small knowledge base of ``cases/kb.txt`` built into a matcher."""

from __future__ import annotations

import re
import shlex
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from deid_ds.kb.matcher import Category, GazetteerMatcher
from deid_ds.model import LABELS, PATIENT_FIELDS, PatientMetadata

CASES = Path(__file__).parent / "cases"

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "[": "[", "]": "]", "@": "@", "#": "#"}
_MARK_END = re.compile(r"\]\(([A-Z]+)(?: ([a-z_]+:[a-z_]*))?\)")


class CaseFileError(ValueError):
    """A malformed line of a case file; the message starts with ``file:line``."""


@dataclass(frozen=True)
class Span:
    """An entity marked in a case: offsets into the case's plain text, and the source when the case names one."""

    start: int
    end: int
    label: str
    source: str | None = None


@dataclass(frozen=True)
class Case:
    """One example: its plain text, the spans marked in it, and what the labeller is given."""

    file: str
    line: int
    rule: str
    text: str
    spans: tuple[Span, ...]
    patient: PatientMetadata | None = None
    kb: bool = False
    known_gap: bool = False

    @property
    def id(self) -> str:
        """``file:line`` and the start of the text in ASCII, for pytest's listing."""
        ascii_text = unicodedata.normalize("NFKD", self.text).encode("ascii", "ignore").decode()
        short = re.sub(r"\s+", " ", ascii_text).strip()
        return f"{self.file}:{self.line} {short[:40]}"


@dataclass
class _Section:
    rule: str = ""
    known_gap: bool = False
    patient: PatientMetadata | None = None
    kb: bool = False
    comments: list[str] = field(default_factory=list)


def parse_marked(marked: str, where: str) -> tuple[str, tuple[Span, ...]]:
    """The plain text and spans of one case line: ``[text](LABEL)`` or ``[text](LABEL source)`` marks an
    entity, ``\\n \\t \\r \\\\ \\[ \\] \\uXXXX`` are escapes."""
    out: list[str] = []  # the plain text, one character at a time
    spans: list[Span] = []
    open_at: int | None = None
    i = 0
    while i < len(marked):
        ch = marked[i]
        if ch == "\\":
            nxt = marked[i + 1 : i + 2]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", marked[i + 2 : i + 6]):
                out.append(chr(int(marked[i + 2 : i + 6], 16)))
                i += 6
                continue
            if nxt not in _ESCAPES:
                raise CaseFileError(f"{where}: unknown escape \\{nxt} (see README.md)")
            out.append(_ESCAPES[nxt])
            i += 2
        elif ch == "[":
            if open_at is not None:
                raise CaseFileError(f"{where}: '[' inside an entity (a literal bracket is \\[)")
            open_at = len(out)
            i += 1
        elif ch == "]":
            mark = _MARK_END.match(marked, i)
            if open_at is None or mark is None:
                raise CaseFileError(f"{where}: ']' must close an entity as ](LABEL) (a literal bracket is \\])")
            label = mark.group(1)
            if label not in LABELS:
                raise CaseFileError(f"{where}: unknown label {label} (one of {', '.join(LABELS)})")
            end = len(out)
            if end == open_at:
                raise CaseFileError(f"{where}: empty entity")
            spans.append(Span(open_at, end, label, mark.group(2)))
            open_at = None
            i = mark.end()
        else:
            out.append(ch)
            i += 1
    if open_at is not None:
        raise CaseFileError(f"{where}: '[' never closed by ](LABEL)")
    return "".join(out), tuple(spans)


def _patient(words: str, where: str) -> PatientMetadata:
    values = {}
    for word in shlex.split(words):
        key, sep, value = word.partition("=")
        if not sep or key not in PATIENT_FIELDS:
            raise CaseFileError(f"{where}: @patient takes field=value ({', '.join(PATIENT_FIELDS)}), not {word!r}")
        values[key] = value
    if not values:
        raise CaseFileError(f"{where}: @patient without fields")
    return PatientMetadata(**values)


def parse_cases(path: Path) -> list[Case]:
    """Every case of one file (see ``cases/README.md``); a malformed line raises :class:`CaseFileError`."""
    cases: list[Case] = []
    section = _Section()
    previous_was_comment = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        where = f"{path.name}:{number}"
        stripped = line.strip()
        if stripped.startswith("#"):
            comment = stripped.lstrip("#").strip()
            if not previous_was_comment:  # a comment block opens a new section
                section = _Section()
            section.comments.append(comment)
            if comment.lower().startswith("known gap"):
                section.known_gap = True
            section.rule = " ".join(section.comments)
            previous_was_comment = True
            continue
        previous_was_comment = False
        if not stripped:
            continue
        if stripped.startswith("@"):
            directive, _, rest = stripped[1:].partition(" ")
            if directive == "patient":
                section.patient = _patient(rest, where)
            elif directive == "kb" and not rest.strip():
                section.kb = True
            else:
                raise CaseFileError(f"{where}: unknown directive {stripped.split()[0]} (@patient, @kb)")
            continue
        if not section.rule:
            raise CaseFileError(f"{where}: a case needs a comment line above it naming its rule")
        text, spans = parse_marked(line, where)
        cases.append(Case(path.stem, number, section.rule, text, spans, section.patient, section.kb, section.known_gap))
    return cases


def read_kb(path: Path) -> GazetteerMatcher:
    """The small knowledge base of ``kb.txt``: per line, ``key | table kind [ambiguous=reason]``."""
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, bar, what = (part.strip() for part in line.partition("|"))
        words = what.split()
        flags = dict(word.partition("=")[::2] for word in words[2:])
        if not bar or not key or len(words) < 2 or set(flags) - {"ambiguous"} or not all(flags.values()):
            raise CaseFileError(f"{path.name}:{number}: an entry is 'key | table kind [ambiguous=reason]'")
        entries.append((key, Category(words[0], words[1], ambiguous=flags.get("ambiguous"))))
    return GazetteerMatcher.build(entries)
