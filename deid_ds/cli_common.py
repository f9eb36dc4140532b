"""Options and error handling shared by the commands."""

from __future__ import annotations

import functools
import glob
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

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

quiet_option = click.option(
    "--quiet", "-q", is_flag=True, help="Print one line (where the output went) and the warnings; no progress bar."
)

verbose_option = click.option("--verbose", "-v", is_flag=True, help="Print the full tables instead of a summary.")


def seed_option(help: str, default: int = 0):
    """``-s/--seed``: the same short flag wherever a command draws at random."""
    return click.option("--seed", "-s", default=default, show_default=True, type=int, help=help)


def show_progress(quiet: bool) -> bool:
    """Whether to draw progress bars: not with --quiet, and only on a terminal.

    The bars go to stderr; a log file or a pipe would get one line per refresh, so they are drawn only when
    stderr is a terminal. Every command asks here, so the rule has one place.
    """
    return not quiet and sys.stderr.isatty()


def warn(message: str) -> None:
    """A warning that matters, on stderr, whatever the output level (--quiet keeps warnings)."""
    click.echo(f"warning: {message}", err=True)


def print_report(
    *, full: str, summary: Iterable[str], written: str, quiet: bool, verbose: bool, more: str | None = None
) -> None:
    """The three output levels of a command: ``-q`` one line, by default a short summary, ``-v`` the full tables.

    ``-q -v`` together print the full tables without progress bars (what a log file wants).
    ``written`` is the one line that says where the output went (always printed); ``more`` says where the
    full report is when it is a file (``OUT/report.json``...), so the default output stays short without
    hiding anything.
    """
    if verbose:
        click.echo(full)
    elif not quiet:
        for line in summary:
            click.echo(line)
        click.echo(f"full report: {more + ', or ' if more else ''}-v for the tables")
    click.echo(written)


def failures_warning(failures: dict[str, int], where: str) -> str | None:
    """One line for the notes a run failed (counted per reason; reasons never quote a note), or None."""
    if not failures:
        return None
    reasons = "; ".join(f"{reason}: {n:,}" for reason, n in sorted(failures.items()))
    return f"{sum(failures.values()):,} document(s) failed ({reasons}), listed in {where}"


def missing_id_warning(documents_without_id: int) -> str | None:
    """One line for the notes the table gave no id (they are named ``FILE#rowN`` in the outputs), or None."""
    if not documents_without_id:
        return None
    return (
        f"{documents_without_id:,} document(s) without id_document: named FILE#rowN in the outputs, which no spans "
        "table can name (deidentify refuses them); give every note an id, or map the column with "
        "-c id_document=SOURCE"
    )


_GLOB_CHARACTERS = frozenset("*?[")


def is_pattern(value: str) -> bool:
    """A local glob pattern (not a URL, whose ``?`` starts a query)."""
    return "://" not in value and bool(_GLOB_CHARACTERS & set(value))


def expand_patterns(values: Iterable[str], option: str) -> tuple[str, ...]:
    """Each value as given, or the files a glob pattern matches, sorted; a pattern matching nothing is an error.

    A quoted pattern reaches the command unexpanded (and on Windows the shell never expands one): the tool
    expands it itself, the same way everywhere. The error names the pattern and the option, no file.
    """
    expanded: list[str] = []
    for value in values:
        if not is_pattern(value):
            expanded.append(value)
            continue
        matches = sorted(glob.glob(value))
        if not matches:
            raise click.ClickException(f"{option}: no file matches the pattern {value!r}")
        expanded.extend(matches)
    return tuple(expanded)


def _expand_callback(_context: click.Context, parameter: click.Parameter, values):
    if values is None:
        return values
    name = parameter.opts[0] if isinstance(parameter, click.Option) else parameter.human_readable_name
    return expand_patterns(values, name)


class ManyValuesOption(click.Option):
    """An option that takes every value after it up to the next option: ``--ban a.csv.gz b.csv.gz``.

    That is what a shell glob gives (``--ban kb/sources/adresses-*.csv.gz`` expands to several words
    after one flag); the option can also be repeated. Values are collected until the next word that
    starts with ``-``, so on a command with positional arguments these must come before the option
    (or after ``--``).
    """

    def add_to_parser(self, parser, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            parser_option = parser._long_opt.get(name) or parser._short_opt.get(name)
            if parser_option is None:  # pragma: no cover -- every declared name is registered
                continue
            parser_option.process = self._greedy(parser_option.process)

    @staticmethod
    def _greedy(process: Callable) -> Callable:
        def take_all(value, state) -> None:
            process(value, state)
            while state.rargs and not state.rargs[0].startswith("-"):
                process(state.rargs.pop(0), state)

        return take_all


def files_option(*declarations: str, help: str, metavar: str = "PATH", **kwargs):
    """An input-file option that takes several files (``--opt a b``, ``--opt a --opt b``) and quoted glob
    patterns, expanded by the tool in sorted order (:func:`expand_patterns`)."""
    return click.option(
        *declarations,
        cls=ManyValuesOption,
        multiple=True,
        metavar=metavar,
        callback=_expand_callback,
        help=help + " Takes several files, and glob patterns (quoted: the tool expands them, sorted).",
        **kwargs,
    )


def files_argument(name: str, **kwargs):
    """Positional input files (``nargs=-1``) that also take quoted glob patterns; each file must exist."""

    def check(context, parameter, values):
        expanded = _expand_callback(context, parameter, values)
        for value in expanded:
            if not Path(value).is_file():
                raise click.ClickException(f"{parameter.human_readable_name}: {value} is not a file")
        return expanded

    return click.argument(name, nargs=-1, callback=check, **kwargs)


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
