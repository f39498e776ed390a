"""`python -m spacy_elmo ...`: a thin shell over library functions that can also be called from Python.

Each command imports its work (torch, spaCy, h5py, the hub) inside its function, so `--help` and a
command's own `--help` load only typer and the package's light modules (tests/structure/test_lazy_imports.py)."""

import sys

import typer

from ..elmo.errors import ElmoError, InputError
from . import (  # noqa: F401  (each module adds its command to `app`)
    demo,
    download,
    dump,
    elmo,
    evaluate,
    export,
    fill_elmo,
    init_config,
    models,
    pack,
    pretrain,
    push,
    tokenize,
    vocab,
)
from .app import app
from .habits import habit_pointer
from .signals import handle_sigterm


def main() -> None:
    """Run the CLI; a user's mistake (ElmoError) prints its message, not a traceback; Ctrl-C exits with
    130 and SIGTERM with 143 (signals.py)."""
    handle_sigterm()
    try:
        if pointer := habit_pointer(sys.argv[1:]):
            raise InputError(pointer)
        app()
    except ElmoError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        sys.exit(1)


__all__ = ["app", "main"]
