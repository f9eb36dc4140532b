"""Small inputs for the HTML pages' tests: a few sample notes, their gold spans, and one hostile note.

The hostile note carries what a page must never let through: markup that would run (``<script>``), a
remote image (to an address on this machine that serves nothing), and text that *reads* as markup
(``&lt;script&gt;``). Its entities are given by offsets found in its HTML, as a labeller would.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from tests.conftest import REPO

HOSTILE_ID = "N9-hostile"
HOSTILE_HTML = (
    "<html><head><title>Dr Jean DUPONT</title></head><body>"
    "<p>Vu par le Dr <b>Jean DUPONT</b> le 12/03/2020 à Rennes.</p>"
    "<p>Note : &lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;gras&lt;/b&gt;</p>"
    '<img src="http://127.0.0.1:9/pixel.png" alt="">'
    '<script>document.title = "ran";</script>'
    "</body></html>"
)


def _span(html: str, text: str, label: str, after: int = 0) -> dict:
    start = html.index(text, after)
    return {"id_document": HOSTILE_ID, "label": label, "html_start": start, "html_end": start + len(text)}


def hostile_spans() -> pd.DataFrame:
    body = HOSTILE_HTML.index("<body>")
    return pd.DataFrame(
        [
            _span(HOSTILE_HTML, "Jean DUPONT", "DOCTOR", body),
            _span(HOSTILE_HTML, "12/03/2020", "DATE"),
            _span(HOSTILE_HTML, "Rennes", "VILLE"),
        ]
    )


def write_inputs(base: Path, n_notes: int = 5) -> tuple[Path, Path, Path]:
    """notes.parquet (``n_notes`` sample notes and the hostile one), gold.parquet, and system/spans.parquet.

    The system is the gold with a few errors: the first note's first span dropped (a false negative), the
    second's first span cut by one character (a false positive and a false negative), the hostile note's
    city relabelled (a label error).
    """
    notes = pq.read_table(REPO / "data" / "notes.parquet").slice(0, n_notes).to_pandas()
    hostile = dict.fromkeys(notes.columns) | {
        "id_document": HOSTILE_ID,
        "id_patient": "P9",
        "doc_type": "consultation",
        "html": HOSTILE_HTML,
    }
    notes = pd.concat([notes, pd.DataFrame([hostile]).astype(notes.dtypes.to_dict())], ignore_index=True)
    gold = pd.read_parquet(REPO / "data" / "gold.parquet", columns=["id_document", "label", "html_start", "html_end"])
    gold = gold[gold["id_document"].isin(notes["id_document"])]
    gold = pd.concat([gold, hostile_spans()], ignore_index=True)
    system = gold.copy()
    first, second = notes["id_document"][0], notes["id_document"][1]
    system = system.drop(system.index[system["id_document"] == first][0])
    cut = system.index[system["id_document"] == second][0]
    system.loc[cut, "html_end"] -= 1
    system.loc[(system["id_document"] == HOSTILE_ID) & (system["label"] == "VILLE"), "label"] = "STR"
    base.mkdir(parents=True, exist_ok=True)
    notes.to_parquet(base / "notes.parquet")
    gold.to_parquet(base / "gold.parquet")
    (base / "system").mkdir(exist_ok=True)
    system.to_parquet(base / "system" / "spans.parquet")
    return base / "notes.parquet", base / "gold.parquet", base / "system" / "spans.parquet"
