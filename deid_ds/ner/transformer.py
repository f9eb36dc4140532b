"""``deid-ds train --transformer DIR``: a local Hugging Face checkpoint (CamemBERT, DrBERT...) as embeddings.

Hospitals download a checkpoint once (``save_pretrained`` / ``git clone`` of the model repository) and
train where nothing reaches the network. So the checkpoint is a **directory**, never a hub name: it must
hold a ``config.json``, tokenizer files and weights (:func:`check_checkpoint`, else a one-line
:class:`~deid_ds.errors.InputError` and no download attempt), and it is loaded with
``local_files_only=True`` while ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` are set (:func:`offline`).

The embedding is Flair's ``TransformerWordEmbeddings`` with the first sub-token of each word (``"first"``
pooling: the usual choice for tagging; our tokens are never re-tokenised by Flair, the transformer's
tokenizer only splits each of them into sub-words) and the layers asked for (default ``"-1"``, the last).

**Frozen by default.** The tagger on top is trained with plain SGD at learning rate 0.1 (Flair's
BiLSTM-CRF recipe); fine-tuning a 110M-parameter encoder needs AdamW at about 5e-5 and, on the CPUs a
hospital lends, hours per epoch. A frozen encoder is a feature extractor like FastText: its embeddings
are computed once and kept between epochs, so training costs one forward pass of the encoder per
sentence. ``--transformer-fine-tune`` unfreezes it (for a GPU, at your own choice of learning rate).

A saved model embeds the transformer (its config, weights and tokenizer files, which Flair serialises
into the model), so ``SequenceTagger.load`` needs neither the directory nor the network.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from deid_ds.errors import InputError

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
WEIGHT_FILES = (
    "model.safetensors",
    "pytorch_model.bin",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
)
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "sentencepiece.bpe.model", "spiece.model", "vocab.json")


@contextmanager
def offline() -> Iterator[None]:
    """``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` for the block, restored afterwards."""
    previous = {name: os.environ.get(name) for name in OFFLINE_VARIABLES}
    os.environ.update(dict.fromkeys(OFFLINE_VARIABLES, "1"))
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def check_checkpoint(path: str | Path) -> Path:
    """``path`` if it is a local Hugging Face checkpoint directory (config, tokenizer, weights), else InputError."""
    directory = Path(path)
    if not directory.is_dir():
        raise InputError(
            f"--transformer {path}: not a directory (a local Hugging Face checkpoint; nothing is downloaded)"
        )
    if not (directory / "config.json").is_file():
        raise InputError(
            f"--transformer {path}: no config.json (not a Hugging Face checkpoint saved with save_pretrained)"
        )
    if not any((directory / name).is_file() for name in TOKENIZER_FILES):
        raise InputError(f"--transformer {path}: no tokenizer files ({', '.join(TOKENIZER_FILES)})")
    if not any((directory / name).is_file() for name in WEIGHT_FILES):
        raise InputError(f"--transformer {path}: no weights ({', '.join(WEIGHT_FILES)})")
    return directory


def read_config(directory: Path) -> dict:
    """The checkpoint's ``config.json`` (InputError when it is not a JSON object)."""
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise InputError(f"--transformer {directory}: config.json is not readable JSON") from None
    if not isinstance(config, dict):
        raise InputError(f"--transformer {directory}: config.json is not a JSON object")
    return config


def fingerprint(directory: Path) -> str:
    """SHA-256 of the checkpoint's files (relative names and contents, in name order): which weights were used."""
    digest = hashlib.sha256()
    for file in sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith(".")):
        digest.update(file.relative_to(directory).as_posix().encode("utf-8") + b"\0")
        with file.open("rb") as data:
            for block in iter(lambda: data.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def transformer_embedding(path: str | Path, *, layers: str = "-1", fine_tune: bool = False):
    """Flair's ``TransformerWordEmbeddings`` of the local checkpoint ``path``, and its model-card entry."""
    directory = check_checkpoint(path)
    config = read_config(directory)
    with offline():
        from flair.embeddings import TransformerWordEmbeddings

        try:
            embedding = TransformerWordEmbeddings(
                str(directory),
                layers=layers,
                subtoken_pooling="first",
                fine_tune=fine_tune,
                allow_long_sentences=True,
                name=f"transformer-{config.get('model_type', 'unknown')}",
                local_files_only=True,
            )
        except (OSError, ValueError, KeyError) as error:
            raise InputError(f"--transformer {path}: cannot be loaded offline ({type(error).__name__})") from None
    info = {
        "type": "transformer",
        "path": str(directory.resolve()),
        "model_type": config.get("model_type"),
        "hidden_size": config.get("hidden_size"),
        "layers": layers,
        "subtoken_pooling": "first",
        "fine_tune": fine_tune,
        "fingerprint": f"sha256:{fingerprint(directory)}",
        "dim": embedding.embedding_length,
    }
    return embedding, info
