"""ELMoForManyLangs' token input: Unicode code points looked up in its `char.dic`, and the word ids of
its `word.dic`, laid out as this package's shifted id rows so that the char-CNN code runs unchanged.

What its batching code does, reproduced here:
- A token longer than `max_characters_per_token - 2` code points is cut to that many before both
  lookups; a character missing from char.dic gets `<oov>`, a word missing from word.dic (exact,
  case-sensitive) gets `<oov>`.
- Position 0 holds the id of `<eow>` and the slot right after the last character the id of `<bow>`:
  its code swaps the two names, in training as in inference. The rest of the row is `<pad>`, whose
  embedding is learned, so rows are always `max_characters_per_token` wide.
- The sentence boundaries are the strings `<bos>` / `<eos>`: [`<eow>`, the char.dic entry `<bos>`,
  `<bow>`, pad...] and the word.dic entry `<bos>` (`<oov>` when word.dic has none). This package's
  boundary strings `<S>` / `</S>` map to them; a token that is literally `<bos>` or `<eos>` is
  encoded as the boundary, as in its code.

Ids are shifted as in nn/chars.py: 0 marks batch padding and `<pad>` sits at row PAD_CHAR + 1, which is
what the char-CNN's column cut (nn/char_encoder.py) relies on; the other ids fill the remaining rows in
order. With a word embedding each row has one more column, the word id + 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence

import numpy as np

from ..errors import InputFileError
from ..nn.chars import BOS_TOKEN, EOS_TOKEN, N_CHARS_PREDICT, PAD_CHAR, CharacterMapper

PAD_ROW = PAD_CHAR + 1
CHAR_SPECIALS = ("<bow>", "<eow>", "<oov>", "<pad>", "<bos>", "<eos>")
WORD_SPECIALS = ("<oov>", "<pad>")
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


@dataclass
class ManyLangsVocab:
    """The two dictionaries of an ELMoForManyLangs model; `words` is None without a word embedding."""

    chars: Dict[str, int]
    words: Optional[Dict[str, int]]

    def check(self, char_source: str, word_source: str) -> None:
        for table, specials, source in (
            (self.chars, CHAR_SPECIALS, char_source),
            (self.words, WORD_SPECIALS, word_source),
        ):
            if table is None:
                continue
            missing = [s for s in specials if s not in table]
            if missing:
                raise InputFileError(
                    f"{source} has no entry for {', '.join(missing)}, which ELMoForManyLangs' code needs; "
                    "is it the file of this model?"
                )
            if max(table.values()) >= len(table):
                raise InputFileError(
                    f"{source} has ids up to {max(table.values())} for {len(table)} entries; its embedding has "
                    "one row per entry, so the ids must run from 0 to the number of entries - 1"
                )

    def char_rows(self) -> np.ndarray:
        """The embedding row of each char.dic id (see the module docstring)."""
        n = len(self.chars)
        rows = np.arange(n, dtype=np.int64) + 1
        rows[rows >= PAD_ROW] += 1
        rows[self.chars["<pad>"]] = PAD_ROW
        return rows

    @property
    def n_char_rows(self) -> int:
        return max(N_CHARS_PREDICT, int(self.char_rows().max()) + 1)

    def to_dict(self) -> Dict[str, Any]:
        return {"chars": self.chars, "words": self.words}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "ManyLangsVocab":
        return cls(chars=dict(data["chars"]), words=None if data["words"] is None else dict(data["words"]))


class CodePointMapper(CharacterMapper):
    """Token strings -> id rows of an ELMoForManyLangs model (see the module docstring); the same
    interface and per-string cache as CharacterMapper."""

    def __init__(self, vocab: ManyLangsVocab, max_characters_per_token: int, cache_size: int = 100_000) -> None:
        self.max_chars = max_characters_per_token
        self.cache_size = cache_size
        self._cache: Dict[str, np.ndarray] = {}
        self.vocab = vocab
        rows = vocab.char_rows()
        self._row_of = {char: int(rows[i]) for char, i in vocab.chars.items()}
        self._oov_row = self._row_of["<oov>"]
        # Named as in its code: the first position gets `<eow>`'s id, the last `<bow>`'s.
        self._first, self._last = self._row_of["<eow>"], self._row_of["<bow>"]
        self.width = max_characters_per_token + (1 if vocab.words is not None else 0)
        self._bos = self._row(["<bos>"], "<bos>", special=True)
        self._eos = self._row(["<eos>"], "<eos>", special=True)

    def _row(self, chars: Sequence[str], word: str, special: bool = False) -> np.ndarray:
        row = np.full(self.width, PAD_ROW, dtype=np.int64)
        row[0] = self._first
        row[1 : len(chars) + 1] = [self._row_of[c] if special else self._row_of.get(c, self._oov_row) for c in chars]
        row[len(chars) + 1] = self._last
        words = self.vocab.words
        if words is not None:
            row[-1] = words.get(word, words["<oov>"]) + 1
        return row

    def _encode(self, token: str) -> np.ndarray:
        if token in (BOS_TOKEN, "<bos>"):
            return self._bos
        if token in (EOS_TOKEN, "<eos>"):
            return self._eos
        cut = token[: self.max_chars - 2]
        return self._row(list(cut), cut)
