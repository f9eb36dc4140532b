"""Benchmark: what the fewer scans and the readings kept from note to note earn, each against the plain code.

    .venv/bin/python benchmarks/deidentify_scans.py --notes N.parquet --spans GOLD.parquet [--repeat 3] [--only ROW...]

On a generated corpus (``deid-ds synth``; ``--phrasing exports`` makes 3-KB export-style notes), CPU seconds, best
of ``--repeat``, the caches emptied before each run; each pair is checked to give the same result first:

* ``identifiers``: ``find_identifiers`` of every note's text and whole file (what ``note_identifiers`` reads),
  against every pattern scanned over the whole text (the cue patterns at every position, the NIR pattern led by
  its lookbehinds, no hint);
* ``regions``: every note's regions, each stretch of markup cut once (cached by its text), against cut in place;
* ``region objects``: the same regions built as named tuples, against a frozen dataclass of the same fields;
* ``numbers``: ``find_values`` of each note's direct identifiers in its text, numbers searched without compiling
  their pattern, against every value's pattern (compiled once per value, as ``_pattern`` caches them);
* ``leak hints``: the patient's patterns counted in every view of every note, skipped where their hint is not,
  against run on every view;
* ``name readings``: every name span of every note read with its roles twice (as ``remember`` and
  ``surrogate_name`` do), with :func:`~deid_ds.deidentification.names.read_name`, against read afresh.

Second round: each of these is every note's ``deidentify_document`` (surrogate mode) with one change undone
(the plain function put back in its place) against the code as it is, outputs checked equal first:

* ``view regions``: the other views searched from every region of the note, against from those that are not a tag's
  or attribute's name (``regions(parsed, tags=False)``: none of those is rewritten);
* ``region ranges``: each region searched read with the source range of each of its characters, against read first
  and its ranges worked out only where something is replaced;
* ``phrase test``: a name surrogate's phrases tested with a regex built per phrase, against a substring test;
* ``keyed digests`` and ``date offset``: the same, checked equal; their time is then that of the work alone, the
  document stage's own noise being larger than what they earn: the HMAC of every keyed choice the document stage
  makes (recorded), each computed against cached; the patient's date shift of every DATE span, its generator
  seeded for each against drawn once per note;

and ``leak views``: the views the residual-leak check reads of every note (``view_texts``), from region objects each
decoded where it stands, against each stretch of markup read once (cut, decoded and joined: ``_gap_reading``).

Third round: ``note narrowing``: the other views of every note (``view_edits``, with the replacer its
``deidentify_document`` built) with each region searched for everything the note's replacer holds, against for
what the note's searched texts joined can hold (:meth:`~deid_ds.deidentification.other_views.Replacer.narrowed`).

The whole command's figures come from ``benchmarks/deidentify_command.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import html as html_module
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from deid_ds.deidentification import dates_shift, keyed, names, other_views, overlap, regions  # noqa: E402
from deid_ds.deidentification import document as document_module  # noqa: E402
from deid_ds.deidentification import identifiers as ids  # noqa: E402
from deid_ds.deidentification import surrogates as surrogates_module  # noqa: E402
from deid_ds.deidentification.batch import read_spans_by_document  # noqa: E402
from deid_ds.deidentification.context import Context  # noqa: E402
from deid_ds.deidentification.document import deidentify_document  # noqa: E402
from deid_ds.deidentification.html_replace import locate  # noqa: E402
from deid_ds.deidentification.keyed import Keyring  # noqa: E402
from deid_ds.deidentification.leaks import needles_for, views  # noqa: E402
from deid_ds.deidentification.pools import load_pools  # noqa: E402
from deid_ds.io.notes import open_notes  # noqa: E402
from deid_ds.kb.normalize import fold_text  # noqa: E402
from deid_ds.segmentation.html_text import html_to_text  # noqa: E402


def identifiers_plainly(text: str) -> list[ids.Identifier]:
    """``find_identifiers`` with every pattern scanned over the whole folded text."""
    if not ids._HAS_NUMBER.search(text):
        return []
    folded = ids._folded(text)
    kept = [m.span("val") for m in ids._KEPT.finditer(folded)]
    found: list[ids.Identifier] = []
    cued = ids._ANY_CUE.search(folded) is not None
    for kind, pattern in ids._CUED.items() if cued else ():
        found += filter(None, (ids.cued_identifier(kind, m, kept) for m in pattern.finditer(folded)))
    for m in ids._CUE_AFTER.finditer(folded) if cued else ():
        kind = ids._AFTER_KINDS.get(m["cue"], m["cue"].upper())
        if ids._acceptable(kind, m["val"]) and not ids._inside(*m.span("val"), kept):
            found.append(ids.Identifier(*m.span("val"), kind, "cue"))
    for m in ids._BARE_NIR.finditer(folded):
        if ids.is_valid_nir(m["val"]) and not ids._inside(*m.span("val"), kept):
            found.append(ids.Identifier(*m.span("val"), "NIR", "checksum"))
    for m in ids._BARE_RPPS.finditer(folded):
        if ids.is_valid_rpps(m["val"]) and not ids._inside(*m.span("val"), kept):
            found.append(ids.Identifier(*m.span("val"), "RPPS", "checksum"))
    for m in ids._BARE_IBAN.finditer(folded):
        found += filter(None, [ids.iban_identifier(folded, *m.span("val"), kept)])
    if cued and "\n" in text:
        headers = [m.start() for m in ids._ANY_CUE.finditer(folded)]  # the lines of every cue, found by one scan
        found += [i for i in ids._columns(text, folded, headers) if not ids._inside(i.start, i.end, kept)]
    return ids.resolve(found)


def regions_in_place(parsed) -> list[regions.Region]:
    html = parsed.html
    found = [regions._hidden_region(html, h.html_start, h.html_end, h.reason) for h in parsed.hidden]
    for start, end in regions._gaps(parsed):
        found += regions._markup_regions(html, start, end)
    return sorted(found, key=lambda r: (r.start, r.end))


@dataclass(frozen=True, slots=True)
class FrozenRegion:
    start: int
    end: int
    view: str
    kind: str


def values_plainly(text: str, known: dict[str, str]) -> list[ids.Identifier]:
    folded = ids._folded(text)
    return [
        ids.Identifier(*m.span(), kind, "repeat")
        for value, kind in known.items()
        if len(value) >= ids.REPEAT_MIN
        for m in ids._pattern(value).finditer(folded)
    ]


def counts(texts, needles, hinted: bool) -> list[int]:
    return [
        len(pattern.findall(folded)) if not hinted or needles.searched(name, folded) else 0
        for folded in texts
        for name, pattern in needles.patterns.items()
    ]


def read_plainly(ctx: Context, text: str, label: str) -> list:
    groups = names._groups(text, names._surname_of(ctx, label))
    names._assign_roles(groups, ctx, label, None)
    return groups


def roles(groups) -> list:
    return [(g.role, [w.text for w in g.words]) for g in groups]


def holds_phrase_plainly(text: str, phrases) -> bool:
    words = " ".join(overlap._WORD.findall(overlap.normalise(text)))
    for phrase in phrases:
        wanted = " ".join(overlap._WORD.findall(overlap.normalise(phrase)))
        if wanted and re.search(r"(?<![^ ])" + re.escape(wanted) + r"(?![^ ])", words):
            return True
    return False


def digest_plainly(self, *parts: str) -> bytes:
    return hmac.new(self.key, keyed._SEP.join(parts).encode("utf-8"), hashlib.sha256).digest()


def date_offset_plainly(ctx: Context) -> int:
    rng = ctx.keyring.rng(ctx.scope, "DATE", "offset")
    days = rng.randint(dates_shift.MIN_SHIFT, dates_shift.MAX_SHIFT)
    return days if rng.random() < 0.5 else -days


def view_texts_plainly(parsed) -> dict[str, list[str]]:
    """``view_texts`` from region objects, each decoded where it stands."""
    html = parsed.html
    texts: dict[str, list[str]] = {view: [] for view in regions.VIEWS}
    texts["text"].append(parsed.text)
    markup: list[str] = []
    previous_end = -1
    for region in regions.regions(parsed):
        text = regions.decode_text(html, region.start, region.end)
        if region.view == "markup":
            if region.start != previous_end and markup:
                texts["markup"].append("".join(markup))
                markup = []
            markup.append(text)
            previous_end = region.end
        else:
            texts[region.view].append(text)
            if markup:
                markup.append(" ")
            previous_end = region.end
    if markup:
        texts["markup"].append("".join(markup))
    return {view: ["\x00".join(strings)] if len(strings) > 1 else strings for view, strings in texts.items()}


class EagerDecoded:
    """A region read with its source ranges at once."""

    def __init__(self, html: str, start: int, end: int) -> None:
        self.text, self.starts, self.ends = regions._decoded(html, start, end)

    def source(self, i: int, j: int) -> tuple[int, int]:
        return self.starts[i], self.ends[j - 1]


#: Per second-round change: (module or class, attribute, the plain function put back).
UNDONE = {
    "view regions": [(other_views, "regions", lambda parsed, tags=True: regions.regions(parsed))],
    "phrase test": [(surrogates_module, "holds_phrase", holds_phrase_plainly)],
    "region ranges": [(other_views, "decode", EagerDecoded)],
    "keyed digests": [(keyed.Keyring, "digest", digest_plainly)],
    "date offset": [(dates_shift, "date_offset", date_offset_plainly)],
    "note narrowing": [(other_views.Replacer, "narrowed", lambda self, texts, foldings: self)],
}


def fresh_memory(dated):
    """Each context with an empty memory, as each note starts."""
    for ctx, n in dated:
        ctx.memory.clear()
        yield ctx, n


def undone(name: str, work):
    """``work`` run with the change ``name`` undone."""

    def run():
        kept = [(owner, attribute, getattr(owner, attribute)) for owner, attribute, _ in UNDONE[name]]
        for owner, attribute, plain in UNDONE[name]:
            setattr(owner, attribute, plain)
        try:
            return work()
        finally:
            for owner, attribute, value in kept:
                setattr(owner, attribute, value)

    return run


def cpu(work, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        re.purge()
        ids._PATTERNS.clear()
        regions._markup_pieces.cache_clear()
        names._READINGS.clear()
        for cached in (keyed._hmac, overlap.spaced_words, surrogates_module._whole_names):
            cached.cache_clear()
        for cached in (regions._rewritable_pieces, regions._gap_reading, other_views._text_matches):
            cached.cache_clear()
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", required=True)
    parser.add_argument("--spans", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="the rows to time (default: every row)")
    args = parser.parse_args()

    notes = [note for batch in open_notes(args.notes).iter_batches(4096) for note in batch]
    spans = read_spans_by_document(args.spans)
    parsed = [html_to_text(note.html) for note in notes]
    texts = [t for p in parsed for t in (p.text, regions.INVISIBLE_RE.sub("", html_module.unescape(p.html)))]
    known = [ids.note_identifiers(p) for p in parsed]
    cut = [r for p in parsed for r in regions.regions(p)]
    pools = load_pools(None)
    keyring = Keyring(b"benchmark key of 32 bytes at least")
    contexts = [Context(keyring, pools, f"patient:{n.id_patient}", n.patient) for n in notes]
    name_spans = [
        (ctx, p.text[where.text_start : where.text_end], s.label)
        for ctx, p, n in zip(contexts, parsed, notes)
        for s in spans.get(n.id_document, ())
        if s.label in ("PATIENT", "DOCTOR")
        for where in [locate(p, s.html_start, s.html_end)]
    ]
    folded_views = [
        (needles_for(n.patient), [fold_text(t) for texts_ in views(p).values() for t in texts_])
        for n, p in zip(notes, parsed)
    ]

    by_document = [spans.get(n.id_document, []) for n in notes]

    def documents():
        outcomes = [
            deidentify_document(p, s, Context(keyring, pools, f"patient:{n.id_patient}", n.patient), "surrogate")
            for p, s, n in zip(parsed, by_document, notes)
        ]
        return [(o.html, o.error) for o in outcomes]

    kept_documents = documents()
    digests: list[tuple[str, ...]] = []  # the parts of every keyed choice the document stage makes
    record = keyed.Keyring.digest
    keyed.Keyring.digest = lambda self, *parts: digests.append(parts) or record(self, *parts)
    searched: list[tuple] = []  # the arguments of every note's view_edits (its replacer built)
    view_edits = other_views.view_edits
    document_module.view_edits = lambda *args: searched.append(args) or view_edits(*args)
    documents()
    keyed.Keyring.digest = record
    document_module.view_edits = view_edits
    dated = [(c, sum(s.label == "DATE" for s in spans_)) for c, spans_ in zip(contexts, by_document)]
    assert [keyring.digest(*parts) for parts in digests] == [digest_plainly(keyring, *parts) for parts in digests]
    assert [dates_shift.date_offset(c) for c, _ in fresh_memory(dated)] == [date_offset_plainly(c) for c, _ in dated]
    for name in UNDONE:
        assert undone(name, documents)() == kept_documents, name
    assert undone("note narrowing", lambda: [view_edits(*a) for a in searched])() == [view_edits(*a) for a in searched]
    assert [regions.view_texts(p) for p in parsed] == [view_texts_plainly(p) for p in parsed]
    assert [ids.find_identifiers(t) for t in texts] == [identifiers_plainly(t) for t in texts]
    assert [regions.regions(p) for p in parsed] == [regions_in_place(p) for p in parsed]
    assert all(ids.find_values(p.text, k) == values_plainly(p.text, k) for p, k in zip(parsed, known) if k)
    assert all(counts(v, n, True) == counts(v, n, False) for n, v in folded_views)
    assert all(roles(names.read_name(c, t, lab)) == roles(read_plainly(c, t, lab)) for c, t, lab in name_spans)

    rows = {
        "identifiers": (
            lambda: [identifiers_plainly(t) for t in texts],
            lambda: [ids.find_identifiers(t) for t in texts],
        ),
        "regions": (lambda: [regions_in_place(p) for p in parsed], lambda: [regions.regions(p) for p in parsed]),
        "region objects": (lambda: [FrozenRegion(*r) for r in cut], lambda: [regions.Region(*r) for r in cut]),
        "numbers": (
            lambda: [values_plainly(p.text, k) for p, k in zip(parsed, known) if k],
            lambda: [ids.find_values(p.text, k) for p, k in zip(parsed, known) if k],
        ),
        "leak hints": (
            lambda: [counts(v, n, False) for n, v in folded_views],
            lambda: [counts(v, n, True) for n, v in folded_views],
        ),
        "name readings": (
            lambda: [read_plainly(c, t, lab) for c, t, lab in name_spans * 2],
            lambda: [names.read_name(c, t, lab) for c, t, lab in name_spans * 2],
        ),
        "leak views": (
            lambda: [view_texts_plainly(p) for p in parsed],
            lambda: [regions.view_texts(p) for p in parsed],
        ),
        **{name: (undone(name, documents), documents) for name in ("view regions", "region ranges", "phrase test")},
        "keyed digests": (
            lambda: [digest_plainly(keyring, *parts) for parts in digests],
            lambda: [keyring.digest(*parts) for parts in digests],
        ),
        "date offset": (
            lambda: [date_offset_plainly(c) for c, n in dated for _ in range(n)],
            lambda: [dates_shift.date_offset(c) for c, n in fresh_memory(dated) for _ in range(n)],
        ),
        "note narrowing": (
            undone("note narrowing", lambda: [view_edits(*args) for args in searched]),
            lambda: [view_edits(*args) for args in searched],
        ),
    }
    print(f"{len(notes)} notes, {len(texts)} texts, {len(cut)} regions, {len(name_spans)} name spans")
    print(f"CPU s, best of {args.repeat}")
    print(f"{'shortcut':<16} {'plain':>8} {'kept':>8}")
    for name, (plain, kept) in rows.items() if not args.only else ((n, rows[n]) for n in args.only):
        print(f"{name:<16} {cpu(plain, args.repeat):>8.3f} {cpu(kept, args.repeat):>8.3f}", flush=True)


if __name__ == "__main__":
    main()
