"""Full fp32 products inside the biLM's calls, whatever torch's process-wide precision flags say.

torch sets `torch.backends.cudnn.allow_tf32 = True` by default, which runs the char-CNN's convolutions
in TF32 on a GPU: the vectors then differ from the published model's by about 1e-3 (docs/results.md).
Users also lower the matmul precision for their own models (`torch.set_float32_matmul_precision`,
`torch.backends.cuda.matmul.allow_tf32`, the fine-grained `fp32_precision` flags of torch >= 2.9,
which on a CPU can even mean bf16 products). So the biLM's entry points run inside `fp32_scope`:
the flags are set for the call and put back after it, also after an exception, and the user's other
torch code keeps the user's choice. TF32 is an explicit opt-in (a call's `RunOptions`, pretraining's `tf32`).

The flags are process-wide, not per thread: concurrent calls share one scope (the first to enter saves
the caller's flags, the last to leave restores them), and TF32 is used only while every open call
opted in, so one exact call is never made inexact by another. Torch code of other threads that runs
during a call computes with the biLM's flags.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

import torch

# The fine-grained flags of torch >= 2.9: (backend, op) -> the object carrying `fp32_precision`.
# On a GPU the cuda ones follow the opt-in; the CPU's (oneDNN) stay "ieee" (no TF32 there).
_GPU_OPS = (("cuda", "matmul"), ("cudnn", "conv"), ("cudnn", "rnn"))
_CPU_OPS = (("mkldnn", "matmul"), ("mkldnn", "conv"), ("mkldnn", "rnn"))


def _fine_grained(backend: str, op: str) -> Optional[Any]:
    """The flag object of torch >= 2.9, or None on older torch."""
    holder = getattr(getattr(torch.backends, backend, None), op, None)
    return holder if holder is not None and hasattr(holder, "fp32_precision") else None


def _read_legacy(read: Any) -> Optional[Any]:
    """A legacy flag, or None where torch refuses to read it (a caller mixed the legacy and the
    fine-grained APIs into a state the legacy flag cannot express): then it is left alone."""
    try:
        return read()
    except RuntimeError:
        return None


@dataclass
class _Saved:
    """The caller's flags, as found when the first call entered."""

    matmul_precision: Optional[str]
    cudnn_tf32: Optional[bool]
    fine: List[Tuple[Any, str]]


def _save() -> _Saved:
    flags = [_fine_grained(backend, op) for backend, op in _GPU_OPS + _CPU_OPS]
    fine = [(flag, flag.fp32_precision) for flag in flags if flag is not None]
    return _Saved(
        matmul_precision=_read_legacy(torch.get_float32_matmul_precision),
        cudnn_tf32=_read_legacy(lambda: torch.backends.cudnn.allow_tf32),
        fine=fine,
    )


def _apply(saved: _Saved, tf32: bool) -> None:
    """fp32 products (TF32 on a GPU with `tf32`). The legacy flags first: their setters also write
    fine-grained flags, which are then set one by one."""
    if saved.matmul_precision is not None:
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
    if saved.cudnn_tf32 is not None:
        torch.backends.cudnn.allow_tf32 = tf32
    for key in _GPU_OPS + _CPU_OPS:
        flag = _fine_grained(*key)
        if flag is not None:
            flag.fp32_precision = "tf32" if tf32 and key in _GPU_OPS else "ieee"


def _restore(saved: _Saved) -> None:
    if saved.matmul_precision is not None:
        torch.set_float32_matmul_precision(saved.matmul_precision)
    if saved.cudnn_tf32 is not None:
        torch.backends.cudnn.allow_tf32 = saved.cudnn_tf32
    for flag, value in saved.fine:
        flag.fp32_precision = value


class _Scopes:
    """The open calls of all threads: how many, how many opted into TF32, and the caller's flags."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: Dict[bool, int] = {True: 0, False: 0}
        self.saved: Optional[_Saved] = None
        self.applied: Optional[bool] = None  # the mode set now; nested calls in the same mode set nothing

    def _set(self, saved: _Saved) -> None:
        tf32 = self.open[False] == 0
        if tf32 != self.applied:
            _apply(saved, tf32)
            self.applied = tf32

    def enter(self, tf32: bool) -> None:
        with self.lock:
            if self.saved is None:
                self.saved = _save()
            self.open[tf32] += 1
            self._set(self.saved)

    def leave(self, tf32: bool) -> None:
        with self.lock:
            assert self.saved is not None
            self.open[tf32] -= 1
            if self.open[True] + self.open[False] == 0:
                saved, self.saved, self.applied = self.saved, None, None
                _restore(saved)
            else:
                self._set(self.saved)


_SCOPES = _Scopes()


@contextmanager
def fp32_scope(tf32: bool = False) -> Iterator[None]:
    """Within: float32 matrix products and convolutions in full fp32 (with `tf32`, TF32 on a GPU);
    after: the caller's flags again."""
    _SCOPES.enter(tf32)
    try:
        yield
    finally:
        _SCOPES.leave(tf32)
