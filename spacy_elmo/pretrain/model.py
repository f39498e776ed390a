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
from ..nn.lstm import LSTMStack, State
from ..nn.softmax import LogUniformSampler, Softmax
from ..options import ElmoOptions
from .batching import PAD_TARGET, Batch

# Per direction (forward, backward), per layer.
States = List[List[State]]


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


def run_stack(
    stack: LSTMStack, x: torch.Tensor, lengths: torch.Tensor, states: List[State]
) -> Tuple[torch.Tensor, List[State]]:
    """The top layer's activations `[batch, T, P]` and final states of rows in any length order."""
    if bool((lengths == lengths[0]).all()):
        outputs, finals = stack(x, lengths.tolist(), states)
        return outputs[-1], finals
    order = torch.argsort(lengths, descending=True, stable=True)
    unsort = torch.argsort(order)
    outputs, finals = stack(x[order], lengths[order].tolist(), [(h[order], c[order]) for h, c in states])
    return outputs[-1][unsort], [(h[unsort], c[unsort]) for h, c in finals]


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
        like = self.softmax.weight
        return [self.bilm.forward_stack.zero_states(batch_size, like),
                self.bilm.backward_stack.zero_states(batch_size, like)]

    def forward(
        self,
        batch: TensorBatch,
        states: States,
        sampler: Optional[LogUniformSampler] = None,
        negatives: Optional[torch.Tensor] = None,
        n_tries: int = 0,
    ) -> LMOutput:
        """Losses of both directions; the full softmax unless a sampler and its negatives are given."""
        embedded = self.bilm.char_encoder(batch.char_ids.unsqueeze(0))[0]  # [U, P]
        sums, counts, finals = [], [], []
        stacks = (self.bilm.forward_stack, self.bilm.backward_stack)
        for d, stack in enumerate(stacks):
            x = embedded[batch.index[d]]  # [batch, T, P]
            top, final = run_stack(stack, x, batch.lengths[d], states[d])
            finals.append([(h.detach(), c.detach()) for h, c in final])
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
        return LMOutput(torch.stack(sums), torch.tensor(counts, dtype=torch.float64), finals)


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
        for stack in (model.bilm.forward_stack, model.bilm.backward_stack):
            for layer in stack.layers:
                for param in (layer.input_linear.weight, layer.state_linear.weight, layer.projection.weight):
                    nn.init.uniform_(param, -0.05, 0.05)
                nn.init.zeros_(layer.input_linear.bias)


def parameters_digest(model: nn.Module) -> str:
    """A hash of every parameter's bytes: replicas that agree to the last bit have the same digest."""
    digest = hashlib.sha1()
    for param in model.parameters():
        digest.update(param.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()
