"""The "bf16" fast mode. Its LSTM layer: the exact layer's step, gates and clipping (all in fp32), with its
three products (input, recurrent, projection) multiplying bf16 copies of the weights by bf16 copies of
the activations, each result rounded to bf16 by the kernel and widened to fp32 as it is added to the
fp32 bias or input gates. The char-CNN's highway and projection products (`Bf16Linear`) are bf16 the
same way: each token the cache has not seen yet runs them, and in fp32 they would weigh the more the
faster the LSTM runs.

Why: a step at batch 1 streams every recurrent and projection weight, and bf16 halves the bytes; at
large batches the products are bound by arithmetic, and bf16 runs on the matrix units (a GPU's tensor
cores; on a CPU, AMX or AVX512_BF16) where fp32 does not. On a GPU each product is one `bmm` over both
directions. On a CPU the weights are packed once per direction for oneDNN (`kernels.PackedWeights`, as
the exact path's fp32 copies are), whose bf16 kernels use AMX where the CPU has it and AVX512_BF16
otherwise; a plain bf16 `bmm` there would repack the weights on every call, which at batch 1 made the
mode slower than exact. A CPU without bf16 units computes bf16 products in emulation, slower than
fp32, so `make_fast` refuses the mode there (`has_bf16_units`; the pipeline then runs exact, saying
why). An explicit cast, not autocast or TF32 flags, so the mode is the same whatever torch's precision
flags. Not exact: each product's inputs and result are rounded to 8 bits of mantissa
(docs/fast_modes.md).
"""

from __future__ import annotations

import platform
from typing import List, Optional

import torch
from torch import nn

from ...util.machine import cpu_flags
from .. import kernels
from ..char_encoder import KernelLinear
from ..lstm import N_DIRECTIONS, BiLSTMLayer, with_forget_bias
from ..torch_compat import cpu_bf16_units, onednn_linear, onednn_linear_available
from .fast_layer import FastLayer

# /proc/cpuinfo's flags for bf16 matrix units: x86 (AMX, AVX512) and Arm (its BF16 extension).
X86_BF16_FLAGS = ("amx_bf16", "avx512_bf16")
ARM_BF16_FLAG = "bf16"


def has_bf16_units() -> bool:
    """Whether this CPU multiplies bf16 matrices in hardware: torch's own check on x86 where the build
    has it, else the CPU's flags. Module-level, so that tests can pretend either answer."""
    if platform.machine().lower() in ("aarch64", "arm64"):
        return ARM_BF16_FLAG in cpu_flags()
    checked = cpu_bf16_units()
    if checked is not None:
        return checked
    return any(flag in cpu_flags() for flag in X86_BF16_FLAGS)


def missing_bf16_units() -> Optional[str]:
    """Why the bf16 mode cannot pay on this CPU (the flags it lacks), or None when it has bf16 units."""
    if has_bf16_units():
        return None
    return (
        f"this CPU has no bf16 units (no {' / '.join(X86_BF16_FLAGS)} flag, Arm: {ARM_BF16_FLAG}), where bf16 "
        "products are slower than the exact fp32 ones; use the exact BiLM (fast_mode = null) or 'int8'"
    )


def _packed(x: torch.Tensor, copies: List[torch.Tensor]) -> List[torch.Tensor]:
    """x `[D, rows, in]` (bf16) . each direction's packed weight, `[rows, out]` each in bf16; the rows
    padded to `kernels.product_height` so that oneDNN keeps a bounded number of primitives."""
    rows = x.shape[1]
    height = kernels.product_height(rows)
    if height != rows:
        x = torch.nn.functional.pad(x, (0, 0, 0, height - rows))
    return [onednn_linear(x[d], copies[d], None)[:rows] for d in range(x.shape[0])]


