"""Building the next steps' inputs in a background thread while the current step runs.

On a GPU a pretraining step's host work (packing rows, mapping tokens to char ids, drawing negatives) is
time the device sits idle unless it overlaps with the device's work on the previous step. The host work
is mostly NumPy and torch calls that release the GIL, so one thread is enough. The order of the items
is exactly the order of the source, so a run with prefetching computes what a run without it computes.
"""

from __future__ import annotations

import queue
import threading
from typing import Generic, Iterator, Optional, TypeVar

from ..errors import InputError

T = TypeVar("T")


class _End:
    """Marks the end of the source, or carries the exception that ended it."""

    def __init__(self, error: Optional[BaseException] = None) -> None:
        self.error = error


class Prefetcher(Generic[T]):
    """Iterates `source` in order, computing up to `depth` items ahead in a daemon thread. `close()`
    stops the thread early (the trainer stops before the source ends at `max_steps`)."""

    def __init__(self, source: Iterator[T], depth: int) -> None:
        if depth < 1:
            raise InputError(f"prefetch depth must be at least 1, got {depth}")
        self._queue: "queue.Queue[object]" = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._fill, args=(source,), name="pretrain-prefetch", daemon=True)
        self._thread.start()

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _fill(self, source: Iterator[T]) -> None:
        try:
            for item in source:
                if not self._put(item):
                    return
        except BaseException as err:  # handed to the consumer, who raises it in its own thread
            self._put(_End(err))
            return
        self._put(_End())

    def __iter__(self) -> "Prefetcher[T]":
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        item = self._queue.get()
        if isinstance(item, _End):
            self._done = True
            self._thread.join()
            if item.error is not None:
                raise item.error
            raise StopIteration
        return item  # type: ignore[return-value]

    def close(self) -> None:
        self._stop.set()
        self._done = True
        self._thread.join(timeout=5.0)
