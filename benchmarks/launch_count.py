"""The one rule by which the launch benchmarks count what a GPU would launch, applied on the CPU to
torch.profiler's events (bench_launches.py: an inference batch; bench_pretrain_launches.py: a pretraining
step): each aten operator called outside another one that runs a kernel of its own (a composite such as
`linear` once, where anything it calls does; the backward pass's each), views, allocations and
operators that return their input apart; and each kernel inductor generated (`cpp_fused_*`, seen with
its kernel profiling on); and a captured time loop (spacy_elmo/elmo/nn/time_loops/captured.py, the range
`CAPTURED_RANGE`) once, whatever runs inside it, since on a GPU it is one graph replay. Host reads:
operators that hand a value to the host (`.item()`, `int(tensor)`) or whose output size depends on
values (nonzero, unique), each a wait for the device on a GPU.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Iterable, List, Optional

import torch

from benchmarks.profile_events import ancestors, descendants, under_last_ranges
from spacy_elmo.elmo.nn.time_loops.captured import CAPTURED_RANGE

ALLOCATIONS = {"aten::empty", "aten::empty_strided", "aten::empty_like", "aten::resize_"}
# Operators that return their input when it already has the asked dtype, device or layout.
PASS_THROUGH = {"aten::to", "aten::contiguous", "aten::type_as", "aten::lift_fresh"}
HOST_READS = {"aten::_local_scalar_dense", "aten::nonzero", "aten::_unique2", "aten::unique_dim", "aten::item"}
GENERATED_KERNEL_MARKS = ("cpp_fused", "triton_")


def _overloads(name: str) -> List[Any]:
    """The overloads of the aten operator `name` ("aten::transpose"); none for a name torch lacks."""
    packet = getattr(torch.ops.aten, name.removeprefix("aten::"), None)
    return [] if packet is None else [getattr(packet, overload) for overload in packet.overloads()]


@functools.lru_cache(maxsize=None)
def is_view(name: str) -> bool:
    """Whether the aten operator `name` only makes a view of its input."""
    return any(overload.is_view for overload in _overloads(name))


@functools.lru_cache(maxsize=None)
def is_composite(name: str) -> bool:
    """Whether the aten operator `name` has no kernel of its own (CompositeImplicitAutograd: it runs by
    calling other operators, as `linear`, `reshape` and `to` do)."""
    answers = []
    for overload in _overloads(name):
        try:
            answers.append(torch._C._dispatch_has_kernel_for_dispatch_key(overload.name(), "CompositeImplicitAutograd"))
        except RuntimeError:  # an overload the dispatcher does not list by that name
            continue
    return bool(answers) and all(answers)


def _does_work(name: str) -> bool:
    """An operator that runs a kernel of its own (not a view, an allocation, a composite or a no-op)."""
    return not (name in ALLOCATIONS or name in PASS_THROUGH or is_view(name) or is_composite(name))


def _launches_in(event: Any) -> int:
    """1 for an event that launches a kernel by the rule of the module's docstring, else 0."""
    name = event.name
    if any(a.name == CAPTURED_RANGE for a in ancestors(event)):
        return 0
    if name == CAPTURED_RANGE or any(mark in name for mark in GENERATED_KERNEL_MARKS):
        return 1
    if not name.startswith("aten::") or any(a.name.startswith("aten::") for a in ancestors(event)):
        return 0
    if is_composite(name):  # once, where anything it calls does work
        return int(any(child.name.startswith("aten::") and _does_work(child.name) for child in descendants(event)))
    return int(_does_work(name))


def count_events(events: Iterable[Any], within: Optional[str] = None, last: int = 1) -> Dict[str, float]:
    """Launches and host reads in a profile's events: all of them, or per range under the last `last`
    ranges named `within` (`record_function`), averaged over those ranges."""
    counted, n_units = list(events), 1
    if within is not None:
        counted, n_ranges = under_last_ranges(counted, within, last)
        n_units = max(n_ranges, 1)
    launches = sum(_launches_in(event) for event in counted)
    host_reads = sum(event.name in HOST_READS for event in counted)
    return {"launches": launches / n_units, "host_reads": host_reads / n_units}
