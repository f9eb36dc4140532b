"""Forward and backward character language models (Flair embeddings) trained on the notes.

The paper's best tagger stacks FastText with Flair's French forward and backward embeddings: two
character-level LSTM language models whose hidden states, read at each word's boundary, give a
contextual word representation. Flair's pretrained French models live on a server this project must
not depend on at run time, and models trained on clinical notes model their spelling (capitals for
surnames, abbreviations, dates) better, so they are trained here with Flair's own
``LanguageModelTrainer`` on the notes' text:

* the corpus text (one sentence per line, tokens joined by single spaces, as Flair feeds a
  ``tokenized_lm`` at tagging time) is laid out as Flair's ``TextCorpus`` wants it: ``train/`` split
  files, ``valid.txt``, ``test.txt`` (one line in ``valid_every`` each for validation and test, chosen
  by position: the same split on every run);
* the character dictionary is built from the corpus' own characters, most frequent first, with
  ``<unk>`` (index 0) for any other character met later;
* the best model by validation loss is ``DIR/forward/best-lm.pt`` (and ``backward``), which
  ``FlairEmbeddings(path)`` loads; ``loss.txt`` beside it has the per-split losses.

Flair logs a sample of generated text after every split; a model trained on notes can reproduce
names from them, so text generation is switched off during training (the log says so instead) and
Flair's ``training.log`` is not kept.

Privacy: like the FastText vectors, these models have read the notes; treat them as the notes.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from deid_ds.defaults import DEFAULT_MAX_TOKENS
from deid_ds.errors import InputError
from deid_ds.io.files import atomic_write_text
from deid_ds.io.output_dir import check_output_dir, output_directory
from deid_ds.ner.corpus_text import DEFAULT_WEAK_SPLITS, write_corpus_text

MANIFEST = "flair_lm.json"
MODEL_FILE = "best-lm.pt"
DIRECTIONS = ("forward", "backward")

DEFAULTS = {
    "hidden": 256,
    "layers": 1,
    "embedding_size": 100,
    "seq_len": 100,
    "batch": 32,
    "epochs": 10,
    "lr": 20.0,
    "anneal_factor": 0.25,
    "patience": 10,
    "dropout": 0.1,
    "valid_every": 20,
    "lines_per_split": 1_000_000,
}

_GENERATION_OFF = "(text generation not logged: a model trained on notes can reproduce their content)"


#: The command named in the marker of the directories written here (:mod:`deid_ds.io.output_dir`).
COMMAND = "embeddings flair-lm"


def _no_log(message: str) -> None:
    return None


def train_flair_lm(
    corpus: str | Path,
    out: str | Path,
    *,
    directions: Sequence[str] = DIRECTIONS,
    hidden: int = DEFAULTS["hidden"],
    layers: int = DEFAULTS["layers"],
    embedding_size: int = DEFAULTS["embedding_size"],
    seq_len: int = DEFAULTS["seq_len"],
    batch: int = DEFAULTS["batch"],
    epochs: int = DEFAULTS["epochs"],
    lr: float = DEFAULTS["lr"],
    anneal_factor: float = DEFAULTS["anneal_factor"],
    patience: int = DEFAULTS["patience"],
    dropout: float = DEFAULTS["dropout"],
    valid_every: int = DEFAULTS["valid_every"],
    lines_per_split: int = DEFAULTS["lines_per_split"],
    device: str = "auto",
    seed: int = 0,
    workers: int = 1,
    threads: int | None = None,
    column_map: Mapping[str, str] | None = None,
    splits: Sequence[str] | None = DEFAULT_WEAK_SPLITS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    progress: bool = False,
    verbose: bool = False,
    log: Callable[[str], None] = _no_log,
    overwrite: bool = False,
) -> dict:
    """Train character language models on ``corpus`` (notes table or weak-label directory) into ``out``.

    ``out`` is replaced atomically once every direction is trained. Returns the manifest written to
    ``out/flair_lm.json`` (corpus counts, parameters, per-direction validation perplexity, times).
    ``out`` is replaced only if deid-ds wrote it, or with ``overwrite`` (:mod:`deid_ds.io.output_dir`).
    """
    from deid_ds.ner.runtime import flair_console, seed_everything, select_device, set_threads

    directions = _check_directions(directions)
    check_output_dir(out, COMMAND, (corpus,), overwrite)  # before the training, not after
    chosen = select_device(device)
    threads_used = set_threads(threads, log)  # one by default, never more than the cores (runtime.thread_count)
    _check_lm_device(chosen)
    started = time.monotonic()
    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="deid-ds-flair-lm-") as scratch:
        scratch = Path(scratch)
        text_file = scratch / "corpus.txt"
        stats = write_corpus_text(
            corpus,
            text_file,
            column_map=column_map,
            splits=splits,
            max_tokens=max_tokens,
            workers=workers,
            progress=progress,
        )
        log(f"corpus: {stats.documents:,} documents, {stats.sentences:,} sentences, {stats.characters:,} characters")
        layout = _layout_text_corpus(
            text_file, scratch / "corpus", valid_every=valid_every, lines_per_split=lines_per_split
        )
        if layout["valid_characters"] < 2 * batch or layout["test_characters"] < 2 * batch:
            raise InputError(
                f"{corpus}: too little text for a language model with --batch {batch} "
                f"({layout['valid_characters']:,} validation characters, at least {2 * batch} needed)"
            )
        dictionary = character_dictionary(stats.characters_seen)
        results: dict[str, dict] = {}
        with output_directory(out, COMMAND, inputs=(corpus,), overwrite=overwrite) as tmp:
            for direction in directions:
                seed_everything(seed)
                log(f"{direction}: training ({hidden} hidden, {layers} layer(s), {epochs} epoch(s), on {chosen})")
                t0 = time.monotonic()
                with flair_console(verbose):
                    best = _train_direction(
                        scratch / "corpus",
                        dictionary,
                        scratch / direction,
                        forward=direction == "forward",
                        hidden=hidden,
                        layers=layers,
                        embedding_size=embedding_size,
                        seq_len=seq_len,
                        batch=batch,
                        epochs=epochs,
                        lr=lr,
                        anneal_factor=anneal_factor,
                        patience=patience,
                        dropout=dropout,
                        num_workers=0 if layout["train_files"] == 1 else 2,
                        progress=progress,
                    )
                (tmp / direction).mkdir()
                shutil.copyfile(best["model"], tmp / direction / MODEL_FILE)
                if (scratch / direction / "loss.txt").is_file():
                    shutil.copyfile(scratch / direction / "loss.txt", tmp / direction / "loss.txt")
                results[direction] = {
                    "path": f"{direction}/{MODEL_FILE}",
                    "seconds": round(time.monotonic() - t0, 2),
                    "valid_loss": best["valid_loss"],
                    "valid_perplexity": best["valid_perplexity"],
                }
                log(
                    f"{direction}: validation perplexity {best['valid_perplexity']:.3f} "
                    f"({results[direction]['seconds']:.1f} s)"
                )
            manifest = {
                "trained": True,
                "models": results,
                "corpus": {**stats.to_dict(), **layout},
                "dictionary_size": len(dictionary),
                "parameters": {
                    "hidden": hidden,
                    "layers": layers,
                    "embedding_size": embedding_size,
                    "seq_len": seq_len,
                    "batch": batch,
                    "epochs": epochs,
                    "lr": lr,
                    "anneal_factor": anneal_factor,
                    "patience": patience,
                    "dropout": dropout,
                    "seed": seed,
                    "tokenized_lm": True,
                },
                "device": chosen,
                "threads": threads_used,
                "seconds": round(time.monotonic() - started, 2),
                "versions": _versions(),
            }
            _write_manifest(tmp, manifest)
    log(f"written to {out}")
    return manifest


def character_dictionary(counts: Mapping[str, int]):
    """A Flair ``Dictionary`` of the corpus' characters, most frequent first, ``<unk>`` at index 0.

    Ties are broken by code point so that the same corpus always gives the same indices.
    """
    from flair.data import Dictionary

    dictionary = Dictionary(add_unk=True)
    for char, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        dictionary.add_item(char)
    return dictionary


def _layout_text_corpus(text_file: Path, root: Path, *, valid_every: int, lines_per_split: int) -> dict:
    """Write ``root/train/train_NNNN.txt``, ``root/valid.txt``, ``root/test.txt`` from the corpus text.

    Line ``i`` goes to validation when ``i % valid_every == 0``, to test when it is 1, to training
    otherwise; training is cut into files of ``lines_per_split`` lines (Flair loads one file at a time).
    """
    (root / "train").mkdir(parents=True)
    counts = {"train_lines": 0, "valid_characters": 0, "test_characters": 0, "train_files": 0}
    train_out = None
    lines_in_file = 0
    with (
        text_file.open(encoding="utf-8") as lines,
        (root / "valid.txt").open("w", encoding="utf-8") as valid,
        (root / "test.txt").open("w", encoding="utf-8") as test,
    ):
        for i, line in enumerate(lines):
            slot = i % valid_every
            if slot == 0:
                valid.write(line)
                counts["valid_characters"] += len(line)
            elif slot == 1:
                test.write(line)
                counts["test_characters"] += len(line)
            else:
                if train_out is None or lines_in_file >= lines_per_split:
                    if train_out is not None:
                        train_out.close()
                    counts["train_files"] += 1
                    train_out = (root / "train" / f"train_{counts['train_files']:04d}.txt").open("w", encoding="utf-8")
                    lines_in_file = 0
                train_out.write(line)
                lines_in_file += 1
                counts["train_lines"] += 1
    if train_out is not None:
        train_out.close()
    if counts["train_lines"] == 0:
        raise InputError(f"too few sentences for a language model ({valid_every} needed at least)")
    return counts


def _train_direction(
    corpus_root: Path,
    dictionary,
    work: Path,
    *,
    forward: bool,
    hidden: int,
    layers: int,
    embedding_size: int,
    seq_len: int,
    batch: int,
    epochs: int,
    lr: float,
    anneal_factor: float,
    patience: int,
    dropout: float,
    num_workers: int,
    progress: bool = False,
) -> dict:
    """Train one direction in ``work``; return the path of its best model and its validation loss."""
    from flair.models import LanguageModel
    from flair.trainers.language_model_trainer import LanguageModelTrainer, TextCorpus

    model = LanguageModel(
        dictionary,
        is_forward_lm=forward,
        hidden_size=hidden,
        nlayers=layers,
        embedding_size=embedding_size,
        dropout=dropout,
    )
    # Flair logs generated text after every split: switched off, it could reproduce note content.
    model.generate_text = lambda *args, **kwargs: (_GENERATION_OFF, 0.0)
    text_corpus = TextCorpus(corpus_root, dictionary, forward=forward, character_level=True)
    trainer = _progress_trainer(LanguageModelTrainer)(
        model, text_corpus, desc="forward" if forward else "backward", epochs=epochs, seq_len=seq_len, shown=progress
    )
    trainer.train(
        work,
        sequence_length=seq_len,
        learning_rate=lr,
        mini_batch_size=batch,
        anneal_factor=anneal_factor,
        patience=patience,
        max_epochs=epochs,
        num_workers=num_workers,
    )
    best = work / MODEL_FILE
    if not best.is_file():
        # The trainer saves only on an improvement of the validation loss; a NaN loss never improves.
        model.save(best)
    val_data = LanguageModelTrainer._batchify(text_corpus.valid, batch)
    reloaded = LanguageModel.load_language_model(best)
    evaluator = LanguageModelTrainer(reloaded, text_corpus)
    valid_loss = float(evaluator.evaluate(val_data, batch, seq_len))
    return {
        "model": best,
        "valid_loss": round(valid_loss, 6),
        "valid_perplexity": round(math.exp(valid_loss), 6) if valid_loss < 700 else None,
    }


def _progress_trainer(base):
    """Flair's ``LanguageModelTrainer`` (``base``) with a bar per training split on a terminal: the epoch,
    batches done out of the split's, its time left at the current rate. Flair's language-model trainer has
    no plugins: its two per-batch helpers, called through ``self``, are where the batches are known.
    Counts and times only: no text is shown."""
    from tqdm import tqdm

    class ProgressTrainer(base):
        def __init__(self, model, corpus, *, desc: str, epochs: int, seq_len: int, shown: bool) -> None:
            super().__init__(model, corpus)
            self._desc, self._epochs, self._seq_len, self._shown = desc, epochs, seq_len, shown
            self._splits_done = 0
            self._train_data = None
            self._bar = None

        def _batchify(self, data, batch_size):
            batched = super()._batchify(data, batch_size)
            if self._shown and data is not self.corpus.valid and data is not self.corpus.test:  # a training split
                splits = len(self.corpus.train)
                epoch = self._splits_done // splits + 1
                where = f"epoch {epoch}/{self._epochs}" + (
                    f", split {self._splits_done % splits + 1}" if splits > 1 else ""
                )
                self._train_data = batched
                self._bar = tqdm(
                    total=len(range(0, batched.size(0) - 1, self._seq_len)),
                    unit="batch",
                    desc=f"{self._desc} {where}",
                    leave=False,
                )
                self._splits_done += 1
            return batched

        def _get_batch(self, source, i, sequence_length):
            if self._bar is not None and source is self._train_data:  # not a validation batch
                self._bar.update(1)
                if self._bar.n >= self._bar.total:
                    self._bar.close()
                    self._bar = None
            return super()._get_batch(source, i, sequence_length)

    return ProgressTrainer


def import_flair_lm(
    out: str | Path,
    *,
    forward: str | Path | None = None,
    backward: str | Path | None = None,
    log: Callable[[str], None] = _no_log,
    overwrite: bool = False,
) -> dict:
    """Copy a user's language models (``.pt``) into ``out`` in the layout ``deid-ds train`` reads.

    Each file is loaded to check that it is a Flair language model of the stated direction.
    """
    from flair.models import LanguageModel

    given = {"forward": forward, "backward": backward}
    if not any(given.values()):
        raise InputError("give --from-forward and/or --from-backward")
    models: dict[str, dict] = {}
    with output_directory(out, COMMAND, inputs=(forward, backward), overwrite=overwrite) as tmp:
        for direction, source in given.items():
            if source is None:
                continue
            source = Path(source)
            if not source.is_file():
                raise InputError(f"{source}: no such file")
            try:
                lm = LanguageModel.load_language_model(source)
            except Exception:
                raise InputError(f"{source}: not a Flair language model") from None
            if lm.is_forward_lm != (direction == "forward"):
                raise InputError(
                    f"{source}: a {'forward' if lm.is_forward_lm else 'backward'} model given as --from-{direction}"
                )
            (tmp / direction).mkdir()
            shutil.copyfile(source, tmp / direction / MODEL_FILE)
            models[direction] = {
                "path": f"{direction}/{MODEL_FILE}",
                "source": str(source.resolve()),
                "hidden": lm.hidden_size,
                "layers": lm.nlayers,
                "dictionary_size": len(lm.dictionary),
            }
            log(f"{direction}: {source.name} (hidden {lm.hidden_size}, {lm.nlayers} layer(s))")
        _write_manifest(tmp, {"trained": False, "models": models, "versions": _versions()})
    log(f"written to {out}")
    return {"models": models}


def resolve_flair_lm(path: str | Path) -> dict[str, Path]:
    """Direction -> language model file, from a ``deid-ds embeddings flair-lm`` DIR (or a lone ``.pt``).

    A directory may hold one direction only; a ``.pt`` file is taken for the direction it was trained in.
    """
    path = Path(path)
    if path.is_file():
        from flair.models import LanguageModel

        try:
            lm = LanguageModel.load_language_model(path)
        except Exception:
            raise InputError(f"{path}: not a Flair language model") from None
        return {"forward" if lm.is_forward_lm else "backward": path.resolve()}
    if not path.is_dir():
        raise InputError(f"{path}: no such language model directory or file")
    found = {d: (path / d / MODEL_FILE).resolve() for d in DIRECTIONS if (path / d / MODEL_FILE).is_file()}
    if not found:
        raise InputError(
            f"{path}: neither forward/{MODEL_FILE} nor backward/{MODEL_FILE} (not an output of `deid-ds "
            "embeddings flair-lm`)"
        )
    return found


def _check_directions(directions: Sequence[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(directions))
    unknown = [d for d in chosen if d not in DIRECTIONS]
    if unknown or not chosen:
        raise InputError(f"directions must be forward and/or backward, not {', '.join(unknown) or 'none'}")
    return chosen


def _check_lm_device(device: str) -> None:
    """Flair's language-model trainer refuses CPU tensors whenever torch sees a GPU: say so up front."""
    import torch

    if device == "cpu" and torch.cuda.is_available():
        raise InputError(
            "Flair's language-model trainer cannot train on the CPU while a GPU is visible: "
            "use --device cuda (or auto), or hide the GPU with CUDA_VISIBLE_DEVICES="
        )


def _write_manifest(directory: Path, manifest: dict) -> None:
    atomic_write_text(directory / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


def _versions() -> dict:
    from deid_ds.ner.runtime import package_versions

    return package_versions()
