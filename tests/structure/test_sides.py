"""The package's two sides: the torch ELMo library (`spacy_elmo/elmo/`) imports nothing of the spaCy
plugin (`pipeline/`), of the faces over both (`allennlp/`, `cli/`, the package root), of spaCy or of
thinc, so it can be used, tested and read on its own; every module of it imports with spaCy and thinc
made unimportable."""

import ast
import subprocess
import sys
from typing import List, Tuple

from tests.structure.test_import_graph import MODULES, _imports

LIBRARY = "spacy_elmo.elmo"
SPACY_SIDE = ("spacy", "thinc")


def _library() -> List[str]:
    return [name for name in MODULES if name == LIBRARY or name.startswith(LIBRARY + ".")]


def _outside_imports(name: str) -> List[Tuple[str, str]]:
    """(module, what) for each import of `name` that leaves the library: a package module outside it, or
    spaCy or thinc (at any depth: inside functions too)."""
    found = [(name, target) for target in _imports(name, MODULES[name]) if not target.startswith(LIBRARY)]
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            found += [(name, a.name) for a in node.names if a.name.split(".")[0] in SPACY_SIDE]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in SPACY_SIDE:
            found.append((name, node.module or ""))
    return found


def test_the_library_has_modules_to_check():
    assert {f"{LIBRARY}.nn.bilm", f"{LIBRARY}.formats", f"{LIBRARY}.sources.resolver"} <= set(_library())


def test_the_library_imports_nothing_of_the_plugin_the_faces_spacy_or_thinc():
    leaving = [pair for name in _library() for pair in _outside_imports(name)]
    assert not leaving, f"library modules importing beyond the library: {leaving}"


def test_the_check_sees_an_import_of_spacy_and_of_the_plugin(tmp_path, monkeypatch):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    import spacy\n    from ...pipeline import hooks\n", encoding="utf8")
    monkeypatch.setitem(MODULES, f"{LIBRARY}.nn.m", module)
    found = {what for _, what in _outside_imports(f"{LIBRARY}.nn.m")}
    assert {"spacy", "spacy_elmo.pipeline.hooks"} <= found


BLOCKED_RUN = """
import importlib, sys

class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("spacy", "thinc"):
            raise ImportError(f"{name} is blocked")

sys.meta_path.insert(0, Blocked())
for name in sys.argv[1:]:
    importlib.import_module(name)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("spacy", "thinc")))
"""


def test_every_library_module_imports_with_spacy_and_thinc_blocked():
    result = subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, *_library()], capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


def test_the_block_stops_a_plugin_module():
    result = subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, "spacy_elmo.pipeline.component"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode != 0 and "is blocked" in result.stderr


# The commands that are spaCy's to begin with: they fill and check spaCy configs.
SPACY_FACING_COMMANDS = {"spacy_elmo.cli.fill_elmo", "spacy_elmo.cli.spacy_init"}


def _plugin_importers(modules) -> List[str]:
    return sorted(
        name
        for name in modules
        if name.startswith("spacy_elmo.cli.")
        and any(target.startswith("spacy_elmo.pipeline") for target in _imports(name, modules[name]))
    )


def test_only_the_spacy_facing_commands_import_the_plugin():
    """The other commands call the library, which picks its torch device itself (`dump` once went to the
    plugin's device code for its GPU)."""
    assert set(_plugin_importers(MODULES)) <= SPACY_FACING_COMMANDS


def test_the_command_check_sees_an_import_of_the_plugin(tmp_path, monkeypatch):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from ..pipeline.device import use_gpu_id\n", encoding="utf8")
    monkeypatch.setitem(MODULES, "spacy_elmo.cli.m", module)
    assert "spacy_elmo.cli.m" in _plugin_importers(MODULES)
