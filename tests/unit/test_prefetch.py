"""runtime.batch.prefetch: a chunk generator run in a helper thread, ahead of its consumer."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from spark_destination.core.errors import BatchFileError
from spark_destination.runtime.batch.prefetch import prefetched


def _helpers() -> int:
    return sum(t.name == "batch-file-decode" for t in threading.enumerate())


def test_items_arrive_in_order_from_another_thread() -> None:
    producers: set[int] = set()

    def chunks() -> Iterator[bytes]:
        for i in range(50):
            producers.add(threading.get_ident())
            yield bytes([i])

    assert b"".join(prefetched(chunks(), 2)) == bytes(range(50))
    assert producers and threading.get_ident() not in producers
    assert _helpers() == 0


def test_an_error_is_raised_after_the_items_before_it() -> None:
    def chunks() -> Iterator[bytes]:
        yield b"a"
        yield b"b"
        raise BatchFileError("batch file 'f' is truncated")

    got: list[bytes] = []
    with pytest.raises(BatchFileError, match="truncated"):
        for chunk in prefetched(chunks(), 4):
            got.append(chunk)
    assert got == [b"a", b"b"]
    assert _helpers() == 0


def test_closing_part_way_stops_the_helper_and_closes_the_source() -> None:
    closed = threading.Event()

    def chunks() -> Iterator[bytes]:
        try:
            while True:
                yield b"x" * 10
        finally:
            closed.set()

    stream = prefetched(chunks(), 1)
    assert next(stream) == b"x" * 10
    stream.close()
    assert closed.is_set()
    assert _helpers() == 0
