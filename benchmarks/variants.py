"""The registry of GPU candidates that benchmarks/bench_launches.py counts and `bench_gpu --variants`
times: one entry per candidate, a name -> `Variant`, the plain path of each kind first.

A candidate is registered with a few lines: a function `(Setup) -> Workload` that builds its model and
data and returns one unit of work (an inference batch or a pretraining step), and an entry in
`VARIANTS` (see docs/gpu.md). The benchmarks never name a candidate themselves.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from benchmarks.common import (
    DEFAULT_TEXT,
    flops_per_token,
    load_sentences,
    pretraining_flops_per_token,
    softmax_rows,
    write_pretraining_corpus,
)
from spacy_elmo import BiLM, preset
from spacy_elmo.nn.run_options import RunOptions
from spacy_elmo.pretrain import load_config
from spacy_elmo.pretrain.checkpoint import LOG_FILE, MetricsLog
from spacy_elmo.pretrain.distributed import Context
from spacy_elmo.pretrain.trainer import Trainer

CONFIGS = Path(__file__).resolve().parent.parent / "configs"

INFERENCE, PRETRAINING = "inference", "pretraining"


@dataclass(frozen=True)
class Setup:
    """Where and how much: the device, the model preset's name (inference), the pretraining preset
    (`configs/pretrain_{pretrain_preset}.cfg`), and sentences (or sequences) per unit."""

    device: torch.device
    size: str
    batch_size: int
    pretrain_preset: str = "small"
    corpus: Optional[Dict[str, Any]] = None  # pretraining's `[paths]` (default: the repository's sample)


@dataclass(frozen=True)
class Workload:
    """`run(n)` does n units of work (n batches, n steps); `tokens` is the tokens one unit reads;
    `flops_per_token` the nominal FLOPs of a token (benchmarks/common.py), for the fraction of the peak."""

    run: Callable[[int], None]
    tokens: int
    flops_per_token: float
    rate: Optional[Callable[[], float]] = None  # tokens/s of the last `run`, where the workload times itself
    loss: Optional[Callable[[], float]] = None  # the last `run`'s mean loss (pretraining), to compare with plain
    span: Optional[Callable[[], Tuple[float, float]]] = None  # wall-clock start and end of what `rate` timed


@dataclass(frozen=True)
class Variant:
    kind: str
    prepare: Callable[[Setup], Workload]


def inference(run: RunOptions) -> Callable[[Setup], Workload]:
    """`BiLM.embed` of real sentences, `batch_size` a batch, with `run`'s options (random weights)."""

    def prepare(setup: Setup) -> Workload:
        torch.manual_seed(0)
        bilm = BiLM(preset(setup.size)).to(setup.device).eval()
        text = load_sentences(DEFAULT_TEXT, setup.batch_size * 40)
        per_unit = [text[i % len(text)] for i in range(setup.batch_size)]

        def work(n: int) -> None:
            bilm.embed(per_unit * n, batch_size=setup.batch_size, run=run)

        return Workload(work, sum(len(s) for s in per_unit), flops_per_token(bilm.options))

    return prepare


def pretraining(step_mode: str, **settings: Any) -> Callable[[Setup], Workload]:
    """Pretraining steps of the preset on the repository's English sample, `batch_size` sequences a
    step, in `step_mode` with `settings` (`[training]` keys). `run(n)` trains 2n steps from scratch and
    its `rate` is the trainer's own over the last n (per direction, from its log), so building the run,
    compiling and filling the prefetch queue stay out of the figure; its `loss` the mean over those n
    steps, which every candidate computes from the same seed."""

    def prepare(setup: Setup) -> Workload:
        folder = Path(tempfile.mkdtemp(prefix="variant-"))
        corpus = setup.corpus or write_pretraining_corpus(folder / "corpus")
        rates: List[float] = []
        losses: List[float] = []
        spans: List[Tuple[float, float]] = []

        def work(n: int) -> None:
            overrides = {
                **corpus,
                "training.max_steps": 2 * n,
                "training.batch_size": setup.batch_size,
                "training.step_mode": step_mode,
                **{f"training.{key}": value for key, value in settings.items()},
                "logging.log_every": n,
                "logging.checkpoint_every": 1_000_000,
                "logging.plot": False,
            }
            config = load_config(CONFIGS / f"pretrain_{setup.pretrain_preset}.cfg", overrides)
            out = folder / f"run-{len(rates)}"
            Trainer(config, out, Context(device=setup.device), show_progress=False).run()
            first, last = [r for r in MetricsLog(out / LOG_FILE).records() if r.get("event") == "train"][-2:]
            rates.append((last["tokens"] - first["tokens"]) / (last["elapsed"] - first["elapsed"]))
            losses.append(math.log(last["perplexity"]))
            spans.append((first["time"], last["time"]))

        config = load_config(CONFIGS / f"pretrain_{setup.pretrain_preset}.cfg", corpus)
        tokens = setup.batch_size * config.training.unroll_steps
        flops = pretraining_flops_per_token(config.options, softmax_rows(config))
        return Workload(work, tokens, flops, rate=lambda: rates[-1], loss=lambda: losses[-1], span=lambda: spans[-1])

    return prepare


VARIANTS: Dict[str, Variant] = {
    "inference, plain step loop": Variant(INFERENCE, inference(RunOptions())),
    "pretraining, plain step": Variant(PRETRAINING, pretraining("plain")),
    "pretraining, no host sync": Variant(PRETRAINING, pretraining("no_sync")),
    "pretraining, compiled step": Variant(PRETRAINING, pretraining("compiled")),
    "pretraining, compiled step + tf32 + prefetch": Variant(
        PRETRAINING, pretraining("compiled", tf32=True, prefetch=4)
    ),
}


def of_kind(kind: str) -> List[str]:
    """The registered names of one kind, the plain path first."""
    return [name for name, variant in VARIANTS.items() if variant.kind == kind]
