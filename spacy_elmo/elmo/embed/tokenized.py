"""Whether a dump's input looks like raw text rather than one whitespace-tokenized sentence a line.

The biLM reads each whitespace-separated piece as one token, so raw text gives "Harry?" one vector where
a spaCy pipeline would give "Harry" and "?" two: no error, only other vectors than meant. A word with
punctuation glued on is the sign. Only the first lines are looked at, so a large file costs nothing, and
the dump goes on after the warning: a tokenized text may hold such a token on purpose.
"""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path
from typing import Optional, Tuple, Union

from ..util.io import text_lines

LINES_LOOKED_AT = 1000
# A word with a comma, colon, semicolon, "!" or "?" glued on; or a line's last word with its full stop,
# where the word has three lower-case letters or more at its end ("bank."; tokenized text keeps
# abbreviations such as "Mr." and "U.S." whole).
_GLUED = re.compile(r"[^\W\d_]{2,}[,;:!?]+")
_GLUED_STOP = re.compile(r"[^\W\d_]*[^\W\d_A-Z]{3}[.!?]")


def untokenized_token(path: Union[str, Path]) -> Optional[Tuple[int, str]]:
    """The first token (line number from 1, token) among the first lines that looks like raw text."""
    for number, line in enumerate(islice(text_lines(path, "input"), LINES_LOOKED_AT), start=1):
        words = line.split()
        glued = [word for word in words if _GLUED.fullmatch(word)]
        if glued:
            return number, glued[0]
        if words and _GLUED_STOP.fullmatch(words[-1]):
            return number, words[-1]
    return None


def untokenized_warning(path: Union[str, Path]) -> Optional[str]:
    """What to tell a user whose input looks untokenized (None when it looks tokenized): the token seen
    and the command that tokenizes the file as the spaCy component will see it."""
    found = untokenized_token(path)
    if found is None:
        return None
    number, token = found
    return (
        f"{path} looks untokenized (line {number}: {token!r} is one token to the biLM). dump reads one "
        f"whitespace-tokenized sentence a line: `python -m spacy_elmo tokenize {path} --output-dir DIR` "
        f"tokenizes it as spaCy does, then dump DIR/train/{Path(path).name}"
    )
