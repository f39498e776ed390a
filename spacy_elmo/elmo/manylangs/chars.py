"""ELMoForManyLangs' `char.dic` and `word.dic`: `token<TAB>id` lines, read as its reader reads them. The
vocabularies they make and the id rows built from them are elmo/manylangs/model.py's.
"""

from __future__ import annotations

from typing import Dict

from ..errors import InputFileError

# A char.dic or word.dic line left with only an id after stripping is this character's entry (its
# reader's rule: the ideographic space is whitespace, so stripping removes it from its own line).
STRIPPED_ENTRY = "\u3000"


def parse_dic(text: str, source: str) -> Dict[str, int]:
    """A char.dic / word.dic: `token<TAB>id` lines, each stripped first. Lines are split where its
    reader splits them (Python's `splitlines`, which also breaks at the Unicode line separators)."""
    entries: Dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.strip().split("\t")
        if fields == [""]:
            continue
        if len(fields) == 1:
            fields.insert(0, STRIPPED_ENTRY)
        try:
            index = int(fields[1]) if len(fields) == 2 else -1
        except ValueError:
            index = -1
        if index < 0:
            raise InputFileError(f"{source}, line {number}: expected 'token<TAB>id', got {line!r}")
        entries[fields[0]] = index
    return entries
