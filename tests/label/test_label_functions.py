"""The labelling functions as data: listed by name, switched off by name, counted by name.

Examples read on one letter holding an entity of every family, labelled with and without each function.
"""

from __future__ import annotations

import pickle
from collections import Counter

import pytest

from deid_ds.errors import InputError
from deid_ds.kb.matcher import Category, GazetteerMatcher
from deid_ds.label import functions
from deid_ds.label.functions import ALL, BY_NAME, FUNCTIONS, counts_per_function, function_of_source, functions_table
from deid_ds.label.labeller import LabelConfig, WeakLabeller
from deid_ds.model import LABELS, PatientMetadata
from deid_ds.segmentation.tokens import tokenize

LETTER = (
    "Dr Yann KERBRAT\nService de cardiologie\n12 rue de la Paix 35000 Rennes\n"
    "Tél : 02 99 28 43 21 - secretariat.cardio@chu-rennes.fr\n\n"
    "Internes\nMarc DURAND\nJulie PETIT\n\n"
    "Brest, le 3 mars 2021\n\n"
    "Cher confrère,\nJ'ai vu Mme Jeanne LE GALL, née le 04/05/1950 à Quimper, 29000 Quimper.\n"
    "Son fils, M. Paul LE GALL, l'accompagnait. Jeanne LE GALL habite :\nKerlean 29200 Brest\n"
    "Médecin traitant : Dr Anne MORVAN\nAvis demandé à Yann Kerbrat, transfert vers Brest, vu avec MORVAN.\n"
    "Elle vit au 3 place du Marché. Né en 1950. Contact : 06 12 34 56 78, jeanne.legall@free.fr\n"
    "Permanence : 29200 A Brest\n"
    "Rôle\tNom\tPrénom\nIDE\tRIOU\tSoizic\n"
    "Ancienne adresse : 1000 Bruxelles\n"
    "Domicile : PENMAREC\n"
    "JM/AB\n"
)
PATIENT = PatientMetadata(
    lastname="LE GALL", firstname="Jeanne", birthdate="1950-05-04", zip="29000", phone="0612345678",
    email="jeanne.legall@free.fr", address="Penmarec",
)  # fmt: skip


def matcher() -> GazetteerMatcher:
    entries = [
        ("kerbrat yann", Category("names", "fullname")),
        ("yann kerbrat", Category("names", "fullname")),
        ("brest", Category("places", "commune")),
        ("quimper", Category("places", "commune")),
        ("rennes", Category("places", "commune")),
        ("kerlean", Category("streets", "lieu-dit")),
    ]
    return GazetteerMatcher.build(entries)


def labelled(disabled: frozenset[str] = frozenset()) -> set[tuple[int, int, str, str]]:
    labeller = WeakLabeller(matcher(), config=LabelConfig(disabled=disabled))
    return {(c.start, c.end, c.label, c.source) for c in labeller.label(LETTER, tokenize(LETTER), PATIENT)}


def test_the_functions_are_listed_by_unique_names_and_read_only_earlier_ones() -> None:
    assert len(BY_NAME) == len(ALL) == len(FUNCTIONS) + 1 and ALL[-1].name == "propagation"
    for k, function in enumerate(FUNCTIONS):
        assert set(function.reads) <= {f.name for f in FUNCTIONS[:k]}, function.name
        assert set(function.labels) <= set(LABELS) and function.description
    table = functions_table()
    assert all(f.name in table for f in ALL) and "kb; reads zips" in table


def test_no_source_is_given_by_two_functions() -> None:
    sources = [source for f in ALL for source in f.sources]
    assert len(sources) == len(set(sources))
    assert function_of_source("propagation:patient") == "propagation"
    assert function_of_source("pattern:zip_bare") == "zips" and function_of_source("pattern:zip") is None


def test_every_candidate_comes_from_a_listed_source_and_label_of_its_function() -> None:
    labeller = WeakLabeller(matcher())
    candidates = labeller.candidates(LETTER, tokenize(LETTER), PATIENT)
    by_function = Counter()
    for c in candidates:
        name = function_of_source(c.source)
        assert name is not None, c.source
        assert c.label in BY_NAME[name].labels, (c.source, c.label)
        by_function[name] += 1
    # the letter gives every function something to propose (the propagation runs after)
    assert set(by_function) == {f.name for f in FUNCTIONS}
    assert any(s[3].startswith("propagation:") for s in labelled())


def test_the_list_runs_the_functions_in_the_labellers_order() -> None:
    # candidates come grouped by function, in the order of FUNCTIONS (as the hard-coded sequence gave them)
    labeller = WeakLabeller(matcher())
    names = [function_of_source(c.source) for c in labeller.candidates(LETTER, tokenize(LETTER), PATIENT)]
    order = [n for k, n in enumerate(names) if k == 0 or names[k - 1] != n]
    assert order == [f.name for f in FUNCTIONS]


@pytest.mark.parametrize("name", [f.name for f in ALL])
def test_disabling_a_function_removes_its_spans_and_only_them(name: str) -> None:
    everything = labelled()
    without = labelled(frozenset({name}))
    assert not [s for s in without if function_of_source(s[3]) == name]
    theirs = {s for s in everything if function_of_source(s[3]) == name}
    assert theirs, f"the letter gives {name} no span"
    others = everything - theirs
    # the others' spans are kept (but repetitions of a name it found: the propagation repeats kept names);
    # where one of them lost to the disabled function's span, another may win
    repeated = {s for s in others if s[3].startswith("propagation:")}
    assert others - repeated <= without
    if name != "doctor_context":
        assert repeated <= without
    for start, end, _, _ in without - others:
        assert any(s < end and start < e for s, e, _, _ in theirs)


def test_disabling_everything_labels_nothing_and_the_candidates_they_read_are_still_computed() -> None:
    assert labelled(frozenset(BY_NAME)) == set()
    # the postcodes switched off: the cities after them are still found from their candidates
    cities = {s for s in labelled() if s[3] == "address:city_after_zip"}
    assert cities and cities <= labelled(frozenset({"zips"}))


def test_an_unknown_function_is_refused_by_name() -> None:
    with pytest.raises(InputError, match=r"unknown labelling function nope \(known: emails, phones"):
        LabelConfig(disabled=frozenset({"nope", "dates"}))
    with pytest.raises(InputError, match="unknown labelling functions a, b"):
        functions.check_names(["b", "a", "zips"])


def test_the_config_is_picklable_and_compares_with_its_disabled_functions() -> None:
    config = LabelConfig("kb", True, frozenset({"dates", "streets"}))
    assert pickle.loads(pickle.dumps(config)) == config and hash(config) == hash(pickle.loads(pickle.dumps(config)))
    assert config != LabelConfig("kb", True) and LabelConfig(disabled=["dates"]).disabled == frozenset({"dates"})


def test_counts_per_function_sum_to_the_spans() -> None:
    spans = labelled()
    counts = counts_per_function(Counter(source for *_, source in spans))
    assert list(counts) == [f.name for f in ALL]
    assert sum(counts.values()) == len(spans)
    for name, n in counts.items():
        assert n == sum(1 for s in spans if function_of_source(s[3]) == name)
