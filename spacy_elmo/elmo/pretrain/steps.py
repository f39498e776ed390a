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
from dataclasses import dataclass, replace
from typing import Any, Callable, ContextManager, Iterable, Iterator, List, Optional, Tuple, Union

import numpy as np
import torch

from ..nn.chars import CharacterMapper
from ..nn.finite import non_finite_parameters
from ..nn.softmax import LogUniformSampler
from . import distributed
from .batching import PAD_TARGET, Batch, TokenRows
from .config import TrainingSettings
from .errors import TrainingError
from .model import StepLayout, TensorBatch


@dataclass
class HostBatch(StepLayout):
    """A step's batch as made on the host, by the one builder of a step (`from_batches`, for training and
    evaluation alike): the layout, with the distinct tokens as rows of a `TokenRows` table (`rows` `[U]`,
    shortest first) instead of their char ids. `to` gathers the char ids from the table's copy on the
    device and moves the rest, so the host neither builds nor sends `[U, max_chars]` char ids. `ready`:
    a CUDA event the device must reach before using the step's inputs (negatives drawn on a side
    stream)."""

    rows: torch.Tensor
    table: TokenRows
    table_size: int
    ready: Optional[Any] = None
    side_tensors: Tuple[torch.Tensor, ...] = ()

    @classmethod
    def from_batches(cls, forward: Batch, backward: Batch, table: TokenRows) -> "HostBatch":
        """The step of `forward` and `backward`: their distinct tokens in first-seen order (forward rows,
        then backward rows), stably sorted by char length; padding indexes the first of them."""
        shape = forward.targets.shape
        token_rows = np.full((2, *shape), -1, dtype=np.int64)
        for d, batch in enumerate((forward, backward)):
            for i, row in enumerate(batch.tokens):
                token_rows[d, i, : len(row)] = table.rows(row)
        valid = token_rows >= 0
        seen = token_rows[valid]
        distinct, first, inverse = np.unique(seen, return_index=True, return_inverse=True)
        by_first = np.argsort(first, kind="stable")
        position = np.empty_like(by_first)
        position[by_first] = np.arange(len(by_first))
        rows = distinct[by_first]  # first-seen order
        char_lengths = table.lengths(rows)
        order = np.argsort(char_lengths, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        index = np.zeros(token_rows.shape, dtype=np.int64)
        index[valid] = position[inverse.reshape(-1)]
        index = rank[index]
        positions, targets = [], []
        for batch in (forward, backward):
            flat = batch.targets.reshape(-1)
            kept = np.flatnonzero(flat != PAD_TARGET)
            positions.append(torch.from_numpy(kept))
            targets.append(torch.from_numpy(np.ascontiguousarray(flat[kept])))
        return cls(
            rows=torch.from_numpy(rows[order]),
            index=(torch.from_numpy(index[0]), torch.from_numpy(index[1])),
            positions=(positions[0], positions[1]),
            targets=(targets[0], targets[1]),
            lengths=(np.asarray(forward.lengths, dtype=np.int64), np.asarray(backward.lengths, dtype=np.int64)),
            char_lengths=char_lengths[order],
            table=table,
            table_size=len(table),
        )

    def pin_memory(self) -> "HostBatch":
        """Page-locked host copies, so that `to(cuda, non_blocking=True)` overlaps with compute."""
        return replace(self, rows=self.rows.pin_memory(), **self.tensors_mapped(torch.Tensor.pin_memory))

    def to(self, device: torch.device, non_blocking: bool = False) -> TensorBatch:
        """The TensorBatch on `device`: char ids gathered from the table there (new rows copied first);
        on the CPU from the host table by NumPy, as torch's threaded gather waits for its threads there
        (milliseconds per step when other work holds the cores)."""
        device = torch.device(device)
        if self.ready is not None:
            stream = torch.cuda.current_stream(device)
            stream.wait_event(self.ready)
            for tensor in self.side_tensors:  # made on the side stream, used on this one
                tensor.record_stream(stream)
        if device.type == "cpu":
            char_ids = torch.from_numpy(self.table.char_ids(self.rows.numpy()))
        else:
            rows = self.rows.to(device, non_blocking=non_blocking)
            char_ids = self.table.on(device, self.table_size).index_select(0, rows).long()
        return TensorBatch(
            char_ids=char_ids,
            lengths=self.lengths,
            char_lengths=self.char_lengths,
            **self.tensors_mapped(lambda tensor: tensor.to(device, non_blocking=non_blocking)),
        )


@dataclass
class StepInputs:
    """Everything one step needs: the batch as made on the host, and with the sampled softmax its
    negatives `[S]` (on the host, or already on the GPU) and the number of draws they took."""

    batch: HostBatch
    negatives: Optional[torch.Tensor]
    n_tries: int


class NegativeDraws:
    """Each step's negatives from a generator seeded for that step, on the host or on a GPU.

    On a GPU they are drawn there, on a side stream of the producer thread, so that the draws (a few
    unique/scatter passes with a host check between them) neither take host time from the training
    thread nor make it wait: the consumer waits on an event instead. CUDA's generator is not the CPU's,
    so for a seed a GPU run draws other negatives than a CPU run (each is the same from run to run)."""

    def __init__(self, sampler: LogUniformSampler, seed: Callable[[int], int], device: Optional[torch.device]) -> None:
        self.sampler, self.seed = sampler, seed
        self.device = device if device is not None and device.type == "cuda" else None
        self._stream = torch.cuda.Stream(self.device) if self.device is not None else None

    def draw(self, step: int) -> Tuple[torch.Tensor, int, Optional[Any]]:
        """(negatives, draws taken, an event marking them done on the side stream or None)."""
        if self._stream is None:
            negatives, n_tries = self.sampler.sample(torch.Generator().manual_seed(self.seed(step)))
            return negatives, n_tries, None
        with torch.cuda.stream(self._stream):
            generator = torch.Generator(self.device).manual_seed(self.seed(step))
            negatives, n_tries = self.sampler.sample(generator)
            done = torch.cuda.Event()
            done.record(self._stream)
        return negatives, n_tries, done


def step_inputs(
    pairs: Iterable[Tuple[Batch, Batch]],
    mapper: CharacterMapper,
    sampler: Optional[LogUniformSampler],
    sampler_seed: Callable[[int], int],
    first_step: int,
    pin: bool = False,
    device: Optional[torch.device] = None,
) -> Iterator[StepInputs]:
    """The inputs of steps `first_step + 1, ...` (page-locked with `pin`, for copies to a GPU that
    overlap with its work). Each step's negatives come from a generator seeded for that step, drawn on
    `device` when it is a GPU (see NegativeDraws). The char ids come from one `TokenRows` table for
    the whole run."""
    table = TokenRows(mapper)
    draws = NegativeDraws(sampler, sampler_seed, device) if sampler is not None else None
    step = first_step
    for forward, backward in pairs:
        step += 1
        batch = HostBatch.from_batches(forward, backward, table)
        negatives, n_tries, ready = None, 0, None
        if draws is not None:
            negatives, n_tries, ready = draws.draw(step)
        if pin:
            batch = batch.pin_memory()
            if negatives is not None and negatives.device.type == "cpu":
                negatives = negatives.pin_memory()
        if ready is not None and negatives is not None:
            batch = replace(batch, ready=ready, side_tensors=(negatives,))
        yield StepInputs(batch, negatives, n_tries)


def precision(settings: TrainingSettings, device: torch.device) -> ContextManager:
    """bf16 autocast around the forward pass when asked (the loss and the LSTM cell state stay float32:
    autocast keeps reductions and elementwise arithmetic with float32 operands in float32). It runs on
    the CPU too (torch's CPU autocast), which is how CI runs this path; it pays only on a GPU."""
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
    total = gradient_norm(grads)
    scale = clip_scale(total, max_norm)
    for grad in grads:
        grad.mul_(scale.to(grad.dtype))
    return total


def gradient_norm(grads: List[torch.Tensor]) -> torch.Tensor:
    """The global norm of `grads`, computed in float32."""
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.float()) for g in grads]))


