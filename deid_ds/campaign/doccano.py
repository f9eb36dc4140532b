"""The correction campaign in doccano: sequence-labelling JSONL with the weak labels as pre-annotations,
and the label set.

doccano (open source, MIT) imports, for a *Sequence Labeling* project, one JSON object per line with the
text, its labels as ``[start, end, "LABEL"]`` and any other field kept as the example's metadata::

    {"text": ..., "label": [[0, 6, "PATIENT"]], "id_document": ..., "id_patient": ..., "doc_type": ...,
     "sentence_index": ..., "primary_annotator": ..., "other_annotators": [...], "assigned_to": ..., "tokens": [...]}

The exports give the same line back (``label`` as lists, or ``entities`` as ``{"id", "start_offset",
"end_offset", "label"}`` objects when the project labels relations), the metadata fields beside the text;
:func:`deid_ds.agreement.readers.read_doccano` reads all of these forms. doccano gives the imported labels
to the account that imports the file, so each annotator imports their own file in their own project.

Offsets are characters of ``text`` (the sentence), end exclusive, as in every deid-ds file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from deid_ds.campaign.choices import DOCCANO
from deid_ds.campaign.components import LABEL_COLOURS
from deid_ds.campaign.tasks import tool_fields
from deid_ds.model import LABELS

#: The folder of ``OUT`` the doccano files go to, and the tool's name on the command line.
FOLDER = DOCCANO
LABELS_FILE = "labels.json"


def doccano_line(task: Mapping[str, Any], assigned_to: str) -> dict[str, Any]:
    """The doccano import line of one campaign task (a sentence), for the file of ``assigned_to``."""
    return {
        "text": task["text"],
        "label": [[span["start"], span["end"], span["label"]] for span in task.get("spans") or []],
        **tool_fields(task, assigned_to),
    }


def label_set(labels: Iterable[str] = LABELS) -> list[dict[str, Any]]:
    """doccano's label import file (Labels > Actions > Import Labels): text, shortcut key and colours."""
    return [
        {
            "text": label,
            "suffix_key": str(k),
            "background_color": LABEL_COLOURS.get(label, "#999999"),
            "text_color": "#000000",
        }
        for k, label in enumerate(labels, 1)
    ]


def instructions(names: Sequence[str], counts: Mapping[str, int]) -> str:
    """``README.md`` of the folder: how to import the tasks and export the answers."""
    files = "\n".join(f"- `{name}.jsonl`: {counts.get(name, 0)} sentences for {name}" for name in names)
    return f"""# Correction campaign: doccano files

{files}
- `{LABELS_FILE}`: the eight labels, with their colours and shortcut keys.

Each line is one sentence, with the weak labels as its labels.

For each annotator, logged in with the annotator's own account:

1. Create a project of type "Sequence Labeling" (one per annotator); leave "Allow overlapping spans"
   off. doccano gives imported labels to the account that imports them: the annotator imports.
2. Labels > Actions > Import Labels: `{LABELS_FILE}`.
3. Dataset > Actions > Import Dataset: format JSONL, column data `text`, column label `label`; upload
   the annotator's file (`NAME.jsonl`).
4. The annotator corrects each sentence (labels added, changed or removed, as the annotation
   guidelines say) and marks it as done (the check mark), also when nothing had to change.
5. Dataset > Actions > Export Dataset: format JSONL, "Export only approved documents" ticked. The
   archive holds one `USER.jsonl` per account.

Then, from the exported files:

    deid-ds agreement ann1.jsonl ann2.jsonl --json agreement.json
    deid-ds gold ann1.jsonl ann2.jsonl --strategy majority --out gold.parquet

Each answer is counted for the annotator of the file it was imported from (the line's `assigned_to`);
`--annotator-from file` counts it for the file's name instead (doccano names each exported file after
the account). Every exported line counts as an answer: export the approved sentences only.
`deid-ds gold` needs `--notes NOTES` (the notes table the campaign was built from) when a corrected span
does not start and end on the sentence's tokens. These files hold note text: keep them where the notes
are allowed.
"""


def write_files(directory: Path, names: Sequence[str], tasks: Mapping[str, list[Mapping[str, Any]]]) -> None:
    """``NAME.jsonl`` per annotator, ``labels.json`` and ``README.md`` into ``directory`` (new)."""
    directory.mkdir()
    for name in names:
        with (directory / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for task in tasks[name]:
                handle.write(json.dumps(doccano_line(task, name), ensure_ascii=False) + "\n")
    (directory / LABELS_FILE).write_text(json.dumps(label_set(), indent=1) + "\n", encoding="utf-8")
    counts = {name: len(tasks[name]) for name in names}
    (directory / "README.md").write_text(instructions(names, counts), encoding="utf-8")
