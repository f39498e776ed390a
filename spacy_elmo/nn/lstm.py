"""ELMo's LSTM: a cell with a projection and clipping, both directions of a layer run in lockstep.

Per step, as in the original TF cell: z = x_t W_x + h_{t-1} W_h + b; the forget gate gets +1 at run
time (TF's `forget_bias`, never stored in the weights); c_t is clipped to +-cell_clip and carried
clipped; h_t = (sigmoid(o) * tanh(c_t)) W_p, no bias, clipped to +-proj_clip, is both output and state.
Gate order is TF's: input, candidate (j), forget, output.

The input products x W_x of many timesteps are computed in one multiply ahead of the recurrence, in
chunks of steps bounded by INPUT_GATES_BUDGET, laid out time-major so that each step's slice is
contiguous.

Why the layout: the weights are stored as in the TF files, `[in, out]`, with the two directions stacked
on a leading axis, so that one batched matrix multiply serves both directions at every step. At small
batches a step is bound by streaming the weights from memory; one `bmm` over `[2, in, out]` weights
streams both directions' weights on both cores at once, where two `mm` calls would stream them one
after the other (measured by benchmarks/bench_bilm.py).

Rows must come sorted by length, longest first: at each step only the rows still running are computed,
which saves the work on padding and leaves each finished row's state exactly at its last real step.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

FORGET_BIAS = 1.0
N_DIRECTIONS = 2
BOTH = slice(None)

# Floats of input-gate products computed ahead of the recurrence (128 MB): large enough for efficient
# multiplies, small enough that memory does not grow with the batch's longest sentence.
INPUT_GATES_BUDGET = 1 << 25

State = Tuple[torch.Tensor, torch.Tensor]  # h [directions, batch, projection_dim], c [directions, batch, cell_dim]


def rows_running(lengths: Sequence[int], time: int) -> List[int]:
    """For each step t, how many rows (sorted longest first) are still running."""
    return np.searchsorted(-np.asarray(lengths), -np.arange(time), side="left").tolist()


class BiLSTMLayer(nn.Module):
    """Both directions of one layer. Direction 0 reads left to right, direction 1 reads its input as
    given; the caller reverses the backward input."""

    def __init__(
        self,
        input_dim: int,
        cell_dim: int,
        projection_dim: int,
        cell_clip: Optional[float],
        proj_clip: Optional[float],
    ) -> None:
        super().__init__()
        self.input_dim = input_dim
        self.cell_dim = cell_dim
        self.projection_dim = projection_dim
        self.cell_clip = cell_clip
        self.proj_clip = proj_clip
        gates = 4 * cell_dim
        self.input_weight = nn.Parameter(torch.empty(N_DIRECTIONS, input_dim, gates))
        self.input_bias = nn.Parameter(torch.zeros(N_DIRECTIONS, gates))
        self.state_weight = nn.Parameter(torch.empty(N_DIRECTIONS, projection_dim, gates))
        self.projection_weight = nn.Parameter(torch.empty(N_DIRECTIONS, cell_dim, projection_dim))
        for weight in (self.input_weight, self.state_weight, self.projection_weight):
            bound = 1.0 / np.sqrt(weight.shape[1])
            nn.init.uniform_(weight, -bound, bound)

    def zero_state(self, batch: int, like: torch.Tensor, n_directions: int = N_DIRECTIONS) -> State:
        return (like.new_zeros(n_directions, batch, self.projection_dim),
                like.new_zeros(n_directions, batch, self.cell_dim))

    def forward(
        self, x: torch.Tensor, steps_active: Sequence[int], state: State, directions: slice = BOTH
    ) -> Tuple[torch.Tensor, State]:
        """x `[directions, batch, time, input_dim]` (rows sorted longest first); `steps_active[t]` = rows
        still running at step t. Returns outputs `[directions, batch, time, projection_dim]` (zero past
        each row's end) and the state at each row's last step (the initial state for empty rows)."""
        n_dir, batch, time, _ = x.shape
        w_x = self.input_weight[directions]
        w_h = self.state_weight[directions]
        w_p = self.projection_weight[directions]
        b_x = self.input_bias[directions].unsqueeze(1)
        h, c = state
        finished: List[State] = []
        outputs: List[torch.Tensor] = []
        chunk_start, chunk_steps, x_gates = 0, 0, x
        for t in range(time):
            n = steps_active[t]
            if n < h.shape[1]:
                finished.append((h[:, n:], c[:, n:]))
                h, c = h[:, :n], c[:, :n]
            if n == 0:
                outputs.append(x.new_zeros(n_dir, batch, self.projection_dim))
                continue
            if t == chunk_start + chunk_steps:
                x_gates = self._input_gates(x, t, n, w_x, b_x)
                chunk_start, chunk_steps = t, x_gates.shape[1]
            gates = torch.bmm(h, w_h) + x_gates[:, t - chunk_start, :n]
            i, j, f, o = gates.chunk(4, dim=-1)
            c = torch.sigmoid(f + FORGET_BIAS) * c + torch.sigmoid(i) * torch.tanh(j)
            if self.cell_clip is not None:
                c = c.clamp(-self.cell_clip, self.cell_clip)
            h = torch.bmm(torch.sigmoid(o) * torch.tanh(c), w_p)
            if self.proj_clip is not None:
                h = h.clamp(-self.proj_clip, self.proj_clip)
            outputs.append(F.pad(h, (0, 0, 0, batch - n)) if n < batch else h)
        final_h = torch.cat([h] + [fh for fh, _ in reversed(finished)], dim=1)
        final_c = torch.cat([c] + [fc for _, fc in reversed(finished)], dim=1)
        if time == 0:
            return x.new_zeros(n_dir, batch, 0, self.projection_dim), (final_h, final_c)
        return torch.stack(outputs, dim=2), (final_h, final_c)


    def _input_gates(self, x: torch.Tensor, t: int, n: int, w_x: torch.Tensor, b_x: torch.Tensor) -> torch.Tensor:
        """x W_x + b for the next steps from t of the n rows still running, `[directions, steps, n, 4C]`:
        many timesteps in one multiply, as many as fit in INPUT_GATES_BUDGET floats."""
        n_dir = x.shape[0]
        steps = max(1, min(x.shape[2] - t, INPUT_GATES_BUDGET // (n_dir * n * 4 * self.cell_dim)))
        chunk = x[:, :n, t : t + steps].transpose(1, 2).reshape(n_dir, steps * n, self.input_dim)
        return torch.baddbmm(b_x, chunk, w_x).view(n_dir, steps, n, 4 * self.cell_dim)


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
