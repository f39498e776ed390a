"""Every repository path that the package's docstrings and comments, and setup.cfg, name exists, so a
reader following one is not sent to a file or folder that moved or went.

A name is a repository path when its first folder is a folder of the repository, of the package or of
the folders around the naming module, or when it ends in `/` and names a folder the package has
somewhere (`models/` must then say where: `elmo/sources/models/`); `out_dir/manifest.json` and `ORG/REPO`
are no repository paths. It is looked for under those folders; a capitalised placeholder (`models/NAME/`,
`pretrain_PRESET.cfg`) or a `*` stands for any name, and `module.name` (`elmo/nn/fast/fast_bilm.make_fast`)
must be defined at the top of that module. A bare module name (`swap.py`) is a module of the package,
wherever it sits in it."""

import ast
import configparser
import io
import re
import tokenize
from functools import lru_cache
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pytest

from tests.support.paths import REPO

PACKAGE = REPO / "spacy_elmo"
SETUP_CFG = REPO / "setup.cfg"
# A path of at least one folder (a trailing `/` names a folder); not part of a URL, an option or a longer
# path (`<cache>/<name>/...`, `https://...` and `--paths.train` are not repository paths).
PATH = re.compile(r"(?<![\w/<.:*-])((?:[\w.*-]+/)+[\w.*-]*)(?![\w/])")
MODULE_NAME = re.compile(r"(?<![\w/<.:-])(\w+\.py)(?![\w/])")
PLACEHOLDER = re.compile(r"(?<![A-Za-z])[A-Z]{2,}(?![a-z])")
FILE_TYPES = {"py", "md", "cfg", "toml", "json", "txt", "yml", "yaml", "sh", "hdf5", "spacy", "jsonl"}


def docstrings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node)
            if text:
                yield text


def comments(path: Path) -> Iterator[str]:
    source = io.StringIO(path.read_text(encoding="utf8"))
    for token in tokenize.generate_tokens(source.readline):
        if token.type == tokenize.COMMENT:
            yield token.string


def texts(path: Path) -> Iterator[str]:
    yield from docstrings(path)
    yield from comments(path)


def setup_cfg_texts(path: Path = SETUP_CFG) -> Iterator[str]:
    """setup.cfg's comments and its values (package data patterns are paths in the package)."""
    for line in path.read_text(encoding="utf8").splitlines():
        if line.lstrip().startswith(("#", ";")):
            yield line
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path, encoding="utf8")
    for section in parser.sections():
        yield from parser[section].values()


def bases(module: Path) -> List[Path]:
    return [REPO, PACKAGE, *[folder for folder in module.parents if PACKAGE in (folder, *folder.parents)]]


@lru_cache(maxsize=None)
def package_folder_names() -> Set[str]:
    return {folder.name for folder in PACKAGE.rglob("*") if folder.is_dir() and folder.name != "__pycache__"}


def clean(name: str) -> str:
    """`name` without the full stop or comma of the sentence around it."""
    return name.rstrip(".,")


def is_repository_path(name: str, module: Path) -> bool:
    first = name.split("/")[0]
    if any((base / first).is_dir() for base in bases(module)):
        return True
    return name.endswith("/") and first in package_folder_names()


