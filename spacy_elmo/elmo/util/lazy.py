"""A package's public names imported from their modules on first use (PEP 562), so that importing the
package, or a light module inside it, loads nothing heavy: `python -m spacy_elmo --help` and the CLI's
defaults need neither torch nor spaCy. The package imports the same names under `if TYPE_CHECKING:`, as
explicit re-exports (`name as name`), for type checkers and readers; tests/structure/test_lazy_imports.py reads
every name of `__all__`."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, List, Mapping, Sequence, Tuple


def lazy_names(
    package: str, names_by_module: Mapping[str, Sequence[str]]
) -> Tuple[Callable[[str], Any], Callable[[], List[str]], List[str]]:
    """`__getattr__`, `__dir__` and `__all__` for `package`, whose names are those of `names_by_module`
    (a module relative to the package -> the names it gives); each is imported once, when first read."""
    module_of = {name: module for module, names in names_by_module.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in module_of:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module_of[name], package), name)
        setattr(sys.modules[package], name, value)  # later reads find it without this function
        return value

    def __dir__() -> List[str]:
        return sorted(set(vars(sys.modules[package])) | set(module_of))

    return __getattr__, __dir__, sorted(module_of)
