"""The context-independent half of ELMo: characters -> CNN -> highway -> projection.

Highway layers follow the convention of the stored TF weights (the gate called "carry" multiplies the
transform), so the weights load without sign flips: y = c * relu(W_t x + b_t) + (1 - c) * x,
c = sigmoid(W_c x + b_c).
"""

from __future__ import annotations

import math
from typing import List, Optional

import numpy as np
import torch
from torch import nn

from .chars import N_CHARS_PREDICT, PAD_CHAR
from .kernels import PackedWeights, linear
from .options import CharCNNOptions


def token_lengths(char_ids: np.ndarray) -> np.ndarray:
    """Ids up to and including end-of-word per row of `[n, max_chars]` shifted ids; 0 for the all-zero
    rows of batch padding. Word padding (PAD_CHAR + 1) follows end-of-word and nothing else does."""
    return ((char_ids != 0) & (char_ids != PAD_CHAR + 1)).sum(axis=-1)


class KernelLinear(nn.Linear):
    """An `nn.Linear` whose product runs on the faster CPU kernel (kernels.py). A module of its own, so
    that a fast mode can swap the char-CNN's products for its own (elmo/nn/fast/bf16.py) and leave the
    encoder's arithmetic as it is."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__(in_features, out_features)
        self._packed = PackedWeights()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias, self._packed)


class Highway(nn.Module):
    """One highway layer in the stored weights' convention (see the module docstring)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim
        self.carry = KernelLinear(dim, dim)
        self.transform = KernelLinear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        carry = torch.sigmoid(self.carry(x))
        transform = torch.relu(self.transform(x))
        return carry * transform + (1.0 - carry) * x


class CharEncoder(nn.Module):
    """`[batch, n_tokens, max_chars]` shifted char ids -> `[batch, n_tokens, projection_dim]`."""

    def __init__(self, options: CharCNNOptions, projection_dim: int) -> None:
        super().__init__()
        self.options = options
        # Row 0 is the padding id of prediction (see chars.py) and stays zero.
        self.char_embed = nn.Embedding(N_CHARS_PREDICT, options.embedding_dim, padding_idx=0)
        self.convs = nn.ModuleList(
            nn.Conv1d(options.embedding_dim, count, kernel_size=width) for width, count in options.filters
        )
        self.activation = torch.tanh if options.activation == "tanh" else torch.relu
        n_filters = options.n_filters
        self.highways = nn.ModuleList(Highway(n_filters) for _ in range(options.n_highway))
        self.projection = KernelLinear(n_filters, projection_dim) if n_filters != projection_dim else None
        self.output_dim = projection_dim
        self.widest_filter = max(width for width, _ in options.filters)
        # Tokens per convolution call: bounds the conv activations ([chunk, filters, max_chars] floats).
        self.chunk_size = 512
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """bilm-tf's initialisation, so that its training hyperparameters carry over: char embedding
        U(-1, 1) (the padding row zero); filters U(-0.05, 0.05) for relu, N(0, 1/(width * char_dim))
        for tanh; highway and projection N(0, 1/n_filters), a carry bias of -2 so that highway layers
        start close to the identity; zero biases otherwise."""
        options = self.options
        n_filters = options.n_filters
        with torch.no_grad():
            nn.init.uniform_(self.char_embed.weight, -1.0, 1.0)
            self.char_embed.weight[0].zero_()
            for conv, (width, _) in zip(self.convs, options.filters):
                if options.activation == "relu":
                    nn.init.uniform_(conv.weight, -0.05, 0.05)
                else:
                    nn.init.normal_(conv.weight, std=math.sqrt(1.0 / (width * options.embedding_dim)))
                nn.init.zeros_(conv.bias)
            for highway in self.highways:
                for linear in (highway.carry, highway.transform):
                    nn.init.normal_(linear.weight, std=math.sqrt(1.0 / n_filters))
                nn.init.constant_(highway.carry.bias, -2.0)
                nn.init.zeros_(highway.transform.bias)
            if self.projection is not None:
                nn.init.normal_(self.projection.weight, std=math.sqrt(1.0 / n_filters))
                nn.init.zeros_(self.projection.bias)

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        batch, n_tokens, n_chars = char_ids.shape
        flat = char_ids.reshape(-1, n_chars)
        # A token repeated in the batch (and the all-zero padding rows) is encoded once.
        unique, inverse = torch.unique(flat, dim=0, return_inverse=True)
        return self.encode_rows(unique)[inverse].reshape(batch, n_tokens, self.output_dim)

    def encode_rows(self, char_ids: torch.Tensor, lengths: Optional[np.ndarray] = None) -> torch.Tensor:
        """`[n, max_chars]` -> `[n, output_dim]`, `chunk_size` tokens at a time, shortest tokens first so
        that each chunk is cut to the columns its own longest token needs (see `_encode`). `lengths`:
        the rows' `token_lengths`, on the host; given, the device is never asked for them. Rows already
        sorted by length (pretraining's batches) need no reordering; others cost one host-to-device
        copy of the order, whatever the number of chunks."""
        if char_ids.shape[0] == 0:
            return self.char_embed.weight.new_zeros(0, self.output_dim)
        if lengths is None:
            lengths = token_lengths(char_ids.cpu().numpy())
        if np.all(lengths[:-1] <= lengths[1:]):
            return self._encode_sorted(char_ids, lengths)
        order = np.argsort(lengths, kind="stable")
        device_order = torch.from_numpy(order).to(char_ids.device)
        encoded = self._encode_sorted(char_ids.index_select(0, device_order), lengths[order])
        restore = torch.empty_like(device_order)
        restore[device_order] = torch.arange(len(order), device=char_ids.device)
        return encoded.index_select(0, restore)

    def _encode_sorted(self, char_ids: torch.Tensor, lengths: np.ndarray) -> torch.Tensor:
        n = char_ids.shape[0]
        return torch.cat(
            [
                self._encode(char_ids[i : i + self.chunk_size], int(lengths[min(i + self.chunk_size, n) - 1]))
                for i in range(0, n, self.chunk_size)
            ]
        )

    def _encode(self, char_ids: torch.Tensor, longest: int) -> torch.Tensor:
        """`longest`: the longest token's length in `char_ids`. Columns past a token's end hold only
        padding, and every window of padding alone gives the same convolution output, so the max over
        positions does not change when all but one of those windows are cut: `longest` + the widest
        filter columns suffice. Exact in value and gradient (tests/elmo/nn/test_char_encoder.py; the bundled
        model's float32 outputs are bit for bit the same, a gradient's sum may round differently), and
        3-5 times less convolution on English text than all `max_characters_per_token` columns."""
        x = self.char_features(char_ids, longest)
        if self.projection is not None:
            x = self.projection(x)
        return x

    def char_features(self, char_ids: torch.Tensor, longest: int) -> torch.Tensor:
        """The convolutions' and highway layers' output `[n, n_filters]`, before the projection (a
        format with a word embedding joins it here; elmo/manylangs/model.py)."""
        char_ids = char_ids[:, : longest + self.widest_filter]
        # [n, embedding_dim, columns]: Conv1d wants channels before positions.
        chars = self.char_embed(char_ids).transpose(1, 2)
        pooled: List[torch.Tensor] = []
        for conv in self.convs:
            # The original takes the max over positions first and applies the activation after.
            pooled.append(conv(chars).max(dim=-1).values)
        x = self.activation(torch.cat(pooled, dim=-1))
        for highway in self.highways:
            x = highway(x)
        return x
