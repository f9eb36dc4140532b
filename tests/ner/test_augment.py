"""``deid-ds train --augment``: training sentences perturbed with their BIO tags and feature columns carried
along (:mod:`deid_ds.ner.augment`), the train split only."""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.ner.augment import AugmentConfig, augment_file, entity_spans, perturb_sentence
from deid_ds.ner.train import SPLITS, TrainConfig, _augment_train, _prepare_data, split_statistics
from deid_ds.synth.perturb import Rates

#: token, knowledge features, tag: a Flair line of a weak-label directory with --features
SENTENCE = [
    ["Vu", "shape:title", "O"],
    ["le", "common_word", "O"],
    ["patient", "common_word", "O"],
    ["Jean", "kb:first|meta:first", "B-PATIENT"],
    ["KERDRAON", "kb:last|meta:last", "I-PATIENT"],
    [",", "-", "O"],
    ["né", "common_word", "O"],
    ["le", "common_word", "O"],
    ["12/03/1950", "meta:birth", "B-DATE"],
    ["à", "common_word", "O"],
    ["Plérin", "kb:commune", "B-VILLE"],
    [".", "-", "O"],
]


def _tokens(rows):
    return [row[0] for row in rows]


def test_entity_spans_read_bio_as_flair_does():
    assert entity_spans(["O", "B-A", "I-A", "I-B", "B-A", "O", "I-A"], range(7), range(1, 8)) == [
        (1, 3, "A"),
        (3, 4, "B"),
        (4, 5, "A"),
        (6, 7, "A"),
    ]


def test_a_token_cut_in_two_gives_b_then_i_and_both_keep_its_features():
    rows = perturb_sentence(SENTENCE, Rates(hyphen_cut=1.0), random.Random(0))
    cut = [row for row in rows if row[0].endswith("-")]
    assert cut, rows
    by_token = {row[0]: row for row in rows}
    patient = [row for row in rows if row[-1].endswith("PATIENT")]
    assert [row[-1] for row in patient] == ["B-PATIENT", "I-PATIENT", "I-PATIENT"]
    assert "".join(row[0] for row in patient[1:]).replace("-", "") == "KERDRAON"
    assert patient[1][1] == patient[2][1] == "kb:last|meta:last"
    ville = [row for row in rows if row[-1].endswith("VILLE")]
    assert [row[-1] for row in ville] == ["B-VILLE", "I-VILLE"] and ville[1][1] == "kb:commune"
    assert by_token["Vu"] == ["Vu", "shape:title", "O"]


def test_a_space_inserted_in_a_word_of_an_entity_continues_the_entity():
    rows = perturb_sentence(SENTENCE, Rates(space_added=1.0), random.Random(1))
    patient = [row for row in rows if row[-1].endswith("PATIENT")]
    assert [row[-1] for row in patient] == ["B-PATIENT", "I-PATIENT", "I-PATIENT", "I-PATIENT"]
    assert "".join(_tokens(patient)) == "JeanKERDRAON"
    assert [row[1] for row in patient] == ["kb:first|meta:first"] * 2 + ["kb:last|meta:last"] * 2


def test_a_lost_space_merges_words_of_one_entity_or_outside_only():
    rows = perturb_sentence(SENTENCE, Rates(space_lost=1.0), random.Random(0))
    assert ["JeanKERDRAON", "kb:first|meta:first", "B-PATIENT"] in rows  # the first one's tag and features
    assert ["Vulepatient", "shape:title", "O"] in rows
    # never across an entity edge: the words beside an entity stay apart from it
    assert ["12/03/1950", "meta:birth", "B-DATE"] in rows and ["Plérin", "kb:commune", "B-VILLE"] in rows
    assert all(row[-1] != "O" or not any(c.isupper() for c in row[0][1:]) for row in rows)


def test_dropped_punctuation_takes_its_token_away():
    rows = perturb_sentence(SENTENCE, Rates(punctuation=1.0), random.Random(0))
    assert _tokens(rows) == [t for t in _tokens(SENTENCE) if t not in {",", "."}]
    assert [row[-1] for row in rows] == [row[-1] for row in SENTENCE if row[0] not in {",", "."}]


