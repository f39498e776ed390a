"""AllenNLP's `ScalarMix` as a torch module: `gamma * sum_j softmax(s)_j * layer_j`, optionally over
layer-normed layers.

The spaCy side has its own mix (pipeline/layers/scalar_mix.py, a thinc layer); this one is a torch
module so that it trains inside a user's torch model as AllenNLP's did, with the same parameter names
(`scalar_parameters.j`, `gamma`). Its layer norm takes one mean and one variance per layer over every
unmasked position and feature of the batch, `<S>`/`</S>` included, as AllenNLP's does.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import torch
from torch import nn

from ..elmo.errors import InputError
from ..elmo.util.validation import float32_values

LAYER_NORM_EPS = 1e-12


class ScalarMix(nn.Module):
    """`mixture_size` layers in, one out. `initial_scalar_parameters`: the pre-softmax weights (default
    all zero: the mean), finite float32 numbers as the spaCy side's `ScalarMix.v2` weights (one NaN or
    inf would make every output NaN); `trainable=False` freezes them and `gamma`."""

    def __init__(
        self,
        mixture_size: int,
        do_layer_norm: bool = False,
        initial_scalar_parameters: Optional[Sequence[float]] = None,
        trainable: bool = True,
    ) -> None:
        super().__init__()
        initial = (
            [0.0] * mixture_size
            if initial_scalar_parameters is None
            else float32_values(initial_scalar_parameters, "scalar_mix_parameters")
        )
        if len(initial) != mixture_size:
            raise InputError(
                f"scalar_mix_parameters has {len(initial)} values but the biLM has "
                f"{mixture_size} layers: give one pre-softmax weight per layer, the token layer first"
            )
        self.mixture_size = mixture_size
        self.do_layer_norm = do_layer_norm
        self.scalar_parameters = nn.ParameterList(
            [nn.Parameter(torch.tensor([value]), requires_grad=trainable) for value in initial]
        )
        self.gamma = nn.Parameter(torch.tensor([1.0]), requires_grad=trainable)

    def forward(self, tensors: Sequence[torch.Tensor], mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """`tensors`: `mixture_size` tensors `[..., dim]`; `mask` `[...]` (required with layer norm)."""
        if len(tensors) != self.mixture_size:
            raise InputError(f"ScalarMix expects {self.mixture_size} layers, got {len(tensors)}")
        weights = torch.softmax(torch.cat(list(self.scalar_parameters)), dim=0)
        if not self.do_layer_norm:
            return self.gamma * _sum([w * t for w, t in zip(weights, tensors)])
        if mask is None:
            raise InputError("ScalarMix with do_layer_norm needs the mask of the positions to normalise over")
        broadcast = mask.to(tensors[0].dtype).unsqueeze(-1)
        count = broadcast.sum() * tensors[0].shape[-1]
        return self.gamma * _sum([w * _layer_norm(t, broadcast, count) for w, t in zip(weights, tensors)])


def _sum(pieces: List[torch.Tensor]) -> torch.Tensor:
    total = pieces[0]
    for piece in pieces[1:]:
        total = total + piece
    return total


def _layer_norm(tensor: torch.Tensor, broadcast_mask: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    masked = tensor * broadcast_mask
    mean = masked.sum() / count
    variance = (((masked - mean) * broadcast_mask) ** 2).sum() / count
    return (tensor - mean) / torch.sqrt(variance + LAYER_NORM_EPS)
