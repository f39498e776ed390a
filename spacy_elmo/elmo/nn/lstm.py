"""ELMo's LSTM: a cell with a projection and clipping, both directions of a layer run in lockstep.

Per step, as in the original TF cell: z = x_t W_x + h_{t-1} W_h + b; the forget gate gets +1 at run
time (TF's `forget_bias`, never stored in the weights); c_t is clipped to +-cell_clip and carried
clipped; h_t = (sigmoid(o) * tanh(c_t)) W_p, no bias, clipped to +-proj_clip, is both output and state.
Gate order is TF's: input, candidate (j), forget, output.

Why the step is written as it is: its elementwise arithmetic is bound by passes over memory, and at
inference torch's profiler found it costing over half as much as the products. So the +1 rides in the
bias of the input products (added once per chunk, not once per step), the input gates are added to
h W_h inside the product (`baddbmm`), and the forget and output gates, adjacent in TF's order, go
through one sigmoid: fewer passes, the same arithmetic. The sums differ from TF's order of addition by
float rounding only. On the CPU without autograd the same step runs in place (the activations overwrite the
fresh gates tensor, h is written into one preallocated output instead of padded and stacked): the same
operations, bit for bit. The products go through elmo/nn/kernels.py, which on the CPU picks MKL or oneDNN per shape.

The input products x W_x of many timesteps are computed in one multiply ahead of the recurrence, in
chunks of steps bounded by `input_gates_budget` but of at least `MIN_INPUT_ROWS` rows
(`input_chunk_steps`), laid out time-major so that each step's slice is contiguous.

Why the layout: the weights are stored as in the TF files, `[in, out]`, with the two directions stacked
on a leading axis, so that one batched matrix multiply serves both directions at every step. At small
batches a step is bound by streaming the weights from memory; one `bmm` over `[2, in, out]` weights
streams both directions' weights on both cores at once, where two `mm` calls would stream them one
after the other (measured by benchmarks/bench_bilm.py).

Rows must come sorted by length, longest first: at each step only the rows still running are computed,
which saves the work on padding and leaves each finished row's state exactly at its last real step.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import kernels

FORGET_BIAS = 1.0
N_DIRECTIONS = 2
BOTH = slice(None)

# Floats of input-gate products computed ahead of the recurrence (see `input_gates_budget`).
CPU_INPUT_GATES_BUDGET = 1 << 20
ACCELERATOR_INPUT_GATES_BUDGET = 1 << 25
# Rows of one input-product multiply at the least, whatever the budget (see `input_chunk_steps`).
MIN_INPUT_ROWS = 256

State = Tuple[torch.Tensor, torch.Tensor]  # h [directions, batch, projection_dim], c [directions, batch, cell_dim]
# Runs a stack as `BiLSTMStack.forward` does: (stack, x, lengths, states, directions) -> (outputs, finals).
StackLoop = Callable[
    ["BiLSTMStack", torch.Tensor, Sequence[int], Optional[List[State]], slice], Tuple[List[torch.Tensor], List[State]]
]


def rows_running(lengths: Sequence[int], time: int) -> List[int]:
    """For each step t, how many rows (sorted longest first) are still running. Plain Python, so that
    torch.compile reads it as constants instead of tracing NumPy (elmo/pretrain/step_modes.py)."""
    running, n = [], len(lengths)
    for t in range(time):
        while n and lengths[n - 1] <= t:
            n -= 1
        running.append(n)
    return running


class BiLSTMLayer(nn.Module):
    """Both directions of one layer. Direction 0 reads left to right, direction 1 reads its input as
    given; the caller reverses the backward input.

    The step loop (`forward`) is the one place where the cell's arithmetic, the clipping and the
    padding are written; it reaches the weights only through three products, `input_products`,
    `step_gates` and `projection_products`, which a subclass may compute differently (the fast layers
    of elmo/nn/fast/int8.py do)."""

    def __init__(
        self,
        input_dim: int,
        cell_dim: int,
        projection_dim: int,
        cell_clip: Optional[float],
        proj_clip: Optional[float],
    ) -> None:
        super().__init__()
        self._set_sizes(input_dim, cell_dim, projection_dim, cell_clip, proj_clip)
        gates = 4 * cell_dim
        self.input_weight = nn.Parameter(torch.empty(N_DIRECTIONS, input_dim, gates))
        self.input_bias = nn.Parameter(torch.zeros(N_DIRECTIONS, gates))
        self.state_weight = nn.Parameter(torch.empty(N_DIRECTIONS, projection_dim, gates))
        self.projection_weight = nn.Parameter(torch.empty(N_DIRECTIONS, cell_dim, projection_dim))
        self._packed = {name: kernels.PackedWeights() for name in ("input", "state", "projection")}
        self.reset_parameters()

    def _set_sizes(
        self, input_dim: int, cell_dim: int, projection_dim: int, cell_clip: Optional[float], proj_clip: Optional[float]
    ) -> None:
        self.input_dim = input_dim
        self.cell_dim = cell_dim
        self.projection_dim = projection_dim
        self.cell_clip = cell_clip
        self.proj_clip = proj_clip

    def reset_parameters(self) -> None:
        """TF's LSTMCell initialisation, as bilm-tf trained with: glorot uniform over the cell's
        `[input + projection, 4 * cell]` kernel, the projection glorot over `[cell, projection]`, zero
        bias (the forget bias of 1 is added at run time)."""
        with torch.no_grad():
            kernel = glorot_bound(self.input_dim + self.projection_dim, 4 * self.cell_dim)
            nn.init.uniform_(self.input_weight, -kernel, kernel)
            nn.init.uniform_(self.state_weight, -kernel, kernel)
            projection = glorot_bound(self.cell_dim, self.projection_dim)
            nn.init.uniform_(self.projection_weight, -projection, projection)
            nn.init.zeros_(self.input_bias)

    def zero_state(self, batch: int, like: torch.Tensor, n_directions: int = N_DIRECTIONS) -> State:
        return (
            like.new_zeros(n_directions, batch, self.projection_dim),
            like.new_zeros(n_directions, batch, self.cell_dim),
        )

    def input_products(self, x: torch.Tensor, directions: slice) -> torch.Tensor:
        """x `[directions, rows, input_dim]` -> x W_x + b + the forget bias `[directions, rows, 4C]`."""
        bias = with_forget_bias(self.input_bias[directions], self.cell_dim)
        return kernels.batched_product(x, self.input_weight, directions, self._packed["input"], bias=bias)

    def step_gates(self, x_gates: torch.Tensor, h: torch.Tensor, directions: slice) -> torch.Tensor:
        """A step's gate pre-activations `[directions, rows, 4C]`: its input gates plus h W_h (h
        `[directions, rows, P]`), the sum inside the product."""
        return kernels.batched_product(h, self.state_weight, directions, self._packed["state"], add=x_gates)

    def projection_products(self, m: torch.Tensor, directions: slice) -> torch.Tensor:
        """m `[directions, rows, C]` -> m W_p `[directions, rows, P]`."""
        return kernels.batched_product(m, self.projection_weight, directions, self._packed["projection"])

    def _wants_grad(self, x: torch.Tensor, state: State) -> bool:
        if not torch.is_grad_enabled():
            return False
        return any(t.requires_grad for t in (x, *state)) or any(p.requires_grad for p in self.parameters())

    def _cell(self, gates: torch.Tensor, c: torch.Tensor, in_place: bool) -> Tuple[torch.Tensor, torch.Tensor]:
        """From a step's gate pre-activations (the forget bias in them already) and c_{t-1}: the
        projection's input sigmoid(o) * tanh(c_t) and the clipped c_t. The forget and output gates,
        adjacent in TF's order, go through one sigmoid. In place (no gradient wanted) the activations
        overwrite the fresh gates tensor and c_t is built in the forget gate's slot: the same
        operations in the same order, bit for bit, without a new tensor per operation."""
        cell = self.cell_dim
        if in_place:
            forget_output = gates[..., 2 * cell :].sigmoid_()
            input_gate = gates[..., :cell].sigmoid_()
            candidate = gates[..., cell : 2 * cell].tanh_()
            c = forget_output[..., :cell].mul_(c).addcmul_(input_gate, candidate)
            if self.cell_clip is not None:
                c.clamp_(-self.cell_clip, self.cell_clip)
            return forget_output[..., cell:].mul_(torch.tanh(c)), c
        return cell_arithmetic(gates, c, cell, self.cell_clip)

    def forward(
        self, x: torch.Tensor, steps_active: Sequence[int], state: State, directions: slice = BOTH
    ) -> Tuple[torch.Tensor, State]:
        """x `[directions, batch, time, input_dim]` (rows sorted longest first); `steps_active[t]` = rows
        still running at step t. Returns outputs `[directions, batch, time, projection_dim]` (zero past
        each row's end) and the state at each row's last step (the initial state for empty rows)."""
        n_dir, batch, time, _ = x.shape
        h, c = state
        # On the CPU without autograd the step runs in place and writes into one preallocated output;
        # with autograd (which keeps every step's tensors), and on accelerators (whose path stays the one
        # docs/gpu.md measured), every step makes new tensors, stacked at the end.
        in_place = x.device.type == "cpu" and not self._wants_grad(x, state)
        output = x.new_zeros(n_dir, batch, time, self.projection_dim) if in_place else None
        finished: List[State] = []
        outputs: List[torch.Tensor] = []
        chunk_start, chunk_steps, x_gates = 0, 0, x
        for t in range(time):
            n = steps_active[t]
            if n < h.shape[1]:
                finished.append((h[:, n:], c[:, n:]))
                h, c = h[:, :n], c[:, :n]
            if n == 0:
                if output is None:
                    outputs.append(x.new_zeros(n_dir, batch, self.projection_dim))
                continue
            if t == chunk_start + chunk_steps:
                x_gates = self._input_gates(x, t, n, directions)
                chunk_start, chunk_steps = t, x_gates.shape[1]
            gates = self.step_gates(x_gates[:, t - chunk_start, :n], h, directions)
            m, c = self._cell(gates, c, in_place)
            h = self.projection_products(m, directions)
            if self.proj_clip is not None:
                h = h.clamp_(-self.proj_clip, self.proj_clip) if in_place else h.clamp(-self.proj_clip, self.proj_clip)
            if output is not None:
                output[:, :n, t] = h
            else:
                outputs.append(F.pad(h, (0, 0, 0, batch - n)) if n < batch else h)
        final_h = torch.cat([h] + [fh for fh, _ in reversed(finished)], dim=1)
        final_c = torch.cat([c] + [fc for _, fc in reversed(finished)], dim=1)
        if output is not None:
            return output, (final_h, final_c)
        if time == 0:
            return x.new_zeros(n_dir, batch, 0, self.projection_dim), (final_h, final_c)
        return torch.stack(outputs, dim=2), (final_h, final_c)

    def _input_gates(self, x: torch.Tensor, t: int, n: int, directions: slice) -> torch.Tensor:
        """x W_x + b for the next steps from t of the n rows still running, `[directions, steps, n, 4C]`:
        many timesteps in one multiply (`input_chunk_steps`)."""
        n_dir = x.shape[0]
        steps = min(x.shape[2] - t, input_chunk_steps(input_gates_budget(x.device), n_dir, n, 4 * self.cell_dim))
        chunk = x[:, :n, t : t + steps].transpose(1, 2).reshape(n_dir, steps * n, x.shape[-1])
        return self.input_products(chunk, directions).view(n_dir, steps, n, 4 * self.cell_dim)


def cell_arithmetic(
    gates: torch.Tensor, c: torch.Tensor, cell: int, cell_clip: Optional[float]
) -> Tuple[torch.Tensor, torch.Tensor]:
    """The cell out of place, from gate pre-activations in TF's order (input, candidate, forget, output;
    the forget bias in them) and c_{t-1}: sigmoid(o) * tanh(c_t) and c_t, clipped. The forget and
    output gates, adjacent, go through one sigmoid. Shared by the step loop (`BiLSTMLayer._cell`) and
    the wavefront's compiled step (wave_cell.py), so both compute the same operations in one order."""
    forget_output = torch.sigmoid(gates[..., 2 * cell :])
    c = torch.addcmul(
        forget_output[..., :cell] * c, torch.sigmoid(gates[..., :cell]), torch.tanh(gates[..., cell : 2 * cell])
    )
    if cell_clip is not None:
        c = c.clamp(-cell_clip, cell_clip)
    return forget_output[..., cell:] * torch.tanh(c), c


