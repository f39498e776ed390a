"""Lazy exports (elmo/util/lazy.py): a package's names import their module when first read, once, and an
unknown name is the usual AttributeError."""

import sys
import types

import pytest

from spacy_elmo.elmo.util.lazy import lazy_names


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package `lazy_pkg` whose `heavy` module is imported only through its lazy names."""
    root = tmp_path / "lazy_pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "heavy.py").write_text("LOADS = 1\nVALUE = 42\n\ndef twice(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = types.ModuleType("lazy_pkg")
    module.__path__ = [str(root)]
    monkeypatch.setitem(sys.modules, "lazy_pkg", module)
    yield module
    sys.modules.pop("lazy_pkg.heavy", None)


def test_a_name_loads_its_module_on_first_read_only(package):
    package.__getattr__, package.__dir__, package.__all__ = lazy_names("lazy_pkg", {".heavy": ["VALUE", "twice"]})
    assert "lazy_pkg.heavy" not in sys.modules
    assert package.VALUE == 42
    assert "lazy_pkg.heavy" in sys.modules
    assert vars(package)["VALUE"] == 42  # kept on the package: later reads skip __getattr__
    assert package.twice(3) == 6


def test_all_and_dir_list_the_lazy_names_before_any_is_read(package):
    package.__getattr__, package.__dir__, package.__all__ = lazy_names("lazy_pkg", {".heavy": ["twice", "VALUE"]})
    assert package.__all__ == ["VALUE", "twice"]
    assert {"VALUE", "twice"} <= set(dir(package))
    assert "lazy_pkg.heavy" not in sys.modules


def test_an_unknown_name_is_an_attribute_error(package):
    package.__getattr__, _, _ = lazy_names("lazy_pkg", {".heavy": ["VALUE"]})
    with pytest.raises(AttributeError, match="module 'lazy_pkg' has no attribute 'LOADS'"):
        assert package.LOADS is None  # never reached: the read raises
