"""``deid-ds embeddings fasttext|flair-lm``: embeddings for the tagger, trained on the notes, no download.

Thin wrappers over :mod:`deid_ds.ner.fasttext` and :mod:`deid_ds.ner.flair_lm`; gensim, torch and flair
are imported only when a subcommand runs.
"""

from __future__ import annotations

import click

from deid_ds.cli_common import (
    column_option,
    handle_errors,
    overwrite_option,
    quiet_option,
    seed_option,
    show_progress,
    verbose_option,
)
from deid_ds.defaults import DEFAULT_MAX_TOKENS, available_cores

splits_option = click.option(
    "--splits",
    default="train,dev",
    show_default=True,
    metavar="S1,S2",
    help="Weak-label directory only: the splits whose sentences are read ('all' for every split). Test is left out "
    "by default: its documents become the gold standard.",
)
workers_option = click.option(
    "--workers",
    "-j",
    type=click.IntRange(min=1),
    help="Processes segmenting the notes, and gensim threads [default: the cores available to this process].",
)
max_tokens_option = click.option(
    "--max-tokens",
    default=DEFAULT_MAX_TOKENS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Longest sentence, in tokens (as for weak-label).",
)


def _splits(value: str) -> list[str] | None:
    return None if value.strip().lower() == "all" else [s.strip() for s in value.split(",") if s.strip()]


@click.group("embeddings")
def embeddings_group() -> None:
    """Train the tagger's embeddings on the notes (nothing is downloaded), or take a user's files.

    \b
    deid-ds embeddings fasttext CORPUS --out DIR     FastText word vectors (gensim)
    deid-ds embeddings flair-lm CORPUS --out DIR     forward and backward character language models (Flair)
    Then: deid-ds train WEAKDIR --fasttext DIR --flair-lm DIR --out MODELDIR
    """


