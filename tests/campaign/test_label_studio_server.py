"""The Label Studio round trip against a real server: ``campaign --tool label-studio`` -> a local Label
Studio (SQLite, 127.0.0.1, a temporary data directory) -> annotations submitted through its API by two
users -> the JSON and JSON-MIN exports -> ``agreement`` and ``gold``.

Label Studio is not a dependency: the server runs from its own environment (``make label-studio``,
which ``.ci/run`` runs, installs it into ``.venv-label-studio``; ``pip install deid-ds[label-studio]``
puts it beside deid-ds), found by
``$DEID_DS_LABEL_STUDIO`` (the ``label-studio`` executable), else ``.venv-label-studio/bin/label-studio``,
else ``label-studio`` on the PATH. Without it the test is skipped, saying so.

Four notes of the sample get a sentence with an emoji and a character outside the Basic Multilingual
Plane before and between its entities, so that every offset after them differs between characters
(deid-ds) and UTF-16 code units (JavaScript).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.campaign.label_studio_api import TOKEN_ENV, projects_by_title
from deid_ds.cli import main
from deid_ds.segmentation.html_text import html_to_text
from tests.conftest import REPO

pytestmark = pytest.mark.slow

#: The sentence added to each note: an emoji (U+1F637) and a musical symbol (U+1D11E), both outside the BMP.
EXTRA = (
    "<p>Consultation \U0001f637 du 0{k}/02/2021 avec le Dr Yann KERBRAT \U0001d11e à Lannion, "
    "tél. 02 96 23 01 7{k}.</p>"
)
USERS = {"alice": "alice@example.org", "bob": "bob@example.org"}
START_TIMEOUT = 300


def label_studio_executable() -> str | None:
    explicit = os.environ.get("DEID_DS_LABEL_STUDIO")
    if explicit:
        return explicit if Path(explicit).exists() else None
    local = REPO / ".venv-label-studio" / "bin" / "label-studio"
    return str(local) if local.exists() else shutil.which("label-studio")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(url: str, token: str, method: str = "GET", body: object = None) -> object:
    """One API call with the user's legacy token; the JSON answer."""
    data = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode("utf-8")
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read().decode("utf-8"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A fresh Label Studio: SQLite in a temporary data directory, 127.0.0.1 on a free port, no
    analytics and no version check (no outside connection), alice created at start-up with her token,
    bob added by ``label-studio init``. Yields the URL, the users' tokens and the start-up seconds."""
    executable = label_studio_executable()
    if executable is None:
        pytest.skip(
            "Label Studio is not installed: `make label-studio` installs it into .venv-label-studio (.ci/run does), "
            "or set DEID_DS_LABEL_STUDIO to a `label-studio` executable"
        )
    data = tmp_path_factory.mktemp("label-studio-data")
    port = free_port()
    env = {
        **os.environ,
        "LABEL_STUDIO_BASE_DATA_DIR": str(data),
        "DJANGO_DB": "sqlite",
        "COLLECT_ANALYTICS": "false",
        "LATEST_VERSION_CHECK": "false",
        "SENTRY_DSN": "",
        "FRONTEND_SENTRY_DSN": "",
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
    }
    tokens = {name: f"deid-ds-test-{name}-0123456789abcdef" for name in USERS}
    common = ["--data-dir", str(data), "--enable-legacy-api-token"]
    log = (data / "server.log").open("wb")
    started = time.monotonic()
    process = subprocess.Popen(
        [executable, "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port), *common,
         "--username", USERS["alice"], "--password", "alice-password-1", "--user-token", tokens["alice"]],
        env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"label-studio start exited with status {process.returncode}; see {data / 'server.log'}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() - started > START_TIMEOUT:
                    pytest.fail(f"Label Studio did not answer in {START_TIMEOUT} s; see {data / 'server.log'}")
                time.sleep(1)
        start_seconds = time.monotonic() - started
        subprocess.run(
            [executable, "init", *common, "--username", USERS["bob"], "--password", "bob-password-1",
             "--user-token", tokens["bob"]],
            env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=True, timeout=300,
        )  # fmt: skip
        yield {
            "url": url,
            "tokens": tokens,
            "start_seconds": start_seconds,
            "version": label_studio_version(url, tokens["alice"]),
        }
    finally:
        os.killpg(process.pid, 15)  # the server's own process group (start_new_session)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
        log.close()


def label_studio_version(url: str, token: str) -> str:
    return str(call(f"{url}/api/version", token).get("release", "?"))


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> dict:
    """Three notes of the sample, each with the sentence of :data:`EXTRA`, weak-labelled, and a Label
    Studio campaign for alice and bob with every document to both."""
    from deid_ds import weak_label

    root = tmp_path_factory.mktemp("ls-campaign")
    rows = pq.read_table(REPO / "data" / "notes.parquet").slice(0, 3).to_pylist()
    for k, row in enumerate(rows, 1):
        row["html"] = row["html"].replace("<body>", "<body>\n" + EXTRA.format(k=k), 1)
    pq.write_table(pa.Table.from_pylist(rows), root / "notes.parquet")
    weak_label(root / "notes.parquet", root / "weak", keep_empty=1.0, split=(0, 0, 1), progress=False, workers=1)
    args = ["campaign", str(root / "weak"), "--out", str(root / "campaign"), "-a", "alice,bob", "--overlap", "1"]
    result = CliRunner().invoke(main, [*args, "--tool", "label-studio", "--quiet"])
    assert result.exit_code == 0, result.output
    return {"root": root, "html": {row["id_document"]: row["html"] for row in rows}, "files": root / "campaign"}


def region(text: str, needle: str, label: str, region_id: str) -> dict:
    """A region as Label Studio's interface saves it: offsets in code points of the task's text."""
    start = text.index(needle)
    value = {"start": start, "end": start + len(needle), "text": needle, "labels": [label]}
    return {
        "id": region_id,
        "from_name": "label",
        "to_name": "text",
        "type": "labels",
        "origin": "manual",
        "value": value,
    }


def answer(annotator: str, task: dict) -> list[dict]:
    """What ``annotator`` submits for ``task``: the predictions accepted, and on the sentences with the
    emoji (all after it and the other character outside the BMP): bob deletes the phone of the first
    note, makes the doctor of the second a patient, adds the city of the third; alice adds the city of
    the first and the third."""
    result = [dict(r, origin="prediction") for r in task["predictions"][0]["result"]]
    text = task["data"]["text"]
    if "\U0001f637" not in text:
        return result
    k = int(text[text.index("/02/2021") - 1])
    if annotator == "bob" and k == 1:
        result = [r for r in result if r["value"]["labels"] != ["PHONE"]]
    if annotator == "bob" and k == 2:
        result = [dict(r, value={**r["value"], "labels": ["PATIENT"]}) if r["value"]["labels"] == ["DOCTOR"] else r
                  for r in result]  # fmt: skip
    if (annotator, k) in {("alice", 1), ("alice", 3), ("bob", 3)}:
        result.append(region(text, "Lannion", "VILLE", f"{annotator}-city"))
    return result


@pytest.fixture(scope="module")
def round_trip(server, campaign) -> dict:
    """``deid-ds label-studio push`` creates the annotators' projects with the campaign's configuration
    and imports their files; each annotator submits an answer to every task of their project
    (:func:`answer`); ``deid-ds label-studio pull`` exports JSON and JSON-MIN. Also writes what was
    submitted as a local export (``NAME-submitted.json``: the imported tasks with the answers), the
    reference the server's exports are compared with."""
    url, files, out = server["url"], campaign["files"] / "label-studio", campaign["root"]
    figures: dict = {"version": server["version"], "start_seconds": round(server["start_seconds"], 1)}
    env = {TOKEN_ENV: server["tokens"]["alice"]}
    started = time.monotonic()
    pushed = CliRunner().invoke(main, ["label-studio", "push", str(campaign["files"]), "--url", url], env=env)
    assert pushed.exit_code == 0, pushed.output
    figures["push_seconds"] = round(time.monotonic() - started, 2)
    imported = {name: json.loads((files / f"{name}.json").read_text(encoding="utf-8")) for name in USERS}
    assert pushed.output.splitlines() == [
        *(f"{name}: project {k}, {len(imported[name])} tasks imported" for k, name in enumerate(USERS, 1)),
        f"2 projects created at {url}",
    ]
    again = CliRunner().invoke(main, ["label-studio", "push", str(campaign["files"]), "--url", url], env=env)
    assert again.exit_code == 1 and "a project is already titled 'deid-ds alice'" in again.output
    projects = projects_by_title(url, server["tokens"]["bob"])  # every project of the organisation
    for name in USERS:
        token = server["tokens"][name]
        settings = call(f"{url}/api/projects/{projects['deid-ds ' + name]}/", token)
        assert (settings["model_version"], settings["show_collab_predictions"]) == ("deid-ds weak labels", True)
        listed = call(f"{url}/api/tasks/?project={projects['deid-ds ' + name]}&page_size=10000&fields=all", token)
        listed = sorted(listed["tasks"], key=lambda task: task["id"])
        figures[f"{name}_imported"] = (len(listed), sum(len(task["predictions"]) for task in listed))
        assert [task["data"] for task in listed] == [task["data"] for task in imported[name]]  # kept as imported
        assert [task["predictions"][0]["result"] for task in listed] == [
            t["predictions"][0]["result"] for t in imported[name]
        ]
        submitted = []
        started = time.monotonic()
        for task in listed:
            result = answer(name, task)
            saved = call(
                f"{url}/api/tasks/{task['id']}/annotations/", token, "POST", {"result": result, "lead_time": 2.5}
            )
            submitted.append({**task, "annotations": [{"id": saved["id"], "completed_by": saved["completed_by"],
                                                       "result": result, "was_cancelled": False}]})  # fmt: skip
        figures[f"{name}_submit_seconds"] = round(time.monotonic() - started, 1)
        (out / f"{name}-submitted.json").write_text(json.dumps(submitted, ensure_ascii=False), encoding="utf-8")
    for kind, folder in (("JSON", "exports"), ("JSON_MIN", "exports-min")):
        args = ["label-studio", "pull", str(campaign["files"]), "--url", url, "--out", str(out / folder)]
        pulled = CliRunner().invoke(main, [*args, "--export-type", kind], env=env)
        assert pulled.exit_code == 0, pulled.output
    return {"out": out, "figures": figures, "campaign": campaign}


def agreement_json(*paths: Path, out: Path) -> dict:
    result = CliRunner().invoke(
        main, ["agreement", *map(str, paths), "--json", str(out), "--bootstrap", "20", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8"))


def test_label_studio_exports_keep_the_tasks_and_the_answers_exactly(round_trip):
    out = round_trip["out"]
    for name in USERS:
        submitted = json.loads((out / f"{name}-submitted.json").read_text(encoding="utf-8"))
        exported = sorted(
            json.loads((out / "exports" / f"{name}-export.json").read_text(encoding="utf-8")), key=lambda t: t["id"]
        )
        assert [task["data"] for task in exported] == [task["data"] for task in submitted]
        assert [[r["value"] for r in t["annotations"][0]["result"]] for t in exported] == [
            [r["value"] for r in t["annotations"][0]["result"]] for t in submitted
        ]
        rows = json.loads((out / "exports-min" / f"{name}-export-min.json").read_text(encoding="utf-8"))
        assert len(rows) == len(submitted)


def test_agreement_and_gold_read_the_server_exports_as_what_was_submitted(round_trip):
    out, figures, campaign = round_trip["out"], round_trip["figures"], round_trip["campaign"]
    names = list(USERS)
    reference = agreement_json(*(out / f"{n}-submitted.json" for n in names), out=out / "reference.json")
    full = agreement_json(*(out / "exports" / f"{n}-export.json" for n in names), out=out / "full.json")
    short = agreement_json(*(out / "exports-min" / f"{n}-export-min.json" for n in names), out=out / "min.json")
    assert full == reference and short == reference  # every figure, the counts of what was read included
    kappa = full["fleiss_kappa"]
    assert full["input"]["accepted"] == 2 * kappa["n_items"] and 0.5 < kappa["value"] < 1.0  # the corrections
    figures.update(kappa=round(kappa["value"], 4), items=kappa["n_items"], read_back=full["input"]["accepted"])

    result = CliRunner().invoke(
        main,
        [
            "gold",
            *(str(out / "exports" / f"{n}-export.json") for n in names),
            "--strategy",
            "majority",
            "--out",
            str(out / "gold.parquet"),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    gold = pd.read_parquet(out / "gold.parquet")
    # A tie goes to the document's primary annotator: the gold is the primary's answers, mapped to the HTML.
    expected = set()
    for name in names:
        for task in json.loads((out / f"{name}-submitted.json").read_text(encoding="utf-8")):
            if task["data"]["primary_annotator"] != name:
                continue
            tokens = task["data"]["tokens"]
            for r in task["annotations"][0]["result"]:
                start = next(t["html_start"] for t in tokens if t["start"] == r["value"]["start"])
                end = next(t["html_end"] for t in tokens if t["end"] == r["value"]["end"])
                expected.add((task["data"]["id_document"], r["value"]["labels"][0], start, end, r["value"]["text"]))
    found = set(zip(gold["id_document"], gold["label"], gold["html_start"], gold["html_end"], gold["text"]))
    assert found == expected
    for row in gold.itertuples():  # offsets exact: the span's text at its place in the note
        parsed = html_to_text(campaign["html"][row.id_document])
        start, end = parsed.text_span(row.html_start, row.html_end)
        assert parsed.text[start:end] == row.text
    in_extra = [r for r in gold.itertuples() if r.html_end <= campaign["html"][r.id_document].index("</p>")]
    # The primary annotators are alice, alice, bob: a tie goes their way. bob's deleted phone (first note) and
    # patient (second) lose to alice; the city alice added to the first note and both to the third stay.
    expected = []
    for k, document in enumerate(campaign["html"], 1):
        expected += [(document, "DATE", f"0{k}/02/2021"), (document, "DOCTOR", "Yann KERBRAT")]
        expected += [(document, "PHONE", f"02 96 23 01 7{k}")] + ([(document, "VILLE", "Lannion")] if k != 2 else [])
    assert sorted((r.id_document, r.label, r.text) for r in in_extra) == sorted(expected)
    figures["gold_spans"] = len(gold)
    print("\nLabel Studio round trip:", json.dumps(figures), file=sys.stderr)
