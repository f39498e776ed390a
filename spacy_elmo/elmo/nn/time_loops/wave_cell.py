"""The wave step's elementwise work (wavefront.py) as two functions, each compiled into one kernel.

Between its two products a wave step has about a dozen elementwise operations (the gates' bias, three
activations, the cell, its clip, the length mask; then the projection's clip, the mask again, and the
next step's inputs), each a kernel launch of a few microseconds' work on a GPU at small batches, where
the launches, not the arithmetic, set the pace. torch.compile fuses each half into one generated kernel
(C++ on the CPU, Triton on a GPU), so a wave step is four launches: product, `cell_update`,
projection, `output_update` (benchmarks/bench_launches.py counts them on the CPU). The cell is the
step loop's own arithmetic (`lstm.cell_arithmetic`), the bias added to the product, not inside it
(TF's order, which keeps the TF fixtures at 1e-6).

Both are compiled for dynamic shapes: one model's calls settle on a few graphs each (rows equal to or
fewer than the step before's, one row), within torch's recompile limit
(`torch._dynamo.config.recompile_limit`), past which torch warns and runs a function uncompiled; a
process that runs models of several structures (layers, skip connections, clips) through the
wavefront may raise it. A call that wants gradients runs the functions eagerly (compiled, they would
compile their backward too, for calls that are not captured anyway). Where torch.compile cannot
compile them (no C++ compiler, an unsupported device) the wavefront warns once and runs them eagerly:
the same arithmetic.
"""

from __future__ import annotations

import logging
from typing import Callable, Dict, Optional, Tuple

import torch
import torch.nn.functional as F

from ..lstm import N_DIRECTIONS, cell_arithmetic
from ..torch_compat import THREADS_AT_CALL, compiler_errors

logger = logging.getLogger(__name__)


def cell_update(
    gates: torch.Tensor,
    bias: torch.Tensor,
    c: torch.Tensor,
    times: torch.Tensor,
    lengths: torch.Tensor,
    cell: int,
    cell_clip: Optional[float],
) -> Tuple[torch.Tensor, torch.Tensor]:
    """From the step's products `[2L, n, 4C]` for the first n rows (without the bias `[2L, 1, 4C]`,
    whose forget bias is in it) and the cell states of the step before (`[2L, n or more, C]`): the
    projection's input sigmoid(o) tanh(c_t) and, for the first n rows, c_t where the direction-layer is
    inside the row's steps (`inside`), c_{t-1} elsewhere."""
    rows = gates.shape[1]
    c = c[:, :rows]
    m, c_new = cell_arithmetic(gates + bias, c, cell, cell_clip)
    return m, torch.where(inside(times, lengths, rows), c_new, c)


def output_update(
    projected: torch.Tensor,
    h: torch.Tensor,
    xh: torch.Tensor,
    x_next: torch.Tensor,
    times: torch.Tensor,
    lengths: torch.Tensor,
    proj_clip: Optional[float],
    skip: bool,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """From the projection's products `[2L, n, P]` for the first n rows, the states h and the product
    input `xh` `[2L, n or more, I + P]` of the step before, and layer 0's next input `x_next`
    `[2, batch, I]`: the new h of the first n rows (kept where the direction-layer is outside the row's
    steps), the step's outputs (zero there) padded with zero rows to the batch, the next step's product
    input `[next inputs, h]`, and the next step's times. Layer k's next input is layer k-1's output,
    plus layer k-1's input where skip connections are on and k-1 > 0 (a layer's reported activation
    is its output plus its input), zero-padded to I."""
    rows, batch = projected.shape[1], x_next.shape[1]
    h_new = projected if proj_clip is None else projected.clamp(-proj_clip, proj_clip)
    ok = inside(times, lengths, rows)
    h = torch.where(ok, h_new, h[:, :rows])
    out = h_new * ok
    width, proj = x_next.shape[-1], out.shape[-1]
    upper = out[:-N_DIRECTIONS]
    if skip and upper.shape[0] > N_DIRECTIONS:
        below = xh[N_DIRECTIONS:-N_DIRECTIONS, :rows, :proj]
        upper = torch.cat([upper[:N_DIRECTIONS], upper[N_DIRECTIONS:] + below])
    x_next = x_next[:, :rows]
    inputs = torch.cat([x_next, F.pad(upper, (0, width - proj))]) if upper.shape[0] else x_next
    return h, F.pad(out, (0, 0, 0, batch - rows)), torch.cat([inputs, h], dim=-1), times + 1


def inside(times: torch.Tensor, lengths: torch.Tensor, rows: int) -> torch.Tensor:
    """`[2L, rows, 1]`: whether each direction-layer's time (`times` `[2L, 1, 1]`, layer k's k steps
    behind) lies inside each of the first rows' steps (`lengths` `[batch]`)."""
    return (times >= 0) & (times < lengths[:rows].view(1, rows, 1))


class WaveCell:
    """`cell_update` and `output_update` for the wavefront: compiled for calls that want no gradient,
    eager otherwise. `compiling` False runs them eagerly for every call: set so once compiling has
    failed in this process, or by a caller that wants the eager step (benchmarks/variants.py)."""

    def __init__(self) -> None:
        self.compiling = True
        self._compiled: Dict[Callable[..., Tuple[torch.Tensor, ...]], Callable[..., Tuple[torch.Tensor, ...]]] = {}

    def cell(self, *args: object, compiled: bool) -> Tuple[torch.Tensor, torch.Tensor]:
        return self._call(cell_update, args, compiled)  # type: ignore[return-value]

    def output(self, *args: object, compiled: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        return self._call(output_update, args, compiled)  # type: ignore[return-value]

    def _call(
        self, function: Callable[..., Tuple[torch.Tensor, ...]], args: Tuple[object, ...], compiled: bool
    ) -> Tuple[torch.Tensor, ...]:
        if compiled and self.compiling:
            try:
                if function not in self._compiled:  # at the first call: torch.compile imports its compiler
                    self._compiled[function] = torch.compile(function, dynamic=True, options=THREADS_AT_CALL)
                return self._compiled[function](*args)
            except compiler_errors() as error:
                self._give_up(error)
        return function(*args)

    def _give_up(self, error: BaseException) -> None:
        if self.compiling:
            self.compiling = False
            lines = str(error).strip().splitlines()
            logger.warning(
                "the wavefront's elementwise step could not be compiled (%s: %s); it runs uncompiled in "
                "this process (the same arithmetic, more kernel launches a step)",
                type(error).__name__,
                lines[0][:300] if lines else "",
            )


WAVE_CELL = WaveCell()
