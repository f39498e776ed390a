"""How one call of the biLM computes, passed with the call (as `stateful` is) rather than written onto
the module: a module is shared (the component's layers, threads, listeners), so a setting stored on it
would leak from one caller into another's call.

`tf32` is the opt-in to TF32 products on a GPU (precision.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunOptions:
    """tf32: TF32 products on a GPU (about 1e-3 from the exact vectors)."""

    tf32: bool = False


EXACT = RunOptions()