def input_chunk_steps(budget: int, n_directions: int, rows: int, gates: int) -> int:
    """Steps of input products one multiply computes for `rows` running rows: as many as fit in
    `budget` floats, but at least enough for `MIN_INPUT_ROWS` rows. The budget keeps a chunk in cache
    for the recurrence; where the cell is large and the rows few, it would allow a single step, and a
    multiply of few rows streams the whole input weight for little work, running far under the rate
    of a taller one (benchmarks/bench_roofline.py)."""
    return max(1, budget // (n_directions * rows * gates), -(-MIN_INPUT_ROWS // rows))


def input_gates_budget(device: torch.device) -> int:
    """On an accelerator 128 MB: few, large multiplies, and memory that does not grow with the batch's
    longest sentence. On a CPU 4 MB, so that a chunk is still in cache when the recurrence reads it
    (docs/results.md, measured by benchmarks/bench_input_gates.py)."""
    return CPU_INPUT_GATES_BUDGET if device.type == "cpu" else ACCELERATOR_INPUT_GATES_BUDGET


def with_forget_bias(bias: torch.Tensor, cell_dim: int) -> torch.Tensor:
    """The gates' bias `[..., 4C]` with TF's forget bias added to the forget gate's quarter."""
    offset = torch.zeros(4 * cell_dim, dtype=bias.dtype, device=bias.device)
    offset[2 * cell_dim : 3 * cell_dim] = FORGET_BIAS
    return bias + offset


def glorot_bound(fan_in: int, fan_out: int) -> float:
    """TF's default (glorot uniform) limit: U(-b, b) keeps the activations' variance through a layer."""
    return float(np.sqrt(6.0 / (fan_in + fan_out)))


class BiLSTMStack(nn.Module):
    """All layers of both directions. A layer's reported activation (and the next layer's input) is its
    output plus its input for layers above the first when skip connections are on; the recurrent state
    is the output before that residual. The directions never mix between layers."""

    def __init__(
        self,
        n_layers: int,
        input_dim: int,
        cell_dim: int,
        projection_dim: int,
        cell_clip: Optional[float],
        proj_clip: Optional[float],
        use_skip_connections: bool,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            BiLSTMLayer(input_dim if i == 0 else projection_dim, cell_dim, projection_dim, cell_clip, proj_clip)
            for i in range(n_layers)
        )
        self.use_skip_connections = use_skip_connections
        self.dropout = dropout

    @classmethod
    def of_layers(
        cls, layers: Sequence[BiLSTMLayer], use_skip_connections: bool, dropout: float = 0.0
    ) -> "BiLSTMStack":
        """A stack of given layers (e.g. the int8 copies of an exact stack's layers)."""
        stack = cls.__new__(cls)
        nn.Module.__init__(stack)
        stack.layers = nn.ModuleList(layers)
        stack.use_skip_connections = use_skip_connections
        stack.dropout = dropout
        return stack

    def zero_states(self, batch: int, like: torch.Tensor, n_directions: int = N_DIRECTIONS) -> List[State]:
        return [layer.zero_state(batch, like, n_directions) for layer in self.layers]

    def forward(
        self,
        x: torch.Tensor,
        lengths: Sequence[int],
        states: Optional[List[State]] = None,
        directions: slice = BOTH,
    ) -> Tuple[List[torch.Tensor], List[State]]:
        """x `[directions, batch, time, input_dim]`, `lengths` sorted descending (shared by the
        directions). `directions` picks the weights: both (default) or one, e.g. `slice(1, 2)`.
        Returns each layer's activations `[directions, batch, time, projection_dim]` and final states."""
        steps_active = rows_running(lengths, x.shape[2])
        if states is None:
            states = self.zero_states(x.shape[1], x, x.shape[0])
        outputs: List[torch.Tensor] = []
        finals: List[State] = []
        for i, layer in enumerate(self.layers):
            if self.dropout and self.training:
                x = F.dropout(x, self.dropout, training=True)
            out, final = layer(x, steps_active, states[i], directions)
            if self.use_skip_connections and i > 0:
                out = out + x
            outputs.append(out)
            finals.append(final)
            x = out
        return outputs, finals


def run_directions(
    lstm: BiLSTMStack,
    x: Tuple[torch.Tensor, torch.Tensor],
    lengths: Tuple[np.ndarray, np.ndarray],
    states: Optional[List[State]] = None,
    loop: Optional[StackLoop] = None,
) -> Tuple[List[Tuple[torch.Tensor, torch.Tensor]], List[State]]:
    """Both directions over their inputs `[batch, time, in]` (the backward one already reversed within
    each row), rows in any order, with host-side row lengths. Returns per layer the (forward, backward)
    activations `[batch, time, P]` and the final states (per layer `[2, batch, dim]`), in the rows'
    order. The one way the biLM and pretraining run the LSTMs; `loop` runs the sorted stack (default:
    its own step loop; time_loops/dispatch.py).

    Where the two directions' rows have the same lengths (always at inference, nearly always in
    pretraining) they run in lockstep, one product for both; otherwise each direction runs on its own
    length order."""
    device = x[0].device
    run_stack: StackLoop = loop or (lambda stack, *args: stack(*args))
    if np.array_equal(lengths[0], lengths[1]):
        groups = [(BOTH, torch.stack(x), lengths[0])]
    else:
        groups = [(slice(d, d + 1), x[d].unsqueeze(0), lengths[d]) for d in range(N_DIRECTIONS)]
    per_group = []
    for directions, inputs, group_lengths in groups:
        host_order = np.argsort(-np.asarray(group_lengths, dtype=np.int64), kind="stable")
        sorted_lengths = np.asarray(group_lengths)[host_order].tolist()
        initial = None if states is None else [(h[directions], c[directions]) for h, c in states]
        if np.array_equal(host_order, np.arange(len(host_order))):  # already longest first: no copies
            per_group.append(run_stack(lstm, inputs, sorted_lengths, initial, directions))
            continue
        order = torch.from_numpy(host_order).to(device)
        unsort = torch.from_numpy(np.argsort(host_order, kind="stable")).to(device)
        initial = None if initial is None else [(h[:, order], c[:, order]) for h, c in initial]
        outputs, finals = run_stack(lstm, inputs[:, order], sorted_lengths, initial, directions)
        per_group.append(([out[:, unsort] for out in outputs], [(h[:, unsort], c[:, unsort]) for h, c in finals]))
    if len(per_group) == 1:  # lockstep: no copy to join the directions
        outputs, finals = per_group[0]
    else:
        outputs = [torch.cat(parts) for parts in zip(*(outs for outs, _ in per_group))]
        finals = [
            (torch.cat([f[0] for f in parts]), torch.cat([f[1] for f in parts]))
            for parts in zip(*(fins for _, fins in per_group))
        ]
    return [(out[0], out[1]) for out in outputs], finals
