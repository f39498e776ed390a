"""ELMoForManyLangs (HIT-SCIR) models as torch modules: its token input (Unicode code points looked up
in its `char.dic`, and the word ids of its `word.dic`) laid out as this package's shifted id rows, so that
the char-CNN code runs unchanged, and the optional word embedding joined before the projection. Its
files are read and its weights converted by elmo/manylangs/reader.py (which says how each piece maps).

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

Ids are shifted as in elmo/nn/chars.py: 0 marks batch padding and `<pad>` sits at row PAD_CHAR + 1, which is
what the char-CNN's column cut (elmo/nn/char_encoder.py) relies on; the other ids fill the remaining rows in
order. With a word embedding each row has one more column, the word id + 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence

import numpy as np
import torch
from torch import nn

from ..errors import InputFileError
from ..nn.bilm import BiLM
from ..nn.char_encoder import CharEncoder
from ..nn.chars import BOS_TOKEN, CACHED_TYPES, EOS_TOKEN, N_CHARS_PREDICT, PAD_CHAR, CharacterMapper
from ..nn.options import CharCNNOptions, ElmoOptions

PAD_ROW = PAD_CHAR + 1
CHAR_SPECIALS = ("<bow>", "<eow>", "<oov>", "<pad>", "<bos>", "<eos>")
WORD_SPECIALS = ("<oov>", "<pad>")


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

    def __init__(self, vocab: ManyLangsVocab, max_characters_per_token: int, cache_size: int = CACHED_TYPES) -> None:
        super().__init__(max_characters_per_token, cache_size)  # its checks and cache; rows and width below
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


class ManyLangsEncoder(CharEncoder):
    """The char-CNN of elmo/nn/char_encoder.py over code-point ids, with the optional word embedding joined
    before an always-present projection. Rows carry the word id + 1 in a last column (see the module
    docstring)."""

    def __init__(
        self, options: CharCNNOptions, projection_dim: int, n_char_rows: int, n_words: int, word_dim: int
    ) -> None:
        super().__init__(options, projection_dim)
        self.char_embed = nn.Embedding(n_char_rows, options.embedding_dim, padding_idx=0)
        self.word_embed = nn.Embedding(n_words + 1, word_dim, padding_idx=0) if word_dim else None
        self.projection = nn.Linear(options.n_filters + word_dim, projection_dim)

    def _encode(self, char_ids: torch.Tensor, longest: int) -> torch.Tensor:
        if self.word_embed is None:
            x = self.char_features(char_ids, longest)
        else:
            x = torch.cat([self.word_embed(char_ids[:, -1]), self.char_features(char_ids[:, :-1], longest)], dim=-1)
        return self.projection(x)


class ManyLangsBiLM(BiLM):
    """A BiLM whose token input is an ELMoForManyLangs model's (its vocabularies travel with it)."""

    def __init__(self, options: ElmoOptions, vocab: ManyLangsVocab, word_dim: int, dropout: float = 0.0) -> None:
        super().__init__(options, dropout)
        self.vocab = vocab
        self.word_dim = word_dim
        n_words = 0 if vocab.words is None else len(vocab.words)
        self.char_encoder = ManyLangsEncoder(
            options.char_cnn, options.projection_dim, vocab.n_char_rows, n_words, word_dim
        )
        self.char_mapper = CodePointMapper(vocab, options.char_cnn.max_characters_per_token)

    def description(self) -> Dict[str, Any]:
        """What, besides the options and the parameters, rebuilds this model (see formats.rebuild)."""
        return {"vocab": self.vocab.to_dict(), "word_dim": self.word_dim}
