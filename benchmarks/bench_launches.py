"""How many kernels each GPU inference candidate launches per batch, counted on the CPU, so that progress
shows between the rare GPU sessions (pretraining steps: benchmarks/bench_pretrain_launches.py).

Counted from torch's profiler over one unit after a warm-up one, by the rule of
benchmarks/launch_count.py, which the pretraining count follows too.

    python -m benchmarks.bench_launches                 # original size, 128 sentences a batch
    python -m benchmarks.bench_launches --tiny          # the tiny model, 4 sentences: seconds, CI
"""

from __future__ import annotations

import argparse
from functools import partial
from typing import Callable, List

import torch
from torch._inductor import config as inductor_config

from benchmarks.launch_count import count_events
from benchmarks.variants import INFERENCE, VARIANTS, Setup, of_kind
from spacy_elmo.elmo.util.machine import machine


def count_launches(run: Callable[[], None]) -> int:
    """The kernels `run` launches, by benchmarks/launch_count.py's rule."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        run()
    return int(count_events(profile.events())["launches"])


def count_variant(name: str, setup: Setup) -> int:
    """The kernels one unit of the registered candidate `name` launches, after a warm-up unit (which
    fills the caches and compiles what is compiled, with its kernels named in the profile)."""
    inductor_config.cpp.enable_kernel_profile = True
    workload = VARIANTS[name].prepare(setup)
    workload.run(1)
    return count_launches(partial(workload.run, 1))


def measure(names: List[str], setup: Setup) -> List[str]:
    """One line per candidate: kernels per unit, and their ratio to the first's."""
    counts = [count_variant(name, setup) for name in names]
    return [f"{name:<44} {c:>7,} kernels ({c / counts[0]:.2f})" for name, c in zip(names, counts)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="The tiny model, 4 sentences a batch.")
    parser.add_argument("--batch-size", type=int, default=None, help="Sentences a batch (default 128; 4 with --tiny).")
    parser.add_argument("--only", nargs="*", default=None, help="Candidates to count (default: all).")
    args = parser.parse_args()
    batch_size = args.batch_size or (4 if args.tiny else 128)
    setup = Setup(torch.device("cpu"), "tiny" if args.tiny else "original", batch_size)
    print(machine(), flush=True)
    names = [n for n in of_kind(INFERENCE) if args.only is None or n in args.only]
    print(f"inference, {setup.size}, {batch_size} a unit, per unit:", flush=True)
    for line in measure(names, setup):
        print(line, flush=True)
    print("pretraining steps: python -m benchmarks.bench_pretrain_launches", flush=True)


if __name__ == "__main__":
    main()
