"""The examples of README.md and docs/*.md, found and run as a user would run them.

A fenced block is an example by its language: ```bash blocks are run by ``bash -euo pipefail``, ```python
blocks are written to a script and run by ``python script.py`` (a real file, so that examples with
``workers=2`` start real worker processes). Other languages (``text``, ``console``, ``json``) are shown,
never run. An example that cannot run here (a cluster, a licensed tool) says so on the line before it:
``<!-- example: not run (needs Prodigy) -->``.

The examples of one page run in order in one directory prepared like a checkout after ``make demo``,
on a small input (:func:`make_checkout`): ``data/``, ``kb/sources/`` and ``out/demo/``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: Pages of measurements: their commands run benchmarks for minutes or hours on large generated corpora,
#: to be run again by hand (tests/test_benchmarks_doc.py checks that they name existing scripts and options).
MEASUREMENTS = {REPO / "docs" / "benchmarks.md"}
RUN = {"bash", "python"}
SHOWN = {"text", "console", "json"}
NOT_RUN = re.compile(r"^<!-- example: not run \((?P<reason>[^)]*)\) -->$")
#: The sample's patients whose notes make the small checkout (14 notes of 7 document types), split
#: 2/1/1 into train/dev/test so that every split has a patient.
PATIENTS = ["P1-00001", "P1-00002", "P1-00003", "P1-00004"]
SPLIT = "0.5,0.25,0.25"
#: The demo's outputs that only a model makes: a page whose examples use one gets a checkout with them.
MODEL_OUTPUTS = ("out/demo/model", "out/demo/predict", "out/demo/hybrid")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    not_run: str | None  # the reason given, when marked

    @property
    def runs(self) -> bool:
        return self.language in RUN and self.not_run is None and self.page not in MEASUREMENTS

    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            language, start = lines[i][3:].strip(), i
            previous = next((line.strip() for line in reversed(lines[:i]) if line.strip()), "")
            marker = NOT_RUN.match(previous)
            i += 1
            body = []
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            found.append(Block(page, start + 1, language, "\n".join(body) + "\n", marker and marker["reason"]))
        i += 1
    return found


def needs_model(page: Path) -> bool:
    return any(path in block.code for block in blocks(page) if block.runs for path in MODEL_OUTPUTS)


def make_checkout(dest: Path, *, model: bool) -> None:
    """A checkout after ``make demo``, small: 14 notes of 4 patients, the sample's sources, ``out/demo/kb`` and
    ``out/demo/weak``; with ``model``, a tiny ``out/demo/model`` (FastText and 1 epoch: seconds, not a model),
    its predictions ``out/demo/predict`` and the hybrid's ``out/demo/hybrid``."""
    from deid_ds import build_kb, weak_label

    (dest / "data").mkdir(parents=True)
    notes = pq.read_table(REPO / "data" / "notes.parquet")
    notes = notes.filter(pc.is_in(notes["id_patient"], pa.array(PATIENTS)))
    pq.write_table(notes, dest / "data" / "notes.parquet")
    gold = pq.read_table(REPO / "data" / "gold.parquet")
    pq.write_table(gold.filter(pc.is_in(gold["id_document"], notes["id_document"])), dest / "data" / "gold.parquet")
    shutil.copytree(REPO / "kb" / "sources", dest / "kb" / "sources")
    demo = dest / "out" / "demo"
    sources = dest / "kb" / "sources"
    build_kb(
        demo / "kb",
        ban=sorted(str(p) for p in sources.glob("adresses-*.csv.gz")),
        health_directory=[str(p) for p in sources.glob("PS_LibreAcces_Personne_activite_*.txt")],
        progress=False,
    )
    weak_label(
        dest / "data" / "notes.parquet",
        demo / "weak",
        kb=demo / "kb",
        gold=dest / "data" / "gold.parquet",
        keep_empty=0.3,
        split=SPLIT,
        progress=False,
        log=lambda line: None,
    )
    if model:
        from deid_ds import TrainConfig, predict, train_fasttext, train_tagger

        train_fasttext(demo / "weak", demo / "fasttext", dim=16, epochs=1, bucket=2000)
        train_tagger(
            demo / "weak",
            demo / "model",
            fasttext=demo / "fasttext",
            config=TrainConfig(hidden=16, max_epochs=1, threads=1),
        )
        quiet = {"progress": False, "log": lambda line: None, "threads": 1}
        notes_path = dest / "data" / "notes.parquet"
        predict(demo / "model", notes_path, demo / "predict", kb=demo / "kb", **quiet)
        predict(demo / "model", notes_path, demo / "hybrid", with_rules=demo / "kb", **quiet)


def example_env() -> dict[str, str]:
    """The user's environment: this checkout's ``deid_ds``, the venv's ``deid-ds`` and ``python`` first on PATH,
    and one torch thread per process."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("DEID_DS_KEY", None)
    # One torch thread per process: the suite shares the machine's cores between its workers, and torch's
    # spinning threads slow tiny models down many times over on busy cores (docs/train.md, --threads).
    env["OMP_NUM_THREADS"] = "1"
    return env


def run_block(block: Block, workdir: Path, index: int, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run one example in ``workdir`` as written: a shell script, or a Python script file."""
    if block.language == "bash":
        script = workdir / f".example-{index}.sh"
        script.write_text(block.code, encoding="utf-8")
        command = ["bash", "-euo", "pipefail", script.name]
    else:
        script = workdir / f"example_{index}.py"
        script.write_text(block.code, encoding="utf-8")
        command = [sys.executable, script.name]
    return subprocess.run(
        command,
        cwd=workdir,
        env=example_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
