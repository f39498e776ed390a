"""Every repository path a docstring of the package names exists, so a reader following one is not sent
to a file that moved or went. A repository path starts with a folder of the repository, the package or
the folders around its module (`out_dir/manifest.json` names no such folder) and is looked for under
them; a capitalised placeholder (`models/NAME/`, `pretrain_PRESET.cfg`) stands for any name. A bare module
name (`swap.py`) is a module of the package, wherever it sits in it."""

import ast
import re
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest

from tests.support.paths import REPO

PACKAGE = REPO / "spacy_elmo"
# A path with at least one folder, ending in a file type the repository holds; not part of a URL or a
# longer path (`<cache>/<name>/...` and `https://...` are not repository paths).
PATH = re.compile(r"(?<![\w/<.:-])((?:[\w.-]+/)+[\w.-]+\.(?:py|md|cfg|toml|json|txt|yml|sh))(?![\w/])")
MODULE_NAME = re.compile(r"(?<![\w/<.:-])(\w+\.py)(?![\w/])")
PLACEHOLDER = re.compile(r"(?<![A-Za-z])[A-Z]{2,}(?![a-z])")


def docstrings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node)
            if text:
                yield text


def bases(module: Path) -> List[Path]:
    return [REPO, PACKAGE, *[folder for folder in module.parents if PACKAGE in (folder, *folder.parents)]]


def is_repository_path(name: str, module: Path) -> bool:
    return any((base / name.split("/")[0]).is_dir() for base in bases(module))


def exists_near(name: str, module: Path) -> bool:
    if any((base / name).exists() for base in bases(module)):
        return True
    pattern = PLACEHOLDER.sub("*", name)
    return any(next(base.glob(pattern), None) is not None for base in bases(module))


def named(
    pattern: "re.Pattern[str]", keep: Callable[[str, Path], bool] = lambda name, module: True
) -> List[Tuple[str, str]]:
    """(module, name) for every match of `pattern` in the package's docstrings that `keep` keeps."""
    return [
        (str(module.relative_to(REPO)), name)
        for module in sorted(PACKAGE.rglob("*.py"))
        for text in docstrings(module)
        for name in pattern.findall(text)
        if keep(name, module)
    ]


def named_paths() -> List[Tuple[str, str]]:
    return named(PATH, is_repository_path)


def named_modules() -> List[Tuple[str, str]]:
    return named(MODULE_NAME)


def is_package_module(name: str) -> bool:
    return next(PACKAGE.rglob(name), None) is not None


def test_docstrings_name_repository_paths():
    """The check below has something to check: the package's docstrings cite files."""
    assert len(named_paths()) > 20


@pytest.mark.parametrize("module, name", named_paths())
def test_a_path_named_in_a_docstring_exists(module, name):
    assert exists_near(name, REPO / module), f"{module} names {name}, which does not exist"


def test_docstrings_name_modules():
    assert len(named_modules()) > 20


@pytest.mark.parametrize("module, name", named_modules())
def test_a_module_named_in_a_docstring_exists(module, name):
    assert is_package_module(name), f"{module} names {name}, which is no module of the package"


def test_a_stale_path_is_found(tmp_path):
    module = tmp_path / "spacy_elmo" / "nn" / "x.py"
    module.parent.mkdir(parents=True)
    module.write_text('"""See benchmarks/gone/script.py and models/NAME/card.md."""\n', encoding="utf8")
    found = [name for text in docstrings(module) for name in PATH.findall(text)]
    assert found == ["benchmarks/gone/script.py", "models/NAME/card.md"]
    assert not exists_near("benchmarks/gone/script.py", REPO / "spacy_elmo" / "elmo" / "nn" / "lstm.py")
    assert exists_near("configs/NAME_elmo.cfg", REPO / "spacy_elmo" / "elmo" / "nn" / "lstm.py")
    assert not is_repository_path("out_dir/manifest.json", REPO / "spacy_elmo" / "elmo" / "embed" / "ray_dump.py")


def test_a_stale_module_name_is_found(tmp_path):
    module = tmp_path / "x.py"
    module.write_text(
        '"""Checked in content.py, then swap.py; see elmo/sources/hub/record.py and spacy_elmo_download.json."""\n'
    )
    found = [name for text in docstrings(module) for name in MODULE_NAME.findall(text)]
    assert found == ["content.py", "swap.py"]
    assert not is_package_module("content.py") and is_package_module("swap.py")
