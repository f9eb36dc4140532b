"""The knowledge features read the labeller's lookup of the note (its gazetteer matches, folded words and
patient names) and are computed for the written sentences only: the columns are exactly those of the
former code path, which ran its own matcher pass, folds and name tests on every token
(:func:`reference_columns` below, kept here as the reference), on the sample and on a generated corpus of
every phrasing, with and without metadata; and the files ``weak-label`` writes are those the reference
gives for the same sentences."""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.io.metadata import read_birthdate, read_zip
from deid_ds.io.notes import open_notes
from deid_ds.kb.ambiguity import is_common_word
from deid_ds.kb.normalize import fold
from deid_ds.label import features as F
from deid_ds.label.labeller import LabelConfig
from deid_ds.label.patient import PatientNames
from deid_ds.segmentation.notes import SegmentOptions, segment_note, segmenter_for
from deid_ds.weak_labelling import flair_token, labeller_for
from tests.conftest import REPO

SAMPLE = REPO / "data" / "notes.parquet"


def reference_columns(text, starts, ends, matcher, patient) -> list[str]:
    """The feature column of every token as the former code computed it, on its own: a second matcher
    pass over the folded note, a fold of every word and the patient-name test of every word."""

    def tokens_in(start, end):
        return range(bisect_left(starts, start), bisect_right(ends, end))

    words = [text[s:e] for s, e in zip(starts, ends)]
    found = [set(F._word_features(word)) for word in words]
    if matcher is not None:
        for match in matcher.find_all(text, fold(text)):
            names = {F._KB_FEATURE.get((c.table, c.kind)) for c in match.categories}
            if any(c.part for c in match.categories):
                names.add("kb:name_part")
            if match.ambiguous:
                names.add("kb:ambiguous")
            names.discard(None)
            for k in tokens_in(match.start, match.end):
                found[k] |= names
    if patient is not None:
        names = PatientNames.of_names(patient.lastname, patient.firstname)  # a fresh one: no memo shared
        folded = [fold(word) for word in words]
        if patient.lastname or patient.firstname:
            for k, word in enumerate(words):
                if word[:1].isalpha():
                    kind = names.kind(folded[k].strip(".-'’"))
                    if kind is not None:
                        found[k].add("meta:" + kind)
        place = {fold(w) for w in F._WORDS.findall(" ".join(filter(None, (patient.address, patient.city))))}
        place = {w for w in place if len(w) > 2 and not is_common_word(w)}
        zip_code = read_zip(patient.zip) or ""
        birthdate = read_birthdate(patient.birthdate)
        birth = birthdate.isoformat() if birthdate else ""
        year, month, day = birth[:4], birth[5:7], birth[8:10]
        for k, word in enumerate(words):
            if (zip_code and word == zip_code) or folded[k] in place:
                found[k].add("meta:address")
            if year.isdigit() and word == year:
                found[k].add("meta:birth")
        if year.isdigit() and month.isdigit() and day.isdigit():
            for m in F._DATE.finditer(text):
                d, mo, y = m.groups()
                if int(d) == int(day) and int(mo) == int(month) and (y == year or y == year[2:]):
                    for k in tokens_in(m.start(), m.end()):
                        found[k].add("meta:birth")
        phone = "".join(F._DIGITS.findall(patient.phone or ""))[-9:]
        if len(phone) == 9:
            for m in F._PHONE.finditer(text):
                if "".join(F._DIGITS.findall(m.group())).endswith(phone):
                    for k in tokens_in(m.start(), m.end()):
                        found[k].add("meta:phone")
    return ["|".join(sorted(feats)) if feats else "-" for feats in found]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> tuple[Path, Path]:
    """A corpus of every phrasing and the knowledge base of its own sources (its names, streets, communes)."""
    from deid_ds.kb.build import build_kb
    from deid_ds.kb.sources_dir import find_sources
    from deid_ds.synth import SynthConfig, synthesize

    root = tmp_path_factory.mktemp("generated")
    synthesize(SynthConfig(notes=80, seed=13, phrasing="all"), root / "corpus", kb_dir=root / "sources")
    found = find_sources(root / "sources")
    build_kb(root / "kb", ban=found.ban, health_directory=found.health_directory, progress=False)
    return root / "corpus" / "notes.parquet", root / "kb"


