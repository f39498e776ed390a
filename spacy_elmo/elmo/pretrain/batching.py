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
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np
import torch

from ..nn.char_encoder import token_lengths
from ..nn.chars import BOS_TOKEN, EOS_TOKEN, CharacterMapper
from .config import TrainingSettings
from .corpus import sentence_stream
from .distributed import Context
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


class TokenRows:
    """Every distinct input token seen so far -> a row of a char-id table, in first-seen order.

    A step then names its distinct tokens by row (`[U]` integers) instead of sending their char ids
    (`[U, max_chars]`): the table is copied to the model's device once, row by row as new tokens come
    (natural text stops bringing many after the first steps), and the step's char ids are one gather
    there. Char ids are below 2^15 (shifted bytes), so the tables hold int16.

    `rows` and `lengths` may run in a producer thread (the prefetcher) while `on` runs in the training
    thread: rows are only ever appended, and a step records the table's size when it was made, so the
    consumer copies exactly the rows that step may use, all written before the step was handed over.
    """

    def __init__(self, mapper: CharacterMapper, capacity: int = 4096) -> None:
        self._mapper = mapper
        self._row: Dict[str, int] = {}
        self._chars = np.zeros((capacity, mapper.max_chars), dtype=np.int16)
        self._lengths = np.zeros(capacity, dtype=np.int64)
        self._device: Dict[torch.device, torch.Tensor] = {}
        self._on_device: Dict[torch.device, int] = {}

    def __len__(self) -> int:
        return len(self._row)

    def rows(self, tokens: List[str]) -> List[int]:
        """The tokens' rows, new tokens appended to the table."""
        get = self._row.get
        found = [get(t, -1) for t in tokens]
        if -1 in found:
            start = len(self._row)
            for i in [i for i, r in enumerate(found) if r < 0]:
                found[i] = self._add(tokens[i])
            # One vectorised pass over the new rows rather than one NumPy call per token.
            self._lengths[start : len(self._row)] = token_lengths(self._chars[start : len(self._row)])
        return found

    def _add(self, token: str) -> int:
        row = self._row.get(token)
        if row is not None:  # a token new to this call that appeared twice in it
            return row
        row = len(self._row)
        if row == len(self._lengths):
            # A new, larger array: a consumer holding the old one still reads every row it needs.
            self._chars = np.concatenate([self._chars, np.zeros_like(self._chars)])
            self._lengths = np.concatenate([self._lengths, np.zeros_like(self._lengths)])
        self._chars[row] = self._mapper.token_ids(token)
        self._row[token] = row
        return row

    def char_ids(self, rows: np.ndarray) -> np.ndarray:
        """The rows' char ids `[len(rows), max_chars]` int64, from the host table."""
        return self._chars[rows].astype(np.int64)

    def lengths(self, rows: np.ndarray) -> np.ndarray:
        """Each row's `token_lengths` (char ids up to and including end-of-word)."""
        return self._lengths[rows]

    def on(self, device: torch.device, size: Optional[int] = None) -> torch.Tensor:
        """The table's first `size` rows (default: all) on `device`, `[>= size, max_chars]` int16; only
        the rows added since the last call are copied."""
        size = len(self._row) if size is None else size
        table = self._device.get(device)
        done = self._on_device.get(device, 0)
        if table is None or table.shape[0] < size:
            rows = max(size, 2 * (0 if table is None else table.shape[0]), 1024)
            grown = torch.zeros((rows, self._chars.shape[1]), dtype=torch.int16, device=device)
            if table is not None:
                grown[:done] = table[:done]
            table = self._device[device] = grown
        if done < size:
            table[done:size] = torch.from_numpy(self._chars[done:size]).to(device)
            self._on_device[device] = size
        return table


def paired_batches(
    paths: List[Path], vocab: Vocabulary, settings: TrainingSettings, context: Context, skip: int = 0
) -> Iterator[Tuple[Batch, Batch]]:
    """Both directions' batches from this rank's streams (separately shuffled, as the original's), the
    first `skip` ones (already trained on by the run being resumed) replayed without computing anything."""
    t = settings
    streams = [
        StreamBatcher(
            sentence_stream(paths, t.n_epochs, t.seed, name, t.shuffle_buffer, context.rank, context.world_size),
            vocab,
            t.batch_size,
            t.unroll_steps,
            reverse=reverse,
        )
        for name, reverse in (("forward", False), ("backward", True))
    ]
    pairs = zip(*streams)
    for _ in range(skip):
        if next(pairs, None) is None:
            break
    return pairs
