"""The "int8" fast mode's LSTM layer (fast_bilm.py makes the copy that uses it): the exact model's step
loop, gate arithmetic and clipping, but every matrix product of the LSTM (input, recurrent, projection)
is an int8 product: the weights quantized per output channel once, the activations per tensor at run
time (fbgemm's dynamic quantized linear, or oneDNN's int8 product where it is faster: `Int8Linear`). At
batch 1 a step streams all the recurrent weights from memory, a quarter of the bytes in int8; at larger
batches int8 products also run faster than fp32 ones on CPUs with VNNI. Not exact by the rounding; and
since an activation's scale is taken over the whole batch, a sentence's vectors depend very slightly on
the other sentences of its batch.
"""

from __future__ import annotations

import warnings
from typing import Optional

import torch
from torch import nn

from ...util.machine import cpu_flags
from .. import kernels
from ..errors import FastModeError
from ..lstm import N_DIRECTIONS, BiLSTMLayer, with_forget_bias
from ..torch_compat import cpu_int8_units, onednn_int8_available, onednn_int8_linear, onednn_int8_pack
from .fast_layer import FastLayer

# /proc/cpuinfo's flags for int8 dot-product units.
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")
# oneDNN's activations are uint8 around this zero point (symmetric: codes 1..255).
UINT8_ZERO = 128


def has_int8_units() -> bool:
    """Whether this CPU has int8 dot-product units (VNNI or AMX-INT8), where oneDNN's int8 product
    cannot overflow its 16-bit intermediate sums (without them, fbgemm's reduced range is the safe
    one). Module-level, so that tests can pretend either answer."""
    checked = cpu_int8_units()
    if checked is not None:
        return checked
    return any(flag in cpu_flags() for flag in INT8_FLAGS)


class Int8Linear(nn.Module):
    """`x W + b` as a dynamic int8 product: W `[in, out]` quantized per output channel once, x per
    tensor on every call. Two kernels compute it: fbgemm's (reduced range, which CPUs without VNNI
    need to avoid overflow) and, on CPUs with int8 units, oneDNN's (AMX-INT8 where present, the full
    range of uint8 activations); the faster is chosen per shape by timing, as the exact path chooses
    between MKL and oneDNN (`kernels.choose`; `SPACY_ELMO_CPU_KERNEL=mkl` pins fbgemm, `onednn`
    oneDNN)."""

    def __init__(self, weight: torch.Tensor, bias: Optional[torch.Tensor] = None) -> None:
        super().__init__()
        w = weight.detach().t().contiguous().float()
        scale = (w.abs().amax(dim=1) / 127.0).clamp_min(1e-12).double()
        zero = torch.zeros(w.shape[0], dtype=torch.long)
        self.bias = None if bias is None else bias.detach().float().clone()
        try:
            with warnings.catch_warnings():
                # torch marks its quantized-tensor API deprecated in favour of torchao (not a dependency).
                warnings.simplefilter("ignore")
                qweight = torch.quantize_per_channel(w, scale, zero, 0, torch.qint8)
                self._packed = torch.ops.quantized.linear_prepack(qweight, self.bias)
        except (AttributeError, RuntimeError) as error:
            raise FastModeError(
                f"this torch build ({torch.__version__}) cannot run int8 products ({error}); use the exact BiLM"
            ) from error
        self._onednn: Optional[torch.Tensor] = None
        if onednn_int8_available() and has_int8_units():
            self._onednn = onednn_int8_pack(qweight.int_repr())
            self._scale, self._zero = scale.float(), zero

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        packed = self._onednn
        if packed is None or x.dim() != 2:
            return self._fbgemm(x)
        key = ("int8", kernels.row_bucket(x.shape[0]), x.shape[1], self._scale.shape[0], torch.get_num_threads())
        if kernels.choose(key, lambda: self._fbgemm(x), lambda: self._onednn_product(x, packed)) == kernels.ONEDNN:
            return self._onednn_product(x, packed)
        return self._fbgemm(x)

    def _fbgemm(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.quantized.linear_dynamic(x, self._packed, True)

    def _onednn_product(self, x: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
        """x `[rows, in]` quantized symmetrically (zero point 128), its rows padded to
        `kernels.product_height` so that oneDNN keeps a bounded number of primitives."""
        rows = x.shape[0]
        x_scale = max(float(x.abs().max()) / 127.0, 1e-12) if x.numel() else 1.0
        qx = torch.quantize_per_tensor(x.contiguous(), x_scale, UINT8_ZERO, torch.quint8).int_repr()
        height = kernels.product_height(rows)
        if height != rows:
            qx = torch.nn.functional.pad(qx, (0, 0, 0, height - rows), value=UINT8_ZERO)
        out = onednn_int8_linear(qx, x_scale, UINT8_ZERO, packed, self._scale, self._zero, self.bias)
        return out[:rows]


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
        return self.add_into(x_gates, [self.recurrent[d](h[d]) for d in range(N_DIRECTIONS)])

    def projection_products(self, m: torch.Tensor, directions: slice) -> torch.Tensor:
        return torch.stack([self.projections[d](m[d]) for d in range(N_DIRECTIONS)])
