"""`python -m spacy_elmo ...`: a thin shell over library functions that can also be called from Python."""

import sys

import typer

from ..errors import ElmoError

app = typer.Typer(
    name="spacy_elmo",
    add_completion=False,
    no_args_is_help=True,
    help="ELMo for spaCy: embed, pretrain and evaluate biLMs.",
)

from . import demo, download, dump, evaluate, init_config, models, pretrain, tokenize, vocab  # noqa: E402,F401  (each module adds its command to `app`)


def main() -> None:
    """Run the CLI; a user's mistake (ElmoError) prints its message, not a traceback."""
    try:
        app()
    except ElmoError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        sys.exit(1)


__all__ = ["app", "main"]
