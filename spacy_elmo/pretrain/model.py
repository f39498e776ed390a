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
from typing import Dict, List, Optional, Tuple

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
    """Both directions of one step as tensors: distinct tokens' char ids `char_ids` `[U, max_chars]`,
    and per direction the index of each input in them `[batch, T]`, row lengths `[batch]` and targets
    `[batch, T]` (PAD_TARGET past a row's end)."""

    char_ids: torch.Tensor
    index: Tuple[torch.Tensor, torch.Tensor]
    lengths: Tuple[torch.Tensor, torch.Tensor]
    targets: Tuple[torch.Tensor, torch.Tensor]

    @classmethod
    def from_batches(cls, forward: Batch, backward: Batch, mapper: CharacterMapper) -> "TensorBatch":
        positions: Dict[str, int] = {}
        indices = []
        for batch in (forward, backward):
            index = np.zeros(batch.targets.shape, dtype=np.int64)
            for i, row in enumerate(batch.tokens):
                index[i, : len(row)] = [positions.setdefault(t, len(positions)) for t in row]
            indices.append(torch.from_numpy(index))
        char_ids = torch.from_numpy(np.stack([mapper.token_ids(t) for t in positions]))
        return cls(
            char_ids=char_ids,
            index=(indices[0], indices[1]),
            lengths=(torch.tensor(forward.lengths), torch.tensor(backward.lengths)),
            targets=(torch.from_numpy(forward.targets), torch.from_numpy(backward.targets)),
        )


@dataclass
class LMOutput:
    """Summed target losses and target counts per direction, and the final states to carry."""

    loss_sums: torch.Tensor  # [2]
    counts: torch.Tensor  # [2]
    states: States


def run_lstms(
    lstm: BiLSTMStack, x: Tuple[torch.Tensor, torch.Tensor], lengths: Tuple[torch.Tensor, torch.Tensor],
    states: List[State],
) -> Tuple[List[torch.Tensor], List[State]]:
    """Each direction's top-layer activations `[batch, T, P]` and the final states (per layer,
    `[2, batch, dim]`), rows in any length order. When every row of both streams has the same length
    (nearly every batch) the directions run in lockstep; otherwise each runs on its own rows."""
    if bool((lengths[0] == lengths[0][0]).all()) and bool((lengths[1] == lengths[0][0]).all()):
        outputs, finals = lstm(torch.stack(x), lengths[0].tolist(), states)
        return [outputs[-1][0], outputs[-1][1]], finals
    tops, per_direction = [], []
    for d in range(2):
        order = torch.argsort(lengths[d], descending=True, stable=True)
        unsort = torch.argsort(order)
        outputs, finals = lstm(x[d][order].unsqueeze(0), lengths[d][order].tolist(),
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
        sums, counts = [], []
        for d, top in enumerate(tops):
            if self.dropout and self.training:
                top = F.dropout(top, self.dropout, training=True)
            targets = batch.targets[d].reshape(-1)
            keep = targets != PAD_TARGET
            hidden = top.reshape(-1, top.shape[-1])[keep]
            targets = targets[keep]
            if sampler is not None and negatives is not None:
                losses = self.softmax.sampled_loss(hidden, targets, sampler, negatives, n_tries)
            else:
                losses = self.softmax.full_loss(hidden, targets)
            sums.append(losses.sum())
            counts.append(targets.shape[0])
        detached = [(h.detach(), c.detach()) for h, c in finals]
        return LMOutput(torch.stack(sums), torch.tensor(counts, dtype=torch.float64), detached)


def initialize_weights(model: LanguageModel) -> None:
    """The original trainer's initialisation: scaled normals for the char-CNN, highway and projection,
    a carry bias of -2 so highway layers start close to the identity, small uniforms for the LSTMs."""
    encoder = model.bilm.char_encoder
    options = model.options.char_cnn
    with torch.no_grad():
        nn.init.uniform_(encoder.char_embed.weight, -1.0, 1.0)
        encoder.char_embed.weight[0].zero_()
        for conv, (width, _) in zip(encoder.convs, options.filters):
            std = math.sqrt(1.0 / (width * options.embedding_dim)) if options.activation == "relu" else 1.0
            nn.init.normal_(conv.weight, std=std)
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
            for param in (layer.input_weight, layer.state_weight, layer.projection_weight):
                nn.init.uniform_(param, -0.05, 0.05)
            nn.init.zeros_(layer.input_bias)


def parameters_digest(model: nn.Module) -> str:
    """A hash of every parameter's bytes: replicas that agree to the last bit have the same digest."""
    digest = hashlib.sha1()
    for param in model.parameters():
        digest.update(param.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()
