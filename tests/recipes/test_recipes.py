"""The Prodigy recipes ``deid.correct`` and ``deid.review`` against a STAND-IN of Prodigy's API.

Prodigy is commercial and not installable here. ``STANDIN`` below is a minimal stand-in of the few
names the recipe modules import (``prodigy.set_hashes``, ``prodigy.core.recipe``/``Arg``,
``prodigy.components.stream.get_stream`` with ``.apply``, and the older
``prodigy.components.loaders.JSONL``), written to a temporary directory and put first on ``sys.path``.
It is not Prodigy: these tests check that the recipes call the documented API as documented and that
their components behave; a real install is the final check.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from deid_ds.model import LABELS
from tests.conftest import REPO

STANDIN = {
    "prodigy/__init__.py": '''
        """STAND-IN for tests, not Prodigy."""
        import json

        def set_hashes(eg, input_keys=("text",), task_keys=("spans",), overwrite=False):
            if overwrite or "_input_hash" not in eg:
                eg["_input_hash"] = hash(json.dumps([eg.get(k) for k in input_keys], sort_keys=True))
            if overwrite or "_task_hash" not in eg:
                eg["_task_hash"] = hash(json.dumps([eg["_input_hash"], [eg.get(k) for k in task_keys]], sort_keys=True))
            return eg
    ''',
    "prodigy/core.py": '''
        """STAND-IN for tests, not Prodigy: recipe registry and Arg."""
        REGISTRY = {}

        class Arg:
            def __init__(self, *flags, help=""):
                self.flags, self.help = flags, help

        def recipe(name, **args):
            def register(function):
                REGISTRY[name] = (function, args)
                return function
            return register
    ''',
    "prodigy/components/__init__.py": "",
    "prodigy/components/stream.py": '''
        """STAND-IN for tests, not Prodigy: get_stream and Stream.apply(func, stream=stream, **kwargs)."""
        import json

        CALLS = []

        class Stream:
            def __init__(self, items):
                self._items = items

            def apply(self, func, *args, **kwargs):
                kwargs = {k: (self._items if v is self else v) for k, v in kwargs.items()}
                self._items = func(*args, **kwargs)

            def __iter__(self):
                return iter(self._items)

        def get_stream(source, rehash=True, dedup=True, **kwargs):
            CALLS.append({"source": source, "rehash": rehash, "dedup": dedup})
            with open(source, encoding="utf-8") as handle:
                return Stream([json.loads(line) for line in handle if line.strip()])
    ''',
    "prodigy/components/loaders.py": '''
        """STAND-IN for tests, not Prodigy: the pre-1.12 JSONL loader."""
        import json

        def JSONL(source):
            with open(source, encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        yield json.loads(line)
    ''',
}


@pytest.fixture
def standin(tmp_path, monkeypatch):
    """Install the stand-in Prodigy on sys.path; forget any recipe or prodigy module loaded before."""
    root = tmp_path / "standin"
    for name, body in STANDIN.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    for name in list(sys.modules):
        if name == "prodigy" or name.startswith(("prodigy.", "deid_ds_recipes", "standin_recipe_")):
            monkeypatch.delitem(sys.modules, name)
    yield root
    for name in list(sys.modules):
        if name == "prodigy" or name.startswith(("prodigy.", "deid_ds_recipes", "standin_recipe_")):
            sys.modules.pop(name, None)


def load_file(path: Path, name: str):
    """Import a recipe file by path, as ``prodigy ... -F path`` does."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def task(document: str = "D1", index: int = 0, annotator: str = "alice", others: list[str] | None = None) -> dict:
    text = "Dr Yann KERBRAT"
    tokens = [
        {"text": w, "start": s, "end": e, "html_start": 10 + s, "html_end": 10 + e, "id": i, "ws": True}
        for i, (w, s, e) in enumerate([("Dr", 0, 2), ("Yann", 3, 7), ("KERBRAT", 8, 15)])
    ]
    return {
        "text": text,
        "tokens": tokens,
        "tokens_parser": [{"start": t["html_start"], "end": t["html_end"]} for t in tokens],
        "spans": [
            {"start": 3, "end": 15, "token_start": 1, "token_end": 2, "label": "DOCTOR", "source": "context:title"}
        ],
        "meta": {
            "id_document": document,
            "id_patient": "P1",
            "doc_type": "letter",
            "sentence_index": index,
            "annotator": annotator,
            "annotator2": others or [],
        },
    }


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_deid_correct_components(standin, tmp_path):
    module = load_file(REPO / "recipes" / "deid_correct.py", "standin_recipe_correct")
    from prodigy.components.stream import CALLS
    from prodigy.core import REGISTRY

    function, args = REGISTRY["deid.correct"]
    assert function is module.deid_correct
    assert {"dataset", "source", "label", "feed_overlap", "annotations_per_task"} <= set(args)
    source = write_jsonl(
        tmp_path / "tasks.jsonl", [task("D1", 0, "alice", ["bob"]), task("D2", 0, "bob"), task("D2", 1, "bob")]
    )
    components = module.deid_correct("deid_gold", str(source), feed_overlap=True)
    assert {"dataset", "stream", "view_id", "config", "validate_answer", "before_db"} <= set(components)
    assert components["dataset"] == "deid_gold" and components["view_id"] == "ner_manual"
    config = components["config"]
    assert config["labels"] == list(LABELS) and config["exclude_by"] == "input"
    assert config["force_stream_order"] and config["honor_token_whitespace"] and config["feed_overlap"] is True
    assert "annotations_per_task" not in config
    assert set(config["custom_theme"]["labels"]) == set(LABELS)
    assert CALLS[-1] == {"source": str(source), "rehash": False, "dedup": False}
    stream = list(components["stream"])
    assert [(t["meta"]["id_document"], t["meta"]["sentence_index"]) for t in stream] == [
        ("D1", 0),
        ("D2", 0),
        ("D2", 1),
    ]
    # the same text in two documents: two inputs
    assert len({t["_input_hash"] for t in stream}) == 3 and all("_task_hash" in t for t in stream)

    answer = dict(stream[0], answer="accept")
    components["validate_answer"](answer)
    bad = json.loads(json.dumps(answer))
    bad["spans"][0].update(start=4)  # not on a token boundary
    with pytest.raises(ValueError, match="not aligned") as caught:
        components["validate_answer"](bad)
    assert "KERBRAT" not in str(caught.value)
    saved = components["before_db"]([answer])[0]
    assert saved["meta"] == answer["meta"] and saved["tokens_parser"] == answer["tokens_parser"]
    assert (saved["spans"][0]["html_start"], saved["spans"][0]["html_end"]) == (13, 25)
    assert saved["_input_hash"] == answer["_input_hash"]

    routed = module.deid_correct("deid_gold", str(source), annotations_per_task=2.0)["config"]
    assert routed["annotations_per_task"] == 2.0 and "feed_overlap" not in routed
    with pytest.raises(ValueError, match="cannot be set together"):
        module.deid_correct("deid_gold", str(source), feed_overlap=True, annotations_per_task=2.0)
    only_bob = module.deid_correct("deid_gold", str(source), annotator="bob")["stream"]
    assert [t["meta"]["id_document"] for t in only_bob] == ["D1", "D2", "D2"]
    only_alice = module.deid_correct("deid_gold", str(source), annotator="alice", label="DOCTOR")
    assert [t["meta"]["id_document"] for t in only_alice["stream"]] == ["D1"] and only_alice["config"]["labels"] == [
        "DOCTOR"
    ]


