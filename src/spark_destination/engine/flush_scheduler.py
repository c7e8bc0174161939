"""When deferred mode's merge flushes run on their own: the timer and the record threshold.

The settings ``merge_interval_ms`` and ``merge_records_threshold`` (-1 turns either off). After
each deferred WriteBatch the engine reports the table's pending rows here (``appended``):

* when they reach ``merge_records_threshold`` the table's flush is due at once: it runs on a
  worker right after the request that crossed the threshold has answered (it waits for the
  table's lock), never inside it;
* otherwise, with ``merge_interval_ms`` set, it is due that long after the first pending
  batch was appended (a later batch keeps that deadline: the oldest pending change waits at
  most about the interval).

A flush, whatever started it, reports the table empty (``flushed``) and its deadline goes. A timer
thread starts the due flushes on a small pool of worker threads, one per table at a time, so
different tables flush independently; a failed flush is logged (names and counts only) and tried
again one interval later. The clock is injectable, and without the timer thread ``run_due``
starts what is due at a given time: the tests need no real waiting.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final

log = logging.getLogger(__name__)

# What identifies a table (warehouse, catalog, schema, name, intermediate table's name).
TableKey = tuple[str, ...]
# Flushes of different tables that may run at the same time.
FLUSH_WORKERS: Final = 4
# How long a failed flush waits before it is tried again when the table has no timer.
RETRY_SECONDS: Final = 60.0


class FlushScheduler:
    def __init__(
        self,
        job: Callable[[TableKey], None],
        *,
        clock: Callable[[], float] = time.monotonic,
        workers: int = FLUSH_WORKERS,
        timer: bool = True,
    ) -> None:
        self._job = job
        self._clock = clock
        self._workers = workers
        self._cond = threading.Condition()
        self._due: dict[TableKey, float] = {}
        self._retry: dict[TableKey, float] = {}
        self._running: set[TableKey] = set()
        self._futures: list[Future[None]] = []
        self._pool: ThreadPoolExecutor | None = None
        self._thread: threading.Thread | None = None
        self._timer = timer
        self._stopped = False

    def appended(
        self, key: TableKey, *, rows: int, first_append: float, interval_ms: int, threshold: int
    ) -> None:
        """A deferred WriteBatch left ``rows`` pending in a table (the first of them appended
        at ``first_append``, on this scheduler's clock)."""
        if threshold > 0 and rows >= threshold:
            due = self._clock()
        elif interval_ms > 0:
            due = first_append + interval_ms / 1000
        else:
            return
        with self._cond:
            if self._stopped:
                return
            self._due[key] = min(due, self._due.get(key, due))
            self._retry[key] = interval_ms / 1000 if interval_ms > 0 else RETRY_SECONDS
            self._start()
            self._cond.notify_all()

    def flushed(self, key: TableKey) -> None:
        """The table has nothing pending any more."""
        with self._cond:
            self._due.pop(key, None)

    def due_at(self, key: TableKey) -> float | None:
        with self._cond:
            return self._due.get(key)

    def run_due(self, now: float) -> list[TableKey]:
        """Start the flushes due at ``now`` (not those already running); their keys."""
        with self._cond:
            keys = [k for k, t in self._due.items() if t <= now and k not in self._running]
            for key in keys:
                del self._due[key]
                self._running.add(key)
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(
                        max_workers=self._workers, thread_name_prefix="flush"
                    )
                self._futures = [f for f in self._futures if not f.done()]
                self._futures.append(self._pool.submit(self._run, key))
        return keys

    def _run(self, key: TableKey) -> None:
        try:
            self._job(key)
        except Exception as exc:
            log.warning(
                "a scheduled merge flush failed (%s); it will be tried again", type(exc).__name__
            )
            with self._cond:
                if not self._stopped:
                    retry = self._clock() + self._retry.get(key, RETRY_SECONDS)
                    self._due[key] = min(retry, self._due.get(key, retry))
        finally:
            with self._cond:
                self._running.discard(key)
                self._cond.notify_all()

    def _start(self) -> None:
        if self._timer and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="flush-timer", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                waiting = [t for k, t in self._due.items() if k not in self._running]
                wait = None if not waiting else max(0.0, min(waiting) - self._clock())
                if wait is None or wait > 0:
                    self._cond.wait(wait)
                    continue
            self.run_due(self._clock())

    def wait_idle(self, timeout: float | None = None) -> None:
        """Block until every started flush has finished (tests, shutdown)."""
        with self._cond:
            futures = list(self._futures)
        for future in futures:
            future.result(timeout=timeout)

    def stop(self) -> None:
        """No more scheduled flushes; wait for the running ones."""
        with self._cond:
            self._stopped = True
            self._due.clear()
            self._cond.notify_all()
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
