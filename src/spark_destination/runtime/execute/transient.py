"""Retry a statement that failed for a transient reason, a bounded number of times.

A failure is transient when a Java exception in its cause chain is of a class listed in
``TRANSIENT``: an Iceberg commit that lost a race (after Iceberg's own commit retries), or a
shuffle block lost with its executor. Such a statement committed nothing, so running it again
is safe. The class names come from the py4j Java exception objects (``getClass().getName()``),
never from parsing message text.

The executor refines this per statement (``Executor._resolve``), since only it knows the table
a statement writes: a ``ValidationException`` is a lost race when another writer committed to
the table since the statement began (a concurrent compaction removed files the MERGE rewrote;
a concurrent append added rows its scan did not see), and is retried; after
``CommitStateUnknownException`` it looks for the statement's own snapshot (``commits``) and
answers that it LANDED (success), or that the table did not change (RETRY). A commit the
catalog refused to lock (e.g. a Hive metastore without its transaction
tables) is never retried: it is a setting, not a race (``REFUSED``).
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable, Collection, Iterator
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
COMMIT_STATE_UNKNOWN: Final = "org.apache.iceberg.exceptions.CommitStateUnknownException"
VALIDATION: Final = "org.apache.iceberg.exceptions.ValidationException"
# A catalog that refuses a commit for a setting, not a race: Iceberg's Hive catalog could not
# take (or create) the metastore lock, or the metastore refused the change (a dropped column
# under ``hive.metastore.disallow.incompatible.col.type.changes``). Iceberg may wrap the
# latter in ``CommitStateUnknownException``, but the metastore said no: nothing changed.
REFUSED: Final = frozenset(
    {
        "org.apache.iceberg.hive.LockException",
        "org.apache.hadoop.hive.metastore.api.InvalidOperationException",
    }
)
# Attempts in all (the first and the retries), and the pause before retry n (n * pause).
MAX_ATTEMPTS: Final = 4
PAUSE_SECONDS: Final = 0.5
# A cause chain longer than this is cut (cycles are possible in Java).
_MAX_DEPTH: Final = 32


class Resolution(enum.Enum):
    """What to do about a failed statement."""

    RETRY = "retry"  # it committed nothing: run it again
    LANDED = "landed"  # its commit is in the table: it succeeded
    RAISE = "raise"  # a real failure


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
    return default_resolution(set(java_classes(exc))) is Resolution.RETRY


def default_resolution(classes: Collection[str]) -> Resolution:
    """A failure's resolution from its Java classes alone."""
    if REFUSED & set(classes):
        return Resolution.RAISE
    return Resolution.RETRY if any(n in TRANSIENT for n in classes) else Resolution.RAISE


def _default(exc: Exception) -> Resolution:
    return default_resolution(set(java_classes(exc)))


def retrying(
    call: Callable[[], T],
    *,
    what: str,
    resolve: Callable[[Exception], Resolution] = _default,
    landed: Callable[[], T] | None = None,
) -> T:
    """``call()``, run again (at most ``MAX_ATTEMPTS`` in all) while ``resolve`` says RETRY;
    ``landed()`` when it says the failed call's commit landed (without ``landed``: raise)."""
    attempt = 1
    while True:
        try:
            return call()
        except Exception as exc:
            resolution = resolve(exc)
            if resolution is Resolution.LANDED:
                if landed is None:
                    raise
                return landed()
            if attempt >= MAX_ATTEMPTS or resolution is not Resolution.RETRY:
                raise
            names = list(java_classes(exc))
            known = TRANSIENT | {VALIDATION, COMMIT_STATE_UNKNOWN}
            reason = next(
                (n for n in names if n in known), names[0] if names else type(exc).__name__
            )
            log.warning(
                "%s failed transiently (%s); retrying (attempt %d of %d)",
                what,
                reason,
                attempt + 1,
                MAX_ATTEMPTS,
            )
            time.sleep(PAUSE_SECONDS * attempt)
            attempt += 1
