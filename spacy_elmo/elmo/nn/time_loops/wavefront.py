"""The wavefront time loop: every layer and both directions of a `BiLSTMStack` advance together.

The step loop (lstm.py) runs one layer over the whole sequence, then the next: per time step and
layer a recurrent product, the cell's elementwise update and a projection, each small. Here layer k
runs k steps behind the first, so at wave step s layer k computes time s - k from layer k-1's output
of the step before, and each wave step is (Appleyard et al. 2016, what cuDNN does):
- one batched product over all 2L direction-layers: `[x_t, h_{t-1}] [W_x; W_h]`, the weights stacked
  once into `[2L, I + P, 4C]` (a layer's input products can no longer be taken ahead of the loop: its
  input is made one step before);
- one elementwise update of all of them (bias, gates, cell clip, and the length mask: a direction-layer
  outside its row's steps keeps its state), compiled into one kernel (wave_cell.py);
- one batched projection `[2L, C, P]`;
- one elementwise update again, one kernel: the projection's clip, the mask, the outputs (zero outside
  a row's steps) and the next step's product input.
L + T - 1 wave steps of four launches instead of L T steps of a dozen. The cell's arithmetic is the
step loop's, the sums in another order (float rounding: within 1e-5 of it, the TF fixtures hold as
before). A layer whose products are its own (the int8 layers of int8.py) multiplies per layer through
its `input_products`, `step_gates` and `projection_products`.

Two ways to run: `shrink` (host-side lengths: the rows still running shrink as in the step loop) and
fixed rows and steps, reading lengths only from a device tensor (the masks are made from it inside the
kernels), which is what a CUDA graph captures (captured.py). Both directions only, and without
dropout (pretraining keeps the step loop).
"""

from __future__ import annotations

import weakref
from typing import Dict, List, Optional, Sequence, Tuple, cast

import torch
import torch.nn.functional as F

from .. import kernels
from ..lstm import BOTH, N_DIRECTIONS, BiLSTMLayer, BiLSTMStack, State, rows_running, with_forget_bias
from .wave_cell import WAVE_CELL

WaveWeights = Tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # [W_x; W_h] [2L, I+P, 4C], bias [2L, 1, 4C], W_p


class StackedWeights:
    """An exact stack's weights stacked for the wave step, kept while no parameter changes (their
    storage and version counters, as kernels.PackedWeights) and no gradient is wanted; remade on every
    call that wants gradients, so that they flow back to the layers' parameters. Holds no module state:
    a stack gets its own, kept beside it."""

    def __init__(self) -> None:
        self._key: Optional[Tuple[Tuple[int, int], ...]] = None
        self._weights: Optional[WaveWeights] = None
        self.packed = {name: kernels.PackedWeights() for name in ("gates", "projection")}

    def get(self, layers: Sequence[BiLSTMLayer], input_dim: int) -> WaveWeights:
        params = [p for layer in layers for p in (layer.input_weight, layer.state_weight, layer.projection_weight)]
        params += [layer.input_bias for layer in layers]
        if torch.is_grad_enabled() and any(p.requires_grad for p in params):
            return _stack(layers, input_dim)
        key = tuple((p.data_ptr(), p._version) for p in params)
        if key != self._key or self._weights is None:
            # Not inference tensors (made under inference_mode they would be): kernels.PackedWeights
            # keys its packed copies on their version counters.
            with torch.inference_mode(False), torch.no_grad():
                self._weights = _stack(layers, input_dim)
            self._key = key
        return self._weights


# Each stack's stacked weights, held beside it (not on it: the module stays as it was built).
_STACKED: "weakref.WeakKeyDictionary[BiLSTMStack, StackedWeights]" = weakref.WeakKeyDictionary()


def _stack(layers: Sequence[BiLSTMLayer], input_dim: int) -> WaveWeights:
    """Each layer's input weight padded with zero rows to `input_dim` (a zero input times a zero row adds
    exactly nothing) above its recurrent weight; biases with the forget bias; projections."""
    gates = torch.cat(
        [
            torch.cat([F.pad(layer.input_weight, (0, 0, 0, input_dim - layer.input_dim)), layer.state_weight], dim=1)
            for layer in layers
        ]
    )
    bias = torch.cat([with_forget_bias(layer.input_bias, layer.cell_dim) for layer in layers]).unsqueeze(1)
    projection = torch.cat([layer.projection_weight for layer in layers])
    return gates, bias, projection


def supports(stack: BiLSTMStack, directions: slice) -> bool:
    """Whether the wavefront can run this call: both directions, no dropout, one cell and projection size."""
    layers = cast(List[BiLSTMLayer], list(stack.layers))
    if directions != BOTH or not layers or (stack.dropout and stack.training):
        return False
    return all(
        (layer.cell_dim, layer.projection_dim, layer.cell_clip, layer.proj_clip)
        == (layers[0].cell_dim, layers[0].projection_dim, layers[0].cell_clip, layers[0].proj_clip)
        for layer in layers
    )


