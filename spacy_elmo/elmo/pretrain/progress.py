"""Where a run stands (`Position`), what it reports while it trains (the "train" lines of log.jsonl and
the progress bar), how many steps the corpus asks for, and the signals that end it cleanly."""

from __future__ import annotations

import math
import signal
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional

import torch
from tqdm import tqdm

from .checkpoint import MetricsLog
from .config import PretrainConfig
from .corpus import CorpusStats
from .distributed import Context
from .model import LMOutput, States
from .perplexity import Perplexity
from .steps import RunningStats


class StopRequest:
    """SIGINT or SIGTERM (Ctrl-C, a scheduler's time limit) ends a single-process run after the current
    step, with a checkpoint and the exported model, instead of losing everything since the last
    checkpoint. With several processes a signal reaches one rank only and the others would wait for
    it forever, so there the default handlers stay (resume from the last checkpoint). A signal the run
    was started ignoring stays ignored: a shell script starts its background commands with Ctrl-C
    ignored, so that the Ctrl-C that stops the script's foreground work (`pretrain ... & tail -f ...`)
    leaves them running, as Python itself leaves it."""

    def __init__(self, enabled: bool) -> None:
        self.requested = False
        self.signal = ""
        self.signum: Optional[int] = None
        self._previous: Dict[int, Any] = {}
        if enabled and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    self._previous[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        self.requested = True
        self.signal = signal.Signals(signum).name
        self.signum = signum

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}


@dataclass(frozen=True)
class Position:
    """Where a run stands: optimisation steps and forward targets so far, and the LSTM states carried
    into the next batch."""

    step: int
    tokens: int
    states: States


class ProgressReport:
    """The "train" lines of log.jsonl (a TrainRecord, the speed, the time) and the progress bar."""

    def __init__(
        self, context: Context, log: MetricsLog, show: bool, stats: CorpusStats, position: Position, total: int
    ) -> None:
        self.context, self.log = context, log
        self.running = RunningStats(context.device)
        self.per_epoch = stats.n_tokens + stats.n_sentences  # forward targets in one pass over the corpus
        self.started, self.start_tokens = time.perf_counter(), position.tokens
        self.bar = tqdm(
            total=total,
            initial=position.step,
            unit="step",
            disable=not show,
            desc="pretrain",
            dynamic_ncols=True,
        )

    def add(self, out: LMOutput, norm: torch.Tensor) -> None:
        self.running.add(out.loss_sums, out.counts, norm)
        self.bar.update(1)

    def report(self, position: Position) -> None:
        record = self.running.collect(self.context)
        elapsed = time.perf_counter() - self.started
        speed = (position.tokens - self.start_tokens) / elapsed if elapsed > 0 else 0.0
        epoch = position.tokens / self.per_epoch
        self.bar.set_postfix_str(f"epoch {epoch:.2f} tok/s {speed:,.0f} ppl {record.perplexity:,.1f}", refresh=False)
        if self.context.is_main:
            self.log.append(
                {
                    "event": "train",
                    "step": position.step,
                    "tokens": position.tokens,
                    **asdict(record),
                    "tokens_per_s": speed,
                    "elapsed": elapsed,
                    "time": time.time(),  # wall clock, to line the log up with other measurements (GPU busy)
                }
            )

    def close(self) -> None:
        self.bar.close()


def estimated_steps(stats: CorpusStats, config: PretrainConfig, world_size: int) -> int:
    """Steps to see the corpus `n_epochs` times: each sentence of n tokens gives n + 1 targets."""
    t = config.training
    per_epoch = stats.n_tokens + stats.n_sentences
    return math.ceil(t.n_epochs * per_epoch / (world_size * t.batch_size * t.unroll_steps))


@dataclass
class TrainResult:
    """What a finished run reports: its last step, the tokens trained on, the held-out perplexity
    (rank 0, when a dev file is set) and every rank's parameter digest."""

    step: int
    tokens: int
    heldout: Optional[Perplexity]
    digests: List[str]  # every rank's parameter digest at the end
    stopped_by: Optional[int] = None  # the signal that ended the run early (SIGINT, SIGTERM), if any
