"""The correction campaign in Label Studio: tasks with the weak labels as predictions, and the labelling
configuration of the eight labels.

Label Studio (open source, Apache 2.0) imports a JSON list of tasks. Each campaign sentence becomes::

    {"data": {"text": ..., "id_document": ..., "id_patient": ..., "doc_type": ..., "sentence_index": ...,
              "primary_annotator": ..., "other_annotators": [...], "assigned_to": ..., "tokens": [...]},
     "predictions": [{"model_version": "deid-ds weak labels",
                      "result": [{"id": "weak-1", "from_name": "label", "to_name": "text", "type": "labels",
                                  "value": {"start": 0, "end": 6, "text": ..., "labels": ["PATIENT"]}}]}]}

The pre-annotations are *predictions* (Label Studio's documented way to pre-label): the annotator sees
them, corrects them and submits; the submitted annotation is what the export holds, under
``annotations[].result[]`` with the same ``value`` fields. ``from_name``/``to_name`` are the names of the
``<Labels>`` and ``<Text>`` tags of :func:`label_config`. ``data`` keeps the campaign's fields
(:func:`deid_ds.campaign.tasks.tool_fields`), which Label Studio exports back as they were imported:
:func:`deid_ds.agreement.readers.read_labelstudio` reads the document, the sentence, the annotator
(``assigned_to``) and the tokens' HTML offsets from them.

Offsets are characters of ``text`` (the sentence), end exclusive, as in every deid-ds file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from deid_ds.campaign.choices import LABEL_STUDIO
from deid_ds.campaign.components import LABEL_COLOURS
from deid_ds.campaign.tasks import tool_fields
from deid_ds.model import LABELS

#: The folder of ``OUT`` the Label Studio files go to, and the tool's name on the command line.
FOLDER = LABEL_STUDIO
#: The ``model_version`` of the predictions (shown in Label Studio's project settings and task list).
MODEL_VERSION = "deid-ds weak labels"
#: Names of the labelling configuration's tags, which every prediction and annotation result refers to.
FROM_NAME, TO_NAME = "label", "text"
CONFIG_FILE = "label_config.xml"


def label_config(labels: Iterable[str] = LABELS) -> str:
    """The labelling configuration (Settings > Labeling Interface > Code): the labels, then the text.

    No ``granularity="word"``: Label Studio's word boundaries are not this project's tokens, and the
    guidelines ask for exact character ranges (``deid-ds gold --notes`` maps any range to the HTML).
    """
    lines = ["<View>", f'  <Labels name="{FROM_NAME}" toName="{TO_NAME}">']
    for label in labels:
        lines.append(
            f"    <Label value={quoteattr(label)} background={quoteattr(LABEL_COLOURS.get(label, '#999999'))}/>"
        )
    lines += ["  </Labels>", f'  <Text name="{TO_NAME}" value="${TO_NAME}"/>', "</View>"]
    return "\n".join(lines) + "\n"


def labelstudio_task(task: Mapping[str, Any], assigned_to: str) -> dict[str, Any]:
    """The Label Studio task of one campaign task (a sentence), for the file of ``assigned_to``."""
    text = task["text"]
    result = [
        {
            "id": f"weak-{k}",
            "from_name": FROM_NAME,
            "to_name": TO_NAME,
            "type": "labels",
            "value": {
                "start": span["start"],
                "end": span["end"],
                "text": text[span["start"] : span["end"]],
                "labels": [span["label"]],
            },
        }
        for k, span in enumerate(task.get("spans") or [], 1)
    ]
    return {
        "data": {"text": text, **tool_fields(task, assigned_to)},
        "predictions": [{"model_version": MODEL_VERSION, "result": result}],
    }


def tasks_json(tasks: Iterable[Mapping[str, Any]], assigned_to: str) -> str:
    """The import file of one annotator: a JSON list, one task per line (readable, diffable)."""
    lines = [json.dumps(labelstudio_task(task, assigned_to), ensure_ascii=False) for task in tasks]
    return "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n"


def instructions(names: Sequence[str], counts: Mapping[str, int]) -> str:
    """``README.md`` of the folder: how to import the tasks and export the answers."""
    files = "\n".join(f"- `{name}.json`: {counts.get(name, 0)} sentences for {name}" for name in names)
    return f"""# Correction campaign: Label Studio files

{files}
- `{CONFIG_FILE}`: the labelling configuration of the eight labels.

Each sentence is one task; the weak labels are its predictions (model version "{MODEL_VERSION}").

For each annotator:

1. Create a project (one per annotator), named after the annotator.
2. Settings > Labeling Interface > Code: paste `{CONFIG_FILE}`, save.
3. Import: upload the annotator's file (`NAME.json`).
4. Settings > Annotation (Machine Learning in older versions): turn on "Use predictions to prelabel
   tasks" and choose the version "{MODEL_VERSION}".
5. The annotator corrects each sentence (labels added, changed or removed, as the annotation
   guidelines say) and submits it, also when nothing had to change.
6. Export > JSON: save the file, for example as `NAME-export.json`.

With a Label Studio server and your API token in `LABEL_STUDIO_API_KEY`, `deid-ds label-studio push OUT
--url URL` does steps 1 to 4 for every annotator, and `deid-ds label-studio pull OUT --url URL --out
ANSWERS` step 6 (OUT: the campaign's folder, the one above this one).

Then, from the exported files:

    deid-ds agreement ann1-export.json ann2-export.json --json agreement.json
    deid-ds gold ann1-export.json ann2-export.json --strategy majority --out gold.parquet

Each answer is counted for the annotator of the file it was imported from (the task's `assigned_to`);
`--annotator-from user` counts it for the Label Studio user who submitted it instead. `deid-ds gold`
needs `--notes NOTES` (the notes table the campaign was built from) when a corrected span does not start
and end on the sentence's tokens. These files hold note text: keep them where the notes are allowed.
"""


def write_files(directory: Path, names: Sequence[str], tasks: Mapping[str, list[Mapping[str, Any]]]) -> None:
    """``NAME.json`` per annotator, ``label_config.xml`` and ``README.md`` into ``directory`` (new)."""
    directory.mkdir()
    for name in names:
        (directory / f"{name}.json").write_text(tasks_json(tasks[name], name), encoding="utf-8")
    (directory / CONFIG_FILE).write_text(label_config(), encoding="utf-8")
    counts = {name: len(tasks[name]) for name in names}
    (directory / "README.md").write_text(instructions(names, counts), encoding="utf-8")
