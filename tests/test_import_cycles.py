"""The package's modules import in one direction: no cycle among their top-level imports.

Imports that run when a module is loaded (module level, class bodies, ``if``
and ``try`` blocks) are edges; imports inside functions run later and are
allowed to point anywhere (``Model.compile`` imports the compiled layer that
way), as are imports under ``if TYPE_CHECKING:``. The graph is read from the
source with :mod:`ast`, so nothing is imported to build it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "udk_notebooks"


def _module_names(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of the package (``__init__`` names its package)."""
    names = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _load_time_imports(tree: ast.Module):
    """The Import and ImportFrom nodes that run when the module is loaded (not inside a function body)."""
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)  # the guarded branch never runs
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        pending.extend(ast.iter_child_nodes(node))


def _targets(node, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The package modules an import statement in ``module`` loads."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    if node.level:
        parts = module.split(".")
        base = parts if is_package else parts[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    found = set()
    for alias in node.names:  # `from pkg import sub` loads the submodule pkg.sub
        if f"{source}.{alias.name}" in known:
            found.add(f"{source}.{alias.name}")
        elif source in known:
            found.add(source)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules it imports at load time."""
    names = _module_names(root)
    known = set(names)
    graph = {}
    for module, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        edges = set()
        for node in _load_time_imports(tree):
            edges |= _targets(node, module, is_package, known)
        edges.discard(module)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
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
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _path_within(graph, component) -> list[str]:
    """One cycle through the component's first module, for the failure message."""
    members = set(component)
    start = component[0]
    trail, seen = [start], {start}
    while True:
        nxt = sorted(graph[trail[-1]] & members)
        back = [w for w in nxt if w == start]
        if back and len(trail) > 1:
            return trail + [start]
        step = next((w for w in nxt if w not in seen), None)
        if step is None:
            return trail
        trail.append(step)
        seen.add(step)


def test_the_detector_finds_a_planted_cycle():
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]
    assert cycles({"p.a": {"p.b"}, "p.b": set()}) == []


def test_the_reader_sees_load_time_imports_only(tmp_path):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from .b import thing\n")
    (root / "b.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    from .a import x\n"
                               "def f():\n    from .a import y\n"
                               "class K:\n    from . import c\n")
    (root / "c.py").write_text("try:\n    from .a import z\nexcept ImportError:\n    pass\n")
    graph = import_graph(root)
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert "udk_notebooks.compiled" in graph and "udk_notebooks.simulation" in graph  # the graph was read
    found = cycles(graph)
    if found:
        pytest.fail("import cycles among udk_notebooks modules (move the shared piece down, or import lazily "
                    "inside the function that needs it):\n"
                    + "\n".join(" -> ".join(_path_within(graph, c)) for c in found))
