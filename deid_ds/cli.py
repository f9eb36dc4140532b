"""The ``deid-ds`` command line: a thin layer over the Python API.

Commands are imported lazily, when they are invoked (or when ``--help`` lists them), so that the light
commands start in well under a second and never import torch or flair. Each command module lives next
to the API it wraps and exposes a ``click.Command``.
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


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when needed."""

    def __init__(self, *args, lazy_commands: dict[str, str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.lazy_commands) + [c for c in super().list_commands(ctx) if c not in self.lazy_commands]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy_commands.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attribute = target.split(":")
        return getattr(importlib.import_module(module_name), attribute)


@click.group(cls=LazyGroup, lazy_commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="deid-ds")
def main() -> None:
    """deid-ds: de-identification corpora for French clinical notes by distant supervision.

    \b
    Pipeline: build-kb -> weak-label -> (correction campaign) -> train -> evaluate / predict -> deidentify
    Every command has its own --help, and a function of the same name in the Python API.
    """


if __name__ == "__main__":  # pragma: no cover
    main()