class Bf16BiLSTMLayer(FastLayer):
    """A snapshot of an exact layer whose products are bf16: weights rounded once, activations per call."""

    input_bf16: torch.Tensor
    state_bf16: torch.Tensor
    projection_bf16: torch.Tensor
    gate_bias: torch.Tensor

    def __init__(self, exact: BiLSTMLayer) -> None:
        nn.Module.__init__(self)
        self._set_sizes(exact.input_dim, exact.cell_dim, exact.projection_dim, exact.cell_clip, exact.proj_clip)
        # Buffers, so that `.to(device)` moves them; not in the state_dict: they are made from the exact
        # layer. Not inference tensors (made under inference_mode they would be): the packed copies are
        # keyed on their version counters.
        with torch.inference_mode(False):
            bias = with_forget_bias(exact.input_bias.detach(), exact.cell_dim).unsqueeze(1)
            for name in ("input", "state", "projection"):
                weight = getattr(exact, f"{name}_weight").detach().to(torch.bfloat16)
                self.register_buffer(f"{name}_bf16", weight, persistent=False)
            self.register_buffer("gate_bias", bias, persistent=False)
        # On a CPU: each weight packed once for oneDNN, on first use (and again only if moved).
        self._packed = {name: kernels.PackedWeights() for name in ("input", "state", "projection")}

    def _cpu_products(self, x: torch.Tensor, name: str) -> Optional[List[torch.Tensor]]:
        """x `[D, rows, in]` times the `name` weight of each direction through oneDNN's packed bf16
        product (bf16 results), or None off the CPU (or without oneDNN), where one `bmm` does it."""
        if x.device.type != "cpu" or not onednn_linear_available():
            return None
        weight = getattr(self, f"{name}_bf16")
        copies = self._packed[name].get(weight, lambda w: [w[d].t() for d in range(N_DIRECTIONS)])
        return _packed(x.to(torch.bfloat16), copies)

    def _fp32(self, parts: List[torch.Tensor], base: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Each direction's bf16 product, plus `base` (`[D, rows or 1, out]`, fp32) where given, written
        into one new fp32 tensor `[D, rows, out]` (one pass per direction, no stacked bf16 copy)."""
        out = parts[0].new_empty(len(parts), *parts[0].shape, dtype=torch.float32)
        for d, part in enumerate(parts):
            if base is None:
                out[d].copy_(part)
            else:
                torch.add(base[d], part, out=out[d])
        return out

    def input_products(self, x: torch.Tensor, directions: slice) -> torch.Tensor:
        parts = self._cpu_products(x, "input")
        if parts is not None:
            return self._fp32(parts, self.gate_bias)
        return torch.bmm(x.to(torch.bfloat16), self.input_bf16).float() + self.gate_bias

    def step_gates(self, x_gates: torch.Tensor, h: torch.Tensor, directions: slice) -> torch.Tensor:
        parts = self._cpu_products(h, "state")
        if parts is not None:
            return self.add_into(x_gates, parts)
        return torch.bmm(h.to(torch.bfloat16), self.state_bf16).float() + x_gates

    def projection_products(self, m: torch.Tensor, directions: slice) -> torch.Tensor:
        parts = self._cpu_products(m, "projection")
        if parts is not None:
            return self._fp32(parts)
        return torch.bmm(m.to(torch.bfloat16), self.projection_bf16).float()


class Bf16Linear(nn.Module):
    """A snapshot of one of the char-CNN's highway or projection products (`KernelLinear`) in bf16:
    the weight rounded once (packed for oneDNN on a CPU), the activations per call, the bias added in
    fp32. These products are most of the char-CNN's arithmetic; its convolutions stay fp32."""

    weight_bf16: torch.Tensor
    bias: torch.Tensor

    def __init__(self, exact: nn.Linear) -> None:
        super().__init__()
        with torch.inference_mode(False):
            self.register_buffer("weight_bf16", exact.weight.detach().to(torch.bfloat16), persistent=False)
            self.register_buffer("bias", exact.bias.detach().clone(), persistent=False)
        self._packed = kernels.PackedWeights()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.device.type == "cpu" and x.dim() == 2 and onednn_linear_available():
            packed = self._packed.get(self.weight_bf16, lambda w: [w])
            product = _packed(x.to(torch.bfloat16).unsqueeze(0), packed)[0]
        else:
            product = torch.nn.functional.linear(x.to(torch.bfloat16), self.weight_bf16)
        return torch.add(self.bias, product)


def with_bf16_products(encoder: nn.Module) -> None:
    """Swap each `KernelLinear` in `encoder` (a snapshot's char-CNN: its highway layers and projection)
    for its bf16 copy, in place."""
    for name, module in list(encoder.named_modules()):
        if isinstance(module, KernelLinear):
            parent, _, child = name.rpartition(".")
            setattr(encoder.get_submodule(parent), child, Bf16Linear(module))
