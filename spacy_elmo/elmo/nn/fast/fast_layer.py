"""What every fast mode's LSTM layer shares (int8.py, bf16.py): it is a snapshot of an exact layer that
keeps the step loop, gates and clipping and computes only its three products its own way, so it
cannot be initialised and runs both directions together only."""

from __future__ import annotations

from typing import List, Sequence, Tuple

import torch

from ..errors import FastModeError
from ..lstm import BOTH, BiLSTMLayer, State


class FastLayer(BiLSTMLayer):
    """Subclasses set their sizes (`_set_sizes`) and products from an exact layer."""

    def reset_parameters(self) -> None:
        raise FastModeError("a fast layer is a snapshot of an exact layer; initialise the exact BiLM")

    def forward(
        self, x: torch.Tensor, steps_active: Sequence[int], state: State, directions: slice = BOTH
    ) -> Tuple[torch.Tensor, State]:
        if directions != BOTH:
            raise FastModeError(
                "a fast LSTM stack runs both directions together only; use the exact BiLSTMStack for a single direction"
            )
        return super().forward(x, steps_active, state, directions)

    @staticmethod
    def add_into(x_gates: torch.Tensor, products: List[torch.Tensor]) -> torch.Tensor:
        """A step's gates: each direction's recurrent product added in place into its input gates
        `[D, rows, 4C]`. The step loops hand a layer each step's input gates to read once, and a fast
        layer runs without autograd, so the sum needs neither a stacked copy of the products nor a new
        tensor per step, passes over memory that the CPU's profile of a step found costing as much as
        the gate arithmetic."""
        for d, product in enumerate(products):
            x_gates[d].add_(product)
        return x_gates