def test_every_level_keeps_tags_well_formed_and_features_attached():
    for seed in range(200):
        rows = perturb_sentence(SENTENCE, 3, random.Random(seed))
        tags = [row[-1] for row in rows]
        assert all(len(row) == 3 and row[0] and not any(c.isspace() for c in row[0]) for row in rows)
        labels = [t[2:] for t in tags if t != "O"]
        assert tags.count("B-PATIENT") == tags.count("B-DATE") == tags.count("B-VILLE") == 1, tags
        assert sorted(set(labels)) == ["DATE", "PATIENT", "VILLE"]
        for previous, tag in zip(["O", *tags], tags, strict=False):
            if tag.startswith("I-"):
                assert previous[2:] == tag[2:], tags


def test_a_sentence_with_only_punctuation_is_kept_whole():
    rows = [[".", "O"]]
    assert perturb_sentence(rows, Rates(punctuation=1.0), random.Random(0)) == rows


def _write(path, sentences):
    path.write_text("".join("".join(" ".join(row) + "\n" for row in rows) + "\n" for rows in sentences), "utf-8")


def test_augment_file_perturbs_a_seeded_share(tmp_path):
    source = tmp_path / "train.txt"
    _write(source, [SENTENCE] * 200)
    record = augment_file(source, tmp_path / "none.txt", AugmentConfig(rate=0.0))
    assert (tmp_path / "none.txt").read_text("utf-8") == source.read_text("utf-8")
    assert record == {"rate": 0.0, "level": 2, "seed": 0, "sentences": 200, "perturbed": 0}
    record = augment_file(source, tmp_path / "a.txt", AugmentConfig(rate=0.3, level=3, seed=5))
    assert 30 < record["perturbed"] < 90 and record["sentences"] == 200
    augment_file(source, tmp_path / "b.txt", AugmentConfig(rate=0.3, level=3, seed=5))
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    stats = split_statistics(tmp_path / "a.txt")
    assert stats["sentences"] == 200 and stats["labels"] == {"DATE": 200, "PATIENT": 200, "VILLE": 200}


def test_augment_config_is_checked():
    with pytest.raises(ValueError, match="share"):
        AugmentConfig(rate=1.5)
    with pytest.raises(ValueError, match="noise level"):
        AugmentConfig(rate=0.5, level=7)


def test_only_the_train_split_is_augmented(tmp_path):
    weak = tmp_path / "weak"
    weak.mkdir()
    for name in SPLITS:
        _write(weak / f"{name}.txt", [SENTENCE] * 20)
    config = TrainConfig(augment=1.0, augment_level=3)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    data_dir, files, statistics = _prepare_data(weak, scratch, config)
    record = _augment_train(data_dir, scratch, files, statistics, config)
    assert record == {"rate": 1.0, "level": 3, "seed": 0, "sentences": 20, "perturbed": 20}
    assert files["train"] == str(scratch / "augmented-train.txt") and files["dev"] == "dev.txt"
    assert (scratch / "augmented-train.txt").read_text("utf-8") != (weak / "train.txt").read_text("utf-8")
    assert statistics["train"] == split_statistics(scratch / "augmented-train.txt")
    assert _augment_train(data_dir, scratch, *_prepare_data(weak, scratch, TrainConfig())[1:], TrainConfig()) is None


@pytest.mark.parametrize(
    "args, message", [(["--augment", "1.5"], "--augment"), (["--augment-level", "0"], "--augment-level")]
)
def test_train_refuses_an_augmentation_out_of_range(tmp_path, args, message):
    weak = tmp_path / "weak"
    weak.mkdir()
    _write(weak / "train.txt", [SENTENCE])
    result = CliRunner().invoke(main, ["train", str(weak), "--out", str(tmp_path / "m"), *args])
    assert result.exit_code == 2 and message in result.output and "is not in the range" in result.output
    assert not (tmp_path / "m").exists()
