"""Token strings -> character ids, in exactly the scheme the published ELMo weights were trained with.

Each token becomes `max_characters_per_token` ids: beginning-of-word, the token's UTF-8 bytes (cut to
`max_characters_per_token - 2` bytes, which may split a multi-byte character, as in the original), end-of-word,
then padding. At prediction every id is shifted by +1 so that an all-zero row marks "no token here"
(batch padding); the padding *inside* a word is therefore 261, not 0. The rows always have all
positions: the padding's embedding is learned, and the char-CNN drops only columns that cannot change
its output (elmo/nn/char_encoder.py).
"""

from __future__ import annotations

from typing import Dict, List, Sequence

import numpy as np

from ..errors import InputError
from ..util.validation import short_repr

BOS_CHAR = 256
EOS_CHAR = 257
BOW_CHAR = 258
EOW_CHAR = 259
PAD_CHAR = 260
# The training vocabulary has ids 0..260; prediction adds id 0 for padding rows.
N_CHARS_TRAIN = 261
N_CHARS_PREDICT = 262

# Token strings the inference caches keep: their id rows here, their embeddings in elmo/nn/token_cache.py.
CACHED_TYPES = 20_000

BOS_TOKEN = "<S>"
EOS_TOKEN = "</S>"


class CharacterMapper:
    """Maps token strings to shifted character ids, caching each distinct string's row.

    The cache is bounded so that a long-running service over an open vocabulary keeps flat memory: at
    `CACHED_TYPES` strings it starts again empty. It holds as many strings as the token cache
    (elmo/nn/token_cache.py) holds embeddings, since at inference only the strings that cache lacks are
    mapped, and it fills as fast: a larger bound took a service thousands of documents longer to reach
    its plateau, the bound's memory looking like growth all the while. Thread-safe without a lock: the
    cache is only read with `dict.get` and changed by single dict operations (set, clear), each atomic,
    so a thread never looks up a key that another removed in between (at worst a row is encoded twice).
    """

    def __init__(self, max_characters_per_token: int = 50, cache_size: int = CACHED_TYPES) -> None:
        if max_characters_per_token < 3:
            raise InputError(
                f"max_characters_per_token must be at least 3 (BOW, one byte, EOW), got {max_characters_per_token}"
            )
        self.max_chars = max_characters_per_token
        # Ids per token row: the characters here; a format may append more (a word id).
        self.width = max_characters_per_token
        self.cache_size = cache_size
        self._cache: Dict[str, np.ndarray] = {}
        self._bos = self._special(BOS_CHAR)
        self._eos = self._special(EOS_CHAR)

    def _special(self, char_id: int) -> np.ndarray:
        row = np.full(self.max_chars, PAD_CHAR + 1, dtype=np.int64)
        row[0:3] = (BOW_CHAR + 1, char_id + 1, EOW_CHAR + 1)
        return row

    def _encode(self, token: str) -> np.ndarray:
        if token == BOS_TOKEN:
            return self._bos
        if token == EOS_TOKEN:
            return self._eos
        data = token.encode("utf-8", "ignore")[: self.max_chars - 2]
        row = np.full(self.max_chars, PAD_CHAR + 1, dtype=np.int64)
        row[0] = BOW_CHAR + 1
        row[1 : len(data) + 1] = np.frombuffer(data, dtype=np.uint8).astype(np.int64) + 1
        row[len(data) + 1] = EOW_CHAR + 1
        return row

    def token_ids(self, token: str) -> np.ndarray:
        """The shifted ids of one token, `[max_characters_per_token]` int64 (read-only, shared)."""
        row = self._cache.get(token)
        if row is None:
            if not isinstance(token, str):
                raise TypeError(f"tokens must be str, got {type(token).__name__}: {token!r}")
            row = self._encode(token)
            row.setflags(write=False)
            if len(self._cache) >= self.cache_size:
                self._cache.clear()
            self._cache[token] = row
        return row

    def batch_ids(self, sentences: Sequence[Sequence[str]], add_boundaries: bool = True) -> np.ndarray:
        """`[batch, max_len (+2), width]` int64; rows past a sentence's end are all zero.

        With `add_boundaries`, `<S>` precedes and `</S>` follows each sentence, `</S>` right after the
        last token and before the batch padding.
        """
        extra = 2 if add_boundaries else 0
        width = max((len(s) for s in sentences), default=0) + extra
        out = np.zeros((len(sentences), width, self.width), dtype=np.int64)
        for i, sentence in enumerate(sentences):
            rows: List[np.ndarray] = [self.token_ids(t) for t in sentence]
            if add_boundaries:
                rows = [self._bos, *rows, self._eos]
            if rows:
                out[i, : len(rows)] = np.stack(rows)
        return out


def refuse_strings(sentences: Sequence[Sequence[str]], caller: str, fix: str = "") -> None:
    """A string where a list of tokens goes would be read as one token per character: vectors of the
    wrong tokens without a word. Every entry point that takes sentences refuses it here (`fix`: a
    further way out, after the split)."""
    if isinstance(sentences, str) or any(isinstance(sentence, str) for sentence in sentences):
        raise InputError(
            f"{caller} takes sentences as lists of tokens, got {short_repr(sentences)}: a string would be read as "
            f"one token per character; split each sentence into tokens (`text.split()`){fix}"
        )


def batch_to_ids(sentences: Sequence[Sequence[str]], max_characters_per_token: int = 50) -> np.ndarray:
    """Character ids for a batch of tokenized sentences, with `<S>`/`</S>` added (see CharacterMapper)."""
    return CharacterMapper(max_characters_per_token).batch_ids(sentences)
