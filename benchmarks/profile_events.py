"""Walking torch.profiler's host events, for the benchmarks that read a profile (launch_count.py,
gpu_profile.py): an event's ancestors and descendants, and the events under the last ranges of a
name, such as the trainer's step ranges."""

from __future__ import annotations

from typing import Any, Iterable, List, Tuple


def ancestors(event: Any) -> Iterable[Any]:
    parent = event.cpu_parent
    while parent is not None:
        yield parent
        parent = parent.cpu_parent


def descendants(event: Any) -> Iterable[Any]:
    for child in event.cpu_children:
        yield child
        yield from descendants(child)


def under_last_ranges(events: List[Any], name: str, last: int) -> Tuple[List[Any], int]:
    """The events under the last `last` ranges called `name` (`record_function`), and how many such
    ranges there were (at most `last`)."""
    ranges = sorted((e for e in events if e.name == name), key=lambda e: e.time_range.start)[-last:]
    chosen = {id(r) for r in ranges}
    return [e for e in events if any(id(a) in chosen for a in ancestors(e))], len(ranges)
