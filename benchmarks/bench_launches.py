"""How many kernels each GPU inference candidate launches per batch, counted on the CPU, so that progress
shows between the rare GPU sessions (pretraining steps: benchmarks/bench_pretrain_launches.py).

Counted from torch's profiler over one unit after a warm-up one: every aten op the host dispatches
(views apart, since they launch nothing; an op without a kernel of its own counted by the ops it calls).

    python -m benchmarks.bench_launches                 # original size, 128 sentences a batch
    python -m benchmarks.bench_launches --tiny          # the tiny model, 4 sentences: seconds, CI
"""

from __future__ import annotations

import argparse
from functools import lru_cache, partial
from typing import Callable, List

import torch

from benchmarks.variants import INFERENCE, VARIANTS, Setup, of_kind
from spacy_elmo.util.machine import machine


@lru_cache(maxsize=None)
def _kind(name: str) -> str:
    """`composite` (no kernel of its own: counted by what it calls), `view` (launches nothing) or
    `kernel`, for an aten op's profiler name such as `aten::baddbmm`."""
    packet = getattr(torch.ops.aten, name.split("::", 1)[1], None)
    if packet is None:
        return "kernel"
    overloads = [getattr(packet, o) for o in packet.overloads()]
    composite = []
    for overload in overloads:
        try:
            composite.append(
                torch._C._dispatch_has_kernel_for_dispatch_key(overload.name(), "CompositeImplicitAutograd")
            )
        except RuntimeError:  # an overload the dispatcher does not list by that name
            continue
    if composite and all(composite):
        return "composite"
    return "view" if any(o.is_view for o in overloads) else "kernel"


def _count(event: object) -> int:
    """Kernels of one profiler event and what it calls."""
    name = event.name  # type: ignore[attr-defined]
    children = event.cpu_children  # type: ignore[attr-defined]
    if name.startswith("aten::"):
        kind = _kind(name)
        if kind == "kernel":
            return 1
        if kind == "view":
            return 0
    return sum(_count(child) for child in children)


def count_launches(run: Callable[[], None]) -> int:
    """The kernels `run` launches."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        run()
    return sum(_count(e) for e in profile.events() if e.cpu_parent is None)


def count_variant(name: str, setup: Setup) -> int:
    """The kernels one unit of the registered candidate `name` launches, after a warm-up unit (which
    fills the caches)."""
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
