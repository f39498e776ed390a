"""The "bf16" fast mode's LSTM layer: the exact layer's step, gates and clipping (all in fp32), with its
three products (input, recurrent, projection) multiplying bf16 copies of the weights by bf16 copies of
the activations into fp32 results.

Why: on a GPU the products are the work (a step at batch 1 streams every recurrent and projection
weight; at large batches the products are bound by arithmetic), and bf16 halves the bytes and runs on
the tensor cores, where fp32 runs on the CUDA cores. An explicit cast, not autocast or TF32 flags, so the
mode is the same whatever torch's precision flags and wherever it runs (the CPU computes bf16 products
too, which is how its deviation is measured in CI). Not exact: each product's inputs are rounded to 8
bits of mantissa (docs/fast_modes.md).
"""

from __future__ import annotations

import torch
from torch import nn

from ..lstm import BiLSTMLayer, with_forget_bias
from .fast_layer import FastLayer


class Bf16BiLSTMLayer(FastLayer):
    """A snapshot of an exact layer whose products are bf16: weights rounded once, activations per call."""

    input_bf16: torch.Tensor
    state_bf16: torch.Tensor
    projection_bf16: torch.Tensor
    gate_bias: torch.Tensor

    def __init__(self, exact: BiLSTMLayer) -> None:
        nn.Module.__init__(self)
        self._set_sizes(exact.input_dim, exact.cell_dim, exact.projection_dim, exact.cell_clip, exact.proj_clip)
        # Buffers, so that `.to(device)` moves them; not in the state_dict: they are made from the exact layer.
        bias = with_forget_bias(exact.input_bias.detach(), exact.cell_dim).unsqueeze(1)
        self.register_buffer("input_bf16", exact.input_weight.detach().to(torch.bfloat16), persistent=False)
        self.register_buffer("state_bf16", exact.state_weight.detach().to(torch.bfloat16), persistent=False)
        self.register_buffer("projection_bf16", exact.projection_weight.detach().to(torch.bfloat16), persistent=False)
        self.register_buffer("gate_bias", bias, persistent=False)

    def input_products(self, x: torch.Tensor, directions: slice) -> torch.Tensor:
        return torch.bmm(x.to(torch.bfloat16), self.input_bf16).float() + self.gate_bias

    def step_gates(self, x_gates: torch.Tensor, h: torch.Tensor, directions: slice) -> torch.Tensor:
        return torch.bmm(h.to(torch.bfloat16), self.state_bf16).float() + x_gates

    def projection_products(self, m: torch.Tensor, directions: slice) -> torch.Tensor:
        return torch.bmm(m.to(torch.bfloat16), self.projection_bf16).float()
