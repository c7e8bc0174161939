"""The process's threads for staging work that runs in Arrow's C++ code.

pyarrow's compute kernels and its Parquet writer release the GIL, and most of them use one core
per call. Staging a big batch runs while Spark is idle (the MERGE waits for it), so running
independent calls side by side (each column's typing, each piece of the staged Parquet file)
uses the cores the machine has (1M history rows on two cores: typing 0.27 -> 0.14 s, the
Parquet hand-off 0.29 -> 0.22 s; docs/benchmarks.md). One pool for the process: concurrent
requests share it instead of each starting threads. Its tasks are leaves (none waits for
another task of the pool), so it cannot deadlock. Runtime layer: no pyspark here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Final, TypeVar

__all__ = ["WORKERS", "in_parallel"]

T = TypeVar("T")
R = TypeVar("R")

# More threads than cores gain nothing for CPU-bound kernels; a big host needs no more than a
# handful for one batch's columns.
WORKERS: Final = max(1, min(8, os.cpu_count() or 1))
# Below this many rows the hand-over costs more than the kernels (a 100-row file of 13 columns:
# 0.34 ms typed in the caller's thread, 0.8-1.0 ms on the threads, which take turns at the GIL).
PARALLEL_ROWS: Final = 1 << 16

_pool: ThreadPoolExecutor | None = None
_guard = threading.Lock()


def _shared_pool() -> ThreadPoolExecutor:
    global _pool
    with _guard:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="arrow-staging")
        return _pool


def in_parallel(work: Callable[[T], R], items: Iterable[T], *, rows: int) -> Iterator[R]:
    """``work`` of each item, run on the shared threads; results (or the first exception, in
    item order) as ``map`` gives them. Work on fewer than ``PARALLEL_ROWS`` rows in all, or on
    fewer than two items, runs in the caller's thread."""
    listed = list(items)
    if len(listed) < 2 or WORKERS < 2 or rows < PARALLEL_ROWS:
        return map(work, listed)
    return _shared_pool().map(work, listed)
