"""The registry of GPU candidates that benchmarks/bench_launches.py counts and `bench_gpu --variants`
times: one entry per candidate, a name -> `Variant`, the plain path of each kind first.

A candidate is registered with a few lines: a function `(Setup) -> Workload` that builds its model and
data and returns one unit of work (an inference batch or a pretraining step), and an entry in
`VARIANTS` (see docs/gpu.md). The benchmarks never name a candidate themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List

import torch

from benchmarks.common import DEFAULT_TEXT, flops_per_token, load_sentences
from spacy_elmo import BiLM, preset
from spacy_elmo.nn.run_options import RunOptions

INFERENCE, PRETRAINING = "inference", "pretraining"


@dataclass(frozen=True)
class Setup:
    """Where and how much: the device, the model preset's name, and sentences (or sequences) per unit."""

    device: torch.device
    size: str
    batch_size: int


@dataclass(frozen=True)
class Workload:
    """`run(n)` does n units of work (n batches, n steps); `tokens` is the tokens one unit reads;
    `flops_per_token` the nominal FLOPs of a token (benchmarks/common.py), for the fraction of the peak."""

    run: Callable[[int], None]
    tokens: int
    flops_per_token: float


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


VARIANTS: Dict[str, Variant] = {
    "inference, plain step loop": Variant(INFERENCE, inference(RunOptions())),
    "inference, compiled LSTM": Variant(INFERENCE, inference(RunOptions(lstm="compiled"))),
    "inference, pinned copies": Variant(INFERENCE, inference(RunOptions(host_copies="pinned"))),
    "inference, compiled LSTM + pinned copies": Variant(
        INFERENCE, inference(RunOptions(lstm="compiled", host_copies="pinned"))
    ),
}


def of_kind(kind: str) -> List[str]:
    """The registered names of one kind, the plain path first."""
    return [name for name, variant in VARIANTS.items() if variant.kind == kind]
