"""The pretraining network: the BiLM that gets exported, plus the softmax shared by both directions.

During training the two directions read different text (independently shuffled streams), so the
backward stack runs on its own stream in that stream's order rather than on the forward input
reversed. The char-CNN runs once per distinct token of the batch (both streams together) and the
result is gathered into place: the same numbers as running it per position, at a fraction of the cost,
since a batch of natural text repeats most of its tokens.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..chars import CharacterMapper
from ..nn.bilm import BiLM
from ..nn.char_encoder import token_lengths
from ..nn.lstm import State, run_directions
from ..nn.softmax import LogUniformSampler, Softmax
from ..options import ElmoOptions
from .batching import PAD_TARGET, Batch

# Per layer: h `[2, batch, P]` and c `[2, batch, cell]`, direction 0 forward, 1 backward.
States = List[State]


@dataclass
class TensorBatch:
    """Both directions of one step. Made on the host (`from_batches`), then moved whole to the model's
    device (`to`); what steers the loop stays on the host, so a step never waits for the device to
    answer a question about its data.

    Device side: the distinct tokens' char ids `char_ids` `[U, max_chars]`; per direction the index of
    each input in them `index` `[batch, T]`, the flat positions `[N]` of the inputs that have a target
    (`positions`, into `[batch * T]`) and those targets `[N]`. Host side: row `lengths` `[batch]` and
    the distinct tokens' `char_lengths` `[U]` (which char columns the CNN needs)."""

    char_ids: torch.Tensor
    index: Tuple[torch.Tensor, torch.Tensor]
    positions: Tuple[torch.Tensor, torch.Tensor]
    targets: Tuple[torch.Tensor, torch.Tensor]
    lengths: Tuple[np.ndarray, np.ndarray]
    char_lengths: np.ndarray

    @property
    def counts(self) -> Tuple[int, int]:
        """Target tokens per direction, known on the host."""
        return int(self.positions[0].shape[0]), int(self.positions[1].shape[0])

    @classmethod
    def from_batches(cls, forward: Batch, backward: Batch, mapper: CharacterMapper) -> "TensorBatch":
        token_positions: Dict[str, int] = {}
        indices, positions, targets = [], [], []
        for batch in (forward, backward):
            index = np.zeros(batch.targets.shape, dtype=np.int64)
            for i, row in enumerate(batch.tokens):
                index[i, : len(row)] = [token_positions.setdefault(t, len(token_positions)) for t in row]
            indices.append(index)
            flat = batch.targets.reshape(-1)
            kept = np.flatnonzero(flat != PAD_TARGET)
            positions.append(torch.from_numpy(kept))
            targets.append(torch.from_numpy(np.ascontiguousarray(flat[kept])))
        char_ids = np.stack([mapper.token_ids(t) for t in token_positions])
        # The distinct tokens shortest first, so that the char-CNN needs no reordering on the device.
        char_lengths = token_lengths(char_ids)
        order = np.argsort(char_lengths, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        return cls(
            char_ids=torch.from_numpy(char_ids[order]),
            index=(torch.from_numpy(rank[indices[0]]), torch.from_numpy(rank[indices[1]])),
            positions=(positions[0], positions[1]),
            targets=(targets[0], targets[1]),
            lengths=(np.asarray(forward.lengths, dtype=np.int64), np.asarray(backward.lengths, dtype=np.int64)),
            char_lengths=char_lengths[order],
        )

    def pin_memory(self) -> "TensorBatch":
        """Page-locked host copies, so that `to(cuda, non_blocking=True)` overlaps with compute."""
        return self._map(lambda t: t.pin_memory())

    def to(self, device: torch.device, non_blocking: bool = False) -> "TensorBatch":
        return self._map(lambda t: t.to(device, non_blocking=non_blocking))

    def _map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> "TensorBatch":
        return TensorBatch(
            char_ids=fn(self.char_ids),
            index=(fn(self.index[0]), fn(self.index[1])),
            positions=(fn(self.positions[0]), fn(self.positions[1])),
            targets=(fn(self.targets[0]), fn(self.targets[1])),
            lengths=self.lengths,
            char_lengths=self.char_lengths,
        )


@dataclass
class LMOutput:
    """Summed target losses per direction `[2]` (on the model's device), target counts per direction
    (host), and the final states to carry."""

    loss_sums: torch.Tensor
    counts: Tuple[int, int]
    states: States


class LanguageModel(nn.Module):
    def __init__(self, options: ElmoOptions, n_vocab: int, dropout: float = 0.0, sparse_softmax: bool = False) -> None:
        super().__init__()
        self.bilm = BiLM(options, dropout=dropout)
        self.softmax = Softmax(n_vocab, options.projection_dim)
        self.dropout = dropout
        # Sampled softmax only: gradients of the softmax rows used in a step, not of all V rows.
        self.sparse_softmax = sparse_softmax

    @property
    def options(self) -> ElmoOptions:
        return self.bilm.options

    def zero_states(self, batch_size: int) -> States:
        return self.bilm.lstm.zero_states(batch_size, self.softmax.weight)

    def forward(
        self,
        batch: TensorBatch,
        states: States,
        sampler: Optional[LogUniformSampler] = None,
        negatives: Optional[torch.Tensor] = None,
        n_tries: int = 0,
    ) -> LMOutput:
        """Losses of both directions; the full softmax unless a sampler and its negatives are given."""
        embedded = self.bilm.char_encoder.encode_rows(batch.char_ids, batch.char_lengths)  # [U, P]
        x = (embedded[batch.index[0]], embedded[batch.index[1]])  # [batch, T, P] each
        outputs, finals = run_directions(self.bilm.lstm, x, batch.lengths, states)
        tops = outputs[-1]
        sums = []
        for d, top in enumerate(tops):
            if self.dropout and self.training:
                top = F.dropout(top, self.dropout, training=True)
            hidden = top.reshape(-1, top.shape[-1]).index_select(0, batch.positions[d])
            targets = batch.targets[d]
            if sampler is not None and negatives is not None:
                losses = self.softmax.sampled_loss(
                    hidden, targets, sampler, negatives, n_tries, sparse=self.sparse_softmax
                )
            else:
                losses = self.softmax.full_loss(hidden, targets)
            sums.append(losses.sum())
        detached = [(h.detach(), c.detach()) for h, c in finals]
        return LMOutput(torch.stack(sums), batch.counts, detached)


def parameters_digest(model: nn.Module) -> str:
    """A hash of every parameter's bytes: replicas that agree to the last bit have the same digest."""
    digest = hashlib.sha1()
    for param in model.parameters():
        digest.update(param.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()
