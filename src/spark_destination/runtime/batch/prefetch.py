"""Run a chunk generator in a helper thread, a few chunks ahead of its consumer.

Decrypting and decompressing a batch file (runtime.batch.envelope) and parsing it (pyarrow, which
releases the GIL while it parses) take about as long as each other; run one after the other
they add up. Here the byte layers run in a helper thread while pyarrow parses the chunks
already produced. The queue is bounded, so at most ``depth`` decoded chunks wait in memory
(never on disk). Runtime layer: no pyspark here.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Final

__all__ = ["prefetched"]

_END: Final = object()
# How often a blocked helper looks whether the consumer has gone away.
_POLL_SECONDS: Final = 0.05


def prefetched(chunks: Iterator[bytes], depth: int) -> Iterator[bytes]:
    """``chunks``' items, produced by a helper thread; its exceptions are raised here, in order.

    Closing the result (or abandoning it part-way) stops the helper and then closes ``chunks``.
    """
    items: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(item: object) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for chunk in chunks:
                if not offer(chunk):
                    return
            offer(_END)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            offer(exc)

    helper = threading.Thread(target=produce, name="batch-file-decode", daemon=True)
    helper.start()
    try:
        while True:
            item = items.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, bytes)
            yield item
    finally:
        stop.set()
        helper.join()
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
