"""The "int8" fast mode's LSTM layer (fast_bilm.py makes the copy that uses it): the exact model's step
loop, gate arithmetic and clipping, but every matrix product of the LSTM (input, recurrent, projection)
is an int8 product: the weights quantized per output channel once, the activations per tensor at run
time (fbgemm's dynamic quantized linear). At batch 1 a step streams all the recurrent weights from
memory, a quarter of the bytes in int8; at larger batches int8 products also run faster than fp32 ones
on CPUs with VNNI. Not exact by the rounding; and since an activation's scale is taken over the whole
batch, a sentence's vectors depend very slightly on the other sentences of its batch.
"""

from __future__ import annotations

import warnings
from typing import Optional

import torch
from torch import nn

from ..errors import FastModeError
from ..lstm import N_DIRECTIONS, BiLSTMLayer, with_forget_bias
from .fast_layer import FastLayer


class Int8Linear(nn.Module):
    """`x W + b` as fbgemm's dynamic int8 product: W `[in, out]` quantized per output channel once,
    x quantized per tensor on every call (with the reduced range fbgemm needs to avoid overflow on
    CPUs without VNNI)."""

    def __init__(self, weight: torch.Tensor, bias: Optional[torch.Tensor] = None) -> None:
        super().__init__()
        w = weight.detach().t().contiguous().float()
        scale = (w.abs().amax(dim=1) / 127.0).clamp_min(1e-12).double()
        zero = torch.zeros(w.shape[0], dtype=torch.long)
        try:
            with warnings.catch_warnings():
                # torch marks its quantized-tensor API deprecated in favour of torchao (not a dependency).
                warnings.simplefilter("ignore")
                qweight = torch.quantize_per_channel(w, scale, zero, 0, torch.qint8)
                self._packed = torch.ops.quantized.linear_prepack(
                    qweight, None if bias is None else bias.detach().float().clone()
                )
        except (AttributeError, RuntimeError) as error:
            raise FastModeError(
                f"this torch build ({torch.__version__}) cannot run int8 products ({error}); use the exact BiLM"
            ) from error

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.quantized.linear_dynamic(x, self._packed, True)


class Int8BiLSTMLayer(FastLayer):
    """The exact layer's step loop, gate arithmetic and clipping; only its three products are int8."""

    def __init__(self, exact: BiLSTMLayer) -> None:
        nn.Module.__init__(self)
        self._set_sizes(exact.input_dim, exact.cell_dim, exact.projection_dim, exact.cell_clip, exact.proj_clip)
        bias = with_forget_bias(exact.input_bias.detach(), exact.cell_dim)
        self.inputs = nn.ModuleList(Int8Linear(exact.input_weight[d], bias[d]) for d in range(N_DIRECTIONS))
        self.recurrent = nn.ModuleList(Int8Linear(exact.state_weight[d]) for d in range(N_DIRECTIONS))
        self.projections = nn.ModuleList(Int8Linear(exact.projection_weight[d]) for d in range(N_DIRECTIONS))

    def input_products(self, x: torch.Tensor, directions: slice) -> torch.Tensor:
        return torch.stack([self.inputs[d](x[d]) for d in range(N_DIRECTIONS)])

    def step_gates(self, x_gates: torch.Tensor, h: torch.Tensor, directions: slice) -> torch.Tensor:
        return torch.stack([self.recurrent[d](h[d]) for d in range(N_DIRECTIONS)]) + x_gates

    def projection_products(self, m: torch.Tensor, directions: slice) -> torch.Tensor:
        return torch.stack([self.projections[d](m[d]) for d in range(N_DIRECTIONS)])