class _Step:
    """The two products of a wave step: stacked products for exact layers, each layer's own products
    otherwise (whose gates come with their bias; `bias` is then zero)."""

    def __init__(self, stack: BiLSTMStack, input_dim: int, like: torch.Tensor) -> None:
        self.layers = cast(List[BiLSTMLayer], list(stack.layers))
        self.width = input_dim
        self.weights: Optional[WaveWeights] = None
        self.packed: Dict[str, kernels.PackedWeights] = {}
        if all(type(layer) is BiLSTMLayer for layer in self.layers):
            cache = _STACKED.setdefault(stack, StackedWeights())
            self.weights = cache.get(self.layers, input_dim)
            self.packed = cache.packed
            self.bias = self.weights[1]
        else:
            self.bias = like.new_zeros(N_DIRECTIONS * len(self.layers), 1, 4 * self.layers[0].cell_dim)

    def gates(self, xh: torch.Tensor) -> torch.Tensor:
        """`[x, h]` `[2L, rows, I + P]` -> gate pre-activations `[2L, rows, 4C]`, the bias not in them
        for exact layers (wave_cell.cell_update adds it after the product: TF's order)."""
        if self.weights is not None:
            return kernels.batched_product(xh, self.weights[0], BOTH, self.packed["gates"])
        parts = []
        for k, layer in enumerate(self.layers):
            pair = xh[N_DIRECTIONS * k : N_DIRECTIONS * (k + 1)]
            x_gates = layer.input_products(pair[..., : layer.input_dim], BOTH)
            parts.append(layer.step_gates(x_gates, pair[..., self.width :], BOTH))
        return torch.cat(parts)

    def projection(self, m: torch.Tensor) -> torch.Tensor:
        if self.weights is not None:
            return kernels.batched_product(m, self.weights[2], BOTH, self.packed["projection"])
        pairs = [slice(N_DIRECTIONS * k, N_DIRECTIONS * (k + 1)) for k in range(len(self.layers))]
        return torch.cat([layer.projection_products(m[pair], BOTH) for layer, pair in zip(self.layers, pairs)])


def run(
    stack: BiLSTMStack,
    x: torch.Tensor,
    lengths: Sequence[int],
    states: List[State],
    device_lengths: Optional[torch.Tensor] = None,
    shrink: bool = True,
) -> Tuple[List[torch.Tensor], List[State]]:
    """The stack over x `[2, batch, time, input_dim]` (rows longest first where `shrink`) from `states`;
    returns what `BiLSTMStack.forward` returns. `device_lengths` (`[batch]` on x's device) steers the
    masks; without `shrink` nothing is read on the host and every wave step computes every row."""
    layers = cast(List[BiLSTMLayer], list(stack.layers))
    n_layers, (n_dir, batch, time, in_dim) = len(layers), x.shape
    cell, proj = layers[0].cell_dim, layers[0].projection_dim
    cell_clip, proj_clip = layers[0].cell_clip, layers[0].proj_clip
    width = max(layer.input_dim for layer in layers)
    step = _Step(stack, width, x)
    wave_steps = time + n_layers - 1 if time else 0
    if device_lengths is None:
        device_lengths = torch.tensor(list(lengths), dtype=torch.long, device=x.device)
    # Each direction-layer's time at the wave step: layer k is k steps behind.
    times = -(torch.arange(n_dir * n_layers, device=x.device) // n_dir).view(-1, 1, 1)
    h = torch.cat([s[0] for s in states])  # [2L, batch, P]
    c = torch.cat([s[1] for s in states])
    running = rows_running(lengths, time) if shrink else [batch] * time
    compiled = not (torch.is_grad_enabled() and any(t.requires_grad for t in (x, h, c, *stack.parameters())))
    # Layer 0's input at every wave step, zero past the sequence's end, as wide as the widest layer's,
    # time first: each step's is one contiguous block.
    x_steps = F.pad(x, (0, width - in_dim, 0, n_layers)).permute(2, 0, 1, 3).contiguous()
    xh = torch.cat([torch.cat([x_steps[0], x.new_zeros(n_dir * (n_layers - 1), batch, width)]), h], dim=-1)
    outs: List[torch.Tensor] = []
    finished: List[State] = []
    for s in range(wave_steps):
        n = running[max(s - n_layers + 1, 0)]
        if n < h.shape[1]:  # the rows from n on have ended: their states are final
            finished.append((h[:, n:], c[:, n:]))
        if n == 0:
            h, c = h[:, :0], c[:, :0]
            break
        m, c = WAVE_CELL.cell(
            step.gates(xh[:, :n]), step.bias, c, times, device_lengths, cell, cell_clip, compiled=compiled
        )
        h, out, xh, times = WAVE_CELL.output(
            step.projection(m),
            h,
            xh,
            x_steps[s + 1],
            times,
            device_lengths,
            proj_clip,
            stack.use_skip_connections,
            compiled=compiled,
        )
        outs.append(out)
    wave_out = torch.stack(outs) if outs else x.new_zeros(0, n_dir * n_layers, batch, proj)
    if wave_out.shape[0] < wave_steps:
        wave_out = F.pad(wave_out, (0, 0, 0, 0, 0, 0, 0, wave_steps - wave_out.shape[0]))
    h = torch.cat([h] + [fh for fh, _ in reversed(finished)], dim=1)
    c = torch.cat([c] + [fc for _, fc in reversed(finished)], dim=1)
    return _layer_outputs(wave_out, x, n_layers, time, stack.use_skip_connections), [
        (h[N_DIRECTIONS * k : N_DIRECTIONS * (k + 1)], c[N_DIRECTIONS * k : N_DIRECTIONS * (k + 1)])
        for k in range(n_layers)
    ]


def _layer_outputs(wave_out: torch.Tensor, x: torch.Tensor, n_layers: int, time: int, skip: bool) -> List[torch.Tensor]:
    """Layer k's outputs are wave steps k .. k + T - 1 of its direction pair, `[2, batch, T, P]`; with
    skip connections a layer above the first reports its output plus its input, as BiLSTMStack does."""
    outputs: List[torch.Tensor] = []
    for k in range(n_layers):
        raw = wave_out[k : k + time, N_DIRECTIONS * k : N_DIRECTIONS * (k + 1)].permute(1, 2, 0, 3)
        outputs.append(raw + outputs[-1] if skip and k > 0 else raw.contiguous())
    return outputs
