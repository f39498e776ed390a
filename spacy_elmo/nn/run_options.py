"""How one call of the biLM computes, passed with the call (as `stateful` is) rather than written onto
the module: a module is shared (the component's layers, threads, listeners), so a setting stored on it
would leak from one caller into another's call.

`tf32` is the opt-in to TF32 products on a GPU (precision.py). `lstm` and `host_copies` are the GPU
candidates of docs/gpu.md, each exact on the CPU through the same code: measured side by side by
`python -m benchmarks.bench_gpu DATA --variants`; the winners become the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import RunOptionsError

LSTM_MODES = ("steps", "compiled")
HOST_COPIES = ("pageable", "pinned")


@dataclass(frozen=True)
class RunOptions:
    """tf32: TF32 products on a GPU (about 1e-3 from the exact vectors).
    lstm: "steps" (the step loop of lstm.py) or "compiled" (fixed-shape compiled windows,
        compiled_lstm.py).
    host_copies: how `embed` brings layers to the host: "pageable" (`.cpu()`) or "pinned" (reused
        page-locked buffers, copied asynchronously while the next batch computes, host_copies.py)."""

    tf32: bool = False
    lstm: str = "steps"
    host_copies: str = "pageable"

    def __post_init__(self) -> None:
        if self.lstm not in LSTM_MODES:
            raise RunOptionsError(f"lstm={self.lstm!r} is not an LSTM mode; choose one of {', '.join(LSTM_MODES)}")
        if self.host_copies not in HOST_COPIES:
            raise RunOptionsError(
                f"host_copies={self.host_copies!r} is not a copy mode; choose one of {', '.join(HOST_COPIES)}"
            )


EXACT = RunOptions()
