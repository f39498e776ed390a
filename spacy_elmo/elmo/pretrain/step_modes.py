"""How one optimisation step runs ([training] step_mode): the same step three ways, and "auto", which
picks one by device (`chosen_step_mode`).

- "plain": eager, torch's optimizer; on the CPU the NaN guard is read before the update is applied.
- "no_sync": eager, nothing in the step reads a tensor on the host (no `.item()`, no `int(tensor)`):
  clipping, the NaN guard (with the step number kept on the device) and the Adagrad or SGD update are
  written here with foreach operations, where torch's optimizers read their step counters.
- "compiled": the no_sync step with the forward pass, the loss and its backward pass compiled as one
  graph and the clip-guard-update as another (torch.compile; on a GPU each captured as CUDA graphs,
  which torch does only for a graph whose every written input keeps its address: `static_writes`).
  A graph needs fixed shapes:
  a step whose rows all run the whole window with a target at every position (every step but the last
  of the data) takes `LanguageModel.full_window_losses`, the distinct tokens padded to one of
  `SHAPE_BUCKETS` counts; any other step runs the no_sync way. Random numbers (dropout) come from
  torch's generator as in the eager step (inductor's `fallback_random`), so a compiled run draws the
  same masks and resumes like the others; the step runs under torch's deterministic algorithms
  (`deterministic_algorithms`), so that it also sums the same gradients in the same order. Where
  torch.compile fails on a model and device, the run warns and goes on the no_sync way, whose arithmetic
  the compiled graphs reproduce, instead of stopping.

What each costs in kernel launches: benchmarks/bench_pretrain_launches.py.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from ..nn.softmax import LogUniformSampler
from ..nn.torch_compat import (
    THREADS_AT_CALL,
    compiler_errors,
    foreach_add_,
    foreach_add_scalar_,
    foreach_addcdiv_,
    foreach_addcmul_,
    foreach_sqrt,
    mark_static_address,
    recompile_limit,
)
from . import distributed
from .config import TrainingSettings
from .model import LanguageModel, LMOutput, States
from .steps import (
    NonFiniteGuard,
    StepInputs,
    TrainingError,
    average_sparse_gradients,
    clip_gradients,
    clip_scale,
    gradient_norm,
    precision,
)

logger = logging.getLogger(__name__)

# Distinct-token counts a compiled step is padded to: this many equal steps up to the most a step can
# hold (both directions' positions), so at most this many graphs are compiled.
SHAPE_BUCKETS = 8
# Graphs torch.compile may keep per process (shape buckets of every compiled partial, across runs).
RECOMPILE_LIMIT = 64
# torch.optim.Adagrad's default, which the update below reproduces.
ADAGRAD_EPS = 1e-10


def scaled_loss(loss_sums: torch.Tensor, counts: Tuple[int, int], unroll_steps: int) -> torch.Tensor:
    """The loss a step minimises: the mean over targets of each direction, averaged, times the unroll
    length (bilm-tf's scale, which its learning rate was tuned for)."""
    forward_loss = loss_sums[0].float() / max(counts[0], 1)
    backward_loss = loss_sums[1].float() / max(counts[1], 1)
    return 0.5 * (forward_loss + backward_loss) * unroll_steps


class PlainStep:
    """One optimisation step, `step(item, states, number)`: the step's inputs, the LSTM states carried
    in and the step's number (from 1) -> the model's output and the gradient norm before clipping (on
    the device)."""

    def __init__(
        self,
        context: distributed.Context,
        settings: TrainingSettings,
        net: Union[LanguageModel, DistributedDataParallel],
        model: LanguageModel,
        optimizer: torch.optim.Optimizer,
        sampler: Optional[LogUniformSampler],
    ) -> None:
        self.context, self.settings, self.net, self.model = context, settings, net, model
        self.optimizer, self.sampler = optimizer, sampler
        self.guard = NonFiniteGuard(context.device)

    def step(self, item: StepInputs, states: States, number: int) -> Tuple[LMOutput, torch.Tensor]:
        device = self.context.device
        batch = item.batch.to(device, non_blocking=True)
        negatives = item.negatives.to(device, non_blocking=True) if item.negatives is not None else None
        with precision(self.settings, device):
            out = self.net(batch, states, self.sampler, negatives, item.n_tries)
        loss = scaled_loss(out.loss_sums, out.counts, self.settings.unroll_steps)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        return out, self.update(number)

    def update(self, number: int) -> torch.Tensor:
        """Clip, screen and apply the gradients; the norm before clipping."""
        ctx, t, model = self.context, self.settings, self.model
        if ctx.distributed and t.sparse_softmax:
            average_sparse_gradients(ctx, model.softmax.parameters())
        norm = clip_gradients(model.parameters(), t.clip_norm)
        self.guard.screen(norm, model.parameters(), number)
        if ctx.device.type == "cpu":
            self.guard.raise_if_tripped()  # free on the CPU: stop before the step is taken
        self.optimizer.step()
        return norm


class NoSyncStep(PlainStep):
    """The plain step with an update that reads nothing on the host (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._number: Optional[torch.Tensor] = None  # the step number, on the device
        self._apply: Callable[..., torch.Tensor]
        self._constants: Dict[str, float]
        self._update_eagerly()

    def _update_eagerly(self) -> None:
        """The update as a plain function, the settings passed as arguments."""
        self._apply = apply_update
        self._constants = {"clip_norm": self.settings.clip_norm, "learning_rate": self.settings.learning_rate}

    def update(self, number: int) -> torch.Tensor:
        if self._number is None:
            self._number = torch.full((), number - 1, dtype=torch.long, device=self.context.device)
        params = [p for p in self.model.parameters() if p.grad is not None]
        state = self.optimizer.state
        sums = [state[p]["sum"] for p in params] if self.settings.optimizer == "adagrad" else None
        norm = self._apply(params, sums, self.guard, self._number, **self._constants)
        if sums is not None:
            foreach_add_scalar_([state[p]["step"] for p in params], 1)  # torch's counters, on the host
        return norm


@torch.no_grad()
def apply_update(
    params: List[torch.Tensor],
    sums: Optional[List[torch.Tensor]],
    guard: NonFiniteGuard,
    number: torch.Tensor,
    clip_norm: float,
    learning_rate: float,
) -> torch.Tensor:
    """Clip the gradients, zero them if their norm is not finite (remembering the step `number`, a
    device tensor counted on here) and take an Adagrad step (`sums`: its accumulators) or an SGD step:
    the arithmetic of torch's single-tensor Adagrad and SGD (no weight decay, no learning-rate decay).
    The gradients are read, not written (the clipped ones are new tensors, the same numbers as the plain
    step's clipped in place): what the update writes then keeps its address from step to step (the
    parameters, the accumulators, the counters), which a CUDA graph of the compiled update needs."""
    number.add_(1)
    grads = [p.grad for p in params if p.grad is not None]  # all of them: `params` have gradients
    norm = gradient_norm(grads)
    finite = torch.isfinite(norm)
    scale = clip_scale(norm, clip_norm)
    grads = [torch.where(finite, g * scale.to(g.dtype), 0.0) for g in grads]
    guard.record(finite, number)
    if sums is None:
        foreach_add_(params, grads, alpha=-learning_rate)
        return norm
    foreach_addcmul_(sums, grads, grads, value=1)
    std = foreach_sqrt(sums)
    foreach_add_scalar_(std, ADAGRAD_EPS)
    foreach_addcdiv_(params, grads, std, value=-learning_rate)
    return norm


class CompiledStep(NoSyncStep):
    """The no_sync step with the forward and backward pass and the update compiled (see the module's
    docstring); a step of another shape runs the no_sync way."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.context.distributed:
            raise TrainingError('step_mode = "compiled" runs on one process; use step_mode = "no_sync" with torchrun')
        self._graphs = self.context.device.type == "cuda"
        options: Dict[str, Union[str, int, bool, Callable[..., Any]]] = {
            "fallback_random": True,
            "triton.cudagraphs": self._graphs,
            **THREADS_AT_CALL,
        }
        t = self.settings
        # The settings bound as constants of the graphs: numbers passed as arguments would be read
        # from tensors at every call.
        self._losses = torch.compile(
            functools.partial(full_window_loss, unroll_steps=t.unroll_steps), dynamic=False, options=options
        )
        bound = functools.partial(apply_update, clip_norm=t.clip_norm, learning_rate=t.learning_rate)
        self._apply = static_writes(torch.compile(bound, dynamic=False, options=options))
        self._constants = {}
        self._bucket = max(1, math.ceil(2 * t.batch_size * t.unroll_steps / SHAPE_BUCKETS))
        self.compiled = True  # False once torch.compile has failed: the run goes on uncompiled

    def step(self, item: StepInputs, states: States, number: int) -> Tuple[LMOutput, torch.Tensor]:
        # torch.compile runs every compiled partial through one wrapper function, whose cache of compiled
        # graphs counts against one recompile limit per process: at torch's default a process that has
        # compiled a few steps (several runs) would run this step uncompiled.
        with recompile_limit(RECOMPILE_LIMIT), deterministic_algorithms():
            if self.compiled:
                try:
                    return self._step(item, states, number)
                except compiler_errors() as error:
                    self._give_up_compiling(error, number)
            return super().step(item, states, number)

    def _give_up_compiling(self, error: BaseException, number: int) -> None:
        """Run uncompiled from now on. A compile fails before its graph runs (the backward graph and the
        update are compiled at their first call, after the forward graph ran), so no gradient was
        accumulated and no weight changed: the step is taken again, the no_sync way."""
        self.compiled = False
        self._update_eagerly()
        self.optimizer.zero_grad(set_to_none=True)
        lines = str(error).strip().splitlines()
        logger.warning(
            'step_mode "compiled": torch.compile failed at step %d (%s: %s); the run goes on uncompiled, as '
            'step_mode "no_sync" (the same arithmetic; set it to skip compiling)',
            number,
            type(error).__name__,
            lines[0][:300] if lines else "",
        )

    def _step(self, item: StepInputs, states: States, number: int) -> Tuple[LMOutput, torch.Tensor]:
        t, host = self.settings, item.batch
        full = (t.batch_size, t.unroll_steps)
        if any(
            tuple(index.shape) != full or int(target.shape[0]) != full[0] * full[1]
            for index, target in zip(host.index, host.targets)
        ):
            return super().step(item, states, number)
        device = self.context.device
        if self._graphs:
            torch.compiler.cudagraph_mark_step_begin()
        batch = host.to(device, non_blocking=True)
        negatives = item.negatives.to(device, non_blocking=True) if item.negatives is not None else None
        n_rows = batch.char_ids.shape[0]
        char_ids = F.pad(batch.char_ids, (0, 0, 0, math.ceil(n_rows / self._bucket) * self._bucket - n_rows))
        n_tries = torch.full((1,), item.n_tries, dtype=torch.float64, device=device)  # 0-d: a guard reads it
        with precision(t, device):
            loss, sums, finals = self._losses(
                self.model,
                char_ids,
                batch.index,
                batch.targets,
                states,
                self.sampler,
                negatives,
                n_tries,
            )
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self._graphs:  # a graph's outputs are overwritten by its next replay
            finals = [(h.clone(), c.clone()) for h, c in finals]
        return LMOutput(sums, batch.counts, finals), self.update(number)


@contextlib.contextmanager
def deterministic_algorithms() -> Iterator[None]:
    """torch's deterministic algorithms inside the block, the caller's setting after it.

    The compiler lowers the character embedding's backward pass (a sum of each character's gradient
    rows) to atomic adds from many threads, whose order, and so whose float sum, changes from run to
    run: a compiled run and the same run resumed from its checkpoint ended a few ulps apart. With the
    flag set, the compiler calls torch's own kernel instead, which sums serially on the CPU (where the
    flag is read when it runs) and after sorting on a GPU. The flag is read where a graph is lowered,
    and the backward graph is lowered in the first backward pass, so the block holds the whole step.
    Only warnings (`warn_only`), as an eager op without a deterministic kernel would otherwise stop a
    run; memory is not filled with NaN on allocation (the flag's other effect), a cost for nothing here.
    """
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory  # type: ignore[attr-defined]
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = False  # type: ignore[attr-defined]
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
        torch.utils.deterministic.fill_uninitialized_memory = fill  # type: ignore[attr-defined]


def static_writes(update: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """The compiled `apply_update` with the run-long tensors it writes besides the parameters (the
    accumulators, the step number, the guard's record) marked as keeping their address, as torch does
    for a compiled optimizer's state: CUDA graphs capture a graph only when every input it writes is
    such a tensor (a parameter is one already; the gradients are only read)."""

    def marked(
        params: List[torch.Tensor], sums: Optional[List[torch.Tensor]], guard: NonFiniteGuard, number: torch.Tensor
    ) -> torch.Tensor:
        for tensor in [*(sums or []), number, *guard.device_tensors]:
            mark_static_address(tensor)
        return update(params, sums, guard, number)

    return marked


def full_window_loss(
    model: LanguageModel,
    char_ids: torch.Tensor,
    index: Tuple[torch.Tensor, torch.Tensor],
    targets: Tuple[torch.Tensor, torch.Tensor],
    states: States,
    sampler: Optional[LogUniformSampler],
    negatives: Optional[torch.Tensor],
    n_tries: torch.Tensor,
    unroll_steps: int,
) -> Tuple[torch.Tensor, torch.Tensor, States]:
    """The compiled half of a step: the scaled loss, the summed losses and the final states."""
    sums, finals = model.full_window_losses(char_ids, index, targets, states, sampler, negatives, n_tries)
    n = int(targets[0].shape[0])
    return scaled_loss(sums, (n, n), unroll_steps), sums, finals


STEP_MODES = {"plain": PlainStep, "no_sync": NoSyncStep, "compiled": CompiledStep}


def chosen_step_mode(settings: TrainingSettings, context: distributed.Context) -> str:
    """`step_mode = "auto"` resolved, by what the GPU measurement of docs/results.md found fastest among
    the exact modes: "compiled" on one CUDA GPU, "no_sync" on several processes of CUDA GPUs (the compiled
    step runs on one process), "plain" on the CPU (compiling costs more than it saves in the short runs
    made there) and wherever the device update does not apply (Adam, the sparse softmax)."""
    if settings.step_mode != "auto":
        return settings.step_mode
    if context.device.type != "cuda" or not settings.updates_on_device:
        return "plain"
    return "no_sync" if context.distributed else "compiled"
