"""The pretraining network: the BiLM that gets exported, plus the softmax shared by both directions.

During training the two directions read different text (independently shuffled streams), so the
backward stack runs on its own stream in that stream's order rather than on the forward input
reversed. The char-CNN runs once per distinct token of the batch (both streams together) and the
result is gathered into place: the same numbers as running it per position, at a fraction of the cost,
since a batch of natural text repeats most of its tokens.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..chars import CharacterMapper
from ..nn.bilm import BiLM
from ..nn.lstm import BiLSTMStack, State
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
    (`positions`, into `[batch * T]`) and those targets `[N]`. Host side: row `lengths` `[batch]`."""

    char_ids: torch.Tensor
    index: Tuple[torch.Tensor, torch.Tensor]
    positions: Tuple[torch.Tensor, torch.Tensor]
    targets: Tuple[torch.Tensor, torch.Tensor]
    lengths: Tuple[np.ndarray, np.ndarray]

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
            indices.append(torch.from_numpy(index))
            flat = batch.targets.reshape(-1)
            kept = np.flatnonzero(flat != PAD_TARGET)
            positions.append(torch.from_numpy(kept))
            targets.append(torch.from_numpy(np.ascontiguousarray(flat[kept])))
        char_ids = torch.from_numpy(np.stack([mapper.token_ids(t) for t in token_positions]))
        return cls(
            char_ids=char_ids,
            index=(indices[0], indices[1]),
            positions=(positions[0], positions[1]),
            targets=(targets[0], targets[1]),
            lengths=(np.asarray(forward.lengths, dtype=np.int64), np.asarray(backward.lengths, dtype=np.int64)),
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
        )


@dataclass
class LMOutput:
    """Summed target losses per direction `[2]` (on the model's device), target counts per direction
    (host), and the final states to carry."""

    loss_sums: torch.Tensor
    counts: Tuple[int, int]
    states: States


def run_lstms(
    lstm: BiLSTMStack, x: Tuple[torch.Tensor, torch.Tensor], lengths: Tuple[np.ndarray, np.ndarray],
    states: List[State],
) -> Tuple[List[torch.Tensor], List[State]]:
    """Each direction's top-layer activations `[batch, T, P]` and the final states (per layer,
    `[2, batch, dim]`), rows in any length order. When every row of both streams has the same length
    (nearly every batch) the directions run in lockstep; otherwise each runs on its own rows."""
    first = lengths[0][0] if len(lengths[0]) else 0
    if bool((lengths[0] == first).all()) and bool((lengths[1] == first).all()):
        outputs, finals = lstm(torch.stack(x), lengths[0].tolist(), states)
        return [outputs[-1][0], outputs[-1][1]], finals
    tops, per_direction = [], []
    device = x[0].device
    for d in range(2):
        host_order = np.argsort(-lengths[d], kind="stable")
        order = torch.from_numpy(host_order).to(device)
        unsort = torch.from_numpy(np.argsort(host_order, kind="stable")).to(device)
        outputs, finals = lstm(x[d][order].unsqueeze(0), lengths[d][host_order].tolist(),
                               [(h[d : d + 1, order], c[d : d + 1, order]) for h, c in states], slice(d, d + 1))
        tops.append(outputs[-1][0][unsort])
        per_direction.append([(h[:, unsort], c[:, unsort]) for h, c in finals])
    finals = [(torch.cat([f[0], b[0]]), torch.cat([f[1], b[1]])) for f, b in zip(*per_direction)]
    return tops, finals


class LanguageModel(nn.Module):
    def __init__(self, options: ElmoOptions, n_vocab: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.bilm = BiLM(options, dropout=dropout)
        self.softmax = Softmax(n_vocab, options.projection_dim)
        self.dropout = dropout

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
        embedded = self.bilm.char_encoder.encode_rows(batch.char_ids)  # [U, P]
        x = (embedded[batch.index[0]], embedded[batch.index[1]])  # [batch, T, P] each
        tops, finals = run_lstms(self.bilm.lstm, x, batch.lengths, states)
        sums = []
        for d, top in enumerate(tops):
            if self.dropout and self.training:
                top = F.dropout(top, self.dropout, training=True)
            hidden = top.reshape(-1, top.shape[-1]).index_select(0, batch.positions[d])
            targets = batch.targets[d]
            if sampler is not None and negatives is not None:
                losses = self.softmax.sampled_loss(hidden, targets, sampler, negatives, n_tries)
            else:
                losses = self.softmax.full_loss(hidden, targets)
            sums.append(losses.sum())
        detached = [(h.detach(), c.detach()) for h, c in finals]
        return LMOutput(torch.stack(sums), batch.counts, detached)


def glorot_bound(fan_in: int, fan_out: int) -> float:
    """TF's default (glorot uniform) limit: U(-b, b) keeps the activations' variance through a layer."""
    return math.sqrt(6.0 / (fan_in + fan_out))


def initialize_weights(model: LanguageModel) -> None:
    """bilm-tf's initialisation, so that its hyperparameters (Adagrad 0.2, clip 10) carry over: char
    embedding U(-1, 1); char-CNN filters U(-0.05, 0.05) for relu, N(0, 1/(width * char_dim)) for tanh;
    highway and projection N(0, 1/n_filters) with a carry bias of -2 (highway layers start close to the
    identity); LSTM kernels glorot uniform over TF's [input + projection, 4 * cell] kernel (the
    projection over [cell, projection]), as TF's LSTMCell draws them; zero biases."""
    encoder = model.bilm.char_encoder
    options = model.options.char_cnn
    with torch.no_grad():
        nn.init.uniform_(encoder.char_embed.weight, -1.0, 1.0)
        encoder.char_embed.weight[0].zero_()
        for conv, (width, _) in zip(encoder.convs, options.filters):
            if options.activation == "relu":
                nn.init.uniform_(conv.weight, -0.05, 0.05)
            else:
                nn.init.normal_(conv.weight, std=math.sqrt(1.0 / (width * options.embedding_dim)))
            nn.init.zeros_(conv.bias)
        n_filters = options.n_filters
        for highway in encoder.highways:
            for linear in (highway.carry, highway.transform):
                nn.init.normal_(linear.weight, std=math.sqrt(1.0 / n_filters))
            nn.init.constant_(highway.carry.bias, -2.0)
            nn.init.zeros_(highway.transform.bias)
        if encoder.projection is not None:
            nn.init.normal_(encoder.projection.weight, std=math.sqrt(1.0 / n_filters))
            nn.init.zeros_(encoder.projection.bias)
        for layer in model.bilm.lstm.layers:
            kernel = glorot_bound(layer.input_dim + layer.projection_dim, 4 * layer.cell_dim)
            nn.init.uniform_(layer.input_weight, -kernel, kernel)
            nn.init.uniform_(layer.state_weight, -kernel, kernel)
            projection = glorot_bound(layer.cell_dim, layer.projection_dim)
            nn.init.uniform_(layer.projection_weight, -projection, projection)
            nn.init.zeros_(layer.input_bias)


def parameters_digest(model: nn.Module) -> str:
    """A hash of every parameter's bytes: replicas that agree to the last bit have the same digest."""
    digest = hashlib.sha1()
    for param in model.parameters():
        digest.update(param.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()
