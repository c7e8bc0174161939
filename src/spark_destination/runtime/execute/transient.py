"""Retry a statement that failed for a transient reason, within the request's retry budget
(``retry_policy``).

A failure is transient when a Java exception in its cause chain is, or extends, a class listed
in ``TRANSIENT`` (an Iceberg commit that lost a race after Iceberg's own commit retries, a Delta
commit that lost one, or a shuffle block lost with its executor) or in ``UNREACHABLE`` (a
catalog, object store or other service that refused or dropped the connection, or timed out).
Such a statement committed nothing, so running it again is safe. The class names come from the
py4j Java exception objects (``getClass()`` and its superclasses), never from parsing message
text, with one exception: Hive's could-not-connect, which has no class of its own
(``HIVE_UNREACHABLE``).

The executor refines this per statement (``Executor._resolve``), since only it knows the table
a statement writes: a ``ValidationException`` is a lost race when another writer committed to
the table since the statement began (a concurrent compaction removed files the MERGE rewrote;
a concurrent append added rows its scan did not see), and is retried; after
``CommitStateUnknownException`` it looks for the statement's own snapshot (``commits``) and
answers that it LANDED (success), or that the table did not change (RETRY). A commit the
catalog refused to lock (e.g. a Hive metastore without its transaction
tables) is never retried: it is a setting, not a race (``REFUSED``).

When the budget is spent, ``retrying`` raises ``GaveUp`` with the last failure: the caller
turns it into the error Fivetran retries (``core.errors.RetryableError``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Iterator
from typing import Any, Final, TypeVar, assert_never

from spark_destination.runtime.execute.retry_policy import RetryBudget, Trouble

T = TypeVar("T")

TRANSIENT: Final = frozenset(
    {
        "org.apache.iceberg.exceptions.CommitFailedException",
        "org.apache.spark.shuffle.FetchFailedException",
        "org.apache.spark.shuffle.MetadataFetchFailedException",
        "org.apache.spark.ExecutorDeadException",
        # A Delta commit that lost a race (ConcurrentAppendException, MetadataChanged…):
        # Delta's optimistic commit wrote nothing, and the statement runs again on the
        # table's new version. Delta has both the public and the internal base class.
        "io.delta.exceptions.DeltaConcurrentModificationException",
        "org.apache.spark.sql.delta.DeltaConcurrentModificationException",
    }
)
# Hive's metastore client reports a metastore it cannot reach as a bare ``MetaException``
# (measured: stopped metastore, the cause chain is RuntimeException -> MetaException, no socket
# exception), a class it also uses for refusals; only its fixed text says which. Such a failure
# counts as this pseudo-class, listed in UNREACHABLE (``failure_classes``).
HIVE_META_EXCEPTION: Final = "org.apache.hadoop.hive.metastore.api.MetaException"
HIVE_NO_CONNECTION_TEXT: Final = "Could not connect to meta store"
HIVE_UNREACHABLE: Final = HIVE_META_EXCEPTION + " (could not connect)"
# A service that did not answer: matched against each class and its superclasses, so the
# HTTP clients' own subclasses (HttpHostConnectException, relocated or not) are included.
UNREACHABLE: Final = frozenset(
    {
        "java.net.ConnectException",
        "java.net.NoRouteToHostException",
        "java.net.SocketException",
        "java.net.SocketTimeoutException",
        "org.apache.thrift.transport.TTransportException",
        "org.apache.iceberg.exceptions.ServiceUnavailableException",
        "org.apache.iceberg.exceptions.ServiceFailureException",
        "org.apache.http.NoHttpResponseException",
        "org.apache.hc.core5.http.NoHttpResponseException",
        "org.apache.iceberg.shaded.org.apache.hc.core5.http.NoHttpResponseException",
        HIVE_UNREACHABLE,
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
# A cause chain longer than this is cut (cycles are possible in Java), as is a class lineage.
_MAX_DEPTH: Final = 32


class Resolution(enum.Enum):
    """What to do about a failed statement."""

    RETRY = "retry"  # it lost a race and committed nothing: run it again
    UNAVAILABLE = "unavailable"  # a service did not answer; nothing committed: run it again
    LANDED = "landed"  # its commit is in the table: it succeeded
    RAISE = "raise"  # a real failure


class GaveUp(Exception):
    """A statement still failed transiently when the request's retry budget was spent."""

    def __init__(self, error: Exception, trouble: Trouble, retries: int, seconds: float) -> None:
        super().__init__(f"{trouble.value}; {retries} retries in {seconds:.0f} s")
        self.error, self.trouble, self.retries, self.seconds = error, trouble, retries, seconds


