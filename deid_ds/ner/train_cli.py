"""``deid-ds train``: a thin wrapper over :func:`deid_ds.ner.train.train_tagger` (torch/flair load at run time)."""

from __future__ import annotations

import click

from deid_ds.cli_common import handle_errors, overwrite_option, quiet_option, show_progress

_D = {  # the TrainConfig defaults, repeated here so that --help needs no import of the training module's deps
    "hidden": 256,
    "rnn_layers": 1,
    "lr": 0.1,
    "batch": 32,
    "max_epochs": 100,
    "patience": 3,
    "anneal_factor": 0.5,
    "min_lr": 0.0001,
    "dropout": 0.0,
    "word_dropout": 0.05,
    "locked_dropout": 0.5,
    "char_dim": 25,
    "char_hidden": 25,
    "features_dim": 32,
    "feature_dropout": 0.0,
}
_FAST_HIDDEN = 64  # deid_ds.ner.train.FAST_HIDDEN (checked by a test), repeated to keep --help light
_FAST_LOCKED_DROPOUT = 0.25  # deid_ds.ner.train.FAST_LOCKED_DROPOUT (checked by a test), the same
_SYNTHETIC_SEED = 2929  # deid_ds.ner.synthetic.DEFAULT_SEED (checked by a test), repeated to keep --help light


