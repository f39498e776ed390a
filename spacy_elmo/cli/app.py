"""The typer application every command registers itself on, in a module of its own so that the commands
import it without importing the package that imports them (as spaCy keeps its `app` in its CLI's `_util`
module)."""

import typer

app = typer.Typer(
    name="spacy_elmo",
    add_completion=False,
    no_args_is_help=True,
    help="ELMo for spaCy: embed, pretrain and evaluate biLMs.",
)
