"""``train --synthetic N`` (generated notes with their exact gold mixed into train) and ``--feature-dropout``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.ner.synthetic import DEFAULT_SEED, SyntheticMix, gold_tags, mix_synthetic, repeat_blocks
from tests.conftest import REPO, weak_label_sample

SAMPLE_NOTES = 30


@pytest.fixture(autouse=True)
def no_network(cut_network):
    """Every test here runs with the network cut (see ``conftest.cut_network``)."""


@pytest.fixture(scope="module")
def weak_dir(tmp_path_factory, kb_dir) -> Path:
    """A weak-label output (feature column included, the default) of the first notes of the embedded sample."""
    return weak_label_sample(tmp_path_factory.mktemp("synthetic"), kb_dir, SAMPLE_NOTES)


def blocks(path: Path) -> list[list[str]]:
    return [block.splitlines() for block in path.read_text(encoding="utf-8").split("\n\n") if block.strip()]


# ------------------------------------------------------------------------------------------ pure parts


def test_gold_tags_tag_the_tokens_a_span_overlaps():
    tokens = [(0, 2), (3, 9), (10, 16), (17, 22), (23, 28)]  # "Dr Martin Rennes 35000 Paris"
    tags, unaligned = gold_tags(tokens, [(3, 9, "DOCTOR"), (10, 22, "VILLE")])
    assert tags == ["O", "B-DOCTOR", "B-VILLE", "I-VILLE", "O"] and unaligned == 0
    # a span cut inside a token covers the whole token (as a redaction would), and is counted
    tags, unaligned = gold_tags(tokens, [(5, 12, "PATIENT")])
    assert tags == ["O", "B-PATIENT", "I-PATIENT", "O", "O"] and unaligned == 1
    # a span between tokens tags nothing; an overlapping later span keeps only its untagged tokens
    assert gold_tags(tokens, [(2, 3, "DATE")]) == (["O"] * 5, 0)
    tags, _ = gold_tags(tokens, [(10, 16, "VILLE"), (10, 22, "STR")])
    assert tags == ["O", "O", "B-VILLE", "B-STR", "O"]


def test_repeat_blocks_gives_the_weight_in_sentences():
    sentences = [[f"w{i} O"] for i in range(10)]
    assert repeat_blocks(sentences, 1.0, 0) == sentences
    assert len(repeat_blocks(sentences, 2.0, 0)) == 20
    half = repeat_blocks(sentences, 0.5, 0)
    assert len(half) == 5 and half == repeat_blocks(sentences, 0.5, 0)  # seeded
    assert len(repeat_blocks(sentences, 2.3, 0)) == 23


def test_the_mix_refuses_test_phrasings_and_shares_out_the_notes():
    with pytest.raises(InputError, match="test corpus"):
        SyntheticMix(10, phrasings=("exports-heldout",))
    with pytest.raises(InputError, match="test corpus"):
        SyntheticMix(10, phrasings=("unseen",))
    assert SyntheticMix(5).parts() == [("all", 3, DEFAULT_SEED), ("exports", 2, DEFAULT_SEED + 1)]
    assert DEFAULT_SEED != 1  # not the shipped sample's seed (data/README.md)


def test_the_cli_default_seed_is_the_module_s():
    from deid_ds.ner.train_cli import _SYNTHETIC_SEED

    assert _SYNTHETIC_SEED == DEFAULT_SEED


# ------------------------------------------------------------------------------------------ the mix


def _writer_blocks(corpus: Path, kb: Path) -> list[list[str]]:
    """What weak-label's own writer gives for the generated notes with their gold spans as the labels."""
    from deid_ds.io.notes import open_notes
    from deid_ds.label.candidate import Candidate
    from deid_ds.label.labeller import LabelConfig
    from deid_ds.label.lookup import NoteLookup
    from deid_ds.segmentation.notes import SegmentOptions, segment_note, segmenter_for
    from deid_ds.weak_labelling import BatchColumns, LabelledNote, labeller_for, token_ranges
    from deid_ds.weak_labelling.gold import read_gold

    gold = read_gold(corpus / "gold.parquet")
    segmenter = segmenter_for(SegmentOptions())
    matcher = labeller_for(LabelConfig(str(kb))).matcher
    columns = BatchColumns(features=True)
    for note in open_notes(corpus / "notes.parquet").iter_notes():
        status, parsed, compact = segment_note(note, segmenter)
        starts, ends = compact.starts, compact.ends
        candidates = []
        rows = gold[gold["id_document"] == note.id_document].sort_values("html_start")
        for html_start, html_end, label in zip(rows["html_start"], rows["html_end"], rows["label"]):
            start, end = parsed.text_span(int(html_start), int(html_end))
            inside = [k for k in range(len(starts)) if starts[k] < end and ends[k] > start]
            if inside and not any(c.start <= starts[inside[0]] < c.end for c in candidates):
                candidates.append(Candidate(starts[inside[0]], ends[inside[-1]], label, "gold"))
        lookup = NoteLookup.of_offsets(parsed.text, starts, ends, matcher, note.patient)  # what the features read
        labelled = LabelledNote(status, parsed, compact, candidates, token_ranges(candidates, starts, ends), lookup)
        columns.add(note, labelled, 0.0)
    text = "".join(columns.tables()["lines"].column("flair").to_pylist())
    return [block.splitlines() for block in text.split("\n\n") if block.strip()]


