"""The ``deid-ds`` command line: a thin layer over the Python API.

Commands are imported lazily, only when they are invoked, so that the light commands start in well
under a second and never import torch or flair. ``deid-ds --help`` imports none of them: it lists the
short helps of :data:`SHORT_HELP` (a test checks that each equals its command's own). Each command
module lives next to the API it wraps and exposes a ``click.Command``.
"""

from __future__ import annotations

import importlib

import click

from deid_ds import __version__

#: command name -> "module:attribute" of its click.Command, in the order of the pipeline.
COMMANDS: dict[str, str] = {
    "synth": "deid_ds.synth.cli:synth_command",
    "build-kb": "deid_ds.kb.cli:build_kb_command",
    "kb-info": "deid_ds.kb.cli:kb_info_command",
    "segment": "deid_ds.segmentation.cli:segment_command",
    "punkt-train": "deid_ds.segmentation.cli:punkt_train_command",
    "weak-label": "deid_ds.weak_labelling.cli:weak_label_command",
    "campaign": "deid_ds.campaign.cli:campaign_command",
    "label-studio": "deid_ds.campaign.cli:label_studio_group",
    "agreement": "deid_ds.agreement.cli:agreement_command",
    "gold": "deid_ds.agreement.cli:gold_command",
    "embeddings": "deid_ds.ner.embeddings_cli:embeddings_group",
    "train": "deid_ds.ner.train_cli:train_command",
    "predict": "deid_ds.ner.predict_cli:predict_command",
    "calibrate": "deid_ds.ner.calibrate_cli:calibrate_command",
    "evaluate": "deid_ds.evaluation.cli:evaluate_command",
    "deidentify": "deid_ds.deidentification.cli:deidentify_command",
    "review": "deid_ds.review.cli:review_command",
}

#: command name -> its one-line help, as ``deid-ds --help`` lists it without importing the command (importing
#: them all cost ~2 s of CPU). Each entry is the command's own short help: tests/test_cli.py keeps them equal.
SHORT_HELP: dict[str, str] = {
    "synth": (
        "Generate a synthetic sample: French clinical HTML notes with patient metadata, gold annotations, and"
        " BAN / Annuaire Santé source files in their official formats."
    ),
    "build-kb": "Build gazetteers from the BAN and the Annuaire Santé, and compile the matcher.",
    "kb-info": "Print the manifest of a built knowledge base: sources, rows read/kept/rejected, tables.",
    "segment": "Split HTML notes into sentences and tokens with offsets in the text and in the HTML.",
    "punkt-train": "Train NLTK Punkt sentence-splitting parameters on the text of your notes.",
    "weak-label": "Label the eight entity types in HTML notes by distant supervision, into BIO training sets.",
    "campaign": "Prepare the correction campaign: sample documents per type, assign them, write the annotation tasks.",
    "label-studio": "Send a campaign's Label Studio tasks to a server and fetch the answers, over its HTTP API.",
    "agreement": (
        "Inter-annotator agreement of a correction campaign: token-level Fleiss' kappa with a bootstrap "
        "interval over documents, per label, per annotator pair (Cohen's kappa, entity F1), per document "
        "type."
    ),
    "gold": (
        "Turn reviewed (or majority-voted) answers into the gold spans table with HTML offsets: id_document, "
        "label, html_start, html_end, text, id_patient, doc_type, annotators."
    ),
    "embeddings": "Train the tagger's embeddings on the notes (nothing is downloaded), or take a user's files.",
    "train": "Train the BiLSTM-CRF tagger (Flair SequenceTagger) on a `deid-ds weak-label` directory.",
    "predict": "Tag HTML notes with a trained tagger (`deid-ds train`) into the weak labeller's spans.parquet.",
    "calibrate": "Choose the hybrid's threshold on gold-annotated dev notes (e.g.",
    "evaluate": "Score systems' spans against a gold standard, side by side.",
    "deidentify": "Mask or replace the entities of HTML notes in the original HTML, and check nothing is left.",
    "review": "Write an HTML page of original and de-identified notes side by side, for review before release.",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when needed."""

    def __init__(
        self,
        *args,
        lazy_commands: dict[str, str] | None = None,
        short_helps: dict[str, str] | None = None,
        **kwargs,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})
        self.short_helps = dict(short_helps or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.lazy_commands) + [c for c in super().list_commands(ctx) if c not in self.lazy_commands]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy_commands.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attribute = target.split(":")
        return getattr(importlib.import_module(module_name), attribute)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, from the short helps, without importing the commands.

        Each lazy command is listed through a stand-in whose help is its short help: click shortens it to
        the terminal's width exactly as it shortens the real command's help (up to the first sentence).
        """
        stand_ins = {name: click.Command(name, help=text) for name, text in self.short_helps.items()}
        commands = [(name, stand_ins.get(name) or self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        commands = [(name, command) for name, command in commands if command is not None and not command.hidden]
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in commands])


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    short_helps=SHORT_HELP,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="deid-ds")
def main() -> None:
    """deid-ds: de-identification corpora for French clinical notes by distant supervision.

    \b
    Pipeline: build-kb -> weak-label -> (correction campaign) -> train -> evaluate / predict -> deidentify
    Every command has its own --help, and a function of the same name in the Python API.
    """


if __name__ == "__main__":  # pragma: no cover
    main()
