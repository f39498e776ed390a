"""The tests mirror the package, so the test of any module is found by its path:
`spacy_elmo/<folder>/<module>.py` is tested in `tests/<folder>/test_<module>.py`, a package's
`__init__.py` in `tests/<folder>/test_<package>.py` (`elmo/formats/__init__.py` ->
`tests/elmo/formats/test_formats.py`).
A module without one is listed below with the reason it needs none."""

from pathlib import Path
from typing import List

from tests.support.paths import REPO

PACKAGE = REPO / "spacy_elmo"
TESTS = REPO / "tests"

# Modules that need no test file of their own, and why.
NEEDS_NO_TEST = {
    # Runs the CLI's `main` (tests/cli/test_cli.py); one line.
    "__main__.py",
    # Re-exports only (lazily: tests/structure/test_lazy_imports.py checks what each loads).
    "__init__.py",
    "allennlp/__init__.py",
    "elmo/__init__.py",
    "elmo/manylangs/__init__.py",
    "elmo/nn/fast/__init__.py",
    "elmo/nn/time_loops/__init__.py",
    "elmo/embed/__init__.py",
    "elmo/sources/__init__.py",
    "elmo/nn/__init__.py",
    "pipeline/__init__.py",
    "pipeline/layers/__init__.py",
    "pipeline/bilm_layer/__init__.py",
    "elmo/pretrain/__init__.py",
    "elmo/util/__init__.py",
    # A frozen dataclass of one setting and its default: data, read by the precision tests (elmo/nn/test_precision.py).
    "elmo/nn/run_options.py",
    # The typer application object, nothing else; every command's test runs it.
    "cli/app.py",
    # Error classes only: each is raised, and its message checked, by the tests of the module raising it.
    "elmo/embed/errors.py",
    "elmo/formats/errors.py",
    "elmo/sources/hub/errors.py",
    "elmo/nn/errors.py",
    "elmo/pretrain/errors.py",
}


def mirrored_path(module: Path, tests: Path = TESTS) -> Path:
    """Where the test of `module` (a path under the package) lives."""
    parts = module.parts[:-1]
    if module.name == "__init__.py":
        return tests.joinpath(*parts, f"test_{parts[-1] if parts else 'spacy_elmo'}.py")
    return tests.joinpath(*parts, f"test_{module.stem}.py")


def modules(package: Path = PACKAGE) -> List[Path]:
    return sorted(path.relative_to(package) for path in package.rglob("*.py"))


def without_tests(package: Path = PACKAGE, tests: Path = TESTS) -> List[str]:
    return [str(module) for module in modules(package) if not mirrored_path(module, tests).exists()]


def test_every_module_has_a_test_file_at_its_mirrored_path_or_a_reason():
    unlisted = [name for name in without_tests() if name not in NEEDS_NO_TEST]
    assert not unlisted, f"modules without a test file at tests/<folder>/test_<module>.py: {unlisted}"


def test_the_list_names_only_modules_without_a_test_file():
    missing = set(without_tests())
    stale = sorted(NEEDS_NO_TEST - missing)
    assert not stale, f"listed but gone or tested (take them off the list): {stale}"


def test_the_mirrored_path_of_modules_packages_and_the_top_level(tmp_path):
    package, tests = tmp_path / "spacy_elmo", tmp_path / "tests"
    for name in ("__init__.py", "errors.py", "elmo/nn/__init__.py", "elmo/nn/lstm.py", "elmo/nn/chars.py"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).touch()
    for name in ("test_errors.py", "elmo/nn/test_nn.py", "elmo/nn/test_lstm.py", "test_chars.py"):
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).touch()
    assert without_tests(package, tests) == ["__init__.py", "elmo/nn/chars.py"]