def _java_causes(exc: BaseException) -> Iterator[Any]:
    """The Java throwables of a py4j / PySpark exception's cause chain, outermost first."""
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    for _ in range(_MAX_DEPTH):
        if java is None:
            return
        yield java
        try:
            cause: Any = java.getCause()
        except Exception:  # the JVM is gone, or not a Java throwable
            return
        if cause is None or cause == java:
            return
        java = cause


def java_classes(exc: BaseException) -> Iterator[str]:
    """The Java class names in the cause chain of a py4j / PySpark exception, each cause's
    own class first, then its superclasses."""
    for java in _java_causes(exc):
        try:
            cls: Any = java.getClass()
            for _ in range(_MAX_DEPTH):
                if cls is None:
                    break
                yield str(cls.getName())
                cls = cls.getSuperclass()
        except Exception:  # the JVM is gone
            return


def failure_classes(exc: BaseException) -> set[str]:
    """``java_classes`` of the failure, plus ``HIVE_UNREACHABLE`` for Hive's could-not-connect."""
    classes = set(java_classes(exc))
    if HIVE_META_EXCEPTION in classes:
        for java in _java_causes(exc):
            try:
                hive = str(java.getClass().getName()) == HIVE_META_EXCEPTION
                if hive and str(java.getMessage() or "").startswith(HIVE_NO_CONNECTION_TEXT):
                    classes.add(HIVE_UNREACHABLE)
            except Exception:  # noqa: BLE001 - the JVM is gone
                break
    return classes


def is_transient(exc: BaseException) -> bool:
    return default_resolution(failure_classes(exc)) in {Resolution.RETRY, Resolution.UNAVAILABLE}


def is_unreachable(exc: BaseException) -> bool:
    """Whether a service the failure needed did not answer (see ``UNREACHABLE``)."""
    return bool(UNREACHABLE & failure_classes(exc))


def default_resolution(classes: Collection[str]) -> Resolution:
    """A failure's resolution from its Java classes alone."""
    found = set(classes)
    if REFUSED & found:
        return Resolution.RAISE
    if TRANSIENT & found:
        return Resolution.RETRY
    return Resolution.UNAVAILABLE if UNREACHABLE & found else Resolution.RAISE


def _default(exc: Exception) -> Resolution:
    return default_resolution(failure_classes(exc))


def _reason(exc: Exception) -> str:
    """The Java class that made the failure transient (never the message: it may quote data)."""
    names = [*java_classes(exc), *(failure_classes(exc) - set(java_classes(exc)))]
    known = TRANSIENT | UNREACHABLE | {VALIDATION, COMMIT_STATE_UNKNOWN}
    return next((n for n in names if n in known), names[0] if names else type(exc).__name__)


def retrying(
    call: Callable[[], T],
    *,
    what: str,
    budget: RetryBudget,
    resolve: Callable[[Exception], Resolution] = _default,
    landed: Callable[[], T] | None = None,
) -> T:
    """``call()``, run again while ``resolve`` says RETRY or UNAVAILABLE and ``budget`` allows;
    ``landed()`` when it says the failed call's commit landed (without ``landed``: raise).
    A RAISE resolution raises the failure; a spent budget raises ``GaveUp``."""
    while True:
        try:
            return call()
        except Exception as exc:
            resolution = resolve(exc)
            match resolution:
                case Resolution.LANDED:
                    if landed is None:
                        raise
                    return landed()
                case Resolution.RAISE:
                    raise
                case Resolution.RETRY | Resolution.UNAVAILABLE:
                    trouble = (
                        Trouble.RACE if resolution is Resolution.RETRY else Trouble.UNAVAILABLE
                    )
                    if not budget.wait(trouble, what, _reason(exc)):
                        raise GaveUp(
                            exc, trouble, budget.retries(trouble), budget.spent(trouble)
                        ) from exc
                case _:
                    assert_never(resolution)
