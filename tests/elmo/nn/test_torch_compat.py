"""torch's private API is called from elmo/nn/torch_compat.py alone, and setup.cfg's torch floor is the version
CI installs (the Makefile's TORCH_VERSION), the one those calls are checked against."""

import ast
import configparser
import re

import torch

from spacy_elmo.elmo.nn import torch_compat
from tests.support.paths import REPO

PACKAGE = REPO / "spacy_elmo"


def _private_torch_names(path):
    """`torch._x...` and `torch.ops.NAMESPACE._x` attribute chains in a module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id == "torch":
                yield ".".join(["torch", *reversed(chain)])


def test_private_torch_calls_live_in_the_compat_module():
    users = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if any(_private_torch_names(path)) and path.name != "torch_compat.py"
    }
    assert not users, f"call torch's private API through elmo/nn/torch_compat.py: {sorted(users)}"
    assert "torch._foreach_addcdiv_" in set(_private_torch_names(PACKAGE / "elmo" / "nn" / "torch_compat.py"))


def test_the_torch_floor_is_the_version_ci_installs():
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    requirement = next(r for r in parser["options"]["install_requires"].split() if r.startswith("torch"))
    floor = requirement.split(">=")[1]
    tested = re.search(r"^TORCH_VERSION \?= (\S+)$", (REPO / "Makefile").read_text(), re.MULTILINE).group(1)
    assert tested.startswith(floor + ".") or tested == floor


def test_the_compat_calls_compute_what_their_public_equivalents_do():
    params, grads = [torch.ones(3), torch.full((2,), 2.0)], [torch.full((3,), 0.5), torch.ones(2)]
    expected = [p + 0.1 * g * g for p, g in zip(params, grads)]
    torch_compat.foreach_addcmul_(params, grads, grads, value=0.1)
    torch_compat.foreach_add_scalar_(params, 1.0)
    roots = torch_compat.foreach_sqrt(params)
    for got, want, root in zip(params, expected, roots):
        torch.testing.assert_close(got, want + 1.0)
        torch.testing.assert_close(root, (want + 1.0).sqrt())
    version = torch_compat.version(params[0])
    params[0].add_(1.0)
    assert torch_compat.version(params[0]) > version


def test_the_compile_options_are_inductors():
    """A torch without one of these names refuses it in torch.compile with a RuntimeError, which the
    package does not take for a failed compile: a torch release that renames one breaks here first."""
    from torch._inductor import config

    for name, value in torch_compat.THREADS_AT_CALL.items():
        section, key = name.split(".")
        assert isinstance(getattr(getattr(config, section), key), type(value)), name
