"""Which time loop runs a call of the LSTM stack: the step loop (lstm.py), the wavefront (wavefront.py)
or the wavefront captured as CUDA graphs (captured.py), as the call's `RunOptions.time_loop` asks (the
biLM layer's `time_loop`, `dump --time-loop`).

"auto" is the device's default, the loop measured fastest there (docs/results.md): on the CPU the
step loop; on a GPU the step loop until the candidates are measured side by side there
(`benchmarks.bench_gpu --variants`). A call the wavefront cannot run (one direction, dropout while
training) runs the step loop whatever was asked.
"""

from __future__ import annotations

from functools import partial
from typing import List, Optional, Sequence, Tuple

import torch

from ..lstm import BiLSTMStack, StackLoop, State
from ..run_options import AUTO, STEP, WAVEFRONT
from . import captured, wavefront

DEFAULTS = {"cpu": STEP, "cuda": STEP}


def resolve(time_loop: str, device: torch.device) -> str:
    """The loop `time_loop` names on `device` ("auto": the device's default)."""
    return DEFAULTS.get(device.type, STEP) if time_loop == AUTO else time_loop


def stack_loop(time_loop: str, device: torch.device) -> Optional[StackLoop]:
    """The function that runs the stack for `run_directions`, None for the step loop (the stack's own)."""
    name = resolve(time_loop, device)
    return None if name == STEP else partial(_run, name)


def _run(
    name: str,
    stack: BiLSTMStack,
    x: torch.Tensor,
    lengths: Sequence[int],
    states: Optional[List[State]],
    directions: slice,
) -> Tuple[List[torch.Tensor], List[State]]:
    if not wavefront.supports(stack, directions):
        return stack(x, lengths, states, directions)
    if states is None:
        states = stack.zero_states(x.shape[1], x, x.shape[0])
    loop = wavefront.run if name == WAVEFRONT else captured.run
    return loop(stack, x, lengths, states)
