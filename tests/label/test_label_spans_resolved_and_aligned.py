"""The weak labeller beyond its examples: how it takes its tokens, how conflicting candidates are
resolved, and that its spans stay aligned on the shipped sample.

What the labeller finds in a given text, rule by rule, is in the data files of ``cases/`` (run by
``test_label_cases.py``).
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.label.candidate import Candidate
from deid_ds.label.labeller import WeakLabeller
from deid_ds.label.resolve import resolve, tier
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.tokens import tokenize
from tests.label.case_files import CASES, read_kb


@pytest.fixture(scope="module")
def gazetteer() -> WeakLabeller:
    """A labeller over the small knowledge base of the label cases (``cases/kb.txt``)."""
    return WeakLabeller(read_kb(CASES / "kb.txt"))


def test_the_tokens_may_be_given_as_two_offset_lists_as_the_segmenter_keeps_them(gazetteer: WeakLabeller) -> None:
    text = "Dr Yann KERBRAT a vu Mme Jeanne LE GALL le 3 mars 2021 au 12 rue de Brest, 35000 Rennes. KERBRAT"
    tokens = tokenize(text)
    starts, ends = [s for s, _ in tokens], [e for _, e in tokens]
    patient = PatientMetadata(lastname="Le Gall", firstname="Jeanne")
    assert gazetteer.label_offsets(text, starts, ends, patient) == gazetteer.label(text, tokens, patient)
    assert (starts, ends) == ([s for s, _ in tokens], [e for _, e in tokens])  # read, not modified


# -- conflict policy ---------------------------------------------------------------------------------------


def test_sources_are_ranked_by_tier_then_length_never_by_order() -> None:
    tokens = tokenize("Jean Martin est venu")
    metadata = Candidate(0, 11, "PATIENT", "metadata:name", 1.0)
    context = Candidate(0, 11, "DOCTOR", "context:title", 0.95)
    gazetteer = Candidate(5, 11, "VILLE", "gazetteer:commune", 0.7)
    assert (
        tier("metadata:name")
        < tier("pattern:email")
        < tier("context:title")
        < tier("gazetteer:commune")
        < tier("nonsense")
    )
    for order in ([metadata, context, gazetteer], [gazetteer, context, metadata], [context, gazetteer, metadata]):
        assert resolve(order, tokens) == [metadata]


def test_candidates_are_snapped_to_token_boundaries_and_dropped_when_uncertain() -> None:
    text = "Tél:0298000000 vu"
    tokens = tokenize(text)
    inside = Candidate(5, 10, "PHONE", "pattern:phone_fr")
    uncertain = Candidate(15, 17, "DATE", "pattern:date_year", needs_context=True)
    resolved = resolve([inside, uncertain], tokens)
    assert [(c.start, c.end) for c in resolved] == [next((s, e) for s, e in tokens if s <= 5 < e)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 40),
            st.integers(1, 12),
            st.sampled_from(["PATIENT", "DOCTOR", "VILLE"]),
            st.sampled_from(["metadata:name", "context:title", "gazetteer:commune", "pattern:zip"]),
        ),
        max_size=12,
    ),
    st.randoms(),
)
def test_resolution_never_overlaps_aligns_to_tokens_and_ignores_input_order(raw, rng) -> None:
    text = "Jean Martin vu à Brest le matin par Yann Kerbrat et Anne Roux demain"
    tokens = tokenize(text)
    candidates = [Candidate(s, min(s + n, len(text)), label, source) for s, n, label, source in raw]
    resolved = resolve(candidates, tokens)
    bounds_start, bounds_end = {s for s, _ in tokens}, {e for _, e in tokens}
    for a, b in itertools.pairwise(resolved):
        assert a.end <= b.start
    assert all(c.start in bounds_start and c.end in bounds_end for c in resolved)
    shuffled = list(candidates)
    rng.shuffle(shuffled)
    assert resolve(shuffled, tokens) == resolved


def test_every_span_of_the_sample_is_token_aligned_and_reads_as_its_text() -> None:
    import pandas as pd

    from deid_ds.segmentation.html_text import html_to_text
    from deid_ds.segmentation.segmenter import default_segmenter

    notes = pd.read_parquet("data/notes.parquet").head(40)
    segmenter, labeller = default_segmenter(), WeakLabeller()
    for html in notes["html"]:
        parsed = html_to_text(html)
        compact = segmenter.token_spans(parsed.text)
        tokens = list(zip(compact.starts, compact.ends))
        for c in labeller.label(parsed.text, tokens):
            assert c.start in compact.starts and c.end in compact.ends
            hs, he = parsed.html_span(c.start, c.end)
            visible = html_to_text(html[hs:he]).text
            assert re.sub(r"\s+", " ", visible).strip() == re.sub(r"\s+", " ", parsed.text[c.start : c.end]).strip()