def test_deid_correct_falls_back_to_the_jsonl_loader(standin, tmp_path):
    (standin / "prodigy" / "components" / "stream.py").unlink()
    module = load_file(REPO / "recipes" / "deid_correct.py", "standin_recipe_correct_old")
    assert module.get_stream is None
    source = write_jsonl(tmp_path / "tasks.jsonl", [task("D1"), task("D2")])
    stream = list(module.deid_correct("deid_gold", str(source))["stream"])
    assert [t["meta"]["id_document"] for t in stream] == ["D1", "D2"] and stream[0]["_input_hash"] != stream[1][
        "_input_hash"
    ]


def test_deid_correct_refuses_a_broken_task_file(standin, tmp_path):
    module = load_file(REPO / "recipes" / "deid_correct.py", "standin_recipe_correct_broken")
    broken = task("D9", 4)
    broken["spans"][0]["token_end"] = 3  # exclusive end: past the last token
    source = write_jsonl(tmp_path / "tasks.jsonl", [broken])
    with pytest.raises(ValueError, match="document D9, sentence 4"):
        list(module.deid_correct("deid_gold", str(source))["stream"])


def test_deid_review_builds_the_adjudication_stream(standin, tmp_path):
    module = load_file(REPO / "recipes" / "deid_review.py", "standin_recipe_review")
    from prodigy.core import REGISTRY

    assert REGISTRY["deid.review"][0] is module.deid_review
    alice = dict(
        task("D1", 0, "alice", ["bob"]),
        answer="accept",
        _input_hash=7,
        _task_hash=1,
        _annotator_id="deid_gold-alice",
        _session_id="deid_gold-alice",
    )
    bob = json.loads(json.dumps(alice))
    bob.update(_annotator_id="deid_gold-bob", _session_id="deid_gold-bob")
    bob["spans"][0]["label"] = "PATIENT"
    same = [dict(task("D2"), answer="accept", _input_hash=8, _annotator_id=f"deid_gold-{n}") for n in ("alice", "bob")]
    source = write_jsonl(tmp_path / "answers.jsonl", [alice, bob, *same])
    components = module.deid_review("deid_gold_reviewed", str(source))
    assert components["view_id"] == "ner_manual" and components["dataset"] == "deid_gold_reviewed"
    (review,) = list(components["stream"])
    assert review["_input_hash"] == 7 and "_task_hash" in review
    assert review["spans"] == [] and review["meta"]["review_annotators"] == "alice, bob"
    assert "DOCTOR" in review["meta"]["review_differences"] and "PATIENT" in review["meta"]["review_differences"]
    assert len(list(module.deid_review("r", str(source), include_agreed=True)["stream"])) == 2


