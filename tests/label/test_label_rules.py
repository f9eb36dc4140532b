"""The weak labeller's rules on small examples: what each cue, the metadata and the gazetteers label.

Each test reads as an example of the guidelines (``../shared/GUIDELINES.md``): the entity in brackets
is what the labeller must find, with the source that found it when that matters.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.kb.matcher import Category, GazetteerMatcher
from deid_ds.label.candidate import Candidate
from deid_ds.label.labeller import WeakLabeller
from deid_ds.label.resolve import resolve, tier
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.tokens import tokenize


def spans(
    text: str, labeller: WeakLabeller | None = None, patient: PatientMetadata | None = None
) -> list[tuple[str, str]]:
    found = (labeller or WeakLabeller()).label(text, tokenize(text), patient)
    return [(c.label, text[c.start : c.end]) for c in found]


def with_sources(
    text: str, labeller: WeakLabeller | None = None, patient: PatientMetadata | None = None
) -> list[tuple[str, str, str]]:
    found = (labeller or WeakLabeller()).label(text, tokenize(text), patient)
    return [(c.label, text[c.start : c.end], c.source) for c in found]


@pytest.fixture(scope="module")
def gazetteer() -> WeakLabeller:
    """A labeller over a tiny knowledge base: one directory name, a few communes and a BAN street."""
    entries = [
        ("kerbrat yann", Category("names", "fullname")),
        ("yann kerbrat", Category("names", "fullname")),
        ("kerbrat", Category("names", "lastname")),
        ("brest", Category("places", "commune")),
        ("saint-brieuc", Category("places", "commune")),
        ("redon", Category("places", "commune")),
        ("plaine", Category("places", "commune", ambiguous="common_word")),
        ("kerlean", Category("streets", "lieu-dit")),
    ]
    return WeakLabeller(GazetteerMatcher.build(entries))


# -- DOCTOR ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Vu par le Dr Yann KERBRAT ce jour.", "Yann KERBRAT"),
        ("Pr. A. Le Bihan, chef de service", "A. Le Bihan"),
        ("Interne : Mathilde Roué", "Mathilde Roué"),
        ("IDE Karine a posé la perfusion.", "Karine"),
        ("Dicté par J.-P. Morvan le 3 mars.", "J.-P. Morvan"),
        ("Copie à : Docteur LE GALL", "LE GALL"),
        ("Romain PICARD — praticien hospitalier", "Romain PICARD"),
        ("Céline, assistante médicale", "Céline"),
        ("Chirurgien\tDELAUNAY Riwal", "DELAUNAY Riwal"),
    ],
)
def test_a_professional_is_found_by_title_phrase_or_role(text: str, name: str) -> None:
    assert ("DOCTOR", name) in spans(text)


def test_titles_stay_outside_the_span_but_an_initial_m_after_a_title_is_a_given_name() -> None:
    assert spans("Dr Yann KERBRAT") == [("DOCTOR", "Yann KERBRAT")]
    assert spans("Dr M. Munoz, médecin du service") == [("DOCTOR", "M. Munoz")]
    assert spans("Coordination : M. Jean DUPONT, cadre de santé") == [("DOCTOR", "Jean DUPONT")]


def test_staff_listed_under_a_heading_are_professionals() -> None:
    text = "Cardiologie\nSecrétariat\nMme Anne LE GOFF\nM. Paul Riou\n\nMonsieur le Docteur,"
    assert spans(text) == [("DOCTOR", "Anne LE GOFF"), ("DOCTOR", "Paul Riou")]


def test_dictation_initials_are_two_doctor_spans() -> None:
    assert spans("Bien cordialement,\n\nYK/CL\n") == [("DOCTOR", "YK"), ("DOCTOR", "CL")]


def test_a_recipient_under_a_letter_header_is_a_professional() -> None:
    assert ("DOCTOR", "PENNEC Tifenn") in spans("À l'intention de\nPENNEC Tifenn\n50 rue de Brest\n")


def test_a_directory_full_name_without_cue_is_a_doctor_from_the_gazetteer(gazetteer: WeakLabeller) -> None:
    assert with_sources("Avis demandé à Yann Kerbrat hier.", gazetteer) == [
        ("DOCTOR", "Yann Kerbrat", "gazetteer:directory")
    ]


def test_a_cue_line_does_not_reach_the_next_line() -> None:
    assert spans("Dr Romain Le Gac, interne\n\nSYNTHÈSE DE SÉJOUR\n") == [("DOCTOR", "Romain Le Gac")]


# -- PATIENT -----------------------------------------------------------------------------------------------


PATIENT = PatientMetadata(
    firstname="JEANNE MARIE",
    lastname="LE GALL",
    birthdate="1957-08-12",
    zip="29200",
    city="Brest",
    phone="0612345678",
    email="jeanne.legall@example.fr",
)


@pytest.mark.parametrize(
    "text",
    ["Mme Jeanne LE GALL est revue.", "LE GALL Jeanne, 64 ans", "Patiente : J. Le Gall", "Mme LE GALL Jeanne-Marie"],
)
def test_the_patient_is_found_from_her_metadata_in_any_order_case_or_initials(text: str) -> None:
    found = with_sources(text, patient=PATIENT)
    assert [label for label, _, _ in found] == ["PATIENT"]
    assert found[0][2].startswith(("metadata:", "context:"))


def test_one_typo_in_a_long_name_is_tolerated_but_not_in_a_short_one() -> None:
    patient = PatientMetadata(firstname="Bernadette", lastname="KERVELLA")
    assert spans("Mme Bernadete KERVELA revue", patient=patient) == [("PATIENT", "Bernadete KERVELA")]
    # ROUX is not a typo of RIOU (too short to tell): only the given name matched, a weaker source
    found = with_sources("Revue avec Paul Roux", patient=PatientMetadata(firstname="Paul", lastname="RIOU"))
    assert found == [("PATIENT", "Paul Roux", "patient:firstname_unknown_last")]


def test_the_last_name_alone_is_propagated_once_the_full_name_was_seen() -> None:
    text = "Mme Jeanne LE GALL, 64 ans.\nAu total, Le Gall va mieux."
    assert spans(text, patient=PATIENT) == [("PATIENT", "Jeanne LE GALL"), ("PATIENT", "Le Gall")]


def test_the_tokens_may_be_given_as_two_offset_lists_as_the_segmenter_keeps_them(gazetteer: WeakLabeller) -> None:
    text = "Dr Yann KERBRAT a vu Mme Jeanne LE GALL le 3 mars 2021 au 12 rue de Brest, 35000 Rennes. KERBRAT"
    tokens = tokenize(text)
    starts, ends = [s for s, _ in tokens], [e for _, e in tokens]
    patient = PatientMetadata(lastname="Le Gall", firstname="Jeanne")
    assert gazetteer.label_offsets(text, starts, ends, patient) == gazetteer.label(text, tokens, patient)
    assert (starts, ends) == ([s for s, _ in tokens], [e for _, e in tokens])  # read, not modified


def test_a_doctor_sharing_the_patient_first_name_stays_a_doctor() -> None:
    text = "Patiente Jeanne LE GALL vue par le Dr Jeanne Morvan."
    assert spans(text, patient=PATIENT) == [("PATIENT", "Jeanne LE GALL"), ("DOCTOR", "Jeanne Morvan")]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Contact : sa fille, Mme Sophie Martin.", "Sophie Martin"),
        ("Vit avec son époux Pierre.", "Pierre"),
        ("Personne de confiance : M. Yves Tanguy", "Yves Tanguy"),
        ("Nom d'usage\tDE SAINT-AUBIN", "DE SAINT-AUBIN"),
        ("Prénom(s)\tJakez", "Jakez"),
    ],
)
def test_relatives_and_identity_fields_are_patient_without_metadata(text: str, name: str) -> None:
    assert ("PATIENT", name) in spans(text)


def test_metadata_confirms_a_bare_postcode_and_credits_phone_and_email() -> None:
    text = "Domicile : 29200.\nTél 06 12 34 56 78, jeanne.legall@example.fr"
    found = with_sources(text, patient=PATIENT)
    assert ("ZIP", "29200", "metadata:zip") in found
    assert ("PHONE", "06 12 34 56 78", "metadata:phone") in found
    assert ("EMAIL", "jeanne.legall@example.fr", "metadata:email") in found
    assert spans("Domicile : 29200.") == []  # without metadata a bare number is not enough


# -- STR, ZIP, VILLE ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("2 rue Henri Le Guilloux\n35033 RENNES CEDEX 9", "2 rue Henri Le Guilloux"),
        ("12 bis, avenue du Général de Gaulle – 29200 Brest", "12 bis, avenue du Général de Gaulle"),
        ("Domicile\t34 r. de Kerguelen\n56100 Lorient", "34 r. de Kerguelen"),
        ("LIEU-DIT GOASDUAL\n35270 COMBOURG", "LIEU-DIT GOASDUAL"),
        ("renversé route de Gouesnou ce matin", "route de Gouesnou"),
        ("2 rue du 8 Mai 1945", "2 rue du 8 Mai 1945"),
    ],
)
def test_street_lines_keep_number_type_and_name(text: str, street: str) -> None:
    assert ("STR", street) in spans(text)


def test_a_post_box_is_its_own_street_span_and_the_city_stops_before_cedex() -> None:
    assert spans("5 rue Kléber – BP 492 – 22752 ST BRIEUC CEDEX 2") == [
        ("STR", "5 rue Kléber"),
        ("STR", "BP 492"),
        ("ZIP", "22752"),
        ("VILLE", "ST BRIEUC"),
    ]


def test_prose_with_street_words_is_not_an_address() -> None:
    assert spans("Mise en place d'une sonde au cours de la nuit, passage aux urgences.") == []


def test_cities_from_cues_date_lines_and_brackets_without_gazetteer() -> None:
    assert ("VILLE", "Quimper") in spans("Née à Quimper le 3 mars 1950.")
    assert ("VILLE", "Brest") in spans("Brest, le 3 mars 2021")
    assert ("VILLE", "Saint-Brieuc") in spans("Centre Hospitalier de Saint-Brieuc")
    assert ("VILLE", "Le Faou") in spans("5 rue du Port à Le Faou (29590)")


def test_gazetteer_communes_need_capitals_and_ambiguous_ones_need_context(gazetteer: WeakLabeller) -> None:
    assert spans("Transfert vers Brest demain.", gazetteer) == [("VILLE", "Brest")]
    assert spans("Il réside à Plaine depuis 2 ans.", gazetteer) == [("VILLE", "Plaine")]
    assert spans("Retour de Plaine ce soir.", gazetteer) == [("VILLE", "Plaine")]
    assert spans("la Plaine verdoyante", gazetteer) == []


def test_a_city_inside_an_eponym_is_not_a_ville(gazetteer: WeakLabeller) -> None:
    assert spans("Mise en place d'un drain de Redon.", gazetteer) == []


def test_the_labeller_works_without_knowledge_base_or_metadata() -> None:
    text = "Dr Yann KERBRAT\n2 rue de Brest\n29200 Brest\nTél 02 98 00 00 00\nLe 03/02/2021"
    assert [label for label, _ in spans(text)] == ["DOCTOR", "STR", "ZIP", "VILLE", "PHONE", "DATE"]


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
    for a, b in zip(resolved, resolved[1:]):
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
