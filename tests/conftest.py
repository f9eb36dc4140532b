"""Shared fixtures and the order of the test files: the path to the official format samples, a writer of small
notes tables, the generated name-like notes of the labeller's property tests, the knowledge base and the tiny
tagger built once per test session, and the longest test files run first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]

# Property tests draw the same examples on every run: a red CI must mean a change, not a draw. Hunting new
# examples is a developer's run: HYPOTHESIS_PROFILE=explore (random draws, as Hypothesis does by default).
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

#: Verbatim official sample rows of the BAN and of the Annuaire Santé, shipped with the tests
#: (``tests/data/formats/README.md`` says where they come from and under which licence).
FORMATS = Path(__file__).resolve().parent / "data" / "formats"


#: The longest test files, with the seconds each took alone (the sum of ``pytest --durations`` per file, run
#: package by package on 2 cores shared with other work, November 2026): they run first. ``make test`` hands
#: whole files to its two workers (``--dist loadfile`` in pyproject.toml, so that a file's module fixtures are
#: built once), in collection order; a long file left for the end would keep one worker busy while the other
#: waits. Out-of-date figures only change the order, never what runs.
LONGEST_FILES = {
    "tests/engine/test_spark_engine.py": 515,
    "tests/docs/test_examples.py": 230,
    "tests/campaign/test_label_studio_server.py": 200,  # with Label Studio installed (make label-studio)
    "tests/weak_labelling/test_weak_label.py": 176,
    "tests/synth/test_synth.py": 72,
    "tests/deidentification/test_deidentify_leaves_no_identifier.py": 71,
    "tests/io/test_output_dir.py": 58,
    "tests/deidentification/test_deidentify_model.py": 49,
    "tests/synth/test_exports_genres.py": 43,
    "tests/segmentation/test_tokens.py": 42,
    "tests/ner/test_predict.py": 37,
    "tests/evaluation/test_scoring.py": 35,
    "tests/engine/test_stage.py": 34,
    "tests/test_cli.py": 33,
    "tests/label/test_label_name_shortcuts_equal_token_walk.py": 26,
    "tests/ner/test_calibrate.py": 25,
    "tests/ner/test_train.py": 21,
    "tests/segmentation/test_offsets_exact_on_any_html.py": 19,
    "tests/synth/test_exports_layout.py": 19,
    "tests/ner/test_knowledge_features.py": 18,
    "tests/ner/test_transformer.py": 18,
    "tests/label/test_label_regexes_match_plain_forms.py": 17,
    "tests/evaluation/test_evaluate.py": 16,
    "tests/synth/test_synth_geography.py": 15,
    "tests/kb/test_kb_build.py": 15,
    "tests/recipes/test_recipes.py": 14,
    "tests/label/test_label_patterns.py": 12,
    "tests/label/test_label_spans_resolved_and_aligned.py": 11,
    "tests/ner/test_hybrid_thresholds.py": 10,
    "tests/agreement/test_agreement.py": 10,
}


def pytest_collection_modifyitems(config, items):
    """Longest files first (:data:`LONGEST_FILES`); the other files, and the tests within each file, keep
    their order."""
    items.sort(key=lambda item: -LONGEST_FILES.get(item.nodeid.split("::", 1)[0], 0))


#: Words and separators of :func:`name_notes`: names in every casing, particles, initials, titles,
#: words that stop a name run, digits and punctuation, joined by blanks, line breaks and tabs.
NAME_WORDS = [
    "Jeanne",
    "LE",
    "GALL",
    "Le",
    "Gall",
    "de",
    "d'",
    "J.",
    "J.-P.",
    "M.",
    "Dr",
    "Mme",
    "Saint-Brieuc",
    "janvier",
    "Janvier",
    "CEDEX",
    "le",
    "la",
    "12",
    "35000",
    ",",
    ":",
    "-",
    "Morvan",
    "MORVAN",
    "Kerbrat",
    "von",
    "A",
    "Ø",
]
NAME_SEPARATORS = [" ", " ", " ", "  ", "", "\n", "\t", " \n ", "\u00a0", "\r"]


@st.composite
def name_notes(draw, extra_words: tuple[str, ...] = ()) -> str:
    """A short text of :data:`NAME_WORDS` (and ``extra_words``), each followed by a separator."""
    words = draw(st.lists(st.sampled_from(NAME_WORDS + list(extra_words)), min_size=0, max_size=40))
    seps = draw(st.lists(st.sampled_from(NAME_SEPARATORS), min_size=len(words), max_size=len(words)))
    return "".join(w + s for w, s in zip(words, seps))


class NetworkUsed(AssertionError):
    """Raised by :func:`cut_network` when code under test tries to reach the network."""


def _refuse(*args, **kwargs):
    raise NetworkUsed("the code under test tried to reach the network")


@pytest.fixture
def cut_network(monkeypatch):
    """Sockets, urllib, requests and Flair's downloader all raise :class:`NetworkUsed`: the model
    commands must run on what was trained or shipped locally, never on a hub download."""
    import socket
    import urllib.request

    import flair.embeddings.token
    import flair.file_utils
    import requests

    monkeypatch.setattr(socket.socket, "connect", _refuse)
    monkeypatch.setattr(urllib.request, "urlopen", _refuse)
    monkeypatch.setattr(requests.Session, "request", _refuse)
    monkeypatch.setattr(flair.file_utils, "cached_path", _refuse)
    monkeypatch.setattr(flair.embeddings.token, "cached_path", _refuse)


@pytest.fixture
def write_notes(tmp_path):
    """Write a list of dict rows as a Parquet notes table and return its path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(rows: list[dict], name: str = "notes.parquet", schema=None) -> Path:
        path = tmp_path / name
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
        return path

    return write


