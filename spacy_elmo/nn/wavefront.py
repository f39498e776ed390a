"""The wavefront time loop: every layer and both directions of a `BiLSTMStack` advance together.

The step loop (lstm.py) runs one layer over the whole sequence, then the next: per time step and
layer a recurrent product, the cell's elementwise update and a projection, each small. Here layer k
runs k steps behind the first, so at wave step s layer k computes time s - k from layer k-1's output
of the step before, and each wave step is (Appleyard et al. 2016, what cuDNN does):
- one batched product over all 2L direction-layers: `[x_t, h_{t-1}] [W_x; W_h]`, then `+ b`, the weights
  stacked once into `[2L, I + P, 4C]` (a layer's input products can no longer be taken ahead of the
  loop: its input is made one step before);
- one elementwise update of all of them (gates, cell clip, and the length mask: a direction-layer
  outside its row's steps keeps its state and outputs zero);
- one batched projection `[2L, C, P]` with its clip.
L + T - 1 wave steps instead of L T steps, each launching about as many kernels as one step of one
layer. The cell's arithmetic is the step loop's, the sums in another order (float rounding: within
1e-5 of it, the TF fixtures hold as before). A layer whose products are its own (the int8 layers of
int8.py) multiplies per layer through its `input_products`, `step_gates` and `projection_products`.

Two ways to run: `shrink` (host-side lengths: the rows still running shrink as in the step loop) and
fixed rows and steps, reading lengths only from a device tensor, which is what a CUDA graph captures
(captured.py). Both directions only, and without dropout (pretraining keeps the step loop).
"""

from __future__ import annotations

import weakref
from typing import Dict, List, Optional, Sequence, Tuple, cast

import torch
import torch.nn.functional as F

from . import kernels
from .lstm import BOTH, N_DIRECTIONS, BiLSTMLayer, BiLSTMStack, State, rows_running, with_forget_bias

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


def valid_steps(lengths: torch.Tensor, n_layers: int, wave_steps: int) -> torch.Tensor:
    """`[wave steps, 2L, rows, 1]` bool: whether direction-layer j (layer j // 2) is inside row r's
    steps at wave step s, i.e. 0 <= s - j // 2 < lengths[r]. Made once per call, on the device."""
    layer_of = torch.arange(N_DIRECTIONS * n_layers, device=lengths.device) // N_DIRECTIONS
    times = torch.arange(wave_steps, device=lengths.device).unsqueeze(1) - layer_of  # [S, 2L]
    return ((times.unsqueeze(-1) >= 0) & (times.unsqueeze(-1) < lengths)).unsqueeze(-1)


