"""`python -m spacy_elmo ...`: a thin shell over library functions that can also be called from Python."""
import typer

app = typer.Typer(name="spacy_elmo", add_completion=False, no_args_is_help=True,
                  help="ELMo for spaCy: embed, pretrain and evaluate biLMs.")

from . import demo, dump  # noqa: E402,F401  (each module adds its command to `app`)

__all__ = ["app"]
