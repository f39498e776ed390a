"""The inference candidate `lstm = "compiled"`: the LSTM's recurrence in fixed-shape windows, each window
one compiled region (torch.compile; on a GPU `mode="reduce-overhead"`, a captured CUDA graph replayed).

Why: the step loop of lstm.py launches a dozen kernels per step from Python (the products, each gate's
activation, the clips, the padding); on a GPU a batch is then bound by launching, not by arithmetic
(docs/gpu.md). Compiling needs few shapes, so the rows are padded up to a power of two (`row_bucket`),
time is cut into windows of `WINDOW` steps, and every row runs every step of a window: a row past its
end keeps its state (`torch.where` on a running mask) and writes zeros. The cell's arithmetic is
lstm.py's own (`cell`); the products are torch's plain ones, so the outputs differ from the
step loop's by float rounding only (tests/test_gpu_candidates.py). Inference only: with autograd the
step loop runs.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from .kernels import row_bucket
from .lstm import BOTH, BiLSTMLayer, BiLSTMStack, State, cell

WINDOW = 20
# Compiled shapes kept per process: (directions, rows bucket) pairs of every window function.
RECOMPILE_LIMIT = 64

WindowFn = Callable[..., Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
_compiled: Dict[str, WindowFn] = {}


def _window(
    x_gates: torch.Tensor,
    h: torch.Tensor,
    c: torch.Tensor,
    state_weight: torch.Tensor,
    projection_weight: torch.Tensor,
    running: torch.Tensor,
    cell_clip: Optional[float],
    proj_clip: Optional[float],
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`WINDOW` steps: x_gates `[D, WINDOW, rows, 4C]`, running `[WINDOW, rows, 1]` bool ->
    outputs `[D, rows, WINDOW, P]` (zero where not running) and the state after the window. Sizes and
    clips, not a layer, come in, so that layers of one size share a compiled graph."""
    outputs = []
    for t in range(x_gates.shape[1]):
        gates = torch.baddbmm(x_gates[:, t], h, state_weight)
        m, c_next = cell(gates, c, c.shape[-1], cell_clip, in_place=False)
        h_next = torch.bmm(m, projection_weight)
        if proj_clip is not None:
            h_next = h_next.clamp(-proj_clip, proj_clip)
        keep = running[t]
        h = torch.where(keep, h_next, h)
        c = torch.where(keep, c_next, c)
        outputs.append(torch.where(keep, h_next, 0.0))
    return torch.stack(outputs, dim=2), h, c


def window_function(device: torch.device) -> WindowFn:
    """The compiled window for a device type, made once per process."""
    key = device.type
    if key not in _compiled:
        mode = "reduce-overhead" if device.type == "cuda" else None
        _compiled[key] = torch.compile(_window, dynamic=False, mode=mode)
    return _compiled[key]


def run_layer(
    layer: BiLSTMLayer, x: torch.Tensor, lengths: Sequence[int], state: State, directions: slice = BOTH
) -> Tuple[torch.Tensor, State]:
    """What `BiLSTMLayer.forward` returns (x `[D, batch, time, in]`, rows in any order), by windows."""
    n_dir, batch, time, _ = x.shape
    rows = row_bucket(batch)
    steps = -(-time // WINDOW) * WINDOW
    padded = x.new_zeros(n_dir, rows, steps, x.shape[-1])
    padded[:, :batch, :time] = x
    chunk = padded.transpose(1, 2).reshape(n_dir, steps * rows, x.shape[-1])
    x_gates = layer.input_products(chunk, directions).view(n_dir, steps, rows, 4 * layer.cell_dim)
    running_host = np.arange(steps)[:, None] < np.pad(np.asarray(lengths, dtype=np.int64), (0, rows - batch))
    running = torch.from_numpy(running_host).to(x.device).unsqueeze(-1)
    h, c = (torch.cat([s, s.new_zeros(n_dir, rows - batch, s.shape[-1])], dim=1) for s in state)
    weights = (layer.state_weight[directions], layer.projection_weight[directions])
    window = window_function(x.device)
    # A captured graph's outputs live in its memory pool and are overwritten by its next replay (the
    # next window, or the next layer of the same size): each window is a new step for torch's CUDA graph
    # trees, its output copied out and its state cloned before the next replay reads them.
    output = x.new_empty(n_dir, rows, steps, layer.projection_dim)
    with torch._dynamo.config.patch(recompile_limit=RECOMPILE_LIMIT):
        for start in range(0, steps, WINDOW):
            window_gates, window_running = x_gates[:, start : start + WINDOW], running[start : start + WINDOW]
            torch.compiler.cudagraph_mark_step_begin()
            out, h, c = window(window_gates, h, c, *weights, window_running, layer.cell_clip, layer.proj_clip)
            output[:, :, start : start + WINDOW] = out
            h, c = h.clone(), c.clone()
    return output[:, :batch, :time], (h[:, :batch], c[:, :batch])


def run_stack(
    stack: BiLSTMStack,
    x: torch.Tensor,
    lengths: Sequence[int],
    states: Optional[List[State]] = None,
    directions: slice = BOTH,
) -> Tuple[List[torch.Tensor], List[State]]:
    """`BiLSTMStack.forward` with every layer run by windows; the step loop where a gradient is wanted."""
    if torch.is_grad_enabled() and any(p.requires_grad for p in stack.parameters()):
        return stack(x, lengths, states, directions)
    if states is None:
        states = stack.zero_states(x.shape[1], x, x.shape[0])
    return stack.run_layers(
        x, states, lambda layer, inputs, state: run_layer(layer, inputs, lengths, state, directions)
    )
