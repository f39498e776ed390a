"""ELMo's LSTM: a cell with a projection and clipping, stacked per direction.

Per step, as in the original TF cell: z = W_x x_t + W_h h_{t-1} + b; the forget gate gets +1 at run
time (TF's `forget_bias`, never stored in the weights); c_t is clipped to +-cell_clip and carried
clipped; h_t = P (sigmoid(o) * tanh(c_t)), no bias, clipped to +-proj_clip, is both output and state.
Gate order in the weights is TF's: input, candidate (j), forget, output.

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

State = Tuple[torch.Tensor, torch.Tensor]  # h [batch, projection_dim], c [batch, cell_dim]


class ProjectedLSTMLayer(nn.Module):
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
        self.input_linear = nn.Linear(input_dim, 4 * cell_dim)
        self.state_linear = nn.Linear(projection_dim, 4 * cell_dim, bias=False)
        self.projection = nn.Linear(cell_dim, projection_dim, bias=False)

    def zero_state(self, batch: int, like: torch.Tensor) -> State:
        return (like.new_zeros(batch, self.projection_dim), like.new_zeros(batch, self.cell_dim))

    def forward(self, x: torch.Tensor, steps_active: Sequence[int], state: State) -> Tuple[torch.Tensor, State]:
        """x `[batch, time, input_dim]` (rows sorted longest first); `steps_active[t]` = rows still
        running at step t. Returns outputs `[batch, time, projection_dim]` (zero past each row's end)
        and the state at each row's last step (the initial state for empty rows)."""
        batch, time, _ = x.shape
        # All timesteps' input products in one matrix multiply, laid out time-major so that each
        # step's slice is contiguous; only W_h h stays in the loop.
        x_gates = self.input_linear(x.transpose(0, 1))
        h, c = state
        w_h = self.state_linear.weight.t()
        finished: List[State] = []
        outputs: List[torch.Tensor] = []
        for t in range(time):
            n = steps_active[t]
            if n < h.shape[0]:
                finished.append((h[n:], c[n:]))
                h, c = h[:n], c[:n]
            if n == 0:
                outputs.append(x.new_zeros(batch, self.projection_dim))
                continue
            gates = torch.addmm(x_gates[t, :n], h, w_h)
            i, j, f, o = gates.chunk(4, dim=1)
            c = torch.sigmoid(f + FORGET_BIAS) * c + torch.sigmoid(i) * torch.tanh(j)
            if self.cell_clip is not None:
                c = c.clamp(-self.cell_clip, self.cell_clip)
            h = self.projection(torch.sigmoid(o) * torch.tanh(c))
            if self.proj_clip is not None:
                h = h.clamp(-self.proj_clip, self.proj_clip)
            outputs.append(F.pad(h, (0, 0, 0, batch - n)) if n < batch else h)
        final_h = torch.cat([h] + [fh for fh, _ in reversed(finished)], dim=0)
        final_c = torch.cat([c] + [fc for _, fc in reversed(finished)], dim=0)
        if time == 0:
            return x.new_zeros(batch, 0, self.projection_dim), (final_h, final_c)
        return torch.stack(outputs, dim=1), (final_h, final_c)


class LSTMStack(nn.Module):
    """One direction's layers. A layer's reported activation (and the next layer's input) is its
    output plus its input for layers above the first when skip connections are on; the recurrent
    state is the output before that residual."""

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
            ProjectedLSTMLayer(input_dim if i == 0 else projection_dim, cell_dim, projection_dim,
                               cell_clip, proj_clip)
            for i in range(n_layers)
        )
        self.use_skip_connections = use_skip_connections
        self.dropout = dropout

    def zero_states(self, batch: int, like: torch.Tensor) -> List[State]:
        return [layer.zero_state(batch, like) for layer in self.layers]

    def forward(
        self, x: torch.Tensor, lengths: Sequence[int], states: Optional[List[State]] = None
    ) -> Tuple[List[torch.Tensor], List[State]]:
        """x `[batch, time, input_dim]`, `lengths` sorted descending. Returns each layer's activations
        `[batch, time, projection_dim]` and each layer's final state."""
        time = x.shape[1]
        # steps_active[t]: how many rows (sorted longest first) are still running at step t.
        steps_active = np.searchsorted(-np.asarray(lengths), -np.arange(time), side="left").tolist()
        if states is None:
            states = self.zero_states(x.shape[0], x)
        outputs: List[torch.Tensor] = []
        finals: List[State] = []
        for i, layer in enumerate(self.layers):
            if self.dropout and self.training:
                x = F.dropout(x, self.dropout, training=True)
            out, final = layer(x, steps_active, states[i])
            if self.use_skip_connections and i > 0:
                out = out + x
            outputs.append(out)
            finals.append(final)
            x = out
        return outputs, finals
