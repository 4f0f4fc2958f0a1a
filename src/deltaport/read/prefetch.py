"""An ordered, bounded parallel map: the next few files of a scan load in background
threads while one is being read, and at most ``window`` results are computed ahead of
the consumer, so reading a table of any size holds only a few files in memory."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def ordered_map(
    fn: Callable[[T], R], items: Iterable[T], *, workers: int, window: int
) -> Iterator[R]:
    """``map(fn, items)`` run on ``workers`` threads, results in order; ``workers`` 0
    runs each call in the consumer's thread when its result is asked for. Closing the
    iterator early cancels the calls that have not started."""
    if workers <= 0:
        yield from map(fn, items)
        return
    window = max(window, workers)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="deltaport-prefetch")
    pending: deque[Future[R]] = deque()
    source = iter(items)
    try:
        for item in source:
            pending.append(pool.submit(fn, item))
            if len(pending) >= window:
                break
        while pending:
            result = pending.popleft().result()
            for item in source:
                pending.append(pool.submit(fn, item))
                break
            yield result
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
