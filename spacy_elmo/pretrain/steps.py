"""The pieces of one pretraining step that decide where work happens and when the host waits.

A step's inputs are built on the host (`step_inputs`), optionally ahead of time in a thread, then moved
to the model's device in one go. On a GPU the host must not wait for the device at every step, so the
statistics (`RunningStats`) and the NaN check (`NonFiniteGuard`) stay on the device and are read only at
logging, evaluation and checkpoint intervals. On the CPU reading them is free, and the guard stops
a run before a non-finite step is applied.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Callable, ContextManager, Iterable, Iterator, Optional, Tuple

import torch

from ..chars import CharacterMapper
from ..errors import ElmoError
from ..nn.softmax import LogUniformSampler
from . import distributed
from .batching import Batch
from .config import ConfigError, TrainingSettings
from .model import TensorBatch


class TrainingError(ElmoError):
    """Training cannot go on (e.g. the loss became NaN); the message says where and what to try."""


@dataclass
class StepInputs:
    """Everything one step needs from the host: the batch, and with the sampled softmax its negatives
    `[S]` and the number of draws they took."""

    batch: TensorBatch
    negatives: Optional[torch.Tensor]
    n_tries: int


def step_inputs(
    pairs: Iterable[Tuple[Batch, Batch]],
    mapper: CharacterMapper,
    sampler: Optional[LogUniformSampler],
    sampler_seed: Callable[[int], int],
    first_step: int,
    pin: bool = False,
) -> Iterator[StepInputs]:
    """The inputs of steps `first_step + 1, ...` on the host (page-locked with `pin`, for copies to a
    GPU that overlap with its work). Each step's negatives come from a generator seeded for that step."""
    step = first_step
    for forward, backward in pairs:
        step += 1
        batch = TensorBatch.from_batches(forward, backward, mapper)
        negatives, n_tries = None, 0
        if sampler is not None:
            negatives, n_tries = sampler.sample(torch.Generator().manual_seed(sampler_seed(step)))
        if pin:
            batch = batch.pin_memory()
            negatives = negatives.pin_memory() if negatives is not None else None
        yield StepInputs(batch, negatives, n_tries)


def check_device_settings(settings: TrainingSettings, device: torch.device) -> None:
    """The GPU speed options ask for a GPU; on the CPU they would be slower or do nothing."""
    if device.type != "cuda":
        for name in ("tf32", "bf16"):
            if getattr(settings, name):
                raise ConfigError(
                    f"[training] {name} = true is a GPU option, but this run is on {device}; "
                    f"set it to false (it would do nothing or slow the CPU down)"
                )
    elif settings.tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def precision(settings: TrainingSettings, device: torch.device) -> ContextManager:
    """bf16 autocast around the forward pass when asked (the loss and the LSTM cell state stay float32:
    autocast keeps reductions and elementwise arithmetic with float32 operands in float32)."""
    if settings.bf16:
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def clip_gradients(parameters: Iterable[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Scale all gradients so that their global norm is at most `max_norm` and return the norm before,
    on the device (no host wait). Sparse gradients (the sparse softmax's) count their stored rows, which
    are all the rows a dense gradient would have non-zero; torch's clip_grad_norm_ takes no sparse ones."""
    grads = []
    for param in parameters:
        if param.grad is None:
            continue
        if param.grad.is_sparse:
            param.grad = param.grad.coalesce()
            grads.append(param.grad._values())
        else:
            grads.append(param.grad)
    if not grads:
        return torch.zeros(())
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.float()) for g in grads]))
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for grad in grads:
        grad.mul_(scale.to(grad.dtype))
    return total


