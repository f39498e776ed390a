"""`python -m spacy_elmo ...`: a thin shell over library functions that can also be called from Python."""

import sys

import typer

from ..errors import ElmoError
from . import demo, download, dump, evaluate, init_config, models, pretrain, tokenize, vocab  # noqa: F401  (each module adds its command to `app`)
from .app import app


def main() -> None:
    """Run the CLI; a user's mistake (ElmoError) prints its message, not a traceback."""
    try:
        app()
    except ElmoError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        sys.exit(1)


__all__ = ["app", "main"]
