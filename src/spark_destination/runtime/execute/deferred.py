"""Deferred mode at run time: what an intermediate table holds, and the merge flush.

A flush (``run_flush``) reads the pending rows' counters, folds every row up to the highest it
read into the table with one MERGE (one commit), then deletes exactly those rows from the
intermediate table (one commit). Rows appended later (a higher counter) stay pending. A flush
that fails on its own (a statement raises) leaves both tables as they were before it
(``restore``); one killed half-way is finished by the next one:

* killed before its MERGE committed: the rows are still pending and the table has not
  changed; the next flush folds them (with any appended since);
* killed after its MERGE committed, before the clean-up: the table has the rows, and they
  are still pending. Folding them again is harmless for almost every key, but not all
  (``dialects.lowering.deferred``: a key absent before the flush, updated and then upserted
  while pending), so each flush first records in the intermediate table's properties
  (``MARKER_PROPERTY``) the highest counter it folds and the table's snapshot before its
  MERGE, and gives the MERGE's commit an id of its own in its snapshot summary
  (``commits.FLUSH_ID``, also in the record; on Delta, the table's version and the commit
  info's ``userMetadata``). A flush that finds such a record, rows up to that counter still
  pending and a live commit of the table carrying that id (an Iceberg snapshot; a Delta
  commit no later RESTORE undid) knows the MERGE committed: it deletes those rows and goes on
  with the rest. The id, not "the table moved", is the proof: other writers (a compaction
  job, another pipeline) may commit to the table while rows pend; requests of this
  destination flush first, under the table's lock.

Counters only grow (a new batch starts above the highest counter recorded or pending), so a
record left by a finished flush never matches rows appended later. Runtime layer: runs
rendered statements, never renders.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa

from spark_destination.core.errors import ExecutionError
from spark_destination.dialects.rendered import RenderedPlan, Statement
from spark_destination.planner.deferred import LAYOUT_PROPERTY
from spark_destination.planner.ir import (
    HIGH_MARKER,
    ClearPendingOp,
    FlushPendingOp,
    PendingKeysOp,
    PendingStatsOp,
    TableRef,
)
from spark_destination.runtime.execute import commits, delta_log, faults
from spark_destination.runtime.execute.executor import Batch, Executor
from spark_destination.runtime.execute.restore import restored_on_failure
from spark_destination.runtime.execute.spark_errors import describe_spark_error, spark_failure
from spark_destination.runtime.execute.table_loader import (
    catalog_and_identifier,
    catalog_plugin,
    load_table,
    spark_table,
)
from spark_destination.runtime.spark.java_values import java_class, java_map

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

# The intermediate table's record of the last flush: "<highest counter>:<table snapshot>".
MARKER_PROPERTY: Final = "spark_destination.flush"
# A table without a snapshot yet (created, never written).
NO_SNAPSHOT: Final = "none"
# Spark's catalog change that sets a table property (the flush record on a Delta table).
_TABLE_CHANGE: Final = "org.apache.spark.sql.connector.catalog.TableChange"


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingCounts:
    """What ``PendingStatsOp`` reads: the lowest and highest counter (None: no row), the row
    and batch counts, the highest batch number."""

    low: int | None
    high: int | None
    rows: int
    batches: int
    last_batch: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Marker:
    """A flush's record: it folds the rows up to ``high``; the table was at ``snapshot``; its
    MERGE's snapshot carries ``flush_id`` in its summary (empty in records of older
    versions, which knew only the snapshot)."""

    high: int
    snapshot: str
    flush_id: str = ""

    @property
    def text(self) -> str:
        return f"{self.high}:{self.snapshot}:{self.flush_id}"

    @classmethod
    def parse(cls, text: str | None) -> Marker | None:
        if not text:
            return None
        high, sep, rest = text.partition(":")
        snapshot, _, flush_id = rest.partition(":")
        if not sep or not high.lstrip("-").isdigit():
            log.warning("ignoring an unreadable %s property", MARKER_PROPERTY)
            return None
        return cls(high=int(high), snapshot=snapshot, flush_id=flush_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingTable:
    """An intermediate table as found: the layout it was made for, its rows, its record."""

    layout: str | None
    counts: PendingCounts
    marker: Marker | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FlushOutcome:
    """What a flush did, for logs (never values or keys)."""

    rows: int
    batches: int
    # The highest counter folded (None: nothing was pending).
    high: int | None
    seconds: float
    # Rows an earlier, interrupted flush had merged, whose clean-up this one finished.
    completed_rows: int = 0


def read_pending(executor: Executor, stats: Statement, pending: TableRef) -> PendingTable | None:
    """The intermediate table ``pending``, or None when it does not exist."""
    loaded = load_table(executor.session, pending)
    if loaded is None:
        return None
    return PendingTable(
        layout=loaded.properties.get(LAYOUT_PROPERTY),
        counts=_counts(executor, stats),
        marker=Marker.parse(loaded.properties.get(MARKER_PROPERTY)),
    )


def run_flush(
    executor: Executor, statements: RenderedPlan, table: TableRef, pending: TableRef
) -> FlushOutcome:
    """Fold what ``pending`` holds into ``table`` (``planner.deferred.plan_flush``'s
    statements), finishing an interrupted flush first."""
    started = time.perf_counter()
    stats = _the(statements, PendingStatsOp)
    merge, clear = _the(statements, FlushPendingOp), _the(statements, ClearPendingOp)
    session = executor.session
    counts = _counts(executor, stats)
    completed = 0
    marker = _marker(session, pending)
    if (
        marker is not None
        and counts.low is not None
        and counts.low <= marker.high
        and _merged(session, table, marker)
    ):
        # The MERGE of rows up to marker.high committed; its clean-up did not.
        executor.run((clear,), Batch(parameters={HIGH_MARKER: marker.high}))
        before = counts.rows
        counts = _counts(executor, stats)
        completed = before - counts.rows
        log.info(
            "%s.%s: an interrupted flush had merged %d pending row(s); removed them from %s",
            table.schema,
            table.name,
            completed,
            pending.name,
        )
    if counts.high is None:
        return FlushOutcome(
            rows=0,
            batches=0,
            high=None,
            seconds=time.perf_counter() - started,
            completed_rows=completed,
        )
    keys = _keys(executor, statements, merge, counts.high)
    record = Marker(high=counts.high, snapshot=_snapshot(session, table), flush_id=uuid.uuid4().hex)
    _set_marker(session, pending, record)
    faults.point(faults.FLUSH_RECORDED, table.name)
    batch = Batch(
        parameters={HIGH_MARKER: counts.high},
        pending_keys=keys,
        commit_entries={commits.FLUSH_ID: record.flush_id},
    )
    with restored_on_failure(session, (table, pending), executor.trail):
        executor.run((merge, clear), batch)
    return FlushOutcome(
        rows=counts.rows,
        batches=counts.batches,
        high=counts.high,
        seconds=time.perf_counter() - started,
        completed_rows=completed,
    )


def pending_tables(
    session: SparkSession, catalog: str, prefix: str, schema: str | None = None
) -> list[tuple[str, str]]:
    """``(schema, table)`` of every table with an intermediate table named with ``prefix``,
    in ``schema`` or in every schema of ``catalog``, sorted."""
    plugin = catalog_plugin(session, catalog)
    gateway = session.sparkContext._gateway
    assert gateway is not None
    if schema is None:
        schemas = [str(ns[0]) for ns in plugin.listNamespaces() if len(ns) == 1]
    else:
        schemas = [schema]
    found: list[tuple[str, str]] = []
    for name in schemas:
        namespace = gateway.new_array(java_class(session, "java.lang.String"), 1)
        namespace[0] = name
        for ident in plugin.listTables(namespace):
            table = str(ident.name())
            if table.startswith(prefix) and len(table) > len(prefix):
                found.append((name, table[len(prefix) :]))
    return sorted(found)


def _the(statements: RenderedPlan, kind: type[Any]) -> Statement:
    return next(s for s in statements if isinstance(s.op, kind))


def _keys(
    executor: Executor, statements: RenderedPlan, merge: Statement, high: int
) -> pa.Table | None:
    """The distinct keys of the rows up to ``high`` (one more than the flush's key filter
    binds, at most: the executor then runs it unfiltered), for that filter; None when the plan
    reads none (the key cannot filter)."""
    keys = next((s for s in statements if isinstance(s.op, PendingKeysOp)), None)
    if keys is None or merge.key_filter is None:
        return None
    assert isinstance(keys.op, PendingKeysOp)
    rows = executor.sql(keys.sql, what=keys.summary, args={HIGH_MARKER: high})
    return pa.Table.from_pylist([dict(zip(keys.op.key, row, strict=True)) for row in rows])


def _counts(executor: Executor, stats: Statement) -> PendingCounts:
    ((low, high, rows, batches, last_batch),) = executor.sql(stats.sql, what=stats.summary)
    return PendingCounts(
        low=low, high=high, rows=int(rows), batches=int(batches), last_batch=last_batch
    )


def _loaded(session: SparkSession, ref: TableRef) -> Any:
    """The catalog's table behind ``ref`` (Iceberg or Delta), as it is now."""
    table = spark_table(session, ref)
    if table is None:
        raise ExecutionError(f"table {ref.schema!r}.{ref.name!r} disappeared during a flush")
    return table