def test_synthetic_sentences_are_weak_label_s_with_the_gold_as_labels(weak_dir, tmp_path):
    """Same segmentation, tokens and feature columns as weak-label's writer; the tags are the gold's."""
    from deid_ds.kb.build import build_kb
    from deid_ds.kb.sources_dir import find_sources
    from deid_ds.synth import SynthConfig, synthesize

    mix = SyntheticMix(6, seed=5, phrasings=("train",))
    record = mix_synthetic(weak_dir, tmp_path / "mixed", mix)

    synthesize(SynthConfig(notes=6, seed=5, phrasing="train"), tmp_path / "corpus", kb_dir=tmp_path / "sources")
    found = find_sources(tmp_path / "sources")
    build_kb(tmp_path / "kb", ban=found.ban, health_directory=found.health_directory, progress=False)
    expected = _writer_blocks(tmp_path / "corpus", tmp_path / "kb")

    weak = blocks(weak_dir / "train.txt")
    mixed = blocks(tmp_path / "mixed" / "train.txt")
    assert mixed[: len(weak)] == weak  # the weak part first, as it is
    assert mixed[len(weak) :] == expected and expected
    assert all(len(line.split(" ")) == 3 for block in expected for line in block)
    assert (tmp_path / "mixed" / "dev.txt").read_text() == (weak_dir / "dev.txt").read_text()
    assert (tmp_path / "mixed" / "test.txt").read_text() == (weak_dir / "test.txt").read_text()
    part = record["parts"][0]
    assert part["entities_tagged"] == part["gold_spans"] > 0 and part["in_no_sentence"] == 0
    assert record["train"]["synthetic"]["sentences"] == len(expected)
    assert not (tmp_path / "mixed-synthetic").exists()  # the generated corpus is not kept


def test_the_mix_proportions_and_the_synthetic_dev(weak_dir, tmp_path):
    once = mix_synthetic(weak_dir, tmp_path / "once", SyntheticMix(12, seed=5, phrasings=("train",)))
    twice = mix_synthetic(
        weak_dir, tmp_path / "twice", SyntheticMix(12, seed=5, phrasings=("train",), weight=2.0, dev_share=0.34)
    )
    n_weak = once["train"]["weak"]["sentences"]
    n_synthetic = once["train"]["synthetic"]["sentences"]
    assert len(blocks(tmp_path / "once" / "train.txt")) == n_weak + n_synthetic
    assert once["train"]["synthetic_share"] == round(n_synthetic / (n_weak + n_synthetic), 6)
    # with a synthetic dev, one of the three patients leave train for dev; the rest is written twice
    dev = twice["dev"]["synthetic"]["sentences"]
    assert 0 < dev < n_synthetic
    assert twice["train"]["synthetic"]["sentences"] == 2 * (n_synthetic - dev)
    assert len(blocks(tmp_path / "twice" / "dev.txt")) == twice["dev"]["weak"]["sentences"] + dev
    labels = twice["train"]["synthetic"]["labels"]
    assert sum(labels.values()) == twice["train"]["synthetic"]["entities"] > 0


# ------------------------------------------------------------------------------------------ feature dropout


