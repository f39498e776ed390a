"""Every mistake a user can make raises an ElmoError, which the CLI prints without a traceback: no plain
builtin error is raised for user input anywhere in the package, and the glue code's checks raise
ElmoError when the config is built. Each ElmoError is also the builtin error of its kind: bad input a
ValueError, a failed file or network operation an OSError. docs/errors.md's table names every error
class, no more, and each is raised."""

import ast
import builtins
import importlib
import re
from pathlib import Path

import pytest

import spacy_elmo
from spacy_elmo import CharacterMapper
from spacy_elmo.elmo.embed.errors import RayClusterError
from spacy_elmo.elmo.errors import DiskFullError, ElmoError, OutputFileError
from spacy_elmo.elmo.sources.hub.errors import DownloadError, ModelNotDownloadedError, NetworkError
from spacy_elmo.pipeline.architectures import (
    build_bilm_v2,
    build_elmo_listener_v1,
    build_scalar_mix_v2,
    build_sentence_windows_v1,
)
from spacy_elmo.pipeline.frozen_cache import ActivationCache
from tests.support.paths import REPO

PACKAGE = Path(spacy_elmo.__file__).parent
# Raised for programming errors (a wrong type passed in code, an unreachable branch) or by a Python
# protocol (a module's __getattr__), not for a user's input.
# SystemExit is an exit status (cli/signals.py: 128 + the signal), not an error a user could mend.
NOT_INPUT_ERRORS = {
    "TypeError",
    "NotImplementedError",
    "StopIteration",
    "AssertionError",
    "AttributeError",
    "SystemExit",
    "ImportError",  # a renamed name's import, naming the new one
}


def raised_names():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(raised, ast.Name):
                    yield path.relative_to(PACKAGE), node.lineno, raised.id


def test_the_package_raises_no_plain_builtin_errors():
    builtin = set(dir(builtins))
    plain = [
        f"{path}:{line} {name}"
        for path, line, name in raised_names()
        if name in builtin and name not in NOT_INPUT_ERRORS
    ]
    assert not plain, "raise an ElmoError subclass instead: " + ", ".join(plain)


@pytest.mark.parametrize(
    "build",
    [
        lambda: build_sentence_windows_v1(max_length=0),
        lambda: build_sentence_windows_v1(max_length=10, overlap=5),
        lambda: build_scalar_mix_v2(dropout=1.5),
        lambda: build_scalar_mix_v2(l2=-1.0),
        lambda: build_bilm_v2(max_batch_tokens=0),
        lambda: build_bilm_v2(weights="w.hdf5"),
        lambda: build_bilm_v2(segmentation="sentences"),
        lambda: build_elmo_listener_v1(build_scalar_mix_v2(), width=0),
        lambda: ActivationCache(-1),
        lambda: CharacterMapper(2),
    ],
)
def test_glue_code_checks_raise_elmo_errors(build):
    with pytest.raises(ElmoError):
        build()


def test_one_error_class_for_a_full_disk():
    from spacy_elmo.elmo.errors import DiskFullError, OutputFileError
    from spacy_elmo.elmo.sources.hub import DiskFullError as HubDiskFullError
    from spacy_elmo.elmo.util.io import OutputFileError as IoOutputFileError

    assert HubDiskFullError is DiskFullError and IoOutputFileError is OutputFileError
    assert issubclass(DiskFullError, OutputFileError)


def _error_classes():
    for module in (
        "elmo.errors",
        "elmo.formats.errors",
        "elmo.sources.hub.errors",
        "elmo.embed.errors",
        "elmo.nn.errors",
        "pipeline.errors",
        "elmo.pretrain.errors",
    ):
        namespace = vars(importlib.import_module(f"spacy_elmo.{module}"))
        yield from (value for value in namespace.values() if isinstance(value, type) and issubclass(value, ElmoError))


def test_each_error_is_the_builtin_error_of_its_kind():
    kinds = {cls: [k for k in (ValueError, OSError, RuntimeError) if issubclass(cls, k)] for cls in _error_classes()}
    assert {cls.__name__ for cls, found in kinds.items() if len(found) != 1} == {"ElmoError"}
    io_errors = {DiskFullError, OutputFileError, DownloadError, NetworkError, ModelNotDownloadedError, RayClusterError}
    for cls, found in kinds.items():
        assert (found == [OSError]) == issubclass(cls, tuple(io_errors)), cls
    assert not any(name == "ElmoError" for _, _, name in raised_names()), "raise the subclass of the error's kind"


# A caller can tell which to catch: few classes, each with its row in the table.
MAX_ERROR_CLASSES = 24
TABLE_ROW = re.compile(r"^\| `(\w+)`", re.M)


def defined_error_classes():
    """The public ElmoError classes the package defines, wherever it defines them."""
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(("spacy_elmo", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                cls = getattr(importlib.import_module(module), node.name)
                if isinstance(cls, type) and issubclass(cls, ElmoError):
                    found.add(node.name)
    return found


def instantiated_names():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                yield node.func.id
            elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Name):
                yield node.exc.id


def table_names(text: str):
    return TABLE_ROW.findall(text)


def test_the_error_table_names_every_error_class_and_each_is_raised():
    classes = defined_error_classes()
    table = table_names((REPO / "docs" / "errors.md").read_text(encoding="utf8"))
    assert len(classes) <= MAX_ERROR_CLASSES, sorted(classes)
    assert sorted(table) == sorted(classes), "docs/errors.md: one row per error class"
    assert not (classes - {"ElmoError"}) - set(instantiated_names()), "an error class that is never raised"


def test_the_table_reader_sees_a_missing_row():
    assert table_names("| `InputError` (`ValueError`) | x | y |\n| error | a | b |\n") == ["InputError"]
