"""Loading the next few files of a scan in background threads while one is being read."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def prefetched(items: Iterable[T], load: Callable[[T], R], depth: int) -> Iterator[R]:
    """``load(item)`` for each item, in order, with up to ``depth`` loads running ahead.

    ``depth`` 0 loads each item only when it is asked for. Closing the iterator early
    cancels the loads that have not started.
    """
    if depth <= 0:
        yield from map(load, items)
        return
    iterator = iter(items)
    pending: deque[Future[R]] = deque()
    with ThreadPoolExecutor(max_workers=depth, thread_name_prefix="deltaport-read") as pool:
        try:
            for item in iterator:
                pending.append(pool.submit(load, item))
                if len(pending) >= depth:
                    break
            while pending:
                result = pending.popleft().result()
                for item in iterator:
                    pending.append(pool.submit(load, item))
                    break
                yield result
        finally:
            for future in pending:
                future.cancel()
