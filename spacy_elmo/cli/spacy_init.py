"""`python -m spacy init fill-elmo`: the `fill-elmo` command in spaCy's own CLI, registered through
spaCy's `spacy_cli` entry points as spacy-curated-transformers registers `init fill-curated-transformer`.
spaCy imports this module whenever its CLI starts; nothing here is imported by `python -m spacy_elmo`,
which does not load spaCy for `--help`."""

import functools
from typing import Any

from spacy.cli._util import init_cli
from wasabi import msg

from ..elmo.errors import ElmoError
from .fill_elmo import fill_elmo_command


@init_cli.command("fill-elmo")
@functools.wraps(fill_elmo_command)
def init_fill_elmo_cli(**kwargs: Any) -> None:
    """spaCy's CLI prints a traceback for any error: a user's mistake prints its message instead."""
    try:
        fill_elmo_command(**kwargs)
    except ElmoError as err:
        msg.fail(str(err), exits=1)
