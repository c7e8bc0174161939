"""Which commits are the destination's own: the request's identity in every snapshot summary.

Iceberg's Spark writes (MERGE, INSERT, DELETE, UPDATE, CREATE/REPLACE TABLE AS SELECT) copy the
entries of ``org.apache.iceberg.spark.CommitMetadata``'s thread-local map into the summary of the
snapshot they commit. PySpark pins each Python thread to one JVM thread, so each statement runs
inside Iceberg's public ``CommitMetadata.withCommitProperties`` (its body a Python ``Callable``
the JVM calls back on that thread: ``with_commit_properties``), and every snapshot the request
makes says:

- ``spark-destination.request-id``: one id per request (a retried request gets a new one);
- ``spark-destination.step``: which statement of the request's plan made it;
- ``spark-destination.request`` and ``.statement``: the request kind and the step's summary;
- ``spark-destination.batch-files``, ``.rows-replaced``, ``.rows-updated``, ``.rows-deleted``:
  what a write applied (counts only, never a value);
- ``spark-destination.started-at-ms``: when the request started (the snapshot's own
  ``committed_at`` ends it);
- ``spark-destination.flush-id``: a deferred-mode merge flush's id, so that a later flush tells
  its own commit from another writer's (``runtime.execute.deferred``).

With that, after ``CommitStateUnknownException`` (the catalog may or may not have applied the
commit) the executor looks for its snapshot (``landed``), and a failed request undoes only
commits that are provably its own (``runtime.execute.restore``). An operator reads a table's
sync history from its ``snapshots`` metadata table.

Metadata-only commits (ALTER TABLE, table properties) make no snapshot and carry no summary;
what is known of them comes from the (before -> after) metadata locations of the executor's own
statements (``CommitTrail``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute.table_loader import ICEBERG_SPARK_TABLE, spark_table
from spark_destination.runtime.spark.java_values import java_class, java_list, java_map, per_jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

# Every key the destination writes into a snapshot summary starts with this.
SUMMARY_PREFIX: Final = "spark-destination."
REQUEST_ID: Final = SUMMARY_PREFIX + "request-id"
STEP: Final = SUMMARY_PREFIX + "step"
REQUEST_KIND: Final = SUMMARY_PREFIX + "request"
STATEMENT: Final = SUMMARY_PREFIX + "statement"
BATCH_FILES: Final = SUMMARY_PREFIX + "batch-files"
ROWS_REPLACED: Final = SUMMARY_PREFIX + "rows-replaced"
ROWS_UPDATED: Final = SUMMARY_PREFIX + "rows-updated"
ROWS_DELETED: Final = SUMMARY_PREFIX + "rows-deleted"
STARTED_AT_MS: Final = SUMMARY_PREFIX + "started-at-ms"
FLUSH_ID: Final = SUMMARY_PREFIX + "flush-id"

_COMMIT_METADATA_CLASS: Final = "org.apache.iceberg.spark.CommitMetadata"

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestIdentity:
    """What every commit of one request says about it (names and counts, never values)."""

    kind: str
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    started_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    batch_files: int | None = None

    def summary(self, step: int, statement: str, **extra: str) -> dict[str, str]:
        entries = {
            REQUEST_ID: self.request_id,
            STEP: str(step),
            REQUEST_KIND: self.kind,
            STATEMENT: statement,
            STARTED_AT_MS: str(self.started_ms),
        }
        if self.batch_files is not None:
            entries[BATCH_FILES] = str(self.batch_files)
        return {**entries, **extra}


def row_counts(replaced: int, updated: int, deleted: int) -> dict[str, str]:
    return {
        ROWS_REPLACED: str(replaced),
        ROWS_UPDATED: str(updated),
        ROWS_DELETED: str(deleted),
    }


class _Call:
    """A Java ``Callable`` run by the JVM on the request's own thread (py4j's pinned threads
    call back into Python on the connection the call came from, and what the callback sends
    back runs on that JVM thread). It keeps the body's result or exception for the caller, so
    that a failure reaches it as it was raised, with its Java classes, not wrapped by py4j."""

    def __init__(self, body: Callable[[], Any]) -> None:
        self.body = body
        self.ran = False
        self.result: Any = None
        self.error: Exception | None = None

    def call(self) -> None:
        self.ran = True
        try:
            self.result = self.body()
        except Exception as exc:  # noqa: BLE001 - raised again by ``with_commit_properties``
            self.error = exc

    class Java:
        implements: Final = ["java.util.concurrent.Callable"]


def _callbacks(session: SparkSession) -> Any:
    """Iceberg's ``CommitMetadata``, once py4j's callback server runs (once per JVM)."""

    def start() -> Any:
        from pyspark.java_gateway import ensure_callback_server_started

        ensure_callback_server_started(session.sparkContext._gateway)  # type: ignore[no-untyped-call]
        return java_class(session, _COMMIT_METADATA_CLASS)

    return per_jvm(session, "commit metadata", start)


# Delta's commit info takes one free-form text per commit, from this session setting.
DELTA_USER_METADATA: Final = "spark.databricks.delta.commitInfo.userMetadata"


@contextlib.contextmanager
def delta_user_metadata(session: SparkSession, entries: Mapping[str, str]) -> Iterator[None]:
    """Delta commits made meanwhile carry ``entries`` (the request's identity and counts,
    never a value) as JSON in their commit info's ``userMetadata``, as Iceberg's snapshot
    summaries do (``with_commit_properties``). The request's own session: no other request
    sees it."""
    session.conf.set(DELTA_USER_METADATA, json.dumps(dict(entries), sort_keys=True))
    try:
        yield
    finally:
        session.conf.unset(DELTA_USER_METADATA)


def with_commit_properties(
    session: SparkSession, entries: Mapping[str, str], body: Callable[[], T]
) -> T:
    """``body()``, with ``entries`` in the summary of every snapshot it commits (Spark writes
    only: metadata-only commits have no summary), through Iceberg's public
    ``CommitMetadata.withCommitProperties``."""
    try:
        commit_metadata = _callbacks(session)
        properties = java_class(session, "java.util.HashMap")()
        for key, value in entries.items():
            properties.put(key, value)
        raised = java_class(session, "java.lang.Class").forName("java.lang.RuntimeException")
    except Exception as exc:  # noqa: BLE001 - the commit runs; only its summary is poorer
        _warn_once(f"commits carry no request identity ({type(exc).__name__})")
        return body()
    call = _Call(body)
    try:
        commit_metadata.withCommitProperties(properties, call, raised)
    except Exception as exc:
        if call.ran:
            raise
        # The JVM could not call back (no callback server in this process): run it as is.
        _warn_once(f"commits carry no request identity ({type(exc).__name__})")
        return body()
    if call.error is not None:
        raise call.error
    return call.result  # type: ignore[no-any-return]


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


# Iceberg's snapshot-summary counts of position deletes and rows (deletion vectors included).
_REMOVED_DELETES: Final = "removed-position-deletes"
_ADDED_DELETES: Final = "added-position-deletes"
_TOTAL_DELETES: Final = "total-position-deletes"
_TOTAL_RECORDS: Final = "total-records"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteFolding:
    """What a commit did to the table's position deletes, from its snapshot summary.

    Iceberg 1.10 keeps one delete file (or deletion vector) per data file: a write that deletes
    a row of a data file folds that file's earlier deletes into the new one and removes the old,
    so ``rewritten`` earlier deletes come back in ``added`` beside the write's own."""

    rewritten: int
    added: int
    # The table's after the commit: its live position deletes, and its rows (deleted included).
    total_deletes: int
    total_records: int

    @property
    def new(self) -> int:
        """The deletes this commit itself made."""
        return max(self.added - self.rewritten, 0)


