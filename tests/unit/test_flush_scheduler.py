"""Deferred mode's flush scheduler on a fake clock: the threshold, the timer, one flush per
table at a time, retries (no real waiting: ``run_due`` runs what is due at a given time)."""

from __future__ import annotations

import threading

from spark_destination.engine.flush_scheduler import RETRY_SECONDS, FlushScheduler

A = ("wh", "lake", "s", "a", "sd__pending__a")
B = ("wh", "lake", "s", "b", "sd__pending__b")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _scheduler(job: object = None) -> tuple[FlushScheduler, Clock, list[tuple[str, ...]]]:
    clock, runs = Clock(), []
    scheduler = FlushScheduler(job or runs.append, clock=clock, timer=False)  # type: ignore[arg-type]
    return scheduler, clock, runs


def test_the_timer_flushes_an_interval_after_the_first_pending_batch() -> None:
    scheduler, clock, runs = _scheduler()
    scheduler.appended(A, rows=10, first_append=clock.now, interval_ms=60_000, threshold=-1)
    clock.now += 30
    # A later batch keeps the first batch's deadline.
    scheduler.appended(A, rows=20, first_append=1000.0, interval_ms=60_000, threshold=-1)
    assert scheduler.due_at(A) == 1060.0
    assert scheduler.run_due(1059.9) == []
    assert scheduler.run_due(1060.0) == [A]
    scheduler.wait_idle()
    assert runs == [A]
    assert scheduler.due_at(A) is None
    scheduler.stop()


def test_the_threshold_makes_the_flush_due_at_once() -> None:
    scheduler, clock, runs = _scheduler()
    scheduler.appended(A, rows=99, first_append=clock.now, interval_ms=-1, threshold=100)
    assert scheduler.due_at(A) is None  # below the threshold, no timer: nothing is due
    scheduler.appended(A, rows=100, first_append=clock.now, interval_ms=-1, threshold=100)
    assert scheduler.due_at(A) == clock.now
    scheduler.stop()


def test_with_neither_timer_nor_threshold_nothing_is_scheduled() -> None:
    scheduler, clock, _ = _scheduler()
    scheduler.appended(A, rows=10**9, first_append=clock.now, interval_ms=-1, threshold=-1)
    assert scheduler.due_at(A) is None
    scheduler.stop()


def test_a_flush_by_any_other_cause_cancels_the_deadline() -> None:
    scheduler, clock, _ = _scheduler()
    scheduler.appended(A, rows=1, first_append=clock.now, interval_ms=1000, threshold=-1)
    scheduler.flushed(A)
    assert scheduler.run_due(clock.now + 3600) == []
    scheduler.stop()


def test_tables_flush_independently_and_one_table_once_at_a_time() -> None:
    release, started = threading.Event(), []

    def job(key: tuple[str, ...]) -> None:
        started.append(key)
        release.wait(10)

    scheduler, clock, _ = _scheduler(job)
    for key in (A, B):
        scheduler.appended(key, rows=5, first_append=clock.now, interval_ms=-1, threshold=1)
    assert sorted(scheduler.run_due(clock.now)) == sorted([A, B])
    # Due again while its flush runs: not started twice.
    scheduler.appended(A, rows=6, first_append=clock.now, interval_ms=-1, threshold=1)
    assert scheduler.run_due(clock.now) == []
    release.set()
    scheduler.wait_idle()
    assert sorted(started) == sorted([A, B])
    assert scheduler.run_due(clock.now) == [A]  # once the first one is done
    scheduler.wait_idle()
    scheduler.stop()


def test_a_failed_flush_is_tried_again_an_interval_later() -> None:
    calls: list[tuple[str, ...]] = []

    def job(key: tuple[str, ...]) -> None:
        calls.append(key)
        raise RuntimeError("boom")

    scheduler, clock, _ = _scheduler(job)
    scheduler.appended(A, rows=1, first_append=clock.now, interval_ms=5000, threshold=-1)
    scheduler.run_due(clock.now + 5)
    scheduler.wait_idle()
    assert calls == [A]
    assert scheduler.due_at(A) == clock.now + 5
    scheduler.stop()


def test_without_a_timer_a_failed_flush_waits_the_retry_delay() -> None:
    scheduler, clock, _ = _scheduler(lambda key: 1 / 0)
    scheduler.appended(A, rows=9, first_append=clock.now, interval_ms=-1, threshold=1)
    scheduler.run_due(clock.now)
    scheduler.wait_idle()
    assert scheduler.due_at(A) == clock.now + RETRY_SECONDS
    scheduler.stop()


def test_the_timer_thread_runs_due_flushes_on_its_own() -> None:
    done = threading.Event()
    scheduler = FlushScheduler(lambda key: done.set())
    scheduler.appended(A, rows=1, first_append=0.0, interval_ms=1, threshold=-1)
    assert done.wait(30)
    scheduler.stop()


def test_after_stop_nothing_more_is_scheduled() -> None:
    scheduler, clock, runs = _scheduler()
    scheduler.stop()
    scheduler.appended(A, rows=5, first_append=clock.now, interval_ms=-1, threshold=1)
    assert scheduler.run_due(clock.now) == []
    assert runs == []
