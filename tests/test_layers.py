"""The layers import downward only: every import of every module checked against the table in
``docs/CONTRACTS.md`` (the "layers" block), lazy imports inside functions included.

A layer is a top-level package or module of ``hlo_index`` (``ops``, ``fusion``, ``api`` ...). The
table lists, per layer, the layers it may import besides itself, ``context`` and ``units``. The checker reads
source with ``ast`` and imports nothing, so it also runs on a planted copy of the tree.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hlo_index"
CONTRACTS = ROOT / "docs" / "CONTRACTS.md"
ALWAYS = {"context", "units"}  # the analysis context, and how figures read: importable from every layer


def layer_table(contracts: Path = CONTRACTS) -> dict[str, set[str]]:
    """``{layer: layers it may import}`` from the fenced block after the line ``<!-- layers -->``."""
    text = contracts.read_text()
    start = text.index("<!-- layers -->")
    block = text[text.index("```", start) + 3 :]
    block = block[block.index("\n") + 1 : block.index("```")]
    table: dict[str, set[str]] = {}
    for line in block.splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            table[words[0]] = set(words[1:])
    return table


def _layer_of(module: str) -> str:
    """``hlo_index.ops.rules_call`` -> ``ops``; ``hlo_index`` itself -> ``hlo_index``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _module_name(path: Path, package: Path) -> tuple[str, bool]:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (annotations only, never run)."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return inside


def imports_of(path: Path, package: Path = PACKAGE, runtime_only: bool = False) -> list[tuple[str, int]]:
    """Every ``hlo_index`` module ``path`` imports, absolute name and line, wherever the import is;
    with ``runtime_only``, not those under ``if TYPE_CHECKING:``."""
    module, is_package = _module_name(path, package)
    here = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    tree = ast.parse(path.read_text(), str(path))
    skipped = _type_checking_nodes(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from . import ops`` names a module, not an attribute: count the submodule's layer
            if node.module is None:
                found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
            else:
                found.append((target, node.lineno))
    return [(name, line) for name, line in found if name.split(".")[0] == package.name]


def violations(package: Path = PACKAGE, table: dict[str, set[str]] | None = None) -> list[str]:
    table = layer_table() if table is None else table
    problems = []
    for path in sorted(package.rglob("*.py")):
        module, _ = _module_name(path, package)
        layer = _layer_of(module)
        if layer not in table:
            problems.append(f"{path.relative_to(package.parent)}: layer {layer!r} is not in the table")
            continue
        allowed = table[layer] | ALWAYS | {layer}
        for name, line in imports_of(path, package):
            target = _layer_of(name)
            if target != package.name and target not in allowed:
                problems.append(f"{path.relative_to(package.parent)}:{line}: {layer} imports {name}")
    return problems


def test_every_layer_is_in_the_table():
    table = layer_table()
    layers = {_layer_of(_module_name(p, PACKAGE)[0]) for p in PACKAGE.rglob("*.py")}
    assert layers <= set(table), sorted(layers - set(table))
    for layer, allowed in table.items():
        assert allowed <= set(table), (layer, sorted(allowed - set(table)))


def test_imports_follow_the_layer_table():
    assert violations() == []


def test_the_table_has_no_cycle():
    """Downward only: the "may import" relation between different layers is a partial order."""
    table = layer_table()
    state: dict[str, int] = {}

    def visit(layer: str, path: tuple[str, ...]) -> None:
        if state.get(layer) == 2:
            return
        assert state.get(layer) != 1, " -> ".join(path + (layer,))
        state[layer] = 1
        for below in table[layer] - {layer}:
            visit(below, path + (layer,))
        state[layer] = 2

    for layer in table:
        visit(layer, ())


def test_a_planted_upward_import_is_caught(tmp_path):
    copy = tmp_path / "hlo_index"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.lark", "*.json"))
    registry = copy / "ops" / "registry.py"
    lines = registry.read_text().splitlines()
    lines.append("def _planted():")
    lines.append("    from ..render import text   # an op rule reaching up into the renderer")
    registry.write_text("\n".join(lines) + "\n")
    planted = set(violations(copy)) - set(violations())
    assert planted == {f"hlo_index/ops/registry.py:{len(lines)}: ops imports hlo_index.render"}


@pytest.mark.parametrize("package", ["ops", "affine", "hlo"])
def test_lower_layers_import_nothing_above(package):
    """Spelled out for the layers the whole tool stands on (the table says the same)."""
    table = layer_table()
    assert "fusion" not in table[package] and "render" not in table[package]


def _module_graph(package: Path) -> dict[str, set[str]]:
    modules = {}
    for path in package.rglob("*.py"):
        name, _ = _module_name(path, package)
        modules[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        for target, _ in imports_of(path, package, runtime_only=True):
            # ``from .x import y`` may name the module x.y or the attribute y of x
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def test_no_import_cycle_outside_affine():
    """Between modules, lazy imports included (imports for annotations only are not run and do not
    count); ``affine/`` may keep the cycles its expression
    classes need (an expression builds maps, a map holds expressions), and nothing else may."""
    graph = _module_graph(PACKAGE)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    counter = [0]

    def strongly_connect(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strongly_connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongly_connect(v)
    outside = [c for c in cycles if not all(m.startswith("hlo_index.affine") for m in c)]
    assert outside == [], "\n".join(" <-> ".join(c) for c in outside)
