"""Options and error handling shared by the commands."""

from __future__ import annotations

import functools

import click

from deid_ds.defaults import DEFAULT_MAX_TOKENS
from deid_ds.engine.parallel import sigterm_as_exit
from deid_ds.errors import DeidError
from deid_ds.io.output_dir import OVERWRITE_HELP

column_option = click.option(
    "--column",
    "-c",
    multiple=True,
    metavar="NAME=SOURCE",
    help=(
        "Read notes column NAME (id_document, id_patient, doc_type, html, firstname...) from column SOURCE of "
        "the input. Repeatable."
    ),
)

quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress bar.")

overwrite_option = click.option("--overwrite", is_flag=True, help=OVERWRITE_HELP)


def handle_errors(command):
    """Turn deid-ds errors into a one-line message and exit status 1, without a traceback.

    An error with an ``exit_code`` attribute exits with it instead (an output directory refused: 2).
    The messages of :class:`deid_ds.errors.DeidError` never quote note content, so they are safe to
    print; unexpected exceptions keep their traceback (a bug to report). SIGTERM stops the command as
    Ctrl-C does, with exit status 143 (:func:`deid_ds.engine.parallel.sigterm_as_exit`).
    """

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            with sigterm_as_exit():
                return command(*args, **kwargs)
        except DeidError as error:
            exception = click.ClickException(str(error))
            exception.exit_code = getattr(error, "exit_code", exception.exit_code)
            raise exception from None

    return wrapper


def engine_options(command):
    """``--engine local|spark`` and ``--spark-master`` (the engine seam of ``segment``, ``weak-label``,
    ``predict`` and ``deidentify``)."""
    command = click.option(
        "--spark-master",
        metavar="URL",
        help=(
            "With --engine spark: the Spark master (local[4], yarn, spark://host:7077...) [default: the active "
            "or spark-submit configuration, else local[*]]."
        ),
    )(command)
    return click.option(
        "--engine",
        type=click.Choice(["local", "spark"]),
        default="local",
        show_default=True,
        help=(
            'local: worker processes on this machine; spark: Apache Spark (pip install "deid-ds[spark]"), notes '
            "and outputs on any path Spark reads (hdfs://, s3a://, local)."
        ),
    )(command)


def note_limit_options(stage: str):
    """``--max-note-bytes`` and ``--note-timeout`` (:mod:`deid_ds.segmentation.limits`) for a command whose
    per-note work is ``stage`` (``segmented``, ``labelled``): a note over either is failed with its reason, its
    batch goes on."""
    from deid_ds.segmentation.limits import DEFAULT_MAX_NOTE_BYTES, DEFAULT_NOTE_TIMEOUT

    def decorate(command):
        command = click.option(
            "--note-timeout",
            default=DEFAULT_NOTE_TIMEOUT,
            show_default=True,
            type=click.FloatRange(min=0),
            metavar="SECONDS",
            help=f'A note still being {stage} after this is interrupted and failed ("note took longer than the time '
            'limit"); its batch goes on. 0: no limit.',
        )(command)
        return click.option(
            "--max-note-bytes",
            default=DEFAULT_MAX_NOTE_BYTES,
            show_default=True,
            type=click.IntRange(min=0),
            metavar="BYTES",
            help=f'A note with more HTML than this is failed ("note larger than the limit") and the others {stage}; '
            "0: no limit.",
        )(command)

    return decorate


def segmentation_options(
    punkt_help: str = "Punkt parameters from `deid-ds punkt-train` (default: shipped French clinical parameters).",
    max_tokens_help: str = "Longest sentence, in tokens; longer ones are cut.",
):
    """``--punkt`` and ``--max-tokens``: how notes are cut into sentences (segment, weak-label, predict)."""

    def decorate(command):
        command = click.option(
            "--max-tokens",
            default=DEFAULT_MAX_TOKENS,
            show_default=True,
            type=click.IntRange(min=1),
            help=max_tokens_help,
        )(command)
        return click.option("--punkt", type=click.Path(exists=True, dir_okay=False), help=punkt_help)(command)

    return decorate
