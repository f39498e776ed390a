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
from typing import Callable, List, Optional, Tuple, TypedDict, Union

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..nn.bilm import BiLM
from ..nn.lstm import State, run_directions
from ..nn.options import ElmoOptions
from ..nn.softmax import LogUniformSampler, Softmax

# Per layer: h `[2, batch, P]` and c `[2, batch, cell]`, direction 0 forward, 1 backward.
States = List[State]


Pair = Tuple[torch.Tensor, torch.Tensor]  # one tensor per direction, forward first


class StepTensors(TypedDict):
    """A layout's tensors by field name, as keyword arguments for a layout of them moved or pinned."""

    index: Pair
    positions: Pair
    targets: Pair


@dataclass
class StepLayout:
    """Where one step's inputs and targets are, per direction: the index of each input in the step's
    distinct tokens `index` `[batch, T]`, the flat positions `[N]` of the inputs that have a target
    (`positions`, into `[batch * T]`) and those targets `[N]`; on the host, row `lengths` `[batch]` and
    the distinct tokens' `char_lengths` `[U]` (which char columns the CNN needs). The host's step
    (`HostBatch`, steps.py) and the device's (`TensorBatch`) share it, so a step is laid out once."""

    index: Pair
    positions: Pair
    targets: Pair
    lengths: Tuple[np.ndarray, np.ndarray]
    char_lengths: np.ndarray

    @property
    def counts(self) -> Tuple[int, int]:
        """Target tokens per direction, known on the host."""
        return int(self.positions[0].shape[0]), int(self.positions[1].shape[0])

    def tensors_mapped(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> StepTensors:
        """`index`, `positions` and `targets` with `fn` applied to each tensor (a move, a pin)."""
        return StepTensors(
            index=(fn(self.index[0]), fn(self.index[1])),
            positions=(fn(self.positions[0]), fn(self.positions[1])),
            targets=(fn(self.targets[0]), fn(self.targets[1])),
        )


@dataclass
class TensorBatch(StepLayout):
    """Both directions of one step on the model's device, as `HostBatch.to` (steps.py) makes it, the one
    builder of a step: the layout, with the distinct tokens' char ids `char_ids` `[U, max_chars]`; what
    steers the loop stays on the host, so a step never waits for the device to answer a question about
    its data."""

    char_ids: torch.Tensor


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
        sums = self._loss_sums(outputs[-1], batch.positions, batch.targets, sampler, negatives, n_tries)
        detached = [(h.detach(), c.detach()) for h, c in finals]
        return LMOutput(sums, batch.counts, detached)

    def full_window_losses(
        self,
        char_ids: torch.Tensor,
        index: Pair,
        targets: Pair,
        states: States,
        sampler: Optional[LogUniformSampler] = None,
        negatives: Optional[torch.Tensor] = None,
        n_tries: Union[int, torch.Tensor] = 0,
    ) -> Tuple[torch.Tensor, States]:
        """`forward`'s summed losses `[2]` and final states for a step whose rows all run the whole
        window with a target at every position, computed in shapes fixed by the batch, the window and
        the number of char-id rows, so that torch.compile makes one graph of it (elmo/pretrain/step_modes.py):
        every row's chars at full width (columns of padding alone do not change the max over positions,
        see CharEncoder._encode), the LSTM without sorting, every position's state scored. `char_ids`
        may hold rows that no index points at (padding to a fixed count): they get no gradient."""
        encoder = self.bilm.char_encoder
        embedded = encoder.char_features(char_ids, encoder.options.max_characters_per_token)
        if encoder.projection is not None:
            embedded = encoder.projection(embedded)
        batch_size, time = index[0].shape
        x = torch.stack([embedded[index[0]], embedded[index[1]]])
        outputs, finals = self.bilm.lstm(x, [time] * batch_size, states)
        tops = (outputs[-1][0], outputs[-1][1])
        sums = self._loss_sums(tops, None, targets, sampler, negatives, n_tries)
        return sums, [(h.detach(), c.detach()) for h, c in finals]

    def _loss_sums(
        self,
        tops: Pair,
        positions: Optional[Pair],
        targets: Pair,
        sampler: Optional[LogUniformSampler],
        negatives: Optional[torch.Tensor],
        n_tries: Union[int, torch.Tensor],
    ) -> torch.Tensor:
        """Each direction's summed target losses `[2]` from its top layer `[batch, T, P]`, at the flat
        `positions` that have a target (None: all of them)."""
        sums = []
        for d, top in enumerate(tops):
            if self.dropout and self.training:
                top = F.dropout(top, self.dropout, training=True)
            hidden = top.reshape(-1, top.shape[-1])
            if positions is not None:
                hidden = hidden.index_select(0, positions[d])
            if sampler is not None and negatives is not None:
                losses = self.softmax.sampled_loss(
                    hidden, targets[d], sampler, negatives, n_tries, sparse=self.sparse_softmax
                )
            else:
                losses = self.softmax.full_loss(hidden, targets[d])
            sums.append(losses.sum())
        return torch.stack(sums)


def parameters_digest(model: nn.Module) -> str:
    """A hash of every parameter's bytes: replicas that agree to the last bit have the same digest."""
    digest = hashlib.sha1()
    for param in model.parameters():
        digest.update(param.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()
