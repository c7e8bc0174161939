"""Retry a statement that failed for a transient reason, a bounded number of times.

A failure is transient when a Java exception in its cause chain is of a class listed in
``TRANSIENT``: an Iceberg commit that lost a race (after Iceberg's own commit retries), or a
shuffle block lost with its executor. Such a statement committed nothing, so running it again
is safe. The class names come from the py4j Java exception objects (``getClass().getName()``),
never from parsing message text. Everything else — bad SQL, a value that does not cast, a
commit whose outcome is unknown (``CommitStateUnknownException``: retrying could apply it
twice) — fails at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

TRANSIENT: Final = frozenset(
    {
        "org.apache.iceberg.exceptions.CommitFailedException",
        "org.apache.spark.shuffle.FetchFailedException",
        "org.apache.spark.shuffle.MetadataFetchFailedException",
        "org.apache.spark.ExecutorDeadException",
    }
)
# Attempts in all (the first and two retries), and the pause before retry n (n * pause).
MAX_ATTEMPTS: Final = 3
PAUSE_SECONDS: Final = 0.5
# A cause chain longer than this is cut (cycles are possible in Java).
_MAX_DEPTH: Final = 32


def java_classes(exc: BaseException) -> Iterator[str]:
    """The Java class names in the cause chain of a py4j / PySpark exception."""
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    depth = 0
    while java is not None and depth < _MAX_DEPTH:
        try:
            yield str(java.getClass().getName())
            cause: Any = java.getCause()
        except Exception:  # the JVM is gone, or not a Java throwable
            return
        if cause is None or cause == java:
            return
        java, depth = cause, depth + 1


def is_transient(exc: BaseException) -> bool:
    return any(name in TRANSIENT for name in java_classes(exc))


def retrying(call: Callable[[], T], *, what: str) -> T:
    """``call()``, run again (at most ``MAX_ATTEMPTS`` in all) while it fails transiently."""
    attempt = 1
    while True:
        try:
            return call()
        except Exception as exc:
            if attempt >= MAX_ATTEMPTS or not is_transient(exc):
                raise
            reason = next(n for n in java_classes(exc) if n in TRANSIENT)
            log.warning(
                "%s failed transiently (%s); retrying (attempt %d of %d)",
                what,
                reason,
                attempt + 1,
                MAX_ATTEMPTS,
            )
            time.sleep(PAUSE_SECONDS * attempt)
            attempt += 1
