"""The package's layers: each stage builds on the ones below it, never on one above, and no import cycle.

From the bottom: the data model and shared basics; reading and writing; the engine that runs batches
(it knows nothing of the stages); segmentation; the knowledge bases, the generator and scoring; the
labelling functions; weak labelling; the tagger, the correction campaign and agreement; de-identification;
and on top the command line (every ``cli`` module). A module may import its own layer or a lower one.
Every import counts, at the top of a module or inside a function, under ``TYPE_CHECKING`` or not.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "deid_ds"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("deid_ds", "errors", "defaults", "resources", "model", "report", "lazy_api"),
    ("io",),
    ("engine",),
    ("segmentation",),
    ("kb", "synth", "evaluation"),
    ("label",),
    ("weak_labelling",),
    ("ner", "campaign", "agreement"),
    ("deidentification",),
    ("review",),
    ("cli",),
)
LAYER_OF = {part: level for level, parts in enumerate(LAYERS) for part in parts}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str) -> str:
    """The layer part a module belongs to: ``cli`` for command modules, else its package (or top module)."""
    last = module.rsplit(".", 1)[-1]
    if last in {"cli", "cli_common", "__main__"} or last.endswith("_cli"):
        return "cli"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "deid_ds"


def is_module(name: str) -> bool:
    path = REPO / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports() -> dict[str, set[str]]:
    """Module -> the deid_ds modules it imports (``from pkg import module`` counts as the module)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
                names = [names[0]] + [name for name in names[1:] if is_module(name)]
            else:
                continue
            graph[module] |= {name for name in names if name.startswith("deid_ds") and name != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_package_and_top_module_has_a_layer():
    parts = {part_of(module_name(path)) for path in PACKAGE.rglob("*.py")}
    assert parts <= set(LAYER_OF), f"give these a layer in LAYERS: {sorted(parts - set(LAYER_OF))}"


def test_no_module_imports_a_higher_layer():
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in imports().items()
        for target in targets
        if LAYER_OF[part_of(module)] < LAYER_OF[part_of(target)]
    )
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    graph = imports()
    # a package's __init__ importing its own modules is how a package exposes its API, not a cycle
    for module in list(graph):
        graph[module] = {t for t in graph[module] if not (t.startswith(module + ".") and module != "deid_ds")}
        graph[module].discard("deid_ds")
    assert not cycles(graph), cycles(graph)


def test_the_checks_see_an_upward_import_and_a_cycle():
    graph = {"deid_ds.io.notes": {"deid_ds.ner.predict"}, "deid_ds.ner.predict": {"deid_ds.io.notes"}}
    assert LAYER_OF[part_of("deid_ds.io.notes")] < LAYER_OF[part_of("deid_ds.ner.predict")]
    assert cycles(graph) == [["deid_ds.io.notes", "deid_ds.ner.predict"]]