def test_feature_dropout_drops_whole_tokens_at_the_share_asked():
    from deid_ds.ner.knowledge import drop_tokens

    matrix = torch.ones(20_000, 4)
    dropped = drop_tokens(matrix, 0.2, torch.Generator().manual_seed(0))
    rows = dropped.sum(dim=1)
    assert set(rows.unique().tolist()) == {0.0, 4.0}  # a token keeps all its features or none, unscaled
    assert abs((rows == 0).float().mean().item() - 0.2) < 0.01
    again = drop_tokens(matrix, 0.2, torch.Generator().manual_seed(0))
    assert torch.equal(dropped, again)
    assert torch.equal(drop_tokens(matrix, 0.0), matrix)


def test_feature_dropout_acts_in_training_only():
    from flair.data import Sentence

    from deid_ds.ner.knowledge import FEATURE_COLUMN, KnowledgeEmbeddings

    embedding = KnowledgeEmbeddings(["kb:first", "kb:last"], 4, feature_dropout=0.5)
    sentence = Sentence(["Marie"] * 400)
    for token in sentence:
        token.add_label(FEATURE_COLUMN, "kb:first|kb:last")
    torch.manual_seed(0)
    embedding.train()
    embedding.embed(sentence)
    bias = embedding.linear.bias.detach()
    as_none = sum(torch.allclose(t.get_embedding().detach(), bias) for t in sentence)
    assert 150 < as_none < 250  # about half read as a token with no feature
    embedding.eval()
    sentence.clear_embeddings()
    embedding.embed(sentence)
    assert not any(torch.allclose(t.get_embedding().detach(), bias) for t in sentence)
    assert KnowledgeEmbeddings.from_params(embedding.to_params()).feature_dropout == 0.5


# ------------------------------------------------------------------------------------------ through the CLI


def test_the_cli_refuses_a_test_phrasing_and_self_training(weak_dir, tmp_path):
    args = ["train", str(weak_dir), "--out", str(tmp_path / "m"), "--synthetic", "4"]
    result = CliRunner().invoke(main, [*args, "--synthetic-phrasing", "unseen"])
    assert result.exit_code == 2 and "unseen" in result.output  # not a choice
    result = CliRunner().invoke(main, [*args, "--self-train", "1"])
    assert result.exit_code != 0 and "--self-train" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_train_synthetic_through_the_cli_records_the_mix(weak_dir, tmp_path):
    model = tmp_path / "model"
    result = CliRunner().invoke(
        main,
        [
            "train",
            str(weak_dir),
            "--out",
            str(model),
            "--synthetic",
            "6",
            "--synthetic-seed",
            "11",
            "--synthetic-weight",
            "2",
            "--feature-dropout",
            "0.1",
            "--hidden",
            "8",
            "--max-epochs",
            "1",
            "--threads",
            "1",
            "--device",
            "cpu",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "synthetic:" in result.output
    card = json.loads((model / "model_card.json").read_text())
    mix = card["data"]["synthetic"]
    assert mix["notes"] == 6 and mix["seed"] == 11 and mix["weight"] == 2.0
    assert [(p["phrasing"], p["seed"], p["notes"]) for p in mix["parts"]] == [("all", 11, 3), ("exports", 12, 3)]
    assert mix["families"] == [0, 1, 3]
    train = card["data"]["splits"]["train"]
    assert train["sentences"] == mix["train"]["weak"]["sentences"] + mix["train"]["synthetic"]["sentences"]
    assert 0 < mix["train"]["synthetic_share"] < 1
    for label, n in mix["train"]["synthetic"]["labels"].items():
        assert train["labels"][label] == mix["train"]["weak"]["labels"].get(label, 0) + n
    assert card["data"]["weak_dir"] == str(weak_dir.resolve())
    assert card["hyperparameters"]["feature_dropout"] == 0.1
    assert card["knowledge_features"]["kb_fingerprint"] is not None  # the weak run's, for predict --kb
    assert not any(path.name.startswith("deid-ds-train-") for path in tmp_path.iterdir())


def test_weak_files_without_features_get_synthetic_sentences_without_them(tmp_path):
    from deid_ds import weak_label

    notes = tmp_path / "notes.parquet"
    pq.write_table(pq.read_table(REPO / "data" / "notes.parquet").slice(0, 8), notes)
    weak_label(notes, tmp_path / "weak", workers=1, progress=False, features=False)
    record = mix_synthetic(tmp_path / "weak", tmp_path / "mixed", SyntheticMix(4, phrasings=("train",)))
    lines = [line for block in blocks(tmp_path / "mixed" / "train.txt") for line in block]
    assert lines and all(len(line.split(" ")) == 2 for line in lines)
    assert record["knowledge_base"] is None and record["train"]["synthetic"]["entities"] > 0
