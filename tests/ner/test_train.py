"""`deid-ds embeddings fasttext|flair-lm` and `deid-ds train`: tiny real trainings through the CLI, offline.

Every test here runs with the network cut (sockets, urllib, requests and Flair's downloader raise), so a
hub name slipping into the embeddings would fail them rather than fetch something.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from tests.conftest import NetworkUsed, weak_label_sample

SAMPLE_NOTES = 60

CARD_FIELDS = {
    "data",
    "embeddings",
    "hyperparameters",
    "scores",
    "epochs",
    "seconds_per_epoch",
    "total_seconds",
    "device",
    "versions",
    "selection",
}


@pytest.fixture(autouse=True)
def no_network(cut_network):
    """Every test here runs with the network cut (see ``conftest.cut_network``)."""


@pytest.fixture(scope="module")
def weak_dir(tmp_path_factory, kb_dir) -> Path:
    """A weak-label output of the first notes of the embedded sample."""
    return weak_label_sample(tmp_path_factory.mktemp("ner"), kb_dir, SAMPLE_NOTES)


def run(args: list[str]) -> str:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_network_is_cut_here():
    with pytest.raises(NetworkUsed):
        urllib.request.urlopen("https://flair.informatik.hu-berlin.de/")


def test_commands_are_lazy():
    """Importing the package and listing the commands' help loads neither torch, flair nor gensim."""
    code = (
        "import sys; from click.testing import CliRunner; from deid_ds.cli import main; "
        "r = [CliRunner().invoke(main, [c, '--help']) for c in ('train', 'embeddings')]; "
        "r += [CliRunner().invoke(main, ['embeddings', c, '--help']) for c in ('fasttext', 'flair-lm')]; "
        "assert all(x.exit_code == 0 for x in r); "
        "print(sorted(m for m in ('torch', 'flair', 'gensim') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_train_help_names_the_paper_defaults():
    out = run(["train", "--help"])
    assert "Flair's NER recipe" in out and "BiLSTM-CRF" in out


def test_fasttext_from_refuses_a_file_that_is_not_fasttext(tmp_path):
    bad = tmp_path / "cc.fr.300.bin"
    bad.write_bytes(b"<html>not found</html>" * 10)
    result = CliRunner().invoke(main, ["embeddings", "fasttext", "--from", str(bad), "--out", str(tmp_path / "ft")])
    assert result.exit_code == 1
    assert "not a Facebook fastText .bin" in result.output
    assert not (tmp_path / "ft").exists()


def test_fasttext_from_references_a_bin_by_its_header(tmp_path):
    """A .bin is checked by its header (magic, version, dim) and referenced, not loaded (cc.fr.300 is 7 GB)."""
    from deid_ds.ner.fasttext import resolve_fasttext

    header = (
        struct.pack("<ii", 793712314, 12)
        + struct.pack("<12i", 300, 5, 5, 5, 10, 1, 1, 1, 2_000_000, 5, 5, 100)
        + struct.pack("<d", 1e-4)
    )
    fake = tmp_path / "cc.fr.300.bin"
    fake.write_bytes(header + b"\0" * 64)
    run(["embeddings", "fasttext", "--from", str(fake), "--out", str(tmp_path / "ft")])
    manifest = json.loads((tmp_path / "ft" / "fasttext.json").read_text())
    assert manifest["format"] == "facebook-bin" and manifest["dim"] == 300 and manifest["path"] == str(fake.resolve())
    assert resolve_fasttext(tmp_path / "ft") == (fake.resolve(), manifest)
    fake.write_bytes(header)  # changed since it was recorded
    with pytest.raises(Exception, match="size changed"):
        resolve_fasttext(tmp_path / "ft")


def test_split_statistics_count_entities_per_label(tmp_path):
    from deid_ds.ner.train import split_statistics

    path = tmp_path / "train.txt"
    path.write_text("Dr B-DOCTOR\nMartin I-DOCTOR\nle O\n12/03/2021 B-DATE\n\nVu O\n\n", encoding="utf-8")
    assert split_statistics(path) == {"sentences": 2, "tokens": 5, "entities": 2, "labels": {"DATE": 1, "DOCTOR": 1}}
    assert split_statistics(tmp_path / "missing.txt")["sentences"] == 0


def test_corpus_text_of_a_weak_dir_leaves_test_out(weak_dir, tmp_path):
    from deid_ds.ner.corpus_text import write_corpus_text

    default = write_corpus_text(weak_dir, tmp_path / "a.txt")
    everything = write_corpus_text(weak_dir, tmp_path / "b.txt", splits=None)
    assert default.kind == "weak-label" and default.splits == ["train", "dev"]
    assert 0 < default.sentences < everything.sentences
    lines = (tmp_path / "a.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == default.sentences and all(line and "  " not in line for line in lines)


@pytest.mark.slow
def test_embeddings_and_train_end_to_end(weak_dir, tmp_path):
    """FastText + forward/backward Flair LMs + BiLSTM-CRF, tiny sizes, one epoch each, through the CLI."""
    from flair.data import Sentence
    from flair.embeddings import FastTextEmbeddings, FlairEmbeddings
    from flair.models import SequenceTagger

    ft, lm, model = tmp_path / "ft", tmp_path / "lm", tmp_path / "model"
    run(
        [
            "embeddings",
            "fasttext",
            str(weak_dir),
            "--out",
            str(ft),
            "--dim",
            "16",
            "--epochs",
            "1",
            "--bucket",
            "2000",
            "--workers",
            "1",
            "--quiet",
        ]
    )
    manifest = json.loads((ft / "fasttext.json").read_text())
    assert manifest["dim"] == 16 and manifest["vocab_size"] > 100 and manifest["corpus"]["sentences"] > 200
    assert FastTextEmbeddings(str(ft / "fasttext.kv")).embedding_length == 16

    run(
        [
            "embeddings",
            "flair-lm",
            str(weak_dir),
            "--out",
            str(lm),
            "--hidden",
            "16",
            "--epochs",
            "1",
            "--seq-len",
            "20",
            "--batch",
            "8",
            "--threads",
            "1",
            "--workers",
            "1",
            "--quiet",
        ]
    )
    lm_manifest = json.loads((lm / "flair_lm.json").read_text())
    assert set(lm_manifest["models"]) == {"forward", "backward"}
    for direction in ("forward", "backward"):
        assert FlairEmbeddings(str(lm / direction / "best-lm.pt")).lm.is_forward_lm == (direction == "forward")

    out = run(
        [
            "train",
            str(weak_dir),
            "--out",
            str(model),
            "--fasttext",
            str(ft),
            "--flair-lm",
            str(lm),
            "--hidden",
            "16",
            "--max-epochs",
            "1",
            "--threads",
            "1",
            "--device",
            "cpu",
        ]
    )
    assert "epoch 1/1" in out and "dev F1" in out
    assert sorted(p.name for p in model.iterdir()) == [
        ".deid-ds.json",
        "best-model.pt",
        "loss.tsv",
        "model_card.json",
        "training.log",
    ]
    card = json.loads((model / "model_card.json").read_text())
    assert CARD_FIELDS <= set(card)
    assert [e["type"] for e in card["embeddings"]] == [  # the weak files have the feature column: stacked by default
        "fasttext",
        "flair-forward",
        "flair-backward",
        "characters",
        "knowledge-features",
    ]
    assert card["data"]["splits"]["train"]["sentences"] > 0 and card["data"]["splits"]["train"]["labels"]
    assert card["hyperparameters"]["hidden"] == 16 and card["hyperparameters"]["lr"] == 0.1
    assert {"dev", "test"} <= set(card["scores"]) and 0 <= card["scores"]["test"]["micro_f1"] <= 1
    assert 0 <= card["hybrid"]["add"] <= 1 and card["hybrid"]["curve"]  # the proxy threshold on the weak dev split
    assert len(card["epochs"]) == 1 and card["epochs"][0]["seconds"] > 0
    assert set(card["versions"]) >= {"deid-ds", "flair", "torch", "gensim", "python"}

    tagger = SequenceTagger.load(model / "best-model.pt")
    sentence = Sentence("Vu par le Dr Martin le 12/03/2021 à Rennes .")
    tagger.predict(sentence)
    assert all(span.tag in card["data"]["labels"] for span in sentence.get_spans("ner"))


@pytest.mark.slow
def test_a_model_is_kept_without_a_dev_split(weak_dir, tmp_path):
    """No dev sentence: train is not cut into a dev (the weak labeller's split stays), the epoch of lowest
    training loss is kept as best-model.pt, and the card says so."""
    import shutil

    data = tmp_path / "weak"
    data.mkdir()
    shutil.copyfile(weak_dir / "train.txt", data / "train.txt")
    (data / "dev.txt").write_text("", encoding="utf-8")
    run(
        [
            "train",
            str(data),
            "--out",
            str(tmp_path / "model"),
            "--hidden",
            "8",
            "--max-epochs",
            "1",
            "--max-sentences",
            "40",
            "--augment",
            "0.5",
            "--threads",
            "1",
            "--device",
            "cpu",
            "--quiet",
        ]
    )
    card = json.loads((tmp_path / "model" / "model_card.json").read_text())
    assert (tmp_path / "model" / "best-model.pt").is_file()
    assert card["selection"] == {"rule": "lowest training loss (no dev split)", "epoch": 1}
    assert card["data"]["splits"]["train"]["sentences"] == 40 and card["scores"] == {}
    # half the training sentences perturbed (deid_ds.ner.augment), the settings on the card
    augmentation = card["data"]["augmentation"]
    assert {k: augmentation[k] for k in ("rate", "level", "seed", "sentences")} == {
        "rate": 0.5,
        "level": 2,
        "seed": 0,
        "sentences": 40,
    }
    assert 10 <= augmentation["perturbed"] <= 30
    assert card["hybrid"] is None  # no dev split: no proxy threshold, predict's hybrid counts every model span
    assert [e["type"] for e in card["embeddings"]] == ["characters", "knowledge-features"]

    # A learning rate below --min-lr: Flair's annealing stops training in the evaluation of the first
    # epoch, before it saves the best model; the final one is kept under the same name.
    shutil.copyfile(weak_dir / "dev.txt", data / "dev.txt")
    run(
        [
            "train",
            str(data),
            "--out",
            str(tmp_path / "model"),
            "--hidden",
            "8",
            "--max-epochs",
            "3",
            "--max-sentences",
            "20",
            "--lr",
            "1e-9",
            "--threads",
            "1",
            "--device",
            "cpu",
            "--quiet",
        ]
    )
    card = json.loads((tmp_path / "model" / "model_card.json").read_text())
    assert (tmp_path / "model" / "best-model.pt").is_file() and not (tmp_path / "model" / "final-model.pt").exists()
    assert card["selection"] == {"rule": "last epoch (training stopped before Flair saved it)", "epoch": 1}
    assert card["epochs_run"] == 1


def test_train_refuses_without_embeddings(weak_dir, tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "train",
            str(weak_dir),
            "--out",
            str(tmp_path / "m"),
            "--no-char",
            "--no-features",
            "--device",
            "cpu",
            "--quiet",
        ],
    )
    assert result.exit_code == 1 and "no embeddings" in result.output
    assert not (tmp_path / "m").exists()


def test_fast_defaults_are_repeated_for_the_help():
    from deid_ds.ner.train import FAST_HIDDEN, FAST_LOCKED_DROPOUT
    from deid_ds.ner.train_cli import _FAST_HIDDEN, _FAST_LOCKED_DROPOUT

    assert (_FAST_HIDDEN, _FAST_LOCKED_DROPOUT) == (FAST_HIDDEN, FAST_LOCKED_DROPOUT)


def test_fast_refuses_character_language_models(weak_dir, tmp_path):
    lm = tmp_path / "lm.pt"
    lm.write_bytes(b"not read")
    result = CliRunner().invoke(
        main, ["train", str(weak_dir), "--out", str(tmp_path / "m"), "--fast", "--flair-lm", str(lm), "--quiet"]
    )
    assert result.exit_code == 1 and "--fast" in result.output and "--flair-lm" in result.output
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_fast_recipe_trains_a_model_predict_tags_directly(weak_dir, kb_dir, tmp_path):
    """``train --fast``: characters and knowledge features, hidden 64, no language model; ``predict`` tags it
    through deid_ds.ner.direct and writes the spans Flair's own objects give."""
    from dataclasses import replace

    import pyarrow.parquet as pq

    from deid_ds.defaults import DEFAULT_MAX_TOKENS
    from deid_ds.io.notes import open_notes
    from deid_ds.label.labeller import LabelConfig
    from deid_ds.ner.predict import PredictJob, PredictOptions, direct_tagger, load_tagger, predict_batch
    from deid_ds.segmentation.notes import SegmentOptions

    model = tmp_path / "model"
    args = ["train", str(weak_dir), "--out", str(model), "--fast", "--max-epochs", "3", "--lr", "0.5"]
    run([*args, "--threads", "1", "--device", "cpu", "--quiet"])
    card = json.loads((model / "model_card.json").read_text())
    assert [e["type"] for e in card["embeddings"]] == ["characters", "knowledge-features"]
    assert card["hyperparameters"]["fast"] is True and card["hyperparameters"]["hidden"] == 64
    assert card["hyperparameters"]["locked_dropout"] == 0.25  # the fast stack's own default
    assert direct_tagger(load_tagger(str(model / "best-model.pt"), "cpu")) is not None

    notes = tmp_path / "notes.parquet"
    pq.write_table(pq.read_table(Path(__file__).parents[2] / "data" / "notes.parquet").slice(0, 8), notes)
    run(["predict", str(model), str(notes), "--out", str(tmp_path / "pred"), "--kb", str(kb_dir), "--quiet"])
    written = pq.read_table(tmp_path / "pred" / "spans.parquet").to_pydict()
    segment = SegmentOptions(None, DEFAULT_MAX_TOKENS)
    features = LabelConfig(str(kb_dir), True)
    options = PredictOptions(str(model / "best-model.pt"), segment, threads=1, features=features)
    through_flair = predict_batch(PredictJob(list(open_notes(notes).iter_notes()), replace(options, direct=False)))
    assert written["label"], "the model should find some entities"
    assert {name: through_flair.spans[name] for name in written} == written
