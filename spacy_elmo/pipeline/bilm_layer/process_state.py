"""What the biLM layers of one process share, in one object whose lifetime is the process's.

- Fast copies (`fast_copy`): the int8 copy of each loaded biLM, made on first use and kept as long as
  that biLM lives (weak keys), so a new biLM (`set_bilm`) gets a new copy; None where the mode cannot
  run on the biLM's device, which the layer then says once in a warning.
- One thread a worker (`single_threaded_in_workers`): a process forked after torch ran a parallel op
  (`nlp.pipe(n_process=2)` on Linux) deadlocks in its first parallel op, so once a biLM is loaded,
  forked children run torch single-threaded (registered once per process). A worker that
  multiprocessing starts afresh (`spawn`, macOS's and Windows' default; `forkserver`, Linux's from
  Python 3.14) cannot deadlock, but each would run torch's default thread count, one a core, and
  several such workers oversubscribe the cores (docs/results.md), so it too runs one thread, as
  torch's own DataLoader workers do, unless OMP_NUM_THREADS names a count.
- A stateful biLM in a worker (`warn_stateful_in_worker`): the states a worker carries follow only the
  docs it was given, so `nlp.pipe(n_process>1)` of a stateful pipeline gives other vectors than a serial
  run; the rule (docs/component.md) is one process, and a worker says so once.

Nothing here is pickled with a pipeline: a pickled or spawned copy starts with a fresh state.
"""

from __future__ import annotations

import multiprocessing
import os
import warnings
import weakref
from typing import Optional, Tuple

import torch

from ...elmo.manylangs.model import ManyLangsBiLM
from ...elmo.nn.bilm import BiLM
from ...elmo.nn.fast.fast_bilm import FastModeUnavailable, make_fast, resolve_mode


class ProcessState:
    """The process's fast copies and its one thread a worker (see the module docstring)."""

    def __init__(self) -> None:
        self._fast: "weakref.WeakKeyDictionary[BiLM, Tuple[str, Optional[BiLM]]]" = weakref.WeakKeyDictionary()
        self._threads_settled = False
        self._stateful_warned = False

    def fast_copy(self, bilm: BiLM, mode: str) -> Optional[BiLM]:
        """The `mode` copy of `bilm`, or None where the mode cannot run on its device (int8 on a GPU, bf16
        on a CPU without bf16 units) or "auto" found no mode faster than exact: the layer then runs the
        exact biLM, which is the faster one there, so one config serves every machine."""
        cached = self._fast.get(bilm)
        if cached is not None and cached[0] == mode:
            return cached[1]
        try:
            if isinstance(bilm, ManyLangsBiLM):
                raise FastModeUnavailable(f"the {mode!r} fast mode does not run ELMoForManyLangs models")
            chosen = resolve_mode(bilm, mode)
            copy: Optional[BiLM] = None if chosen is None else make_fast(bilm, chosen)
        except FastModeUnavailable as error:
            warnings.warn(f"fast_mode {mode!r} is not used: {error}. Running the exact biLM instead.", stacklevel=3)
            copy = None
        self._fast[bilm] = (mode, copy)
        return copy

    def single_threaded_in_workers(self) -> None:
        if not self._threads_settled:
            self._threads_settled = True
            os.register_at_fork(after_in_child=_one_thread)
            if multiprocessing.parent_process() is not None and not os.environ.get("OMP_NUM_THREADS"):
                _one_thread()

    def warn_stateful_in_worker(self) -> None:
        if not self._stateful_warned and multiprocessing.parent_process() is not None:
            self._stateful_warned = True
            warnings.warn(
                "a stateful biLM (stateful = true) runs in a worker process: its LSTM states follow only this "
                "worker's docs, so the vectors of nlp.pipe(n_process>1) differ from a serial run's; run a "
                "stateful pipeline with n_process=1, or set stateful = false",
                stacklevel=3,
            )


def _one_thread() -> None:
    torch.set_num_threads(1)


PROCESS = ProcessState()
