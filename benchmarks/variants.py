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
    preset_settings,
    pretraining_flops_per_token,
    softmax_rows,
    write_pretraining_corpus,
)
from spacy_elmo import BiLM, preset
from spacy_elmo.elmo.nn.fast.fast_bilm import make_fast
from spacy_elmo.elmo.nn.run_options import CAPTURED, STEP, WAVEFRONT, RunOptions
from spacy_elmo.elmo.nn.time_loops.wave_cell import WAVE_CELL
from spacy_elmo.elmo.pretrain.checkpoint import LOG_FILE, MetricsLog
from spacy_elmo.elmo.pretrain.distributed import Context
from spacy_elmo.elmo.pretrain.trainer import Trainer

INFERENCE, PRETRAINING = "inference", "pretraining"


@dataclass(frozen=True)
class Setup:
    """Where and how much: the device, the model preset's name (inference), the pretraining preset
    (the `init-config` preset), and sentences (or sequences) per unit."""

    device: torch.device
    size: str
    batch_size: int
    pretrain_preset: str = "small"
    corpus: Optional[Dict[str, Any]] = None  # pretraining's `[paths]` (default: the repository's sample)


@dataclass(frozen=True)
class TimedSteps:
    """The trainer's two log lines around the steps a pretraining `run` timed, and what they give."""

    first: Dict[str, Any]
    last: Dict[str, Any]

    @property
    def rate(self) -> float:
        """Tokens/s (per direction) of the timed steps."""
        return (self.last["tokens"] - self.first["tokens"]) / (self.last["elapsed"] - self.first["elapsed"])

    @property
    def loss(self) -> float:
        """The timed steps' mean loss, to compare with the plain step's (the same seed)."""
        return math.log(self.last["perplexity"])

    @property
    def span(self) -> Tuple[float, float]:
        """The timed steps' start and end on the wall clock."""
        return self.first["time"], self.last["time"]


@dataclass(frozen=True)
class Workload:
    """`run(n)` does n units of work (n batches, n steps); `tokens` is the tokens one unit reads;
    `flops_per_token` the nominal FLOPs of a token (benchmarks/common.py), for the fraction of the peak;
    `timed`, where the workload times itself, the last `run`'s timed steps."""

    run: Callable[[int], None]
    tokens: int
    flops_per_token: float
    timed: Optional[Callable[[], TimedSteps]] = None


@dataclass(frozen=True)
class Variant:
    kind: str
    prepare: Callable[[Setup], Workload]


def random_bilm_and_batch(setup: Setup) -> Tuple[BiLM, List[List[str]]]:
    """The preset's biLM with random weights (seeded) on the device, and `batch_size` real sentences."""
    torch.manual_seed(0)
    bilm = BiLM(preset(setup.size)).to(setup.device).eval()
    text = load_sentences(DEFAULT_TEXT, setup.batch_size * 40)
    return bilm, [text[i % len(text)] for i in range(setup.batch_size)]


def inference_embed(
    time_loop: str, fast_mode: Optional[str] = None, compiled_step: bool = True
) -> Callable[[Setup], Workload]:
    """`BiLM.embed` of real sentences, `batch_size` a batch, each batch's layers copied to host memory,
    through the time loop `time_loop` (elmo/nn/time_loops/dispatch.py), of the exact biLM or its `fast_mode` copy;
    `compiled_step=False` runs the wavefront's elementwise step uncompiled (elmo/nn/time_loops/wave_cell.py), as it
    ran before it was compiled."""

    def prepare(setup: Setup) -> Workload:
        bilm, per_unit = random_bilm_and_batch(setup)
        model = bilm if fast_mode is None else make_fast(bilm, fast_mode)
        run = RunOptions(time_loop=time_loop)

        def work(n: int) -> None:
            compiling = WAVE_CELL.compiling
            WAVE_CELL.compiling = compiling and compiled_step
            try:
                model.embed(per_unit * n, batch_size=setup.batch_size, run=run)
            finally:
                WAVE_CELL.compiling = compiling

        return Workload(work, sum(len(s) for s in per_unit), flops_per_token(bilm.options))

    return prepare


def inference_on_device(setup: Setup) -> Workload:
    """The same batches as `inference_embed` (the sentences sorted by length as `embed` sorts them),
    their layers left on the device, as the spaCy component leaves them on a GPU (dlpack to CuPy): the
    biLM's own pace, without `embed`'s copies to host memory."""
    bilm, per_unit = random_bilm_and_batch(setup)

    def work(n: int) -> None:
        ordered = sorted(per_unit * n, key=len, reverse=True)
        with torch.inference_mode():
            for start in range(0, len(ordered), setup.batch_size):
                bilm.forward_sentences(ordered[start : start + setup.batch_size])

    return Workload(work, sum(len(s) for s in per_unit), flops_per_token(bilm.options))


def pretraining(step_mode: str, **settings: Any) -> Callable[[Setup], Workload]:
    """Pretraining steps of the preset on the repository's English sample, `batch_size` sequences a
    step, in `step_mode` with `settings` (`[training]` keys). `run(n)` trains 2n steps from scratch and
    times the last n from the trainer's own log (`TimedSteps`), so building the run, compiling and
    filling the prefetch queue stay out of the figures."""

    def prepare(setup: Setup) -> Workload:
        folder = Path(tempfile.mkdtemp(prefix="variant-"))
        corpus = setup.corpus or write_pretraining_corpus(folder / "corpus")
        runs: List[TimedSteps] = []

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
            config = preset_settings(setup.pretrain_preset, overrides)
            out = folder / f"run-{len(runs)}"
            Trainer(config, out, Context(device=setup.device), show_progress=False).run()
            first, last = [r for r in MetricsLog(out / LOG_FILE).records() if r.get("event") == "train"][-2:]
            runs.append(TimedSteps(first, last))

        config = preset_settings(setup.pretrain_preset, corpus)
        tokens = setup.batch_size * config.training.unroll_steps
        flops = pretraining_flops_per_token(config.options, softmax_rows(config))
        return Workload(work, tokens, flops, timed=lambda: runs[-1])

    return prepare


VARIANTS: Dict[str, Variant] = {
    "inference, plain step loop": Variant(INFERENCE, inference_embed(STEP)),
    "inference, layers left on the device": Variant(INFERENCE, inference_on_device),
    "inference, wavefront": Variant(INFERENCE, inference_embed(WAVEFRONT)),
    "inference, wavefront, step uncompiled": Variant(INFERENCE, inference_embed(WAVEFRONT, compiled_step=False)),
    "inference, captured wavefront": Variant(INFERENCE, inference_embed(CAPTURED)),
    "inference, captured wavefront, step uncompiled": Variant(
        INFERENCE, inference_embed(CAPTURED, compiled_step=False)
    ),
    "inference, captured wavefront, bf16": Variant(INFERENCE, inference_embed(CAPTURED, "bf16")),
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