def clip_scale(norm: torch.Tensor, max_norm: float) -> torch.Tensor:
    """The factor that brings a global gradient norm `norm` down to `max_norm` (1 when it is below)."""
    return torch.clamp(max_norm / (norm + 1e-6), max=1.0)


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

    def screen(self, norm: torch.Tensor, parameters: Iterable[torch.Tensor], step: Union[int, torch.Tensor]) -> None:
        """`step`: the step's number, or a 0-d long tensor of it on the device (read by no host)."""
        finite = torch.isfinite(norm)
        for param in parameters:
            if param.grad is not None:
                grad = param.grad._values() if param.grad.is_sparse else param.grad
                grad.copy_(torch.where(finite, grad, torch.zeros_like(grad)))
        self.record(finite, step)

    def record(self, finite: torch.Tensor, step: Union[int, torch.Tensor]) -> None:
        """Remember `step` as the first bad one unless the norm was `finite` or an earlier step was bad."""
        self._first_bad.copy_(torch.where(finite | (self._first_bad > 0), self._first_bad, step))

    @property
    def device_tensors(self) -> List[torch.Tensor]:
        """What the guard writes on the device, one tensor for the whole run."""
        return [self._first_bad]

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


def check_finite_parameters(model: torch.nn.Module, step: int) -> None:
    """Stop before a parameter that is NaN or infinite reaches a checkpoint or the exported model."""
    named = list(model.named_parameters())
    if bool(torch.stack([torch.isfinite(p).all() for _, p in named]).all()):  # one wait for a GPU
        return
    bad = non_finite_parameters(model)
    if bad:
        raise TrainingError(
            f"at step {step} the parameters {', '.join(bad[:3])}{' ...' if len(bad) > 3 else ''} are not "
            "finite (NaN or infinite); the last checkpoint is kept. Lower [training] learning_rate or "
            "clip_norm and resume"
        )