def defines(module: Path, attribute: str) -> bool:
    tree = ast.parse(module.read_text(encoding="utf8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == attribute:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(target, ast.Name) and target.id == attribute for target in targets):
            return True
    return False


def found(base: Path, name: str) -> bool:
    if (base / name).exists():
        return True
    pattern = PLACEHOLDER.sub("*", name.rstrip("/"))
    return bool(pattern) and next(base.glob(pattern), None) is not None


def exists_near(name: str, module: Path) -> bool:
    if any(found(base, name) for base in bases(module)):
        return True
    folder, _, last = name.rpartition("/")
    stem, dot, attribute = last.partition(".")
    if not dot or attribute.split(".")[0] in FILE_TYPES:
        return False
    candidates = [base / folder / f"{stem}.py" for base in bases(module)]
    return any(path.is_file() and defines(path, attribute.split(".")[0]) for path in candidates)


def modules() -> List[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def named_paths() -> List[Tuple[str, str]]:
    """(where, name) for every repository path named in the package's docstrings and comments and in
    setup.cfg (looked for from the package's root)."""
    named = [
        (str(module.relative_to(REPO)), name)
        for module in modules()
        for text in texts(module)
        for name in map(clean, PATH.findall(text))
        if is_repository_path(name, module)
    ]
    anchor = PACKAGE / "__init__.py"
    named += [
        ("setup.cfg", name)
        for text in setup_cfg_texts()
        for name in map(clean, PATH.findall(text))
        if is_repository_path(name, anchor)
    ]
    return named


def named_modules() -> List[Tuple[str, str]]:
    return [
        (str(module.relative_to(REPO)), name)
        for module in modules()
        for text in texts(module)
        for name in MODULE_NAME.findall(text)
    ]


def is_package_module(name: str) -> bool:
    return next(PACKAGE.rglob(name), None) is not None


def where(name: str) -> Path:
    return PACKAGE / "__init__.py" if name == "setup.cfg" else REPO / name


def test_the_package_names_repository_paths():
    """The check below has something to check: docstrings, comments and setup.cfg cite files and folders."""
    named = named_paths()
    assert len(named) > 20
    assert any(name.endswith("/") for _, name in named)
    assert any(source == "setup.cfg" for source, _ in named)


@pytest.mark.parametrize("source, name", named_paths())
def test_a_named_path_exists(source, name):
    assert exists_near(name, where(source)), f"{source} names {name}, which does not exist"


def test_docstrings_name_modules():
    assert len(named_modules()) > 20


@pytest.mark.parametrize("module, name", named_modules())
def test_a_module_named_in_a_docstring_exists(module, name):
    assert is_package_module(name), f"{module} names {name}, which is no module of the package"


LSTM = REPO / "spacy_elmo" / "elmo" / "nn" / "lstm.py"


def test_a_stale_path_is_found(tmp_path):
    module = tmp_path / "spacy_elmo" / "nn" / "x.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        '"""See benchmarks/gone/script.py and models/NAME/card.md."""\n# and spacy_elmo/embed, models/.\n',
        encoding="utf8",
    )
    names = [clean(name) for text in texts(module) for name in PATH.findall(text)]
    assert names == ["benchmarks/gone/script.py", "models/NAME/card.md", "spacy_elmo/embed", "models/"]
    assert not exists_near("benchmarks/gone/script.py", LSTM)
    assert exists_near("configs/NAME_elmo.cfg", LSTM)
    assert not exists_near("spacy_elmo/embed", LSTM) and exists_near("spacy_elmo/elmo/embed", LSTM)
    assert is_repository_path("models/", LSTM) and not exists_near("models/", LSTM)
    assert not is_repository_path("out_dir/manifest.json", REPO / "spacy_elmo" / "elmo" / "embed" / "ray_dump.py")
    assert not is_repository_path("ORG/REPO", LSTM) and not is_repository_path("out_dir/", LSTM)


def test_a_moved_definition_is_found():
    assert exists_near("elmo/nn/fast/fast_bilm.make_fast", LSTM)
    assert not exists_near("elmo/nn/fast/int8.make_fast", LSTM)
    assert not exists_near("pipeline/layers/thinc_bilm.set_bilm", LSTM)


def test_setup_cfg_paths_are_read(tmp_path):
    cfg = tmp_path / "setup.cfg"
    cfg.write_text("[x]\n# Ray (spacy_elmo/embed)\ny = elmo/sources/models/*/*, text/markdown\n", encoding="utf8")
    names = [clean(name) for text in setup_cfg_texts(cfg) for name in PATH.findall(text)]
    assert names == ["spacy_elmo/embed", "elmo/sources/models/*/*", "text/markdown"]
    anchor = PACKAGE / "__init__.py"
    assert exists_near("elmo/sources/models/*/*", anchor) and not exists_near("spacy_elmo/embed", anchor)
    assert not is_repository_path("text/markdown", anchor)


def test_a_stale_module_name_is_found(tmp_path):
    module = tmp_path / "x.py"
    module.write_text(
        '"""Checked in content.py, then swap.py; see elmo/sources/hub/record.py and spacy_elmo_download.json."""\n'
    )
    names = [name for text in docstrings(module) for name in MODULE_NAME.findall(text)]
    assert names == ["content.py", "swap.py"]
    assert not is_package_module("content.py") and is_package_module("swap.py")
