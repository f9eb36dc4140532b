"""The context of an export-style note, and the registry its styles' writers join."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from deid_ds.synth.context import NoteContext


@dataclass(slots=True)
class ExportContext(NoteContext):
    """A family-3 or family-4 note: the world and slots of :class:`NoteContext`, written in an export style."""

    doc_type: str = ""  # the document being written (set by write_export_note): a style writes what it calls for

    @property
    def variant(self) -> int:
        """0: the style's development phrasing (family 3); 1: its held-out phrasing (family 4)."""
        return self.family - 3

    def pick(self, bank0: tuple[str, ...], bank1: tuple[str, ...]) -> str:
        """A wording from the variant's own bank, so that the held-out phrasing really is new."""
        return self.rng.choice((bank0, bank1)[self.variant])


#: export style -> its writer; each module of the package registers its own with :func:`style`
STYLES: dict[str, Callable[[ExportContext], None]] = {}


def style(name: str) -> Callable[[Callable[[ExportContext], None]], Callable[[ExportContext], None]]:
    """Register the decorated function as the writer of the export style ``name``."""

    def register(writer: Callable[[ExportContext], None]) -> Callable[[ExportContext], None]:
        if name in STYLES:
            raise ValueError(f"export style {name!r} registered twice")
        STYLES[name] = writer
        return writer

    return register
