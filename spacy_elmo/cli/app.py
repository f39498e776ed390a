"""The typer application every command registers itself on, in a module of its own so that the commands
import it without importing the package that imports them (as spaCy keeps its `app` in its CLI's `_util`
module).

Help is plain text (`rich_markup_mode=None`), as spaCy's own commands print theirs: rich markup would take
`[system]` or `[@REVISION]` in a help text for a tag and drop it, and rich's panels cut a path too long
for a line with an ellipsis, where plain text wraps or keeps it whole; the same text then reads the same
under `spacy init fill-elmo`."""

import typer

app = typer.Typer(
    name="spacy_elmo",
    add_completion=False,
    rich_markup_mode=None,
    no_args_is_help=True,
    help="ELMo for spaCy: embed, pretrain and evaluate biLMs.",
)
