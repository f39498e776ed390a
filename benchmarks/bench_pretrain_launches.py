"""Kernel launches per pretraining step, counted on the CPU, for each [training] step_mode: what a GPU
step would launch, measured without a GPU, so that progress shows between the rare GPU calls.

    python -m benchmarks.bench_pretrain_launches [--preset small] [--batch-size 128] [--steps 2]
        [--warmup 2] [--modes plain no_sync compiled]

Trains on the repository's English sample with the preset's model and profiles the steps' ranges
(`trainer.STEP_RANGE`; the inputs are built outside them). Counted in the last `--steps` steps, per
step, by the rule of benchmarks/launch_count.py, which the inference count follows too.
`count_step_launches` is the callable other benchmarks import. Prints figures only.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch._inductor.config as inductor_config
from torch.profiler import profile

from benchmarks.common import machine, preset_settings, write_pretraining_corpus
from benchmarks.launch_count import count_events
from spacy_elmo.elmo.pretrain import train
from spacy_elmo.elmo.pretrain.trainer import STEP_RANGE


@dataclass(frozen=True)
class StepLaunches:
    """Per step, averaged over the profiled steps."""

    step_mode: str
    launches: float
    host_reads: float
    steps: int


def count_step_launches(
    preset: str,
    step_mode: str,
    batch_size: Optional[int] = None,
    steps: int = 2,
    warmup: int = 2,
    overrides: Optional[Dict[str, Any]] = None,
) -> StepLaunches:
    """Train `warmup + steps` steps of the `init-config` preset `preset` in `step_mode` on the CPU and
    count what the last `steps` steps launch (sampled softmax, 256 negatives: the count does not
    depend on their number)."""
    inductor_config.cpp.enable_kernel_profile = True
    with tempfile.TemporaryDirectory() as tmp:
        settings: Dict[str, Any] = {
            **write_pretraining_corpus(Path(tmp) / "corpus"),
            "training.max_steps": warmup + steps,
            "training.step_mode": step_mode,
            "training.softmax": "sampled",
            "training.n_negative_samples": 256,
            "logging.plot": False,
            "logging.checkpoint_every": 1_000_000,
            **({"training.batch_size": batch_size} if batch_size else {}),
            **(overrides or {}),
        }
        config = preset_settings(preset, settings)
        with profile() as profiler:
            train(config, Path(tmp) / "run", show_progress=False)
    counts = count_events(profiler.events(), STEP_RANGE, steps)
    return StepLaunches(step_mode, counts["launches"], counts["host_reads"], steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small", help="The init-config preset.")
    parser.add_argument("--batch-size", type=int, default=None, help="Default: the preset's.")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--modes", nargs="+", default=["plain", "no_sync", "compiled"])
    args = parser.parse_args()
    print(machine(), flush=True)
    rows: List[StepLaunches] = []
    for mode in args.modes:
        rows.append(count_step_launches(args.preset, mode, args.batch_size, args.steps, args.warmup))
        print(f"{mode}: {rows[-1].launches:,.0f} launches, {rows[-1].host_reads:,.0f} host reads per step", flush=True)
    plain = next((r for r in rows if r.step_mode == "plain"), None)
    print(f"\npreset {args.preset}, batch {args.batch_size or 'as preset'}, {args.steps} steps after {args.warmup}")
    print("| step_mode | launches/step | vs plain | host reads/step |\n|---|---|---|---|")
    for row in rows:
        ratio = f"{row.launches / plain.launches:.3f}" if plain and plain.launches else "-"
        print(f"| {row.step_mode} | {row.launches:,.0f} | {ratio} | {row.host_reads:,.0f} |")


if __name__ == "__main__":
    main()
