"""The package's import graph has no circle: a module never needs, even lazily inside a function, a module
that needs it back. Read from the source with ast (every import statement, at any depth), so the check is
cheap and does not depend on import order; every module is also imported for real."""

import ast
import importlib
from pathlib import Path
from typing import Dict, List, Set

import pytest

import spacy_elmo

PACKAGE = Path(spacy_elmo.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: Dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> Set[str]:
    """The package's modules that `name` imports: `from a import b` counts a.b where that is a module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module for alias in node.names
            ]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name)
    return found


def _cycle(graph: Dict[str, Set[str]]) -> List[str]:
    """One circle of `graph` (a path whose last module imports the first), or [] where there is none."""
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(node: str) -> List[str]:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return stack[stack.index(target) :]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        state[node] = 2
        stack.pop()
        return []

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return []


def test_the_import_graph_has_no_circle():
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    circle = _cycle(graph)
    assert not circle, "import circle: " + " -> ".join(circle + circle[:1])


def test_the_check_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_relative_and_lazy_imports():
    graph = _imports("spacy_elmo.elmo.sources.resolver", MODULES["spacy_elmo.elmo.sources.resolver"])
    assert {"spacy_elmo.elmo.formats", "spacy_elmo.elmo.sources.bundled", "spacy_elmo.elmo.sources.hub"} <= graph


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_imports(name):
    importlib.import_module(name)


def _room(name: str) -> str:
    """The folder a module lives in, one below the package or, on the library's side, one below `elmo/` (a
    module at either root is a room of its own)."""
    parts = name.split(".")
    return ".".join(parts[:3] if parts[1:2] == ["elmo"] else parts[:2])


def test_the_folders_form_floors():
    """Between folders too, arrows run one way only (no folder needs a folder that needs it back), so the
    layout reads from the bottom (the library's errors, util, nn) up to the public face (the package root,
    the CLI)."""
    graph: Dict[str, Set[str]] = {}
    for name, path in MODULES.items():
        if name == "spacy_elmo":
            continue  # the public face re-exports from every floor
        graph.setdefault(_room(name), set()).update(
            _room(target) for target in _imports(name, path) if _room(target) != _room(name) and target != "spacy_elmo"
        )
    circle = _cycle(graph)
    assert not circle, "folders importing each other: " + " -> ".join(circle + circle[:1])
