"""Packing one direction's sentence stream into `[batch, unroll_steps]` rows with carried state.

Each batch row is its own endless text: sentences are appended to a row as it runs low and the row is
cut into windows of `unroll_steps` tokens, so the LSTM state at the end of one window is the right start
for the next window of that row. As in the original trainer, the end boundary is a target but never an
input: a forward sentence gives inputs `<S> w1 .. wn` and targets `w1 .. wn </S>`, then the next
sentence's `<S>` follows; the backward direction does the same over the reversed sentence with the
roles of `<S>` and `</S>` swapped. Rows only run short at the very end of the stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, List

import numpy as np

from ..chars import BOS_TOKEN, EOS_TOKEN
from .vocab import Vocabulary

PAD_TARGET = -1


@dataclass
class Batch:
    """`tokens[i]` the input tokens of row i (at most unroll_steps); `targets` `[batch, unroll_steps]`
    int64 vocabulary ids, PAD_TARGET past a row's end."""

    tokens: List[List[str]]
    targets: np.ndarray

    @property
    def lengths(self) -> List[int]:
        return [len(row) for row in self.tokens]

    @property
    def n_tokens(self) -> int:
        return sum(self.lengths)


class _Row:
    __slots__ = ("inputs", "targets")

    def __init__(self) -> None:
        self.inputs: List[str] = []
        self.targets: List[int] = []


class StreamBatcher:
    """Iterates Batches over `sentences` for one direction (`reverse=True` for the backward LM)."""

    def __init__(
        self,
        sentences: Iterable[List[str]],
        vocab: Vocabulary,
        batch_size: int,
        unroll_steps: int,
        reverse: bool = False,
    ) -> None:
        self._sentences = iter(sentences)
        self._vocab = vocab
        self.batch_size = batch_size
        self.unroll_steps = unroll_steps
        self._start, self._end = (EOS_TOKEN, BOS_TOKEN) if reverse else (BOS_TOKEN, EOS_TOKEN)
        self._end_id = vocab.id(self._end)
        self._reverse = reverse
        self._rows = [_Row() for _ in range(batch_size)]
        self._exhausted = False

    def _refill(self, row: _Row) -> None:
        while len(row.inputs) < self.unroll_steps and not self._exhausted:
            sentence = next(self._sentences, None)
            if sentence is None:
                self._exhausted = True
                return
            words = sentence[::-1] if self._reverse else sentence
            row.inputs.append(self._start)
            row.inputs.extend(words)
            row.targets.extend(self._vocab.ids(words))
            row.targets.append(self._end_id)

    def __iter__(self) -> Iterator[Batch]:
        return self

    def __next__(self) -> Batch:
        steps = self.unroll_steps
        targets = np.full((self.batch_size, steps), PAD_TARGET, dtype=np.int64)
        tokens: List[List[str]] = []
        for i, row in enumerate(self._rows):
            self._refill(row)
            tokens.append(row.inputs[:steps])
            targets[i, : len(tokens[-1])] = row.targets[:steps]
            del row.inputs[:steps], row.targets[:steps]
        if not any(tokens):
            raise StopIteration
        return Batch(tokens, targets)