def _iceberg(loaded: Any) -> Any:
    """The Iceberg table of a loaded Spark table, refreshed (its latest metadata)."""
    table = loaded.table()
    table.refresh()
    return table


def _snapshot(session: SparkSession, ref: TableRef) -> str:
    """The table's current snapshot id (Iceberg) or version (Delta), as text."""
    loaded = _loaded(session, ref)
    if delta_log.is_delta(loaded):
        return str(delta_log.latest_version(session, delta_log.path_of(loaded)))
    current = _iceberg(loaded).currentSnapshot()
    return NO_SNAPSHOT if current is None else str(current.snapshotId())


def _carries(session: SparkSession, table: TableRef, marker: Marker) -> bool:
    """A live commit of ``table`` carries the flush id ``marker`` records: Iceberg's live
    snapshots' summaries, or the commit info of Delta's commits since the version recorded
    that no later RESTORE undid."""
    loaded = _loaded(session, table)
    if delta_log.is_delta(loaded):
        since = int(marker.snapshot) if marker.snapshot.isdigit() else -1
        # A RESTORE (a failed flush put back) undoes the commits after the version it names.
        found = delta_log.commits_since(session, delta_log.path_of(loaded), since)
        return delta_log.live_commit(found, marker.flush_id)
    summaries = commits.summaries(_iceberg(loaded)).values()
    return any(s.get(commits.FLUSH_ID) == marker.flush_id for s in summaries)


