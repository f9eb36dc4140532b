"""`deid-ds train --transformer DIR`: a local Hugging Face checkpoint, loaded and saved without the network.

The checkpoint is a tiny randomly-initialised BERT written here (hidden 16, one layer, a WordPiece vocabulary
of a few dozen tokens): what matters is the plumbing — offline loading, the model card, a saved tagger that
loads and predicts with the checkpoint gone and the hub switched off — not what it has learnt.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.ner.transformer import OFFLINE_VARIABLES, check_checkpoint, fingerprint, offline

WORDS = "vu par le dr docteur patient patiente à de la est venu ce jour né le rennes brest nantes dupont martin".split()


@pytest.fixture(autouse=True)
def no_network(cut_network):
    """Nothing here may reach the network (see ``conftest.cut_network``)."""


def write_tiny_bert(directory: Path) -> Path:
    """A randomly-initialised BERT with its WordPiece tokenizer, saved as a hospital would have it."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    directory.mkdir(parents=True)
    chars = sorted(set("".join(WORDS)) | set(".,:-0123456789"))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *chars, *(f"##{c}" for c in chars)]
    (directory / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(directory / "vocab.txt"), do_lower_case=True)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def test_offline_sets_and_restores_the_hub_variables(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    with offline():
        assert all(os.environ[name] == "1" for name in OFFLINE_VARIABLES)
    assert "HF_HUB_OFFLINE" not in os.environ and os.environ["TRANSFORMERS_OFFLINE"] == "0"


@pytest.mark.parametrize("missing", ["directory", "config.json", "vocab.txt", "model.safetensors"])
def test_what_is_not_a_local_checkpoint_is_refused(tmp_path, missing):
    checkpoint = write_tiny_bert(tmp_path / "bert")
    if missing == "directory":
        checkpoint = tmp_path / "camembert-base"  # a hub name: never looked up
    else:
        for name in (missing, "tokenizer.json") if missing == "vocab.txt" else (missing,):
            (checkpoint / name).unlink()
    with pytest.raises(InputError, match="--transformer"):
        check_checkpoint(checkpoint)


def test_the_fingerprint_follows_the_weights(tmp_path):
    checkpoint = write_tiny_bert(tmp_path / "bert")
    before = fingerprint(checkpoint)
    assert fingerprint(checkpoint) == before
    (checkpoint / "model.safetensors").write_bytes((checkpoint / "model.safetensors").read_bytes() + b"\0")
    assert fingerprint(checkpoint) != before


def test_train_with_a_hub_name_is_one_line_and_no_download(tmp_path):
    weak = tmp_path / "weak"
    weak.mkdir()
    (weak / "train.txt").write_text("Vu O\npar O\nDupont B-NOM\n\n", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["train", str(weak), "--out", str(tmp_path / "m"), "--transformer", "camembert-base"]
    )
    assert result.exit_code == 1
    assert "--transformer camembert-base: not a directory" in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_train_with_a_local_transformer_then_load_and_predict_offline(tmp_path):
    checkpoint = write_tiny_bert(tmp_path / "bert")
    weak = tmp_path / "weak"
    weak.mkdir()
    names, cities = ["Dupont", "Martin"], ["Rennes", "Brest", "Nantes"]
    sentences = [
        f"Vu O\npar O\nle O\nDr O\n{names[i % 2]} B-NOM\nà O\n{cities[i % 3]} B-VILLE\n. O\n" for i in range(8)
    ]
    (weak / "train.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    (weak / "dev.txt").write_text(sentences[1] + "\n", encoding="utf-8")
    out = tmp_path / "model"
    args = ["train", str(weak), "--out", str(out), "--transformer", str(checkpoint), "--no-char"]
    args += ["--hidden", "8", "--max-epochs", "1", "--threads", "1", "--quiet"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    card = json.loads((out / "model_card.json").read_text(encoding="utf-8"))
    (entry,) = card["embeddings"]
    assert entry["type"] == "transformer" and entry["model_type"] == "bert" and entry["hidden_size"] == 16
    assert entry["path"] == str(checkpoint.resolve()) and entry["fingerprint"] == f"sha256:{fingerprint(checkpoint)}"
    assert (entry["layers"], entry["subtoken_pooling"], entry["fine_tune"], entry["dim"]) == ("-1", "first", False, 16)

    # The saved model embeds the transformer: it loads and predicts with the checkpoint gone, the hub
    # switched off and every socket refused.
    shutil.rmtree(checkpoint)
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise SystemExit('network used')\n"
        "socket.socket.connect = refuse\n"
        "from flair.data import Sentence\n"
        "from flair.models import SequenceTagger\n"
        "tagger = SequenceTagger.load(sys.argv[1])\n"
        "sentence = Sentence(['Vu', 'par', 'le', 'Dr', 'Dupont', '.'])\n"
        "tagger.predict(sentence)\n"
        "print('predicted', len(sentence))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")}
    done = subprocess.run(
        [sys.executable, "-c", code, str(out / "best-model.pt")], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "predicted 6" in done.stdout