@click.command("train")
@click.argument("weak_dir", type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=str),
    help=(
        "Model directory (replaced atomically, only if deid-ds wrote it; see --overwrite): best-model.pt, "
        "model_card.json, loss.tsv, training.log."
    ),
)
@overwrite_option
@click.option(
    "--fasttext",
    type=click.Path(exists=True, path_type=str),
    help="FastText vectors: a `deid-ds embeddings fasttext` directory, or a .bin/.kv file.",
)
@click.option(
    "--flair-lm",
    type=click.Path(exists=True, path_type=str),
    help=(
        "Character language models: a `deid-ds embeddings flair-lm` directory (forward and/or backward), or one "
        ".pt file."
    ),
)
@click.option(
    "--transformer",
    type=click.Path(path_type=str),
    metavar="DIR",
    help=(
        "A local Hugging Face checkpoint directory (CamemBERT, DrBERT... saved with save_pretrained), stacked "
        "through Flair's TransformerWordEmbeddings (first sub-token); loaded offline, never downloaded."
    ),
)
@click.option(
    "--transformer-layers",
    default="-1",
    show_default=True,
    help='Layers of --transformer to average: "-1" (the last), "-1,-2,-3,-4", or "all".',
)
@click.option(
    "--transformer-fine-tune/--transformer-frozen",
    default=False,
    show_default=True,
    help="Fine-tune --transformer's weights (slow on CPU; SGD at --lr) or keep them frozen (features only).",
)
@click.option(
    "--char/--no-char",
    default=True,
    show_default=True,
    help="Stack a character embedding (dictionary from the corpus' characters).",
)
@click.option(
    "--hidden", default=_D["hidden"], show_default=True, type=click.IntRange(min=1), help="BiLSTM hidden size."
)
@click.option("--rnn-layers", default=_D["rnn_layers"], show_default=True, type=click.IntRange(min=1))
@click.option(
    "--lr", default=_D["lr"], show_default=True, type=click.FloatRange(min=0, min_open=True), help="SGD learning rate."
)
@click.option(
    "--batch", default=_D["batch"], show_default=True, type=click.IntRange(min=1), help="Mini-batch size (sentences)."
)
@click.option("--max-epochs", default=_D["max_epochs"], show_default=True, type=click.IntRange(min=1))
@click.option(
    "--patience",
    default=_D["patience"],
    show_default=True,
    type=click.IntRange(min=0),
    help="Epochs without a better dev F1 before the learning rate is annealed.",
)
@click.option(
    "--anneal-factor",
    default=_D["anneal_factor"],
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
)
@click.option(
    "--min-lr",
    default=_D["min_lr"],
    show_default=True,
    type=click.FloatRange(min=0),
    help="Training stops when annealing takes the learning rate below this (early stopping).",
)
@click.option("--dropout", default=_D["dropout"], show_default=True, type=click.FloatRange(0, 1))
@click.option("--word-dropout", default=_D["word_dropout"], show_default=True, type=click.FloatRange(0, 1))
@click.option("--locked-dropout", default=_D["locked_dropout"], show_default=True, type=click.FloatRange(0, 1))
@click.option(
    "--char-dim",
    default=_D["char_dim"],
    show_default=True,
    type=click.IntRange(min=1),
    help="Character embedding size.",
)
@click.option(
    "--char-hidden",
    default=_D["char_hidden"],
    show_default=True,
    type=click.IntRange(min=1),
    help="Character BiLSTM hidden size.",
)
@click.option(
    "--features/--no-features",
    default=None,
    help=(
        "Stack the knowledge embedding of the weak files' feature column (weak-label --features) "
        "[default: when the files have it]; predict then needs the knowledge base (--kb)."
    ),
)
@click.option(
    "--features-dim",
    default=_D["features_dim"],
    show_default=True,
    type=click.IntRange(min=1),
    help="Size of the knowledge embedding.",
)
@click.option(
    "--feature-dropout",
    default=_D["feature_dropout"],
    show_default=True,
    type=click.FloatRange(0, 1, max_open=True),
    metavar="SHARE",
    help=(
        "In training, the knowledge features of this share of tokens read as none ('-'), drawn afresh for every "
        "mini-batch, so that the network cannot lean on the lists alone."
    ),
)
@click.option(
    "--synthetic",
    "synthetic_notes",
    type=click.IntRange(min=1),
    metavar="N",
    help=(
        "Mix N generated notes with their exact gold (deid-ds synth: the phrasings of --synthetic-phrasing, a "
        "knowledge base of their own) into the training split; same segmentation, tokens and feature columns "
        "as the weak files. The model card records the mix."
    ),
)
@click.option(
    "--synthetic-seed",
    default=_SYNTHETIC_SEED,
    show_default=True,
    type=int,
    help="Generator seed of the synthetic notes (one per phrasing: SEED, SEED+1...).",
)
@click.option(
    "--synthetic-phrasing",
    multiple=True,
    type=click.Choice(["train", "heldout", "all", "exports"]),
    help=(
        "synth phrasing of the synthetic notes, repeatable, the notes shared out evenly [default: all and exports]; "
        "the test phrasings (unseen, exports-heldout) are never trained on."
    ),
)
@click.option(
    "--synthetic-weight",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Times each synthetic training sentence is seen per epoch (by repetition: 2 = twice, 0.5 = a seeded half).",
)
@click.option(
    "--synthetic-dev",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1, max_open=True),
    metavar="SHARE",
    help="Share of the synthetic patients put in dev (after the weak dev) instead of train: exact gold to select on.",
)
@click.option(
    "--synthetic-keep-empty",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    metavar="SHARE",
    help="Share of the synthetic sentences without entity kept (as weak-label --keep-empty).",
)
@click.option(
    "--gold-train",
    type=click.Path(exists=True, path_type=str),
    metavar="GOLD",
    help="Corrected documents (a `deid-ds gold` table, or any gold `evaluate` reads): their sentences take the gold's "
    "tags instead of the weak ones (a test document moves to train); the model card lists them, and `evaluate` "
    "leaves them out of its scores.",
)
@click.option("--no-crf", is_flag=True, help="Softmax instead of the CRF layer (ablation; the paper uses a CRF).")
@click.option(
    "--max-sentences",
    type=click.IntRange(min=1),
    metavar="N",
    help="Train on a seeded sample of at most N sentences per split (quick trials).",
)
@click.option(
    "--augment",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    metavar="RATE",
    help="Share of training sentences perturbed with scan and typing noise (look-alike characters, lost accents, "
    "lost or inserted spaces, line-end hyphens, capitals, dropped punctuation), BIO tags carried along; "
    "dev and test never are. Recorded in the model card.",
)
@click.option(
    "--augment-level",
    default=2,
    show_default=True,
    type=click.IntRange(1, 3),
    help="How noisy an augmented sentence is: the levels of `deid-ds synth --text-noise`.",
)
@click.option(
    "--embeddings-storage",
    type=click.Choice(["auto", "cpu", "gpu", "none"]),
    default="auto",
    show_default=True,
    help=(
        "Keep computed embeddings between epochs: auto = in memory (cpu) up to 50,000 training sentences, "
        "recomputed (none) above."
    ),
)
@click.option("--device", default="auto", show_default=True, help="auto (CUDA when available), cpu, cuda or cuda:N.")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    help="torch CPU threads [default: 1, faster on a busy machine]; at most the cores available (never more).",
)
@click.option(
    "--seed",
    "-s",
    default=0,
    show_default=True,
    type=int,
    help="Seeds Python, NumPy and torch: a run repeats on the same machine and device.",
)
@click.option(
    "--self-train",
    "self_train_rounds",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    metavar="ROUNDS",
    help=(
        "Self-training rounds after the first training: the model relabels the train split (its confident "
        "spans merged with the weak ones, hybrid policy), then a new model is trained from scratch on it; "
        "dev stays the weak labels."
    ),
)
@click.option(
    "--self-train-threshold",
    default=0.9,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Least span confidence (mean token probability) for a model span to go into the relabelled train split.",
)
@click.option(
    "--fast",
    is_flag=True,
    help=(
        "The CPU-fast recipe: no character language model or transformer (refused with --flair-lm or "
        f"--transformer), tagger hidden {_FAST_HIDDEN} and locked dropout {_FAST_LOCKED_DROPOUT} unless given. "
        "`predict` then tags about twice as fast on CPU (over 100 notes/s per core). Trained as long as the full "
        "recipe (with the knowledge features), its model and its hybrid match the full recipe's; use it with the "
        "rules and check its card (docs/train.md)."
    ),
)
@click.option("--verbose", "-v", is_flag=True, help="Show Flair's own log lines.")
@quiet_option
@handle_errors
def train_command(
    weak_dir,
    out,
    overwrite,
    fasttext,
    flair_lm,
    transformer,
    transformer_layers,
    transformer_fine_tune,
    char,
    hidden,
    rnn_layers,
    lr,
    batch,
    max_epochs,
    patience,
    anneal_factor,
    min_lr,
    dropout,
    word_dropout,
    locked_dropout,
    char_dim,
    char_hidden,
    features,
    features_dim,
    feature_dropout,
    synthetic_notes,
    synthetic_seed,
    synthetic_phrasing,
    synthetic_weight,
    synthetic_dev,
    synthetic_keep_empty,
    gold_train,
    no_crf,
    max_sentences,
    augment,
    augment_level,
    embeddings_storage,
    device,
    threads,
    seed,
    self_train_rounds,
    self_train_threshold,
    fast,
    verbose,
    quiet,
):
    """Train the BiLSTM-CRF tagger (Flair SequenceTagger) on a `deid-ds weak-label` directory.

    \b
    Reads WEAK_DIR/train.txt, dev.txt, test.txt (Flair columns, BIO). Stacks the embeddings given
    (--fasttext, --flair-lm forward/backward: the paper's best model, BiLSTM-CRF on FastText + Flair)
    and a character embedding; nothing is downloaded. Keeps the epoch with the best dev F1 as
    OUT/best-model.pt and writes OUT/model_card.json (data, label counts, embeddings,
    hyper-parameters, dev/test scores against the weak labels, time per epoch, device, versions).

    \b
    --synthetic N adds a second teacher: N generated notes whose gold is exact, labelled into the
    same columns as the weak files and mixed into train only (dev and test stay the weak ones unless
    --synthetic-dev); the card records the mix under data.synthetic.

    \b
    Defaults: the architecture is the paper's; its Flair hyper-parameter table is not in the text at
    hand, so the values are Flair's NER recipe (Akbik et al. 2018): hidden 256, 1 layer, CRF, SGD
    lr 0.1, batch 32, anneal x0.5 after 3 epochs without dev gain, stop below lr 0.0001 or at 100 epochs.
    The model holds the embeddings' vocabulary, names included: keep it with the notes. An existing OUT
    not written by deid-ds train is refused (exit status 2) unless --overwrite.
    """
    from deid_ds.ner.train import FAST_HIDDEN, FAST_LOCKED_DROPOUT, TrainConfig, train_tagger

    given = click.get_current_context().get_parameter_source
    if fast and given("hidden") == click.core.ParameterSource.DEFAULT:
        hidden = FAST_HIDDEN
    if fast and given("locked_dropout") == click.core.ParameterSource.DEFAULT:
        locked_dropout = FAST_LOCKED_DROPOUT
    config = TrainConfig(
        hidden=hidden,
        rnn_layers=rnn_layers,
        use_crf=not no_crf,
        lr=lr,
        batch=batch,
        max_epochs=max_epochs,
        patience=patience,
        anneal_factor=anneal_factor,
        min_lr=min_lr,
        dropout=dropout,
        word_dropout=word_dropout,
        locked_dropout=locked_dropout,
        char=char,
        char_dim=char_dim,
        char_hidden=char_hidden,
        max_sentences=max_sentences,
        augment=augment,
        augment_level=augment_level,
        embeddings_storage=embeddings_storage,
        device=device,
        threads=threads,
        seed=seed,
        features=features,
        features_dim=features_dim,
        feature_dropout=feature_dropout,
        transformer_layers=transformer_layers,
        transformer_fine_tune=transformer_fine_tune,
        fast=fast,
    )
    options = {
        "fasttext": fasttext,
        "flair_lm": flair_lm,
        "transformer": transformer,
        "config": config,
        "progress": show_progress(quiet),
        "verbose": verbose,
    }
    if synthetic_notes:
        from deid_ds.errors import InputError
        from deid_ds.ner.synthetic import DEFAULT_PHRASINGS, SyntheticMix

        if self_train_rounds:
            raise InputError("--synthetic and --self-train: one or the other (their combination is not built yet)")
        options["synthetic"] = SyntheticMix(
            synthetic_notes,
            synthetic_seed,
            tuple(synthetic_phrasing) or DEFAULT_PHRASINGS,
            synthetic_weight,
            synthetic_dev,
            synthetic_keep_empty,
        )
    if gold_train:
        if self_train_rounds:
            from deid_ds.errors import InputError

            raise InputError("--gold-train and --self-train: one or the other (their combination is not built yet)")
        options["gold_train"] = gold_train
    log = (lambda message: None) if quiet else click.echo  # -q: the last line only
    if self_train_rounds:
        from deid_ds.ner.self_train import self_train

        card = self_train(
            weak_dir,
            out,
            rounds=self_train_rounds,
            threshold=self_train_threshold,
            train=train_tagger,
            log=log,
            overwrite=overwrite,
            inputs=(fasttext, flair_lm, transformer),
            **options,
        )
    else:
        card = train_tagger(weak_dir, out, log=log, overwrite=overwrite, **options)
    scores = card["scores"]
    parts = [f"{name} F1 {scores[name]['micro_f1']:.4f}" for name in ("dev", "test") if name in scores]
    click.echo(
        (
            f"train: {card['epochs_run']} epoch(s), {card['seconds_per_epoch'] or 0:.1f} s/epoch, kept "
            f"{card['selection']['rule']}"
        )
        + (f"; {', '.join(parts)} (against the weak labels)" if parts else "")
    )
