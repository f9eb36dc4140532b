"""``deid-ds train``: the paper's Flair BiLSTM-CRF, trained on the weak labels.

The paper (Bi-LSTM + CRF on stacked FastText and Flair forward/backward embeddings, implemented with
Flair; F1 0.9696 micro against 0.9365 for the rules) is reproduced with Flair's ``SequenceTagger`` and
``ModelTrainer`` on the weak labeller's Flair files:

* **data**: ``ColumnCorpus(WEAKDIR, {0: "text", 1: "ner"})`` on ``train.txt``/``dev.txt``/``test.txt``
  (BIO tags, read by Flair as entity spans). An empty ``dev.txt`` or ``test.txt`` is simply absent —
  Flair is told not to carve one out of train, so train is exactly the weak labeller's train split;
* **embeddings** (no hub name anywhere, nothing reaches the network): the FastText vectors and the
  forward/backward character language models of ``deid-ds embeddings`` when given, stacked with a
  character embedding whose dictionary is built from the training sentences' characters (Flair's
  default ``common-chars`` dictionary would be a download);
* **model**: ``SequenceTagger(hidden_size, embeddings, tag_dictionary, tag_type="ner", use_crf=True,
  use_rnn=True, rnn_layers=1)``;
* **training**: SGD, annealing the learning rate on dev F1 plateaus (``patience``), stopping when it
  falls below ``min_lr`` or after ``max_epochs``; the best epoch on dev is kept as ``best-model.pt``.
  When no epoch improves dev F1 (or there is no dev split), the last epoch's model is kept under that
  name, and the model card says which.

The work happens in a temporary sibling of ``MODELDIR``, swapped in only when the model card is
written: an interrupted run never leaves a directory that looks like a finished model. Flair's
per-epoch ``dev.tsv``/``test.tsv`` (tokens with gold and predicted tags: note text) are deleted; the
model itself contains the embeddings' vocabulary and is as sensitive as the notes.

The scores in the model card are Flair's entity-level exact-match micro F1 (the paper's metric)
against the **weak labels** of dev and test: agreement with the rules on unseen patients, not accuracy.
``deid-ds evaluate`` scores against a gold standard.

Hyper-parameters: the paper reports its Flair ones in a table whose values are not in the text at hand
(``../shared/seeds/004``: "Table 2 Hyperparameters of the FLAIR + FastTEXT-based model"), so the
defaults are Flair's NER recipe (Akbik et al. 2018, Flair's ``ModelTrainer`` defaults): hidden size 256,
one BiLSTM layer, CRF, SGD with learning rate 0.1, mini-batch 32, anneal factor 0.5, patience 3, at most
100 epochs; what the paper states — BiLSTM-CRF, stacked FastText (300-d French vectors) and Flair
forward/backward embeddings — is the default architecture.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from tqdm import tqdm

from deid_ds.errors import InputError
from deid_ds.io.files import atomic_write_text
from deid_ds.io.output_dir import check_output_dir, output_directory

SPLITS = ("train", "dev", "test")
MODEL_FILE = "best-model.pt"
MODEL_CARD = "model_card.json"

#: ``train --fast``: the tagger's hidden size unless one is given (the demo's; docs/benchmarks.md, "Prediction").
FAST_HIDDEN = 64
#: ``train --fast``: the locked dropout unless one is given. Half of each input dimension dropped (the full recipe's
#: 0.5) starved the smaller stack: on four seeds of the acceptance corpus 0.25 gave model F1 +0.012, redaction
#: +0.010 and the hybrid's precision +0.003 (docs/benchmarks.md, "A cheaper dropout for the fast stack").
FAST_LOCKED_DROPOUT = 0.25

#: Above this many training sentences, embeddings are recomputed every epoch instead of kept in memory.
STORAGE_AUTO_LIMIT = 50_000


@dataclass
class TrainConfig:
    """Hyper-parameters of ``deid-ds train`` (see the module docstring for where the defaults come from)."""

    hidden: int = 256
    rnn_layers: int = 1
    use_crf: bool = True
    lr: float = 0.1
    batch: int = 32
    eval_batch: int = 64
    max_epochs: int = 100
    patience: int = 3
    anneal_factor: float = 0.5
    min_lr: float = 0.0001
    dropout: float = 0.0
    word_dropout: float = 0.05
    locked_dropout: float = 0.5
    char: bool = True
    char_dim: int = 25
    char_hidden: int = 25
    max_sentences: int | None = None
    embeddings_storage: str = "auto"
    device: str = "auto"
    threads: int | None = None  # torch's CPU threads (None: deid_ds.ner.runtime.thread_count's default, one)
    seed: int = 0
    #: Stack the knowledge embedding when the weak files have the feature column (None: yes; deid_ds.ner.knowledge).
    features: bool | None = None
    features_dim: int = 32
    #: Share of tokens whose knowledge features are dropped, per mini-batch, in training (ner.knowledge.drop_tokens).
    feature_dropout: float = 0.0
    transformer_layers: str = "-1"
    transformer_fine_tune: bool = False
    #: Share of training sentences perturbed (scan and typing noise, tags carried: deid_ds.ner.augment) and how much.
    augment: float = 0.0
    augment_level: int = 2
    #: ``train --fast``: no character language model nor transformer, so that ``predict`` is fast on CPU.
    fast: bool = False


def _no_log(message: str) -> None:
    return None


def read_column_file(path: Path) -> Iterator[list[tuple[str, str]]]:
    """Sentences of a Flair column file as ``(token, tag)`` lists (blank line between sentences)."""
    sentence: list[tuple[str, str]] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\n")
            if not line.strip():
                if sentence:
                    yield sentence
                    sentence = []
                continue
            parts = line.split()
            if len(parts) < 2:
                raise InputError(f"{path}: line {number} is not 'token TAG'")
            sentence.append((parts[0], parts[-1]))
    if sentence:
        yield sentence


def split_statistics(path: Path) -> dict:
    """Sentences, tokens and entities per label of one split file (counted from its BIO tags)."""
    sentences = tokens = 0
    labels: Counter[str] = Counter()
    if path.is_file():
        for sentence in read_column_file(path):
            sentences += 1
            tokens += len(sentence)
            for _, tag in sentence:
                if tag.startswith("B-"):
                    labels[tag[2:]] += 1
                elif tag != "O" and not tag.startswith("I-"):
                    raise InputError(f"{path}: a tag is not BIO (O, B-LABEL or I-LABEL)")
    return {
        "sentences": sentences,
        "tokens": tokens,
        "entities": sum(labels.values()),
        "labels": dict(sorted(labels.items())),
    }


def _sample_split(source: Path, target: Path, keep: int, seed: int) -> None:
    """Write a seeded random choice of ``keep`` sentences of ``source`` to ``target`` (in file order),
    every column of their lines kept (the knowledge features' too)."""
    total = sum(1 for _ in read_column_file(source))
    chosen = set(random.Random(seed).sample(range(total), keep)) if keep < total else set(range(total))
    with target.open("w", encoding="utf-8") as out:
        for i, lines in enumerate(_sentence_lines(source)):
            if i in chosen:
                out.write("".join(" ".join(line.split()) + "\n" for line in lines) + "\n")


def _sentence_lines(path: Path) -> Iterator[list[str]]:
    """The lines of each sentence of a Flair column file, as they are (blank line between sentences)."""
    sentence: list[str] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                sentence.append(line)
            elif sentence:
                yield sentence
                sentence = []
    if sentence:
        yield sentence


def train_tagger(
    weak_dir: str | Path,
    out: str | Path,
    *,
    fasttext: str | Path | None = None,
    flair_lm: str | Path | None = None,
    transformer: str | Path | None = None,
    config: TrainConfig | None = None,
    progress: bool = False,
    verbose: bool = False,
    log: Callable[[str], None] = _no_log,
    overwrite: bool = False,
    synthetic=None,
    gold_train: str | Path | None = None,
) -> dict:
    """Train the BiLSTM-CRF on ``weak_dir``'s Flair files into ``out``; return the model card.

    ``synthetic`` (a :class:`deid_ds.ner.synthetic.SyntheticMix`) mixes generated notes with their exact gold
    into the training split first (``train --synthetic N``); the card records the mix under ``data.synthetic``.
    ``gold_train`` (a gold table) relabels its documents with their gold (:mod:`deid_ds.ner.gold_train`), recorded
    under ``data.gold_train``.

    ``out`` is replaced only if deid-ds train wrote it, or with ``overwrite`` (:mod:`deid_ds.io.output_dir`).

    ``out`` ends up holding ``best-model.pt`` (load it with ``SequenceTagger.load``), Flair's
    ``loss.tsv`` and ``training.log``, and ``model_card.json``; it is replaced as a whole, atomically.
    """
    config = config or TrainConfig()
    weak_dir = Path(weak_dir)
    out = Path(out)
    if not (weak_dir / "train.txt").is_file():
        raise InputError(f"{weak_dir}: no train.txt (not an output of `deid-ds weak-label`)")
    if gold_train is not None and synthetic is not None:
        raise InputError("--gold-train and --synthetic: one or the other (their combination is not built yet)")
    if config.fast and (flair_lm or transformer):
        raise InputError(
            "--fast: a tagger without character language models or transformer (what makes CPU prediction "
            "slow); leave out --flair-lm and --transformer"
        )
    inputs = (weak_dir, fasttext, flair_lm, transformer, gold_train)
    check_output_dir(out, "train", inputs, overwrite)  # before hours of training, not after
    started = time.monotonic()

    from deid_ds.ner.runtime import (
        device_description,
        flair_console,
        package_versions,
        seed_everything,
        select_device,
        set_threads,
    )

    device = select_device(config.device)
    threads = set_threads(config.threads, log)  # one by default, never more than the cores (runtime.thread_count)
    seed_everything(config.seed)

    with tempfile.TemporaryDirectory(prefix="deid-ds-train-") as scratch:
        source, mix, corrected = weak_dir, None, None
        if gold_train is not None:
            from deid_ds.ner.gold_train import mix_gold

            source = Path(scratch) / "gold"
            corrected = mix_gold(weak_dir, source, gold_train, log=log)
        if synthetic is not None:
            from deid_ds.ner.synthetic import mix_synthetic

            source = Path(scratch) / "mixed"
            mix = mix_synthetic(weak_dir, source, synthetic, log=log)
        data_dir, files, statistics = _prepare_data(source, Path(scratch), config)
        augmentation = _augment_train(data_dir, Path(scratch), files, statistics, config)
        if statistics["train"]["sentences"] == 0:
            raise InputError(f"{weak_dir}/train.txt: no sentence")
        if statistics["train"]["entities"] == 0:
            raise InputError(f"{weak_dir}/train.txt: no entity to learn")
        log(
            "data: "
            + ", ".join(
                f"{name} {statistics[name]['sentences']:,} sentences / {statistics[name]['entities']:,} entities"
                for name in SPLITS
            )
        )
        with flair_console(verbose):
            from flair.datasets import ColumnCorpus

            from deid_ds.ner.knowledge import FEATURE_COLUMN, has_feature_column

            with_column = has_feature_column(weak_dir / "train.txt")
            if config.features and not with_column:
                raise InputError(f"{weak_dir}/train.txt: no knowledge-feature column (weak-label it with --features)")
            corpus = ColumnCorpus(
                data_dir,
                {0: "text", 1: FEATURE_COLUMN, 2: "ner"} if with_column else {0: "text", 1: "ner"},
                train_file=files["train"],
                dev_file=files["dev"],
                test_file=files["test"],
                autofind_splits=False,
                sample_missing_splits=False,
                in_memory=True,
                encoding="utf-8",
            )
            tag_dictionary = corpus.make_label_dictionary(label_type="ner", add_unk=False)
            knowledge = _knowledge_record(weak_dir) if with_column and config.features is not False else None
            embeddings, embedding_info = build_embeddings(
                corpus,
                fasttext=fasttext,
                flair_lm=flair_lm,
                config=config,
                knowledge=knowledge,
                transformer=transformer,
            )
            log(
                "embeddings: "
                + " + ".join(f"{e['type']} ({e['dim']})" for e in embedding_info)
                + f"; device {device}, {threads} thread(s)"
            )
            card_data = {
                "weak_dir": str(weak_dir.resolve()),
                "splits": statistics,
                "max_sentences": config.max_sentences,
                "augmentation": augmentation,
                "labels": tag_dictionary.get_items(),
                "synthetic": mix,  # None without --synthetic (deid_ds.ner.synthetic)
                "gold_train": corrected,  # None without --gold-train (deid_ds.ner.gold_train)
            }
            with output_directory(out, "train", inputs=inputs, overwrite=overwrite) as tmp:
                history, selection = _fit(
                    corpus, tag_dictionary, embeddings, tmp, config, statistics, progress=progress, log=log
                )
                scores = _final_scores(tmp / MODEL_FILE, corpus, config)
                from deid_ds.ner.calibrate import proxy_thresholds

                hybrid = proxy_thresholds(tmp / MODEL_FILE, corpus.dev, mini_batch_size=config.eval_batch)
                for name in ("dev", "test"):
                    if name in scores:
                        log(f"{name}: micro F1 {scores[name]['micro_f1']:.4f} against the weak labels (best model)")
                card = {
                    "model": MODEL_FILE,
                    "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "data": card_data,
                    "architecture": {
                        "type": "BiLSTM-CRF (flair.models.SequenceTagger)",
                        "tag_type": "ner",
                        "tag_format": "BIOES",
                        "hidden_size": config.hidden,
                        "rnn_layers": config.rnn_layers,
                        "use_crf": config.use_crf,
                        "use_rnn": True,
                    },
                    "embeddings": embedding_info,
                    "embedding_length": embeddings.embedding_length,
                    "knowledge_features": knowledge,
                    "hyperparameters": _hyperparameters(config, statistics),
                    "selection": selection,
                    "scores": scores,
                    "hybrid": hybrid,  # the hybrid's thresholds: a proxy on the weak dev labels (ner.calibrate)
                    "epochs": history,
                    "epochs_run": len(history),
                    "seconds_per_epoch": round(sum(e["seconds"] for e in history) / len(history), 3)
                    if history
                    else None,
                    "total_seconds": round(time.monotonic() - started, 2),
                    "device": device_description(device),
                    "threads": threads,
                    "versions": package_versions(),
                }
                atomic_write_text(tmp / MODEL_CARD, json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    log(f"written to {out}")
    return card


def _prepare_data(
    weak_dir: Path, scratch: Path, config: TrainConfig
) -> tuple[Path, dict[str, str | None], dict[str, dict]]:
    """The folder and file names to give ``ColumnCorpus``, and the statistics of what it will read.

    Splits without a sentence are left out (``None``); with ``max_sentences`` every split is a seeded
    sample written into ``scratch``.
    """
    files: dict[str, str | None] = {}
    statistics: dict[str, dict] = {}
    data_dir = weak_dir
    if config.max_sentences is not None:
        data_dir = scratch / "data"
        data_dir.mkdir()
        for offset, name in enumerate(SPLITS):
            source = weak_dir / f"{name}.txt"
            if source.is_file():
                _sample_split(source, data_dir / f"{name}.txt", config.max_sentences, config.seed + offset)
    for name in SPLITS:
        path = data_dir / f"{name}.txt"
        statistics[name] = split_statistics(path)
        files[name] = f"{name}.txt" if statistics[name]["sentences"] else None
    return data_dir, files, statistics


def _augment_train(
    data_dir: Path, scratch: Path, files: dict[str, str | None], statistics: dict[str, dict], config: TrainConfig
) -> dict | None:
    """With ``config.augment``, train on a copy of the train split with that share of sentences perturbed
    (:mod:`deid_ds.ner.augment`; dev and test never are): ``files`` and ``statistics`` then point at it.
    Returns what the model card records (None without augmentation)."""
    if not config.augment or files["train"] is None:
        return None
    from deid_ds.ner.augment import AugmentConfig, augment_file

    target = scratch / "augmented-train.txt"  # absolute: ColumnCorpus joins it to data_dir as itself
    # whatever train file was prepared (sampled, mixed...): files["train"] is relative to data_dir or absolute
    record = augment_file(
        data_dir / files["train"], target, AugmentConfig(config.augment, config.augment_level, config.seed)
    )
    files["train"] = str(target)
    statistics["train"] = split_statistics(target)
    return record


def corpus_characters(corpus) -> list[str]:
    """The characters of the training and dev tokens, most frequent first (ties by code point)."""
    counts: Counter[str] = Counter()
    for dataset in (corpus.train, corpus.dev):
        if dataset is None:
            continue
        for sentence in dataset:
            for token in sentence:
                counts.update(token.text)
    return [char for char, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def _knowledge_record(weak_dir: Path) -> dict:
    """The knowledge features of ``weak_dir``'s files: its ``report.json``'s record (names, KB fingerprint,
    metadata), else the current vocabulary with no fingerprint."""
    from deid_ds.label.features import FEATURES

    record = None
    try:
        record = json.loads((weak_dir / "report.json").read_text(encoding="utf-8")).get("knowledge_features")
    except (OSError, ValueError, AttributeError):
        pass
    if not isinstance(record, dict) or not record.get("names"):
        record = {"names": list(FEATURES), "kb_fingerprint": None, "use_metadata": True}
    return {name: record.get(name) for name in ("names", "kb_fingerprint", "use_metadata")}


def build_embeddings(
    corpus,
    *,
    fasttext: str | Path | None,
    flair_lm: str | Path | None,
    config: TrainConfig,
    knowledge: dict | None = None,
    transformer: str | Path | None = None,
):
    """The ``StackedEmbeddings`` of what was given, and a description of each for the model card.

    Local files only: FastText through ``FastTextEmbeddings(path, use_local=True)``, language models
    loaded here and handed to ``FlairEmbeddings`` as objects (never as a name Flair could look up on
    its hub), characters from a dictionary of the corpus' own characters. ``knowledge`` (the feature
    record of the weak files) adds the knowledge embedding (:mod:`deid_ds.ner.knowledge`).
    """
    from flair.data import Dictionary
    from flair.embeddings import CharacterEmbeddings, FastTextEmbeddings, FlairEmbeddings, StackedEmbeddings
    from flair.models import LanguageModel

    from deid_ds.ner.fasttext import resolve_fasttext
    from deid_ds.ner.flair_lm import resolve_flair_lm

    stack = []
    info: list[dict] = []
    if fasttext is not None:
        vectors, manifest = resolve_fasttext(fasttext)
        embedding = FastTextEmbeddings(str(vectors), use_local=True)
        stack.append(embedding)
        info.append(
            {
                "type": "fasttext",
                "path": str(vectors),
                "format": manifest.get("format"),
                "dim": embedding.embedding_length,
                "vocab_size": manifest.get("vocab_size"),
            }
        )
    if flair_lm is not None:
        for direction, path in resolve_flair_lm(flair_lm).items():
            try:
                lm = LanguageModel.load_language_model(path)
            except Exception:
                raise InputError(f"{path}: not a Flair language model") from None
            embedding = FlairEmbeddings(lm, name=f"flair-{direction}")
            stack.append(embedding)
            info.append(
                {
                    "type": f"flair-{direction}",
                    "path": str(path),
                    "dim": embedding.embedding_length,
                    "lm_hidden": lm.hidden_size,
                    "lm_layers": lm.nlayers,
                }
            )
    if transformer is not None:  # a local Hugging Face checkpoint (deid_ds.ner.transformer), offline
        from deid_ds.ner.transformer import transformer_embedding

        embedding, description = transformer_embedding(
            transformer, layers=config.transformer_layers, fine_tune=config.transformer_fine_tune
        )
        stack.append(embedding)
        info.append(description)
    if config.char:
        dictionary = Dictionary(add_unk=True)
        for char in corpus_characters(corpus):
            dictionary.add_item(char)
        embedding = CharacterEmbeddings(
            dictionary, char_embedding_dim=config.char_dim, hidden_size_char=config.char_hidden
        )
        stack.append(embedding)
        info.append(
            {
                "type": "characters",
                "dim": embedding.embedding_length,
                "dictionary_size": len(dictionary),
                "char_embedding_dim": config.char_dim,
                "hidden_size_char": config.char_hidden,
            }
        )
    if knowledge is not None:
        from deid_ds.ner.knowledge import KnowledgeEmbeddings

        embedding = KnowledgeEmbeddings(
            knowledge["names"],
            config.features_dim,
            knowledge.get("kb_fingerprint"),
            knowledge.get("use_metadata", True),
            feature_dropout=config.feature_dropout,
        )
        stack.append(embedding)
        info.append({"type": "knowledge-features", "dim": embedding.embedding_length, "features": len(embedding.names)})
    if not stack:
        raise InputError(
            "no embeddings: give --fasttext, --flair-lm and/or --transformer, or keep --char or the features"
        )
    return StackedEmbeddings(stack), info


def _storage_mode(config: TrainConfig, statistics: dict) -> str:
    """Where Flair keeps computed embeddings between epochs: memory for small corpora, nowhere for big."""
    if config.embeddings_storage != "auto":
        return config.embeddings_storage
    if config.transformer_fine_tune:  # fine-tuned embeddings change every batch: never kept
        return "none"
    return "cpu" if statistics["train"]["sentences"] <= STORAGE_AUTO_LIMIT else "none"


def _hyperparameters(config: TrainConfig, statistics: dict) -> dict:
    values = asdict(config)
    values["embeddings_storage"] = _storage_mode(config, statistics)
    values["optimizer"] = "SGD"
    values["sources"] = {
        "architecture": "paper (BiLSTM-CRF on stacked FastText + Flair forward/backward embeddings, with Flair)",
        "values": (
            "Flair's NER recipe (Akbik et al. 2018; Flair ModelTrainer defaults): the paper's Table 2 "
            "values are not in its available text"
        ),
    }
    return values


def _fit(
    corpus,
    tag_dictionary,
    embeddings,
    work: Path,
    config: TrainConfig,
    statistics: dict,
    *,
    progress: bool,
    log: Callable[[str], None],
) -> tuple[list[dict], dict]:
    """Run Flair's trainer in ``work``; leave exactly one model there, ``best-model.pt``."""
    from flair.models import SequenceTagger
    from flair.trainers import ModelTrainer

    tagger = SequenceTagger(
        hidden_size=config.hidden,
        embeddings=embeddings,
        tag_dictionary=tag_dictionary,
        tag_type="ner",
        use_crf=config.use_crf,
        use_rnn=True,
        rnn_layers=config.rnn_layers,
        dropout=config.dropout,
        word_dropout=config.word_dropout,
        locked_dropout=config.locked_dropout,
    )
    plugin = _progress_plugin(config.max_epochs, progress=progress, log=log)
    test = corpus._test
    corpus._test = None  # scored once at the end, without Flair writing the test sentences to test.tsv
    try:
        trainer = ModelTrainer(tagger, corpus)
        trainer.train(
            work,
            learning_rate=config.lr,
            mini_batch_size=config.batch,
            eval_batch_size=config.eval_batch,
            max_epochs=config.max_epochs,
            patience=config.patience,
            anneal_factor=config.anneal_factor,
            min_learning_rate=config.min_lr,
            embeddings_storage_mode=_storage_mode(config, statistics),
            save_final_model=True,
            plugins=[plugin],
            shuffle=True,
        )
    finally:
        corpus._test = test
    best, final = work / MODEL_FILE, work / "final-model.pt"
    has_dev = corpus.dev is not None and len(corpus.dev) > 0
    best_epochs = [e["epoch"] for e in plugin.history if e.get("best")]
    if best.is_file():
        # With a dev split Flair keeps the epoch of best dev F1; without one, that of lowest training loss.
        rule = "best dev micro F1" if has_dev else "lowest training loss (no dev split)"
        selection = {"rule": rule, "epoch": best_epochs[-1] if best_epochs else None}
        final.unlink(missing_ok=True)
    elif final.is_file():
        final.replace(best)
        # Flair saves no best epoch when dev F1 never rises above 0, or when the annealing plugin stops
        # training (learning rate below min_lr) in the very evaluation that found the best epoch.
        reason = "training stopped before Flair saved it" if best_epochs else "no epoch scored a dev micro F1 above 0"
        selection = {"rule": f"last epoch ({reason})", "epoch": plugin.history[-1]["epoch"] if plugin.history else None}
    else:
        raise RuntimeError("Flair's trainer saved no model")
    for leftover in ("dev.tsv", "test.tsv", "weights.txt"):
        (work / leftover).unlink(missing_ok=True)
    return plugin.history, selection


def time_left(history: list[dict], max_epochs: int) -> float:
    """Seconds the remaining epochs take at the mean pace so far: an upper bound, since early stopping
    (the learning rate annealed below ``min_lr``) may end training sooner."""
    if not history:
        return 0.0
    return (max_epochs - history[-1]["epoch"]) * sum(e["seconds"] for e in history) / len(history)


def _progress_plugin(max_epochs: int, *, progress: bool, log: Callable[[str], None]):
    """A Flair trainer plugin: on a terminal, a bar per epoch (batches done, the epoch's time left at the
    current rate); and one line per epoch with its loss, dev F1 and the training's time left at most.
    Counts, scores and times only: no sentence is ever shown."""
    from flair.trainers.plugins.base import TrainerPlugin

    class ProgressPlugin(TrainerPlugin):
        def __init__(self) -> None:
            super().__init__()
            self.history: list[dict] = []
            self._start = 0.0
            self._bar = None
            self._train_loss: float | None = None

        @TrainerPlugin.hook
        def before_training_epoch(self, epoch, **kw):
            self._start = time.monotonic()
            self._train_loss = None

        @TrainerPlugin.hook
        def after_training_batch(self, batch_no, total_number_of_batches, epoch, **kw):
            if not progress:
                return
            if self._bar is None:
                self._bar = tqdm(
                    total=total_number_of_batches, unit="batch", desc=f"epoch {epoch}/{max_epochs}", leave=False
                )
            self._bar.update(1)
            if batch_no + 1 >= total_number_of_batches:
                self._bar.close()
                self._bar = None

        @TrainerPlugin.hook
        def metric_recorded(self, record):
            if tuple(record.name) == ("train", "loss"):
                self._train_loss = float(record.value)

        @TrainerPlugin.hook
        def after_evaluation(self, epoch, current_model_is_best, validation_scores, **kw):
            has_dev = len(validation_scores) == 2
            lr = self.trainer.optimizer.param_groups[0]["lr"]
            entry = {
                "epoch": epoch,
                "train_loss": None if self._train_loss is None else round(self._train_loss, 6),
                "dev_f1": round(float(validation_scores[0]), 6) if has_dev else None,
                "dev_loss": round(float(validation_scores[1]), 6) if has_dev else None,
                "best": bool(current_model_is_best),
                "lr": lr,
                "seconds": round(time.monotonic() - self._start, 3),
            }
            self.history.append(entry)
            dev = f"dev F1 {entry['dev_f1']:.4f}{' (best)' if entry['best'] else ''}" if has_dev else "no dev"
            loss = f"loss {entry['train_loss']:.4f}" if entry["train_loss"] is not None else "loss ?"
            left = time_left(self.history, max_epochs)
            rest = f" ({tqdm.format_interval(left)} left at most)" if left else ""
            log(f"epoch {epoch}/{max_epochs}: {loss}, {dev}, lr {lr:g}, {entry['seconds']:.1f} s{rest}")

    return ProgressPlugin()


def _final_scores(model_path: Path, corpus, config: TrainConfig) -> dict:
    """Entity-level exact-match scores of the kept model on dev and test (Flair's evaluation), per label."""
    from flair.models import SequenceTagger

    import deid_ds.ner.knowledge  # noqa: F401 - registers the knowledge embedding, which the model may hold

    tagger = SequenceTagger.load(model_path)
    scores: dict[str, dict] = {}
    for name in ("dev", "test"):
        dataset = getattr(corpus, name)
        if dataset is None or len(dataset) == 0:
            continue
        result = tagger.evaluate(
            dataset,
            gold_label_type="ner",
            mini_batch_size=config.eval_batch,
            out_path=None,
            embedding_storage_mode="none",
            return_loss=False,
        )
        report = result.classification_report
        per_label = {
            label: {
                "precision": round(v["precision"], 6),
                "recall": round(v["recall"], 6),
                "f1": round(v["f1-score"], 6),
                "support": int(v["support"]),
            }
            for label, v in report.items()
            if isinstance(v, dict) and label not in ("micro avg", "macro avg", "weighted avg", "accuracy")
        }
        micro = report.get("micro avg", {})
        scores[name] = {
            "against": "weak labels",
            "micro_f1": round(float(result.main_score), 6),
            "micro_precision": round(float(micro.get("precision", 0.0)), 6),
            "micro_recall": round(float(micro.get("recall", 0.0)), 6),
            "per_label": per_label,
        }
    return scores
