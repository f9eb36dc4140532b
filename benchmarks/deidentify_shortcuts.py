"""Benchmark: what four of ``deidentify``'s shortcuts earn, each against the plain code it replaces.

    .venv/bin/python benchmarks/deidentify_shortcuts.py --notes N.parquet --spans GOLD.parquet [--repeat 5]

On a generated corpus (``deid-ds synth --phrasing exports``: 3-KB notes), CPU seconds, best of ``--repeat``,
caches emptied before each run:

* ``value patterns``: the note's direct identifiers' patterns (``identifiers.value_pattern``), digits-only
  values compiled without ``re.IGNORECASE``, against the same patterns compiled with it;
* ``note originals``: ``NoteOriginals.of_note`` (the patient's part once) against ``NoteOriginals.of`` on the
  patient's entities and the note's, for every note;
* ``phrase patterns``: the other views' phrase patterns (``other_views._phrase``) of every note's span texts,
  against the same with ``’`` among the separators;
* ``read spans``: ``read_spans_by_document`` against reading the pandas columns value by value.

Each pair is checked to give the same result before it is timed. The whole command's figures come from
``benchmarks/deidentify_command.py``.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from deid_ds.deidentification import other_views, overlap  # noqa: E402
from deid_ds.deidentification.batch import SpanIn, _integral, read_spans_by_document, scope_entities  # noqa: E402
from deid_ds.deidentification.identifiers import FLEXIBLE_FROM, note_identifiers, value_pattern  # noqa: E402
from deid_ds.deidentification.overlap import NoteOriginals  # noqa: E402
from deid_ds.evaluation.evaluate import read_spans  # noqa: E402
from deid_ds.kb.normalize import fold_key  # noqa: E402
from deid_ds.segmentation.html_text import html_to_text  # noqa: E402


def caseless_pattern(value: str) -> re.Pattern[str]:
    """``value_pattern`` as defined, with ``re.IGNORECASE`` whatever the value."""
    body = r"[ .\-/]?".join(map(re.escape, value)) if len(value) >= FLEXIBLE_FROM else re.escape(value)
    return re.compile(rf"(?<![A-Za-z0-9])(?:{body})(?![A-Za-z0-9])", re.IGNORECASE)


def phrase_with_apostrophe(key: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.split(r"[\s\-'’]+", key) if w]
    return re.compile(r"(?<![\w])" + r"[\s\-'’]+".join(words) + r"(?![\w])")


def spans_value_by_value(path: str) -> dict[str, list[SpanIn]]:
    """``read_spans_by_document`` as it read the columns before (checks included)."""
    frame = read_spans(path)
    for name in ("html_start", "html_end"):
        assert not any(not _integral(v) for v in frame[name])
    assert not any(not isinstance(x, str) or not x for x in frame["label"])
    assert not any(not isinstance(d, str) for d in frame["id_document"])
    sources = frame["source"].tolist() if "source" in frame.columns else [None] * len(frame)
    texts = frame["text"].tolist() if "text" in frame.columns else [None] * len(frame)
    by_document: dict[str, list[SpanIn]] = {}
    rows = zip(frame["id_document"], frame["label"], frame["html_start"], frame["html_end"], sources, texts)
    for id_document, label, start, end, source, text in rows:
        text = text if isinstance(text, str) else None
        source = source if isinstance(source, str) else None
        by_document.setdefault(id_document, []).append(SpanIn(label, int(start), int(end), source, text))
    return by_document


def cpu(work, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        re.purge()
        for cached in (overlap._compared, overlap.name_tokens, overlap.normalise, overlap._scope_originals):
            cached.cache_clear()
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", required=True)
    parser.add_argument("--spans", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    notes = pq.read_table(args.notes, columns=["id_document", "id_patient", "html"]).to_pylist()
    spans = read_spans_by_document(args.spans)
    by_patient: dict[str, list[str]] = {}
    for note in notes:
        by_patient.setdefault(note["id_patient"], []).append(note["id_document"])
    mine = {d: [(s.label, s.text) for s in document_spans] for d, document_spans in spans.items()}
    pairs = [(scope_entities(by_patient[n["id_patient"]], spans), mine.get(n["id_document"], [])) for n in notes]
    values = sorted({value for n in notes for value in note_identifiers(html_to_text(n["html"]))})
    keys = sorted({fold_key(text) for _, own in pairs for _, text in own})
    rows = {
        "value patterns": (lambda: [caseless_pattern(v) for v in values], lambda: [value_pattern(v) for v in values]),
        "note originals": (
            lambda: [NoteOriginals.of([*scope, *mine]) for scope, mine in pairs],
            lambda: [NoteOriginals.of_note(scope, mine) for scope, mine in pairs],
        ),
        "phrase patterns": (
            lambda: [phrase_with_apostrophe(k) for k in keys],
            lambda: [other_views._phrase.__wrapped__(k) for k in keys],
        ),
        "read spans": (lambda: spans_value_by_value(args.spans), lambda: read_spans_by_document(args.spans)),
    }
    sample = "\n".join(html_to_text(n["html"]).text for n in notes[:50])

    def spans_of(pattern: re.Pattern[str]) -> list[tuple[int, int]]:
        return [m.span() for m in pattern.finditer(sample)]

    assert all(spans_of(caseless_pattern(v)) == spans_of(value_pattern(v)) for v in values)
    assert all(phrase_with_apostrophe(k).pattern.replace("’", "") == other_views._phrase(k).pattern for k in keys)
    assert all(NoteOriginals.of([*s, *m]) == NoteOriginals.of_note(s, m) for s, m in pairs)
    assert spans_value_by_value(args.spans) == read_spans_by_document(args.spans)
    print(f"{len(notes)} notes, {len(values)} identifier values, {len(keys)} phrases; CPU s, best of {args.repeat}")
    print(f"{'shortcut':<16} {'plain':>8} {'kept':>8}")
    for name, (plain, kept) in rows.items():
        print(f"{name:<16} {cpu(plain, args.repeat):>8.3f} {cpu(kept, args.repeat):>8.3f}")


if __name__ == "__main__":
    main()