def average_sparse_gradients(context: distributed.Context, parameters: Iterable[torch.Tensor]) -> None:
    """The mean over ranks of sparse gradients (DistributedDataParallel averages dense ones only, and
    nccl has no sparse all-reduce): each rank's rows are gathered, summed and divided by the ranks."""
    import torch.distributed as dist

    world = context.world_size
    for param in parameters:
        if param.grad is None or not param.grad.is_sparse:
            continue
        grad = param.grad.coalesce()
        indices, values = grad._indices(), grad._values()
        count = torch.tensor([values.shape[0]], device=values.device)
        counts = [torch.zeros_like(count) for _ in range(world)]
        dist.all_gather(counts, count)
        sizes = [int(c) for c in counts]
        longest = max(sizes)
        padded_indices = indices.new_zeros(indices.shape[0], longest)
        padded_indices[:, : sizes[context.rank]] = indices
        padded_values = values.new_zeros(longest, *values.shape[1:])
        padded_values[: sizes[context.rank]] = values
        all_indices = [torch.zeros_like(padded_indices) for _ in range(world)]
        all_values = [torch.zeros_like(padded_values) for _ in range(world)]
        dist.all_gather(all_indices, padded_indices)
        dist.all_gather(all_values, padded_values)
        merged = torch.sparse_coo_tensor(
            torch.cat([i[:, :n] for i, n in zip(all_indices, sizes)], dim=1),
            torch.cat([v[:n] for v, n in zip(all_values, sizes)]) / world,
            grad.shape,
            check_invariants=False,
        )
        param.grad = merged.coalesce()


class NonFiniteGuard:
    """Turns a step whose gradient norm is not finite into a no-op for Adagrad and SGD (its gradients
    are zeroed on the device) and remembers the first such step; `raise_if_tripped` reads that once."""

    def __init__(self, device: torch.device) -> None:
        self._first_bad = torch.zeros((), dtype=torch.long, device=device)

    def screen(self, norm: torch.Tensor, parameters: Iterable[torch.Tensor], step: int) -> None:
        finite = torch.isfinite(norm)
        for param in parameters:
            if param.grad is not None:
                grad = param.grad._values() if param.grad.is_sparse else param.grad
                grad.copy_(torch.where(finite, grad, torch.zeros_like(grad)))
        first = torch.full_like(self._first_bad, step)
        self._first_bad.copy_(torch.where(finite | (self._first_bad > 0), self._first_bad, first))

    def raise_if_tripped(self) -> None:
        bad = int(self._first_bad)
        if bad:
            raise TrainingError(
                f"the loss or the gradients became NaN/inf at step {bad}; that step and any after it were not "
                "applied. Start a new run from the last export ([paths] init = this output directory) with a "
                "lower [training] learning_rate or clip_norm, or check the data for pathological lines"
            )


def perplexity_of(loss: float) -> float:
    """exp of a mean loss, without overflowing on the huge losses of a diverging run."""
    return math.exp(min(loss, 700.0))


@dataclass(frozen=True)
class TrainRecord:
    """What one "train" line of log.jsonl reports: perplexities over every rank since the last log and
    the last step's gradient norm (averaged over ranks)."""

    perplexity: float
    forward: float
    backward: float
    grad_norm: float


class RunningStats:
    """Loss sums (on the device) and target counts (on the host) since the last log, and the last
    gradient norm."""

    def __init__(self, device: torch.device) -> None:
        self._loss_sums = torch.zeros(2, dtype=torch.float64, device=device)
        self._counts = [0, 0]
        self._norm = torch.zeros((), dtype=torch.float64, device=device)

    def add(self, loss_sums: torch.Tensor, counts: Tuple[int, int], norm: torch.Tensor) -> None:
        self._loss_sums += loss_sums.detach().double()
        self._counts = [self._counts[0] + counts[0], self._counts[1] + counts[1]]
        self._norm.copy_(norm.detach())

    def collect(self, context: distributed.Context) -> TrainRecord:
        """The record since the last call; resets the sums. The one point where the host waits for the
        device."""
        counts = torch.tensor(self._counts, dtype=torch.float64, device=self._loss_sums.device)
        totals = distributed.sum_across(context, torch.cat([self._loss_sums, counts, self._norm.view(1)]))
        loss_sums, count_totals, norm = totals[:2].tolist(), totals[2:4].tolist(), float(totals[4])
        self._loss_sums.zero_()
        self._counts = [0, 0]
        forward, backward = (s / max(c, 1.0) for s, c in zip(loss_sums, count_totals))
        return TrainRecord(
            perplexity=perplexity_of(sum(loss_sums) / max(sum(count_totals), 1.0)),
            forward=perplexity_of(forward),
            backward=perplexity_of(backward),
            grad_norm=norm / context.world_size,
        )
