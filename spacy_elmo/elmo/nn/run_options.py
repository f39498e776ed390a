"""How one call of the biLM computes, passed with the call (as `stateful` is) rather than written onto
the module: a module is shared (the component's layers, threads, listeners), so a setting stored on it
would leak from one caller into another's call.

`tf32` is the opt-in to TF32 products on a GPU (precision.py); `time_loop` picks how the LSTM stack
steps through time (time_loops/dispatch.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError

AUTO, STEP, WAVEFRONT, CAPTURED = "auto", "step", "wavefront", "captured"
TIME_LOOPS = (AUTO, STEP, WAVEFRONT, CAPTURED)


@dataclass(frozen=True)
class RunOptions:
    """tf32: TF32 products on a GPU (about 1e-3 from the exact vectors). time_loop: "step" (one layer
    after the other), "wavefront" (all layers and directions in each step's products), "captured" (the
    wavefront as a CUDA graph per batch shape on a GPU; on the CPU the same buckets run without one), or
    "auto" (the device's default); the wavefront and captured loops are experimental until measured."""

    tf32: bool = False
    time_loop: str = AUTO

    def __post_init__(self) -> None:
        if self.time_loop not in TIME_LOOPS:
            raise InputError(f"unknown time_loop {self.time_loop!r}; choose one of {', '.join(TIME_LOOPS)}")


EXACT = RunOptions()
