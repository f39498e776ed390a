"""The pretraining loop: both language models on their own streams, one shared softmax, resumable.

Per step, each direction's batch of `[batch_size, unroll_steps]` windows starts from the LSTM states the
previous window of that row ended with (detached), the loss is the mean of the two directions' mean
token losses, scaled by `unroll_steps` as in the original (which matters with Adagrad's initial
accumulator), gradients are clipped by their global norm, and the step is taken. Everything that
decides the next step (parameters, optimizer, step number, states, random generators) is in the
checkpoint, so a resumed run continues exactly where the checkpointed one was.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import torch
from torch.nn.parallel import DistributedDataParallel

from ..nn.chars import CharacterMapper
from ..nn.options import ElmoOptions
from ..nn.precision import fp32_scope
from ..nn.softmax import LogUniformSampler
from ..util.io import check_writable_folder
from . import distributed
from .batching import paired_batches
from .checkpoint import (
    CHECKPOINT_FILE,
    LOG_FILE,
    MetricsLog,
    check_run_dir,
    load_checkpoint,
    run_lock,
    save_checkpoint,
    write_config,
)
from .config import ConfigError, PretrainConfig
from .corpus import CorpusStats, check_dev_file, corpus_stats, expand_paths
from .export import (
    export_model,
    repair_export,
)
from .model import LanguageModel, States, parameters_digest
from .perplexity import Perplexity, perplexity
from .plot import plot_curves
from .prefetch import Prefetcher
from .progress import Position, ProgressReport, StopRequest, TrainResult, estimated_steps
from .start import build_optimizer, initialize_from
from .step_modes import STEP_MODES, chosen_step_mode
from .steps import StepInputs, TrainingError, check_finite_parameters, step_inputs
from .vocab import Vocabulary

logger = logging.getLogger(__name__)
PLOT_FILE = "perplexity.png"
# The profiler's name for a step's range (benchmarks/bench_pretrain_launches.py counts what it launches).
STEP_RANGE = "pretrain step"


class Trainer:
    """Trains a biLM language model as a config says, on this process's share of the data, writing the
    run directory (checkpoint, log, plot, exported model) on rank 0.

    config (PretrainConfig): The checked pretraining config (`load_config`).
    output_dir (Union[str, Path]): The run directory; empty or missing, or this run's when resuming.
    context (distributed.Context): This process's rank, the number of processes and the device
        (`distributed.setup()`).
    resume (bool): Continue the run in `output_dir` from its checkpoint (a new run when there is none).
    show_progress (bool): Show a progress bar (on rank 0).
    """

    def __init__(
        self,
        config: PretrainConfig,
        output_dir: Union[str, Path],
        context: distributed.Context,
        resume: bool = False,
        show_progress: bool = True,
    ) -> None:
        self.config = config
        self.settings = config.training
        self.output_dir = Path(output_dir)
        self.context = context
        self.resume = resume
        self.show_progress = show_progress and context.is_main
        self.log = MetricsLog(self.output_dir / LOG_FILE)
        self.deadline: Optional[float] = None

    def _validate(self) -> Tuple[Vocabulary, List[Path], CorpusStats]:
        """Everything that can be wrong with the inputs, found before anything is written."""
        vocab = Vocabulary.from_file(self.config.vocab)
        paths = expand_paths(self.config.train)
        stats = corpus_stats(paths)
        if self.settings.softmax == "sampled" and self.settings.n_negative_samples >= len(vocab):
            raise ConfigError(
                f"[training] n_negative_samples ({self.settings.n_negative_samples}) must be smaller than the "
                f'vocabulary ({len(vocab)} words in {self.config.vocab}); lower it or set softmax = "full"'
            )
        if self.config.dev is not None:
            check_dev_file(self.config.dev)
        return vocab, paths, stats

    def _export_options(self, vocab: Vocabulary, stats: CorpusStats) -> ElmoOptions:
        t = self.settings
        training = replace(
            self.config.options.training,
            bidirectional=True,
            dropout=t.dropout,
            all_clip_norm_val=t.clip_norm,
            n_epochs=t.n_epochs,
            n_train_tokens=stats.n_tokens,
            batch_size=t.batch_size,
            n_tokens_vocab=len(vocab),
            unroll_steps=t.unroll_steps,
            learning_rate=t.learning_rate,
            sample_softmax=t.softmax == "sampled",
            n_negative_samples_batch=t.n_negative_samples if t.softmax == "sampled" else None,
        )
        return replace(self.config.options, training=training)

    def run(self) -> TrainResult:
        """Train until the last epoch's data, `max_steps` or `max_time`, checkpointing and exporting on
        the way; when resuming, go on from the checkpoint, first re-exporting the model if a kill left
        the export older than the checkpoint.

        RETURNS (TrainResult): The final step, the tokens trained on (per direction, over all
            processes), the last held-out perplexity and every process's parameter digest.
        """
        if self.settings.max_time is not None:
            self.deadline = time.monotonic() + 60 * self.settings.max_time
        if self.context.is_main:
            check_writable_folder(self.output_dir, "run directory")
        vocab, paths, stats = self._validate()
        check_run_dir(self.output_dir, self.config.config, self.resume)
        with run_lock(self.output_dir, enabled=self.context.is_main):
            return self._train(vocab, paths, stats)

    def _train(self, vocab: Vocabulary, paths: List[Path], stats: CorpusStats) -> TrainResult:
        ctx, t, logs = self.context, self.settings, self.config.logging
        model, optimizer, sampler, position = self._start(vocab)
        export_options = self._export_options(vocab, stats)
        if ctx.is_main and self.resume and position.step > 0:
            repair_export(model, vocab, self.output_dir, export_options, position.step)
        for_epochs = estimated_steps(stats, self.config, ctx.world_size)
        total = min(for_epochs, t.max_steps) if t.max_steps else for_epochs
        length = f"{total} steps ({t.n_epochs} epochs)"
        if total < for_epochs:
            length = f"{total} steps (max_steps; {t.n_epochs} epochs would take {for_epochs})"
        logger.info(
            "corpus: %d files, %d sentences, %d tokens; %s on %d process(es)",
            len(paths),
            stats.n_sentences,
            stats.n_tokens,
            length,
            ctx.world_size,
        )
        mapper = CharacterMapper(self.config.options.char_cnn.max_characters_per_token)
        batches = paired_batches(paths, vocab, self.settings, self.context, skip=position.step)
        pin = ctx.device.type == "cuda"
        inputs: Iterator[StepInputs] = step_inputs(
            batches, mapper, sampler, self._sampler_seed, position.step, pin=pin, device=ctx.device
        )
        if t.prefetch:
            inputs = Prefetcher(inputs, t.prefetch)
        net = self._data_parallel(model) if ctx.distributed else model
        heldout: Optional[Perplexity] = None
        step_mode = chosen_step_mode(t, ctx)
        logger.info("step mode: %s", step_mode)
        runner = STEP_MODES[step_mode](ctx, t, net, model, optimizer, sampler)
        guard = runner.guard
        progress = ProgressReport(self.context, self.log, self.show_progress, stats, position, total)
        model.train()
        stop = StopRequest(enabled=not ctx.distributed)
        out_of_time = False
        try:
            while t.max_steps is None or position.step < t.max_steps:
                if stop.requested:
                    logger.warning(
                        "stopping at step %d on %s: writing a checkpoint and the model", position.step, stop.signal
                    )
                    break
                item = next(inputs, None)
                # Every rank stops together at the end of the shortest share, or when any rank's clock
                # passed the deadline; tokens count all ranks'.
                late = self.deadline is not None and time.monotonic() >= self.deadline
                n_ready, step_tokens, n_late = distributed.host_sums(
                    ctx, [int(item is not None), item.batch.counts[0] if item is not None else 0, int(late)]
                )
                if n_late:
                    out_of_time = True
                    logger.warning(
                        "stopping at step %d: max_time (%g minutes) is up; writing a checkpoint and the model",
                        position.step,
                        t.max_time,
                    )
                    break
                if n_ready < ctx.world_size:
                    break
                assert item is not None
                # Forward, backward and update in full fp32 unless tf32, whatever the process-wide flags.
                with fp32_scope(t.tf32), torch.profiler.record_function(STEP_RANGE):
                    out, norm = runner.step(item, position.states, position.step + 1)
                position = Position(position.step + 1, position.tokens + step_tokens, out.states)
                progress.add(out, norm)
                step = position.step
                if step % logs.log_every == 0:
                    guard.raise_if_tripped()
                    check_finite_parameters(model, step)
                    progress.report(position)
                if self.config.dev is not None and step % logs.eval_every == 0:
                    guard.raise_if_tripped()
                    heldout = self._evaluate(model, vocab, step, position.tokens)
                if step % logs.checkpoint_every == 0:
                    guard.raise_if_tripped()
                    self._checkpoint(model, optimizer, position.states, step, position.tokens, vocab, export_options)
            guard.raise_if_tripped()
        finally:
            stop.restore()
            if isinstance(inputs, Prefetcher):
                inputs.close()
        progress.close()
        guard.raise_if_tripped()
        step = position.step
        # A stop asked for (a signal, the deadline) leaves its time to the checkpoint, not to an evaluation.
        stopped = stop.requested or out_of_time
        if self.config.dev is not None and not stopped and (step % logs.eval_every != 0 or heldout is None):
            heldout = self._evaluate(model, vocab, step, position.tokens)
        if step % logs.checkpoint_every != 0 or step == 0:
            self._checkpoint(model, optimizer, position.states, step, position.tokens, vocab, export_options)
        return self._finish(model, position, heldout, stop.signum)

    def _start(
        self, vocab: Vocabulary
    ) -> Tuple[LanguageModel, torch.optim.Optimizer, Optional[LogUniformSampler], Position]:
        """The model, its optimizer and the sampler, on the device: from the checkpoint when resuming,
        else from `[paths] init` or bilm-tf's initialisation; and the position to go on from."""
        ctx, t = self.context, self.settings
        torch.manual_seed(t.seed)
        model = LanguageModel(self.config.options, len(vocab), dropout=t.dropout, sparse_softmax=t.sparse_softmax)
        payload = distributed.broadcast(
            ctx, load_checkpoint(self.output_dir / CHECKPOINT_FILE) if ctx.is_main and self.resume else None
        )
        if payload is None and self.config.init is not None:
            initialize_from(model, vocab, self.config.init)
        distributed.barrier(ctx)
        if ctx.is_main:
            write_config(self.output_dir, self.config.config)
        model.to(ctx.device)
        optimizer = build_optimizer(t, model.parameters())
        sampler = LogUniformSampler(len(vocab), t.n_negative_samples) if t.softmax == "sampled" else None
        torch.manual_seed(t.seed * 7919 + ctx.rank + 1)
        if ctx.device.type == "cuda":
            torch.cuda.manual_seed(t.seed * 7919 + ctx.rank + 1)
        if payload is not None:
            return model, optimizer, sampler, self._restore(payload, model, optimizer)
        if ctx.is_main:
            self.log.path.unlink(missing_ok=True)
        return model, optimizer, sampler, Position(0, 0, model.zero_states(t.batch_size))

    def _finish(
        self, model: LanguageModel, position: Position, heldout: Optional[Perplexity], stopped_by: Optional[int]
    ) -> TrainResult:
        """The end record with every rank's parameter digest, which must agree; `stopped_by` is the signal
        that ended the run early, if one did."""
        ctx = self.context
        digests = distributed.gather(ctx, parameters_digest(model))
        if ctx.is_main:
            self.log.append({"event": "end", "step": position.step, "tokens": position.tokens, "digests": digests})
            if self.config.logging.plot:
                plot_curves(self.log.path, self.output_dir / PLOT_FILE)
        if len(set(digests)) > 1:
            raise TrainingError(f"the {ctx.world_size} processes ended with different parameters: {digests}")
        return TrainResult(
            step=position.step, tokens=position.tokens, heldout=heldout, digests=digests, stopped_by=stopped_by
        )

    def _data_parallel(self, model: LanguageModel) -> DistributedDataParallel:
        """Gradients averaged across processes; a sparse softmax's by average_sparse_gradients instead,
        so that no dense `[V, P]` gradient is all-reduced."""
        if self.settings.sparse_softmax:
            DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(
                model, [f"softmax.{name}" for name, _ in model.softmax.named_parameters()]
            )
        return DistributedDataParallel(model)

    def _sampler_seed(self, step: int) -> int:
        """The negatives of step `step` on this rank: a function of the step, not of what ran before,
        so that prefetching and resuming draw exactly what an uninterrupted run draws."""
        return (self.settings.seed * 1_000_003 + self.context.rank) * 1_000_000_007 + step

    def _restore(self, payload: Dict[str, Any], model: LanguageModel, optimizer: torch.optim.Optimizer) -> Position:
        ctx = self.context
        if payload["world_size"] != ctx.world_size:
            raise TrainingError(
                f"the checkpoint in {self.output_dir} was written by {payload['world_size']} process(es); "
                f"resume it with the same number (torchrun --nproc_per_node ...), not {ctx.world_size}"
            )
        model.load_state_dict(payload["model"])
        optimizer.load_state_dict(payload["optimizer"])
        mine = payload["ranks"][ctx.rank]
        torch.set_rng_state(mine["torch_rng"])
        if ctx.device.type == "cuda" and mine.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(mine["cuda_rng"], ctx.device)
        states = [(h.to(ctx.device), c.to(ctx.device)) for h, c in mine["states"]]
        if ctx.is_main:
            self.log.truncate(payload["step"])
        logger.info("resumed from step %d (%d tokens)", payload["step"], payload["tokens"])
        return Position(payload["step"], payload["tokens"], states)

    def _checkpoint(
        self,
        model: LanguageModel,
        optimizer: torch.optim.Optimizer,
        states: States,
        step: int,
        tokens: int,
        vocab: Vocabulary,
        options: ElmoOptions,
    ) -> None:
        device = self.context.device
        check_finite_parameters(model, step)
        ranks = distributed.gather(
            self.context,
            {
                "states": [(h.cpu(), c.cpu()) for h, c in states],
                "torch_rng": torch.get_rng_state(),
                # Dropout on a GPU draws from the device's generator.
                "cuda_rng": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
            },
        )
        if self.context.is_main:
            save_checkpoint(
                self.output_dir / CHECKPOINT_FILE,
                {
                    "step": step,
                    "tokens": tokens,
                    "world_size": self.context.world_size,
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "ranks": ranks,
                },
            )
            export_model(model, vocab, self.output_dir, options, step=step)
            self.log.append({"event": "checkpoint", "step": step, "tokens": tokens})
        distributed.barrier(self.context)

    def _evaluate(self, model: LanguageModel, vocab: Vocabulary, step: int, tokens: int) -> Optional[Perplexity]:
        """Held-out perplexity on rank 0 (the others wait at the next collective)."""
        if not self.context.is_main or self.config.dev is None:
            return None
        logs = self.config.logging
        result = perplexity(
            model,
            vocab,
            self.config.dev,
            batch_size=logs.eval_batch_size,
            unroll_steps=self.settings.unroll_steps,
            max_tokens=logs.eval_max_tokens,
        )
        self.log.append({"event": "eval", "step": step, "tokens": tokens, **result.to_dict()})
        if logs.plot:
            plot_curves(self.log.path, self.output_dir / PLOT_FILE)
        logger.info(
            "step %d: held-out perplexity %.2f (forward %.2f, backward %.2f)",
            step,
            result.average,
            result.forward,
            result.backward,
        )
        return result


def train(
    config: PretrainConfig, output_dir: Union[str, Path], resume: bool = False, show_progress: bool = True
) -> TrainResult:
    """Train (or with `resume`, continue) a biLM as `config` says, writing into `output_dir`: the
    checkpoint, the log, the plot and the exported model."""
    context = distributed.setup()
    try:
        result = Trainer(config, output_dir, context, resume=resume, show_progress=show_progress).run()
        distributed.wait_for_all(context)
        return result
    finally:
        distributed.teardown(context)