class _Step:
    """The three per-step computations of one stack: stacked products for exact layers, each layer's own
    products otherwise."""

    def __init__(self, stack: BiLSTMStack, input_dim: int) -> None:
        self.layers = cast(List[BiLSTMLayer], list(stack.layers))
        self.exact = all(type(layer) is BiLSTMLayer for layer in self.layers)
        self.weights: Optional[WaveWeights] = None
        self.packed: Dict[str, kernels.PackedWeights] = {}
        if self.exact:
            cache = _STACKED.setdefault(stack, StackedWeights())
            self.weights = cache.get(self.layers, input_dim)
            self.packed = cache.packed

    def gates(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """x `[2L, rows, I]`, h `[2L, rows, P]` -> gate pre-activations `[2L, rows, 4C]`, forget bias in."""
        if self.weights is not None:
            # The product, then the bias: TF's cell adds them in this order, which keeps the TF fixtures
            # at 1e-6 (the bias inside the product's accumulator measured 1.2e-6 on one of them).
            stacked, bias, _ = self.weights
            return kernels.batched_product(torch.cat([x, h], dim=-1), stacked, BOTH, self.packed["gates"]) + bias
        parts = []
        for k, layer in enumerate(self.layers):
            pair = slice(N_DIRECTIONS * k, N_DIRECTIONS * (k + 1))
            x_gates = layer.input_products(x[pair, :, : layer.input_dim], BOTH)
            parts.append(layer.step_gates(x_gates, h[pair], BOTH))
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
    width = max(layer.input_dim for layer in layers)
    step = _Step(stack, width)
    wave_steps = time + n_layers - 1 if time else 0
    if device_lengths is None:
        device_lengths = torch.tensor(list(lengths), dtype=torch.long, device=x.device)
    valid = valid_steps(device_lengths, n_layers, wave_steps)
    h = torch.cat([s[0] for s in states])  # [2L, batch, P]
    c = torch.cat([s[1] for s in states])
    running = rows_running(lengths, time) if shrink else [batch] * time
    wants_grad = any(t.requires_grad for t in (x, h, c, *stack.parameters()))
    in_place = x.device.type == "cpu" and not (torch.is_grad_enabled() and wants_grad)
    wave_out = x.new_zeros(wave_steps, n_dir * n_layers, batch, proj) if in_place else None
    outs: List[torch.Tensor] = []
    finished: List[State] = []
    inputs = x.new_zeros(n_dir * n_layers, batch, width)
    out = x.new_zeros(n_dir * n_layers, batch, proj)
    x_padded = F.pad(x, (0, width - in_dim)) if width > in_dim else x
    for s in range(wave_steps):
        n = running[max(s - n_layers + 1, 0)]
        if n < h.shape[1]:
            finished.append((h[:, n:], c[:, n:]))
            h, c, out, inputs = h[:, :n], c[:, :n], out[:, :n], inputs[:, :n]
        if n == 0:
            break
        inputs = _next_inputs(x_padded, s, n, out, inputs, stack.use_skip_connections, proj)
        ok = valid[s, :, :n]
        gates = step.gates(inputs, h)
        m, c_new = _cell(gates, c, cell, layers[0].cell_clip, in_place)
        h_new = step.projection(m)
        if layers[0].proj_clip is not None:
            h_new = (
                h_new.clamp_(-layers[0].proj_clip, layers[0].proj_clip)
                if in_place
                else h_new.clamp(-layers[0].proj_clip, layers[0].proj_clip)
            )
        c = torch.where(ok, c_new, c)
        h = torch.where(ok, h_new, h)
        out = h_new * ok
        if wave_out is not None:
            wave_out[s, :, :n] = out
        else:
            outs.append(F.pad(out, (0, 0, 0, batch - n)) if n < batch else out)
    if wave_out is None:
        wave_out = torch.stack(outs) if outs else x.new_zeros(0, n_dir * n_layers, batch, proj)
        if wave_out.shape[0] < wave_steps:
            wave_out = F.pad(wave_out, (0, 0, 0, 0, 0, 0, 0, wave_steps - wave_out.shape[0]))
    h = torch.cat([h] + [fh for fh, _ in reversed(finished)], dim=1)
    c = torch.cat([c] + [fc for _, fc in reversed(finished)], dim=1)
    return _layer_outputs(wave_out, x, n_layers, time, stack.use_skip_connections), [
        (h[N_DIRECTIONS * k : N_DIRECTIONS * (k + 1)], c[N_DIRECTIONS * k : N_DIRECTIONS * (k + 1)])
        for k in range(n_layers)
    ]


def _next_inputs(
    x: torch.Tensor, s: int, n: int, out: torch.Tensor, inputs: torch.Tensor, skip: bool, proj: int
) -> torch.Tensor:
    """Each direction-layer's input at wave step s `[2L, n, I]`: layer 0's is x at time s (zero past
    the end), layer k's is layer k-1's output of the step before, plus layer k-1's input where skip
    connections are on and k-1 > 0 (a layer's reported activation is its output plus its input)."""
    first = x[:, :n, s] if s < x.shape[2] else x.new_zeros(N_DIRECTIONS, n, x.shape[-1])
    if out.shape[0] == N_DIRECTIONS:  # one layer
        return first
    upper = out[:-N_DIRECTIONS]
    if skip and upper.shape[0] > N_DIRECTIONS:
        upper = torch.cat([upper[:N_DIRECTIONS], upper[N_DIRECTIONS:] + inputs[N_DIRECTIONS:-N_DIRECTIONS, :, :proj]])
    if upper.shape[-1] < x.shape[-1]:
        upper = F.pad(upper, (0, x.shape[-1] - upper.shape[-1]))
    return torch.cat([first, upper])


def _cell(
    gates: torch.Tensor, c: torch.Tensor, cell: int, cell_clip: Optional[float], in_place: bool
) -> Tuple[torch.Tensor, torch.Tensor]:
    """The step loop's cell arithmetic (BiLSTMLayer._cell) over all direction-layers at once."""
    if in_place:
        forget_output = gates[..., 2 * cell :].sigmoid_()
        input_gate = gates[..., :cell].sigmoid_()
        candidate = gates[..., cell : 2 * cell].tanh_()
        c_new = torch.addcmul(forget_output[..., :cell] * c, input_gate, candidate)
        if cell_clip is not None:
            c_new.clamp_(-cell_clip, cell_clip)
        return forget_output[..., cell:].mul_(torch.tanh(c_new)), c_new
    forget_output = torch.sigmoid(gates[..., 2 * cell :])
    c_new = torch.addcmul(
        forget_output[..., :cell] * c, torch.sigmoid(gates[..., :cell]), torch.tanh(gates[..., cell : 2 * cell])
    )
    if cell_clip is not None:
        c_new = c_new.clamp(-cell_clip, cell_clip)
    return forget_output[..., cell:] * torch.tanh(c_new), c_new


def _layer_outputs(wave_out: torch.Tensor, x: torch.Tensor, n_layers: int, time: int, skip: bool) -> List[torch.Tensor]:
    """Layer k's outputs are wave steps k .. k + T - 1 of its direction pair, `[2, batch, T, P]`; with
    skip connections a layer above the first reports its output plus its input, as BiLSTMStack does."""
    outputs: List[torch.Tensor] = []
    for k in range(n_layers):
        raw = wave_out[k : k + time, N_DIRECTIONS * k : N_DIRECTIONS * (k + 1)].permute(1, 2, 0, 3)
        outputs.append(raw + outputs[-1] if skip and k > 0 else raw.contiguous())
    return outputs
