"""`deid-ds train --self-train`: the relabelling of the training split (pure) and one tiny real round."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.ner.self_train import bio_spans, relabel, rewrite_split, spans_to_bio, split_tokens


@pytest.fixture(autouse=True)
def no_network(cut_network):
    """Nothing here may reach the network (see ``conftest.cut_network``)."""


def test_bio_spans_and_back():
    tags = ["O", "B-NOM", "I-NOM", "O", "B-VILLE"]
    assert bio_spans(tags) == [(1, 3, "NOM"), (4, 5, "VILLE")]
    assert spans_to_bio(5, bio_spans(tags)) == tags


def test_a_confident_model_span_the_rules_missed_is_added():
    # "Vu par Dupont ce jour": no rule found the name; the model is sure of it.
    tags, counts = relabel(["O", "O", "O", "O", "O"], [(2, 3, "NOM", 0.97)], threshold=0.9)
    assert tags == ["O", "O", "B-NOM", "O", "O"]
    assert (counts.added, counts.removed, counts.changed, counts.kept) == (1, 0, 0, 0)


def test_an_unsure_model_span_is_not_added():
    tags, counts = relabel(["O", "O", "O"], [(1, 2, "NOM", 0.6)], threshold=0.9)
    assert tags == ["O", "O", "O"]
    assert (counts.model_spans, counts.confident, counts.added) == (1, 0, 0)


def test_a_longer_model_span_replaces_the_weak_one_it_overlaps():
    # The rules found "Jean", the model "Jean Dupont": the hybrid policy keeps the model's span.
    tags, counts = relabel(["O", "B-NOM", "O", "O"], [(1, 3, "NOM", 0.95)], threshold=0.9)
    assert tags == ["O", "B-NOM", "I-NOM", "O"]
    assert (counts.added, counts.removed, counts.changed) == (0, 0, 1)


def test_a_weak_span_holding_the_model_span_is_kept_whole():
    tags, counts = relabel(["B-NOM", "I-NOM", "I-NOM"], [(1, 2, "NOM", 0.99)], threshold=0.9)
    assert tags == ["B-NOM", "I-NOM", "I-NOM"]
    assert (counts.kept, counts.changed) == (1, 0)


def test_weak_spans_the_model_does_not_see_are_kept():
    tags, counts = relabel(["B-DATE", "O"], [], threshold=0.9)
    assert tags == ["B-DATE", "O"]
    assert (counts.kept, counts.removed) == (1, 0)


def test_rewrite_keeps_the_middle_columns_and_changes_only_the_tags(tmp_path):
    source = tmp_path / "train.txt"
    source.write_text("Vu F:a O\npar F:b O\nDupont F:Cap O\n\nà F:x O\nRennes F:Cap B-VILLE\n\n", encoding="utf-8")
    target = tmp_path / "new.txt"
    assert split_tokens(source) == [["Vu", "par", "Dupont"], ["à", "Rennes"]]
    counts = rewrite_split(source, target, [[(2, 3, "NOM", 0.95)], []], threshold=0.9)
    assert target.read_text(encoding="utf-8") == (
        "Vu F:a O\npar F:b O\nDupont F:Cap B-NOM\n\nà F:x O\nRennes F:Cap B-VILLE\n\n"
    )
    assert (counts.added, counts.kept) == (1, 1)


def _tiny_weak_dir(root: Path) -> Path:
    weak = root / "weak"
    weak.mkdir()
    names = ["Dupont", "Martin", "Durand", "Bernard", "Petit", "Leroy"]
    cities = ["Rennes", "Brest", "Nantes", "Vannes"]
    train = []
    for i in range(24):
        name, city = names[i % len(names)], cities[i % len(cities)]
        tag = "O" if i == 5 else "B-NOM"  # one name the rules missed
        train.append(f"Vu O\npar O\nDr O\n{name} {tag}\nà O\n{city} B-VILLE\n. O\n")
    (weak / "train.txt").write_text("\n".join(train) + "\n", encoding="utf-8")
    (weak / "dev.txt").write_text("Vu O\npar O\nDr O\nMartin B-NOM\nà O\nBrest B-VILLE\n. O\n\n", encoding="utf-8")
    (weak / "test.txt").write_text("", encoding="utf-8")
    return weak


@pytest.mark.slow
def test_one_round_of_self_training_writes_one_model_and_a_card_per_round(tmp_path):
    weak = _tiny_weak_dir(tmp_path)
    out = tmp_path / "model"
    args = ["train", str(weak), "--out", str(out), "--hidden", "8", "--char-dim", "8", "--char-hidden", "8"]
    args += ["--max-epochs", "1", "--threads", "1", "--self-train", "1", "--self-train-threshold", "0", "--quiet"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (out / "best-model.pt").is_file()
    card = json.loads((out / "model_card.json").read_text(encoding="utf-8"))
    rounds = card["self_training"]["per_round"]
    assert [r["round"] for r in rounds] == [0, 1]
    assert {"added", "removed", "changed", "dev_f1"} <= set(rounds[1])
    assert card["data"]["weak_dir"] == str(weak.resolve())
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".deid-ds-tmp")) == []
    assert not [p for p in out.iterdir() if p.suffix == ".txt" and p.name != "training.log"]


def test_self_train_refuses_a_dir_without_train_txt(tmp_path):
    (tmp_path / "weak").mkdir()
    result = CliRunner().invoke(
        main, ["train", str(tmp_path / "weak"), "--out", str(tmp_path / "m"), "--self-train", "1"]
    )
    assert result.exit_code != 0
    assert "train.txt" in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_an_interrupted_self_training_leaves_the_previous_model(tmp_path):
    """The first training is real; the second is interrupted: OUT still holds the model trained before."""
    from deid_ds.ner.self_train import self_train
    from deid_ds.ner.train import TrainConfig, train_tagger

    weak = _tiny_weak_dir(tmp_path)
    out = tmp_path / "model"
    config = TrainConfig(hidden=8, char_dim=8, char_hidden=8, max_epochs=1, threads=1)
    train_tagger(weak, out, config=config)
    before = (out / "model_card.json").read_bytes()
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(args)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return train_tagger(*args, **kwargs)

    with pytest.raises(KeyboardInterrupt):
        self_train(weak, out, rounds=1, train=interrupted, log=lambda _: None, config=config)
    assert len(calls) == 2
    assert (out / "model_card.json").read_bytes() == before and (out / "best-model.pt").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".deid-ds-tmp")] == []