def _merged(session: SparkSession, table: TableRef, marker: Marker) -> bool:
    """Whether the flush ``marker`` records committed its MERGE into ``table``: a commit of
    the table carries its id. Another writer's commit (a compaction, an append) moves the
    table too, so a changed snapshot alone proves nothing; only records without an id (older
    versions) fall back to it."""
    if not marker.flush_id:
        return _snapshot(session, table) != marker.snapshot
    if _carries(session, table, marker):
        return True
    if _snapshot(session, table) != marker.snapshot:
        # Moved by another writer, or the flush's snapshot was expired since: folding the
        # rows again is what loses nothing (harmless for almost every key, see above).
        log.warning(
            "%s.%s moved since an interrupted flush, but not by that flush's commit (or its "
            "snapshot was expired): its rows are folded again",
            table.schema,
            table.name,
        )
    return False


def _marker(session: SparkSession, pending: TableRef) -> Marker | None:
    loaded = _loaded(session, pending)
    # A Delta table is loaded at its latest version; an Iceberg one may come from the
    # catalog's cache, so it is refreshed.
    table = loaded if delta_log.is_delta(loaded) else _iceberg(loaded)
    properties = java_map(table.properties())
    return Marker.parse(properties.get(MARKER_PROPERTY))


def _set_marker(session: SparkSession, pending: TableRef, marker: Marker) -> None:
    from py4j.protocol import Py4JError

    try:
        loaded = _loaded(session, pending)
        if delta_log.is_delta(loaded):
            # A metadata commit through the catalog API (the runtime renders no SQL).
            catalog, ident = catalog_and_identifier(session, pending)
            change = java_class(session, _TABLE_CHANGE).setProperty(MARKER_PROPERTY, marker.text)
            gateway = session.sparkContext._gateway
            assert gateway is not None
            changes = gateway.new_array(java_class(session, _TABLE_CHANGE), 1)
            changes[0] = change
            catalog.alterTable(ident, changes)
        else:
            _iceberg(loaded).updateProperties().set(MARKER_PROPERTY, marker.text).commit()
    except Py4JError as exc:
        raise spark_failure(
            f"recording the flush in {pending.name!r} failed: {describe_spark_error(exc)}", exc
        ) from None
