"""The wavefront time loop (wavefront.py) as one CUDA graph per (batch, length) bucket.

On a GPU every step of the loop is a handful of kernel launches of a few microseconds of work each at
small batches, and the launches, not the arithmetic, set the pace (docs/results.md, "On a GPU"). A
CUDA graph records the whole loop once and replays it as one launch. A graph has fixed shapes and
addresses, so each bucket keeps static buffers: a batch is copied into its bucket's input (rows padded
to a power of two, steps to a multiple of `LENGTH_STEP`), its lengths into a device tensor, and the loop
runs on fixed rows and steps, reading lengths only through the masks. A padded row has length 0 and a
padded step lies past every row's end: masked, they change no state and output zeros, so the padding
changes nothing in the real rows. The results are copied out of the static outputs.

A graph replays the products with the precision flags it was captured under, and the autograd mode it
was captured in: both are part of a bucket's key, and so are the weights (storage and version), so
changed weights are captured again. Only calls that want no gradient are captured (inference); one that
wants gradients runs the wavefront loop unpadded. At most `CAPACITY` buckets are kept per stack, least
recently used first out, each with its own buffers (and on a GPU its graph's memory pool).

On the CPU (and wherever CUDA graphs are not available) the same code runs: buckets, static buffers,
padding, copying, with the loop run eagerly instead of replayed, so CI tests all of it but the capture.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Hashable, List, Optional, Sequence, Tuple

import torch

from ..lru import LRU
from ..lstm import BiLSTMStack, State
from . import wavefront

# The profiler range around a bucket's run: one graph replay on a GPU, counted as one launch by the
# benchmarks (benchmarks/launch_count.py) where it runs eagerly.
CAPTURED_RANGE = "spacy_elmo.captured_time_loop"
LENGTH_STEP = 16
CAPACITY = 16
# Untimed runs before a capture: they let the libraries pick their kernels and allocate workspaces.
WARMUP_RUNS = 2


def batch_bucket(batch: int) -> int:
    """Rows rounded up to a power of two."""
    return 1 << max(0, batch - 1).bit_length()


def length_bucket(time: int) -> int:
    """Steps rounded up to a multiple of `LENGTH_STEP` (at least one)."""
    return max(1, -(-time // LENGTH_STEP)) * LENGTH_STEP


@dataclass
class Bucket:
    """One (batch, length) bucket's static buffers, its graph (None where the loop runs eagerly) and
    the static outputs the graph writes."""

    x: torch.Tensor
    lengths: torch.Tensor
    states: List[State]
    graph: Optional["torch.cuda.CUDAGraph"] = None
    outputs: List[torch.Tensor] = field(default_factory=list)
    finals: List[State] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class CapturedLoop:
    """The bounded cache of one stack's buckets, and the call that fills, runs and reads one."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.buckets: LRU[Hashable, Bucket] = LRU(capacity, what="number of captured time loops")

    def __call__(
        self, stack: BiLSTMStack, x: torch.Tensor, lengths: Sequence[int], states: List[State]
    ) -> Tuple[List[torch.Tensor], List[State]]:
        if torch.is_grad_enabled() and any(t.requires_grad for t in (x, *stack.parameters())):
            return wavefront.run(stack, x, lengths, states)
        _, batch, time, _ = x.shape
        key = (
            batch_bucket(batch),
            length_bucket(time),
            x.device,
            x.dtype,
            torch.is_inference_mode_enabled(),
            torch.get_float32_matmul_precision(),
            tuple((p.data_ptr(), p._version) for p in stack.parameters()),
        )
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = _new_bucket(stack, x, key[0], key[1], states)
            self.buckets.put_many([(key, bucket)])
        with bucket.lock:
            _fill(bucket, x, lengths, states)
            with torch.profiler.record_function(CAPTURED_RANGE):
                if bucket.graph is not None:
                    bucket.graph.replay()
                elif capturable(x.device):
                    _capture(stack, bucket)
                else:
                    bucket.outputs, bucket.finals = _run(stack, bucket)
            outputs = [out[:, :batch, :time].clone() for out in bucket.outputs]
            finals = [(h[:, :batch].clone(), c[:, :batch].clone()) for h, c in bucket.finals]
        return outputs, finals


def capturable(device: torch.device) -> bool:
    return device.type == "cuda" and torch.cuda.is_available()


def _new_bucket(stack: BiLSTMStack, x: torch.Tensor, rows: int, steps: int, states: List[State]) -> Bucket:
    n_dir, _, _, in_dim = x.shape
    return Bucket(
        x=x.new_zeros(n_dir, rows, steps, in_dim),
        lengths=torch.zeros(rows, dtype=torch.long, device=x.device),
        states=[(h.new_zeros(n_dir, rows, h.shape[-1]), c.new_zeros(n_dir, rows, c.shape[-1])) for h, c in states],
    )


def _fill(bucket: Bucket, x: torch.Tensor, lengths: Sequence[int], states: List[State]) -> None:
    """The batch into the bucket's buffers; padded rows and steps zero, padded rows of length 0."""
    _, batch, time, _ = x.shape
    bucket.x[:, batch:].zero_()
    bucket.x[:, :batch, time:].zero_()
    bucket.x[:, :batch, :time].copy_(x)
    padded = list(lengths) + [0] * (bucket.lengths.shape[0] - batch)
    bucket.lengths.copy_(torch.tensor(padded, dtype=torch.long), non_blocking=True)
    for (h, c), (h0, c0) in zip(bucket.states, states):
        h[:, batch:].zero_()
        c[:, batch:].zero_()
        h[:, :batch].copy_(h0)
        c[:, :batch].copy_(c0)


def _run(stack: BiLSTMStack, bucket: Bucket) -> Tuple[List[torch.Tensor], List[State]]:
    """The loop on the bucket's fixed rows and steps, steered by its device lengths only."""
    return wavefront.run(stack, bucket.x, [], bucket.states, device_lengths=bucket.lengths, shrink=False)


def _capture(stack: BiLSTMStack, bucket: Bucket) -> None:
    """Warm up on a side stream, capture, and replay once for the batch already filled in."""
    side = torch.cuda.Stream(bucket.x.device)
    side.wait_stream(torch.cuda.current_stream(bucket.x.device))
    with torch.cuda.stream(side):
        for _ in range(WARMUP_RUNS):
            _run(stack, bucket)
    torch.cuda.current_stream(bucket.x.device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        bucket.outputs, bucket.finals = _run(stack, bucket)
    bucket.graph = graph
    graph.replay()


# Each stack's captured loops, held beside it (not on it: the module stays as it was built).
_LOOPS: "weakref.WeakKeyDictionary[BiLSTMStack, CapturedLoop]" = weakref.WeakKeyDictionary()


def run(
    stack: BiLSTMStack, x: torch.Tensor, lengths: Sequence[int], states: List[State]
) -> Tuple[List[torch.Tensor], List[State]]:
    """What `BiLSTMStack.forward` returns, through the stack's captured loops (both directions)."""
    return _LOOPS.setdefault(stack, CapturedLoop())(stack, x, lengths, states)


def loops_of(stack: BiLSTMStack) -> Optional[CapturedLoop]:
    """The stack's captured loops, None before its first captured call."""
    return _LOOPS.get(stack)