def test_installed_entry_points_load_the_recipes(standin):
    found = {ep.name: ep for ep in entry_points(group="prodigy_recipes")}
    assert set(found) >= {"deid.correct", "deid.review"}, "reinstall the package: pip install -e ."
    from prodigy.core import REGISTRY

    for name, ep in found.items():
        if name in ("deid.correct", "deid.review"):
            function = ep.load()
            assert ep.value.startswith("deid_ds_recipes.")
            assert REGISTRY[name][0] is function  # entry-point name == decorator name


def test_deid_ds_never_imports_prodigy_or_the_recipes():
    for path in (REPO / "deid_ds").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.split(".")[0] in ("prodigy", "deid_ds_recipes", "recipes") for n in names), path
    code = (
        "import sys, deid_ds\n"
        "from click.testing import CliRunner\n"
        "from deid_ds.cli import main\n"
        "import deid_ds.campaign.components, deid_ds.campaign.review\n"
        "assert deid_ds.prepare_campaign\n"
        "for args in (['--help'], ['campaign', '--help']):\n"
        "    assert CliRunner().invoke(main, args).exit_code == 0\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('prodigy', 'deid_ds_recipes')]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_recipe_files_import_only_prodigy_deid_ds_and_the_standard_library():
    for name in ("deid_correct.py", "deid_review.py"):
        tree = ast.parse((REPO / "recipes" / name).read_text(encoding="utf-8"))
        modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        modules |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert modules <= {"prodigy", "deid_ds", "typing"}, (name, modules)
