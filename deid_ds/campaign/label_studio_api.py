"""A campaign's Label Studio files to a server and its answers back, over Label Studio's HTTP API.

``push`` creates one project per annotator (titled ``PREFIX + NAME``) with the campaign's labelling
configuration, imports the annotator's ``NAME.json`` (the weak labels come as predictions) and turns on
pre-labelling with them (the project's ``model_version``);
``pull`` exports those projects (JSON or JSON-MIN), the files ``deid-ds agreement`` and ``gold`` read.
Plain HTTP with the user's API token (``Authorization: Token``; Label Studio 1.23 accepts it when the
organisation allows legacy tokens, ``label-studio start --enable-legacy-api-token``): no SDK, so that
deid-ds's environment stays as it is. The token comes from the environment, never the command line
(where other users of the machine would see it). Checked against a real server by
``tests/campaign/test_label_studio_server.py``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deid_ds.campaign.label_studio import CONFIG_FILE, FOLDER, MODEL_VERSION
from deid_ds.errors import InputError

#: The environment variable holding the API token (the name Label Studio's SDK reads too).
TOKEN_ENV = "LABEL_STUDIO_API_KEY"
#: What precedes the annotator's name in a project's title.
DEFAULT_PREFIX = "deid-ds "
#: Label Studio's export types that ``deid-ds agreement`` and ``gold`` read, and the files' suffixes.
EXPORT_TYPES = {"JSON": "export", "JSON_MIN": "export-min"}
TIMEOUT = 600


@dataclass
class Project:
    """An annotator's project on the server."""

    annotator: str
    id: int
    tasks: int


def annotator_files(campaign: str | Path) -> dict[str, Path]:
    """``NAME -> OUT/label-studio/NAME.json`` of a ``campaign --tool label-studio`` output."""
    folder = Path(campaign) / FOLDER
    if not (folder / CONFIG_FILE).is_file():
        raise InputError(f"{campaign}: no {FOLDER}/{CONFIG_FILE}: not a `deid-ds campaign --tool label-studio` output")
    return {path.stem: path for path in sorted(folder.glob("*.json"))}


def call(url: str, path: str, token: str, method: str = "GET", body: Any = None) -> Any:
    """One API request; its JSON answer. HTTP and connection errors are one line naming the request."""
    data = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode("utf-8")
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"}
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method, headers=headers)
    where = f"Label Studio at {url}: {method} {path.split('?')[0]}"
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        hint = ""
        if error.code in (401, 403):
            hint = f" (is ${TOKEN_ENV} a token of this server's user, legacy tokens enabled?)"
        raise InputError(f"{where}: HTTP {error.code} {error.reason}{hint}") from None
    except urllib.error.URLError as error:
        raise InputError(f"{where}: cannot connect ({error.reason})") from None
    except (OSError, ValueError) as error:  # a timeout, an answer that is not JSON
        raise InputError(f"{where}: {type(error).__name__}") from None


def projects_by_title(url: str, token: str) -> dict[str, int]:
    """Every project the user sees: title -> id."""
    found: dict[str, int] = {}
    page = 1
    while True:
        answer = call(url, f"/api/projects/?page_size=100&page={page}", token)
        results = answer.get("results", []) if isinstance(answer, dict) else answer
        found.update({project["title"]: project["id"] for project in results})
        if not isinstance(answer, dict) or not answer.get("next"):
            return found
        page += 1


def push(campaign: str | Path, url: str, token: str, prefix: str = DEFAULT_PREFIX) -> list[Project]:
    """Create each annotator's project and import their tasks; refused if a project has the title already."""
    files = annotator_files(campaign)
    config = (Path(campaign) / FOLDER / CONFIG_FILE).read_text(encoding="utf-8")
    taken = sorted(set(projects_by_title(url, token)) & {prefix + name for name in files})
    if taken:
        raise InputError(f"Label Studio at {url}: a project is already titled {taken[0]!r} (--prefix to choose others)")
    projects = []
    for name, path in files.items():
        content = path.read_bytes()
        expected = len(json.loads(content.decode("utf-8")))
        project = call(url, "/api/projects/", token, "POST", {"title": prefix + name, "label_config": config})
        counts = call(url, f"/api/projects/{project['id']}/import", token, "POST", content)
        if counts.get("task_count") != expected:
            raise InputError(
                f"Label Studio at {url}: project {project['id']} imported {counts.get('task_count')} of the "
                f"{expected} tasks of {path.name}"
            )
        # The step the README asks for by hand: pre-label with the weak labels' predictions.
        settings = {"model_version": MODEL_VERSION, "show_collab_predictions": True}
        call(url, f"/api/projects/{project['id']}/", token, "PATCH", settings)
        projects.append(Project(name, project["id"], expected))
    return projects


def pull(
    campaign: str | Path, url: str, token: str, out: Path, export_type: str = "JSON", prefix: str = DEFAULT_PREFIX
) -> list[tuple[str, Path, int]]:
    """Export each annotator's project into ``out/NAME-export.json`` (``-export-min`` for JSON-MIN):
    ``(name, file, answered tasks)``. ``out`` is a new directory the caller publishes."""
    names = annotator_files(campaign)
    projects = projects_by_title(url, token)
    written = []
    for name in names:
        if prefix + name not in projects:
            raise InputError(
                f"Label Studio at {url}: no project titled {prefix + name!r} (pushed with another --prefix?)"
            )
        query = urllib.parse.urlencode({"exportType": export_type})
        tasks = call(url, f"/api/projects/{projects[prefix + name]}/export?{query}", token)
        path = out / f"{name}-{EXPORT_TYPES[export_type]}.json"
        path.write_text(json.dumps(tasks, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        written.append((name, path, len(tasks)))
    return written