@pytest.fixture(scope="session")
def kb_dir(tmp_path_factory) -> Path:
    """A knowledge base built once per test session from the sample sources in ``kb/sources``."""
    from deid_ds.kb.build import build_kb

    sources = REPO / "kb" / "sources"
    out = tmp_path_factory.mktemp("kb")
    build_kb(
        out,
        ban=sorted(str(p) for p in sources.glob("adresses-*.csv.gz")),
        health_directory=sorted(str(p) for p in sources.glob("PS_LibreAcces_Personne_activite_*.txt")),
        progress=False,
    )
    return out


def weak_label_sample(root: Path, kb: Path, notes: int) -> Path:
    """``root/weak``: a weak-label output (feature column included, the default) of the first ``notes`` notes of
    the embedded sample, for the training tests."""
    import pyarrow.parquet as pq

    from deid_ds import weak_label

    table = root / "notes.parquet"
    pq.write_table(pq.read_table(REPO / "data" / "notes.parquet").slice(0, notes), table)
    weak_label(table, root / "weak", kb=kb, workers=1, progress=False)
    return root / "weak"


# ------------------------------------------------------------------------------------ the tiny tagger
# One tagger per test session (per xdist worker), shared by the predict, calibrate, deidentify and Spark
# tests: each module used to train its own, identical one.

#: Sample notes the tiny tagger is trained on and predicts (``notes_file`` adds three odd notes after them).
MODEL_NOTES = 12


@pytest.fixture(scope="session")
def notes_file(tmp_path_factory) -> Path:
    """The first sample notes, then a note with no HTML, an empty one and a duplicated id."""
    import pandas as pd
    import pyarrow.parquet as pq

    table = pq.read_table(REPO / "data" / "notes.parquet").slice(0, MODEL_NOTES).to_pandas()
    extra = table.iloc[:3].copy()
    extra["id_document"] = ["no-html", "blank", table["id_document"].iloc[0]]
    extra["html"] = [None, "<p> </p>", "<p>Vu le 12/03/2021.</p>"]
    path = tmp_path_factory.mktemp("notes") / "notes.parquet"
    pd.concat([table, extra], ignore_index=True).to_parquet(path)
    return path


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory, notes_file) -> Path:
    """A real Flair SequenceTagger (CRF, characters only, hidden 8) trained a few epochs on weak labels."""
    import json
    import shutil

    import flair
    import torch
    from flair.data import Dictionary
    from flair.datasets import ColumnCorpus
    from flair.embeddings import CharacterEmbeddings
    from flair.models import SequenceTagger
    from flair.trainers import ModelTrainer

    from deid_ds import weak_label

    base = tmp_path_factory.mktemp("model")
    weak_label(
        notes_file, base / "weak", progress=False, split=(1.0, 0.0, 0.0), workers=1, features=False
    )  # two columns
    flair.set_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        corpus = ColumnCorpus(base / "weak", {0: "text", 1: "ner"}, train_file="train.txt", sample_missing_splits=False)
        corpus._train = torch.utils.data.Subset(corpus.train, range(min(60, len(corpus.train))))
        characters = Dictionary(add_unk=True)
        for sentence in corpus.train:
            for token in sentence:
                for char in token.text:
                    characters.add_item(char)
        tagger = SequenceTagger(
            hidden_size=8,
            embeddings=CharacterEmbeddings(characters, char_embedding_dim=8, hidden_size_char=8),
            tag_dictionary=corpus.make_label_dictionary("ner", add_unk=False),
            tag_type="ner",
            use_crf=True,
        )
        ModelTrainer(tagger, corpus).train(
            base / "flair",
            max_epochs=5,
            mini_batch_size=8,
            learning_rate=0.5,
            save_final_model=True,
            create_file_logs=False,
        )
    finally:
        torch.set_num_threads(threads)
    out = base / "modeldir"
    out.mkdir()
    shutil.copy(base / "flair" / "final-model.pt", out / "best-model.pt")
    (out / "model_card.json").write_text(json.dumps({"note": "tiny test model"}))
    return out
