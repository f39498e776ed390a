"""Where the time of a GPU candidate goes: torch.profiler over a candidate's timed work, the kernels
with the most time on the device, with their share and count per unit, and how many kernel and CUDA
graph launches the host made per unit (the launch count of benchmarks/launch_count.py as a GPU sees it).
The next speed work starts from this table, not from guesses (the compiled LSTM windows lost on an H200
for reasons no one had profiled: docs/design.md).

    python -m benchmarks.gpu_profile DATA --vocab projects/bundled_model/models/gutenberg-web-2x512/vocab.txt
    python -m benchmarks.gpu_profile DIR --device cpu --tiny      # the same code at the tiny size (CI)

By default it profiles the plain inference path at batch 128 and the fastest pretraining candidate
measured (docs/results.md) at batch 1024; `--variant NAME:BATCH` picks others from benchmarks/variants.py.
A pretraining run is profiled whole and only its last `units` steps (the trainer's step ranges) are
counted, so building the run and compiling stay out; an inference workload is profiled after doing its
work once. On the CPU each operator's self CPU time stands in for the kernels'. Prints figures only.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

from benchmarks.bench_gpu import FULL, TINY, Size, corpus_paths, device_name, synchronize
from benchmarks.common import machine
from benchmarks.profile_events import under_last_ranges
from benchmarks.variants import VARIANTS, Setup, Workload
from spacy_elmo.elmo.pretrain.trainer import STEP_RANGE

DEFAULT_VARIANTS = ("inference, plain step loop:128", "pretraining, compiled step + tf32 + prefetch:1024")
TINY_VARIANTS = ("inference, plain step loop:4", "pretraining, compiled step + tf32 + prefetch:2")
TOP = 15
# The CUDA runtime and driver calls that start work on the device: a kernel each, or a whole CUDA graph.
KERNEL_LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")
GRAPH_LAUNCHES = ("cudaGraphLaunch", "cuGraphLaunch")


@dataclass(frozen=True)
class OperatorTime:
    name: str
    microseconds: float  # time on the device (self time on the CPU where there is no device), per unit
    calls: float  # per unit


def spent(event: Any, on_device: bool) -> List[Tuple[str, float]]:
    """(name, microseconds) of what a host operator spent itself: on a device, each kernel it launched
    (by the kernel's name: inductor's fused kernels show as themselves); on the CPU, its self time. The
    profile's device-side events are skipped, as each kernel is its launcher's already."""
    if event.device_type != DeviceType.CPU:
        return []
    if on_device:
        return [(kernel.name, float(kernel.duration)) for kernel in event.kernels]
    return [(event.name, float(event.self_cpu_time_total))]


def operator_times(events: List[Any], on_device: bool, units: int) -> List[OperatorTime]:
    """Time and calls per kernel (or operator) name and unit, most time first."""
    time: Dict[str, float] = defaultdict(float)
    calls: Dict[str, int] = defaultdict(int)
    for event in events:
        for name, microseconds in spent(event, on_device):
            time[name] += microseconds
            calls[name] += 1
    rows = [OperatorTime(name, time[name] / units, calls[name] / units) for name in time]
    return sorted(rows, key=lambda row: -row.microseconds)


def launches(events: List[Any], units: int) -> Tuple[float, float]:
    """Kernel launches and CUDA graph launches per unit, from the runtime calls the host made: what a
    step costs the host in launches on a real device (a graph's replay is one call however many kernels
    it holds). None on the CPU."""
    kernels = sum(event.name in KERNEL_LAUNCHES for event in events)
    graphs = sum(event.name in GRAPH_LAUNCHES for event in events)
    return kernels / units, graphs / units


def profile_variant(name: str, batch_size: int, device: torch.device, size: Size, corpus: Dict[str, Any]) -> List[str]:
    """The table of one candidate at one batch size: the total per unit, then the top kernels."""
    workload: Workload = VARIANTS[name].prepare(Setup(device, size.options, batch_size, size.pretrain_preset, corpus))
    self_timed = workload.timed is not None
    if not self_timed:
        workload.run(size.units)  # compiled and warm before the profile
        synchronize(device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as profiler:
        workload.run(size.units)
        synchronize(device)
    events = list(profiler.events())
    if self_timed:
        events, _ = under_last_ranges(events, STEP_RANGE, size.units)
    rows = operator_times(events, device.type == "cuda", size.units)
    total = sum(row.microseconds for row in rows)
    unit = "step" if self_timed else "batch"
    where, what = ("device", "kernels") if device.type == "cuda" else ("CPU", "operators")
    kernel_calls, graph_calls = launches(events, size.units)
    lines = [
        f"{name}, batch {batch_size}: {total / 1000:,.2f} ms of {where} time a {unit}, {len(rows)} {what}, "
        f"{kernel_calls:,.1f} kernel launches and {graph_calls:,.1f} CUDA graph launches a {unit}"
    ]
    for row in rows[:TOP]:
        share = row.microseconds / total if total else 0.0
        lines.append(f"  {share:6.1%}  {row.microseconds / 1000:9.3f} ms  {row.calls:8.1f} calls  {row.name[:90]}")
    return lines


def parse_variant(text: str) -> Tuple[str, int]:
    name, _, batch = text.rpartition(":")
    if name not in VARIANTS or not batch.isdigit():
        raise SystemExit(f"--variant {text!r}: give NAME:BATCH with NAME one of: {'; '.join(VARIANTS)}")
    return name, int(batch)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="Text or token-id shards the pretraining candidates train on.")
    parser.add_argument("--vocab", type=Path, default=None, help="The vocabulary (needed where DATA holds shards).")
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu.")
    parser.add_argument("--tiny", action="store_true", help="The tiny sizes: checks the code runs.")
    parser.add_argument("--variant", action="append", default=None, help="NAME:BATCH (repeatable).")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU: nothing to profile (--device cpu --tiny runs the same code on the CPU)")
    size = TINY if args.tiny else FULL
    chosen = [parse_variant(v) for v in args.variant or (TINY_VARIANTS if args.tiny else DEFAULT_VARIANTS)]
    print(machine(), flush=True)
    print(device_name(device), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = corpus_paths(args.data, args.vocab, Path(tmp))
        for name, batch_size in chosen:
            for line in profile_variant(name, batch_size, device, size, corpus):
                print(line, flush=True)


if __name__ == "__main__":
    main()