@embeddings_group.command("fasttext")
@click.argument("corpus", required=False, type=click.Path(path_type=str))
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=str),
    help=(
        "Output directory (replaced atomically, only if deid-ds wrote it; see --overwrite): fasttext.kv and "
        "fasttext.json."
    ),
)
@overwrite_option
@click.option(
    "--from",
    "from_file",
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help=(
        "Take this FastText file instead of training (Facebook .bin such as cc.fr.300.bin, or a gensim "
        ".kv/.model); CORPUS is then not needed."
    ),
)
@click.option(
    "--copy",
    is_flag=True,
    help="With --from FILE.bin: copy the file into OUT instead of referencing it by absolute path.",
)
@click.option(
    "--dim",
    default=100,
    show_default=True,
    type=click.IntRange(min=1),
    help="Vector dimension (cc.fr.300, the paper's, has 300).",
)
@click.option("--epochs", default=5, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--min-count",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="Words seen fewer times get no vector of their own (their character n-grams still give one).",
)
@click.option("--window", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--min-n", default=3, show_default=True, type=click.IntRange(min=1), help="Shortest character n-gram.")
@click.option("--max-n", default=6, show_default=True, type=click.IntRange(min=1), help="Longest character n-gram.")
@click.option(
    "--bucket",
    default=200_000,
    show_default=True,
    type=click.IntRange(min=1),
    help=(
        "Character n-gram hash buckets; bucket x dim floats end up in every tagger (gensim's default 2,000,000 "
        "is 800 MB at dim 100)."
    ),
)
@seed_option("Random seed (vectors repeat exactly with --workers 1).")
@workers_option
@splits_option
@column_option
@max_tokens_option
@quiet_option
@verbose_option
@handle_errors
def fasttext_command(
    corpus,
    out,
    overwrite,
    from_file,
    copy,
    dim,
    epochs,
    min_count,
    window,
    min_n,
    max_n,
    bucket,
    seed,
    workers,
    splits,
    column,
    max_tokens,
    quiet,
    verbose,
):
    """Train FastText vectors (skip-gram with character n-grams) on the notes' tokens, for `deid-ds train --fasttext`.

    CORPUS is a notes table (Parquet file or directory: every sentence of every note) or a `deid-ds
    weak-label` output directory (its kept sentences, of --splits). Writes OUT/fasttext.kv (gensim
    FastTextKeyedVectors, read by Flair's FastTextEmbeddings) and OUT/fasttext.json (format, dim,
    corpus counts, parameters). The vectors contain the notes' vocabulary: keep them with the notes.
    """
    from deid_ds.io.notes import parse_column_map
    from deid_ds.ner.fasttext import import_fasttext, train_fasttext

    log = (lambda message: None) if quiet else click.echo
    if from_file:
        import_fasttext(from_file, out, copy=copy, log=click.echo, overwrite=overwrite)
        return
    if corpus is None:
        raise click.UsageError("give CORPUS to train on, or --from FILE")
    if min_n > max_n:
        raise click.BadParameter("--min-n must not exceed --max-n", param_hint="--min-n")
    manifest = train_fasttext(
        corpus,
        out,
        dim=dim,
        epochs=epochs,
        min_count=min_count,
        window=window,
        min_n=min_n,
        max_n=max_n,
        bucket=bucket,
        workers=workers or available_cores(),
        seed=seed,
        column_map=parse_column_map(column),
        splits=_splits(splits),
        max_tokens=max_tokens,
        progress=show_progress(quiet),
        log=log,
        overwrite=overwrite,
    )
    if verbose:  # every parameter and corpus count, as in OUT/fasttext.json
        import json

        click.echo(json.dumps(manifest, indent=1, ensure_ascii=False, default=str))
    click.echo(
        f"fasttext: {manifest['vocab_size']:,} words, dim {manifest['dim']}, {manifest['seconds']:.1f} s -> {out}"
    )


@embeddings_group.command("flair-lm")
@click.argument("corpus", required=False, type=click.Path(path_type=str))
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=str),
    help=(
        "Output directory (replaced atomically, only if deid-ds wrote it; see --overwrite): forward/best-lm.pt, "
        "backward/best-lm.pt, flair_lm.json."
    ),
)
@overwrite_option
@click.option(
    "--from-forward",
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="Take this forward language model (.pt) instead of training; CORPUS is then not needed.",
)
@click.option(
    "--from-backward",
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="Take this backward language model (.pt) instead of training.",
)
@click.option("--direction", type=click.Choice(["both", "forward", "backward"]), default="both", show_default=True)
@click.option(
    "--hidden",
    default=256,
    show_default=True,
    type=click.IntRange(min=1),
    help="LSTM hidden size (Flair's published models: 1024 or 2048).",
)
@click.option("--layers", default=1, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--embedding-size", default=100, show_default=True, type=click.IntRange(min=1), help="Character embedding size."
)
@click.option(
    "--seq-len",
    default=100,
    show_default=True,
    type=click.IntRange(min=2),
    help="Characters per truncated back-propagation step (Flair's tutorial: 250).",
)
@click.option(
    "--batch",
    default=32,
    show_default=True,
    type=click.IntRange(min=1),
    help="Parallel character streams (Flair's tutorial: 100).",
)
@click.option("--epochs", default=10, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--lr",
    default=20.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="SGD learning rate (Flair's default).",
)
@click.option(
    "--patience",
    default=10,
    show_default=True,
    type=click.IntRange(min=0),
    help="Splits without improvement before the learning rate is annealed (x0.25).",
)
@click.option("--dropout", default=0.1, show_default=True, type=click.FloatRange(0, 1))
@click.option("--device", default="auto", show_default=True, help="auto (CUDA when available), cpu, cuda or cuda:N.")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    help="torch CPU threads [default: 1, faster on a busy machine]; at most the cores available (never more).",
)
@seed_option("Random seed.")
@click.option("--verbose", "-v", is_flag=True, help="Show Flair's own log lines.")
@workers_option
@splits_option
@column_option
@max_tokens_option
@quiet_option
@handle_errors
def flair_lm_command(
    corpus,
    out,
    overwrite,
    from_forward,
    from_backward,
    direction,
    hidden,
    layers,
    embedding_size,
    seq_len,
    batch,
    epochs,
    lr,
    patience,
    dropout,
    device,
    threads,
    seed,
    verbose,
    workers,
    splits,
    column,
    max_tokens,
    quiet,
):
    """Train forward and backward character language models (Flair embeddings) on the notes' text.

    CORPUS is a notes table or a `deid-ds weak-label` directory (see `deid-ds embeddings fasttext`).
    Writes OUT/forward/best-lm.pt and OUT/backward/best-lm.pt (the best by validation loss, loadable
    with FlairEmbeddings(path)), their loss.txt, and OUT/flair_lm.json (corpus counts, parameters,
    validation perplexity, times). The models have read the notes: keep them with the notes.
    """
    from deid_ds.io.notes import parse_column_map
    from deid_ds.ner.flair_lm import import_flair_lm, train_flair_lm

    log = (lambda message: None) if quiet else click.echo
    if from_forward or from_backward:
        import_flair_lm(out, forward=from_forward, backward=from_backward, log=click.echo, overwrite=overwrite)
        return
    if corpus is None:
        raise click.UsageError("give CORPUS to train on, or --from-forward/--from-backward FILE")
    directions = ("forward", "backward") if direction == "both" else (direction,)
    manifest = train_flair_lm(
        corpus,
        out,
        directions=directions,
        hidden=hidden,
        layers=layers,
        embedding_size=embedding_size,
        seq_len=seq_len,
        batch=batch,
        epochs=epochs,
        lr=lr,
        patience=patience,
        dropout=dropout,
        device=device,
        threads=threads,
        seed=seed,
        workers=workers or available_cores(),
        column_map=parse_column_map(column),
        splits=_splits(splits),
        max_tokens=max_tokens,
        progress=show_progress(quiet),
        verbose=verbose,
        log=log,
        overwrite=overwrite,
    )
    for name, model in manifest["models"].items():
        click.echo(
            f"flair-lm {name}: validation perplexity {model['valid_perplexity']}, {model['seconds']:.1f} s -> "
            f"{out}/{model['path']}"
        )
