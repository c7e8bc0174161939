"""Staging's shared threads: results and the first error come in item order, as with ``map``;
small work stays in the caller's thread."""

from __future__ import annotations

import threading

import pytest

from spark_destination.runtime.batch import arrow_threads
from spark_destination.runtime.batch.arrow_threads import PARALLEL_ROWS, in_parallel


def test_results_come_in_item_order() -> None:
    assert list(in_parallel(lambda i: i * i, range(20), rows=PARALLEL_ROWS)) == [
        i * i for i in range(20)
    ]


def test_the_first_items_error_is_raised_though_a_later_one_failed_first() -> None:
    later_failed = threading.Event()

    def work(i: int) -> int:
        if i == 1:
            later_failed.set()
            raise KeyError("second")
        if i == 0:
            # The second item has failed by now, on the other thread.
            assert later_failed.wait(5)
            raise ValueError("first")
        return i

    if arrow_threads.WORKERS < 2:
        pytest.skip("one core: the items run one by one")
    with pytest.raises(ValueError, match="first"):
        list(in_parallel(work, range(3), rows=PARALLEL_ROWS))


@pytest.mark.parametrize(("items", "rows"), [(5, PARALLEL_ROWS - 1), (1, PARALLEL_ROWS)])
def test_small_work_runs_in_the_callers_thread(items: int, rows: int) -> None:
    threads = set(in_parallel(lambda _: threading.get_ident(), range(items), rows=rows))
    assert threads == {threading.get_ident()}


def test_big_work_runs_on_the_shared_threads() -> None:
    if arrow_threads.WORKERS < 2:
        pytest.skip("one core: the items run in the caller's thread")
    name = lambda _: threading.current_thread().name  # noqa: E731
    names = set(in_parallel(name, range(4), rows=PARALLEL_ROWS))
    assert all(name.startswith("arrow-staging") for name in names)
