"""The `host_copies = "pinned"` candidate: layer outputs brought to the host through reused page-locked
buffers, the copy of one batch running while the next batch computes.

Why: on an H100 half of the inference time was the copy of the layers into pageable memory, which the
driver stages through a pinned buffer of its own and which makes the host wait (docs/gpu.md). A copy
into page-locked memory runs at the bus's rate without the host waiting; two buffers take turns, so a
batch's copy overlaps the next batch's work, and they are reused, since pinning memory is slow. On a
CPU (and wherever torch cannot pin) the same code runs with plain buffers and the copy is immediate.
"""

from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch


class PendingCopy:
    """A copy under way into a host buffer; `wait` returns the host array once it has landed."""

    def __init__(self, host: torch.Tensor, done: Optional["torch.cuda.Event"]) -> None:
        self.host = host
        self.done = done

    def wait(self) -> np.ndarray:
        if self.done is not None:
            self.done.synchronize()
        return self.host.numpy()


class HostBuffers:
    """Two reused host buffers taking turns (a batch's copy lands in one while the previous batch is
    read from the other), grown when a batch needs more room."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.pin = device.type == "cuda"
        self._buffers: List[Optional[torch.Tensor]] = [None, None]
        self._turn = 0

    def _buffer(self, numel: int) -> torch.Tensor:
        current = self._buffers[self._turn]
        if current is None or current.numel() < numel:
            current = torch.empty(numel, dtype=torch.float32, pin_memory=self.pin)
            self._buffers[self._turn] = current
        return current

    def start(self, tensor: torch.Tensor) -> PendingCopy:
        """Begin copying `tensor` (float32, on `device`) into the next buffer."""
        host = self._buffer(tensor.numel())[: tensor.numel()].view(tensor.shape)
        self._turn = 1 - self._turn
        host.copy_(tensor, non_blocking=self.pin)
        if not self.pin:
            return PendingCopy(host, None)
        done = torch.cuda.Event()
        done.record()
        return PendingCopy(host, done)
