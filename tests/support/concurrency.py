"""Calls from several threads at once, for the rule on a stateful module shared across threads: a
wrapped function that sleeps on entry, so that calls overlap unless something serializes them, and
counts how many ran at once."""

import threading
import time
from typing import Any, Callable, List


class Overlaps:
    """`function`, slowed by `delay` seconds on entry; `most`: the most calls running at once;
    `entered`: set once a call has begun."""

    def __init__(self, function: Callable[..., Any], delay: float = 0.2) -> None:
        self.function, self.delay = function, delay
        self.running = self.most = 0
        self.entered = threading.Event()
        self._count = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._count:
            self.running += 1
            self.most = max(self.most, self.running)
        self.entered.set()
        try:
            time.sleep(self.delay)
            return self.function(*args, **kwargs)
        finally:
            with self._count:
                self.running -= 1


def in_threads(call: Callable[[], Any], n: int = 2) -> List[Any]:
    """`call()` from `n` threads started together; their results in the order they finished."""
    results: List[Any] = []
    threads = [threading.Thread(target=lambda: results.append(call())) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == n, "a thread raised: its traceback is printed above"
    return results