def check_columns(notes: Path, kb: Path, use_metadata: bool) -> int:
    """Every note's columns from the labeller's lookup against the reference, all tokens and some sentences."""
    segmenter = segmenter_for(SegmentOptions())
    labeller = labeller_for(LabelConfig(str(kb), use_metadata=use_metadata))
    pick = random.Random(7)
    checked = 0
    for note in open_notes(notes).iter_notes():
        _, parsed, compact = segment_note(note, segmenter)
        if compact is None or not compact.starts:
            continue
        text, starts, ends = parsed.text, compact.starts, compact.ends
        lookup = labeller.labelling(text, starts, ends, note.patient).lookup
        expected = reference_columns(text, starts, ends, labeller.matcher, note.patient if use_metadata else None)
        assert F.feature_columns(lookup) == expected, note.id_document
        sentences = list(zip(compact.bounds, compact.bounds[1:]))
        some = sorted(pick.sample(sentences, len(sentences) // 3))  # as when the empty ones are dropped
        assert F.feature_columns(lookup, some) == [expected[k] for a, b in some for k in range(a, b)]
        checked += 1
    return checked


@pytest.mark.slow
@pytest.mark.parametrize("use_metadata", [True, False])
def test_the_sample_s_columns_are_the_former_ones(kb_dir, use_metadata):
    assert check_columns(SAMPLE, kb_dir, use_metadata) == 300


@pytest.mark.slow
def test_a_generated_corpus_s_columns_are_the_former_ones(generated):
    notes, kb = generated
    assert check_columns(notes, kb, use_metadata=True) == 80


def expected_files(out: Path, notes: Path, kb: Path) -> dict[str, str]:
    """The Flair files of ``out``'s sentences (``sentences.parquet``) with the reference's feature column."""
    segmenter = segmenter_for(SegmentOptions())
    matcher = labeller_for(LabelConfig(str(kb))).matcher
    columns, firsts = {}, {}
    for note in open_notes(notes).iter_notes():
        _, parsed, compact = segment_note(note, segmenter)
        if compact is not None and compact.starts:
            columns[note.id_document] = reference_columns(
                parsed.text, compact.starts, compact.ends, matcher, note.patient
            )
            firsts[note.id_document] = compact.bounds
    files = dict.fromkeys(("train", "dev", "test"), "")
    for row in pq.read_table(out / "sentences.parquet").to_pylist():
        meta = row["meta"]
        first = firsts[meta["id_document"]][meta["sentence_index"]]  # the sentence's first token in its note
        note_columns = columns[meta["id_document"]]
        lines = [
            f"{flair_token(token['text'])} {note_columns[first + token['id']]} {tag}\n"
            for token, tag in zip(row["tokens"], row["tags"])
        ]
        files[row["split"]] += "".join(lines) + "\n"
    return files


@pytest.mark.slow
@pytest.mark.parametrize("keep_empty", ["0", "0.3"])
def test_the_written_files_carry_the_former_columns(kb_dir, generated, tmp_path, keep_empty):
    for notes, kb in ((SAMPLE, kb_dir), generated):
        out = tmp_path / f"{notes.parent.name}-weak"
        args = ["weak-label", str(notes), "--kb", str(kb), "--out", str(out), "--keep-empty", keep_empty, "-q"]
        result = CliRunner().invoke(main, [*args, "-j", "1"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        for split, text in expected_files(out, notes, kb).items():
            assert (out / f"{split}.txt").read_text(encoding="utf-8") == text, split