@dataclass(frozen=True, slots=True)
class TableState:
    """A table's current metadata file and snapshot (None: no snapshot yet)."""

    location: str
    snapshot: int | None
    # The metadata file this one replaced (the last entry of its metadata log; None for a new
    # table): one commit lies between ``predecessor`` and ``location``.
    predecessor: str | None = field(default=None, compare=False)
    # The request id in the current snapshot's summary, read only when a request asks
    # (``state(..., request_id=)``).
    snapshot_request: str | None = field(default=None, compare=False)
    # What the current snapshot did to position deletes, read only when the request asking
    # made it (``state(..., request_id=)``); not part of the state's identity.
    folding: DeleteFolding | None = field(default=None, compare=False)


def iceberg_table(session: SparkSession, ref: TableRef) -> Any:
    """The Iceberg ``Table`` behind ``ref``, refreshed from the catalog; None if missing."""
    loaded = spark_table(session, ref)
    # A Delta table has no Iceberg table (nor snapshots): its state is its version
    # (``delta_restore``).
    if loaded is None or str(loaded.getClass().getName()) != ICEBERG_SPARK_TABLE:
        return None
    table = loaded.table()
    table.refresh()
    return table


def state(
    session: SparkSession, ref: TableRef, *, request_id: str | None = None
) -> TableState | None:
    """``ref``'s state; with ``request_id``, also its current snapshot's ``DeleteFolding`` if
    that request made it."""
    table = iceberg_table(session, ref)
    if table is None:
        return None
    return state_of(table, request_id=request_id)


def state_of(table: Any, *, request_id: str | None = None) -> TableState:
    current = table.currentSnapshot()
    metadata = table.operations().current()
    location = metadata.metadataFileLocation()
    log = metadata.previousFiles()  # a Java list: only its last entry is fetched
    size = int(log.size())
    predecessor = str(log.get(size - 1).file()) if size else None
    folding = None
    snapshot_request = None
    if current is not None and request_id is not None:
        summary = current.summary()
        found = summary.get(REQUEST_ID)
        snapshot_request = None if found is None else str(found)
        if snapshot_request == request_id:
            folding = _folding(summary)
    return TableState(
        location=str(location),
        snapshot=None if current is None else int(current.snapshotId()),
        predecessor=predecessor,
        snapshot_request=snapshot_request,
        folding=folding,
    )


def _folding(summary: Any) -> DeleteFolding:
    """From a snapshot's summary (a Java map: only the entries needed are fetched)."""

    def count(key: str) -> int:
        value = str(summary.get(key) or "0")
        return int(value) if value.isdigit() else 0

    return DeleteFolding(
        rewritten=count(_REMOVED_DELETES),
        added=count(_ADDED_DELETES),
        total_deletes=count(_TOTAL_DELETES),
        total_records=count(_TOTAL_RECORDS),
    )


def summaries(table: Any) -> dict[int, dict[str, str]]:
    """Each live snapshot's id and the destination's entries of its summary."""
    found: dict[int, dict[str, str]] = {}
    for snapshot in java_list(table.snapshots()):
        summary = java_map(snapshot.summary())
        found[int(snapshot.snapshotId())] = {
            k: v for k, v in summary.items() if k.startswith(SUMMARY_PREFIX)
        }
    return found


def landed(session: SparkSession, ref: TableRef, request_id: str, step: int) -> bool:
    """Whether a snapshot of statement ``step`` of request ``request_id`` is in the table."""
    table = iceberg_table(session, ref)
    if table is None:
        return False
    wanted = {REQUEST_ID: request_id, STEP: str(step)}
    return any(
        all(summary.get(k) == v for k, v in wanted.items()) for summary in summaries(table).values()
    )


class CommitTrail:
    """The metadata files a request's own statements left each table at, each recorded as a
    (before -> after) pair, so that a restore can tell its own commits from another writer's.

    A statement's state after is read once it ran; another writer may commit in between (a
    property or schema change makes no snapshot, so no summary can say whose it is). The state
    after is the statement's own only when exactly one commit separates it from the state
    before (its metadata log's last entry is that state); otherwise the table is marked, and a
    restore leaves it to the retry rather than undo a commit that may be another writer's. A
    new snapshot must also carry the request's id. What remains unseen: a statement that itself
    commits nothing, with another writer's metadata-only commit (which carries no identity)
    landing in its window, is taken for the statement's own."""

    def __init__(self, identity: RequestIdentity) -> None:
        self.identity = identity
        self._after: dict[TableRef, list[str]] = {}
        self._unsure: dict[TableRef, str] = {}

    def saw(self, ref: TableRef, before: TableState | None, after: TableState) -> None:
        """Statement done: ``after`` is ``ref``'s state now, ``before`` as the statement found
        it (None: no table)."""
        if before is not None and after.location == before.location:
            return  # the statement did not commit to it
        expected = None if before is None else before.location
        if after.predecessor != expected:
            self._unsure.setdefault(
                ref,
                "another commit landed while one of its statements ran (a metadata-only commit "
                "of another writer cannot be told from its own)",
            )
            return
        earlier = None if before is None else before.snapshot
        if (
            after.snapshot not in (None, earlier)
            and after.snapshot_request != self.identity.request_id
        ):
            self._unsure.setdefault(
                ref, "a snapshot of another writer landed while one of its statements ran"
            )
            return
        self._after.setdefault(ref, []).append(after.location)

    def unsure(self, ref: TableRef) -> str | None:
        """Why the request's own commits to ``ref`` cannot be told apart, or None."""
        return self._unsure.get(ref)

    def locations(self, ref: TableRef) -> frozenset[str]:
        return frozenset(self._after.get(ref, ()))
