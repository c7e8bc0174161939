"""Put the tables a failed request touched back as they were, undoing only its own commits.

Iceberg commits one statement at a time; a request of several statements (an AlterTable that
adds a column then rewrites the table, a Migrate that copies then drops, a CreateTable that
creates then sets the key) that fails half-way would leave a table between two states. So
before running a plan the current metadata of each table it touches is read, and when the plan
fails each table is put back with Iceberg's own ``TableOperations.commit(current, target)``
(optimistic: it fails if the table moves meanwhile), where ``target`` is built by Iceberg's
``TableMetadata.Builder`` (``_target``): schema, properties, identifier fields, the snapshot list
and the current snapshot as before the request, while the last sequence number and row ids
keep growing. A table the request created is dropped; one it dropped is
registered again where its catalog kept its files (``_bring_back``).

Other writers (a compaction job, another pipeline) may commit to the same tables. Putting a
table back over their commits would erase them, so a table is put back only when every commit
since the request began is provably the request's own:

- each metadata file after ``before`` in the table's metadata log is one this request's own
  statements left the table at (``commits.CommitTrail``: a (before -> after) pair per statement,
  one commit apart, so a commit another writer slipped in between two statements, or into a
  statement's own window, is not taken for the request's);
- every snapshot ``before`` had is still there (nobody expired one), and every snapshot added
  since carries this request's id in its summary (``commits``).

Otherwise the table is left as it is, with a warning: the request's own commits stay, and its
retry converges from the current state (the planners plan from the table as it is). A table
the failed request did not change is not touched. Restoring is best effort: if it fails too
(the JVM is gone) that is logged and the request's own error is raised.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute import commits, delta_log, delta_restore
from spark_destination.runtime.execute.spark_errors import describe_spark_error, spark_failure
from spark_destination.runtime.execute.table_loader import (
    catalog_and_identifier,
    drop_created,
    spark_table,
)
from spark_destination.runtime.spark.java_values import java_list

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


@contextlib.contextmanager
def restored_on_failure(
    session: SparkSession, tables: Sequence[TableRef], trail: commits.CommitTrail
) -> Iterator[None]:
    """Run the body; if it raises, put ``tables`` back as they were before it, where every
    commit since is the request's own (``trail``)."""
    saved = [(ref, _metadata(session, ref)) for ref in tables]
    try:
        yield
    except BaseException:
        for ref, metadata in saved:
            try:
                _restore(session, ref, metadata, trail)
            except Exception as exc:  # the request's own error matters more
                log.warning(
                    "could not restore %s.%s after a failed request (%s); its retry converges "
                    "from the current state",
                    ref.schema,
                    ref.name,
                    type(exc).__name__,
                )
        raise


def _operations(loaded: Any) -> Any:
    """The Iceberg ``TableOperations`` of a table just loaded from the session's catalog
    (refreshed: a catalog caches tables, and another writer may have committed since), or
    None (no table, or a Delta table)."""
    if loaded is None or delta_log.is_delta(loaded):
        return None
    ops = loaded.table().operations()
    ops.refresh()
    return ops


def _metadata(session: SparkSession, ref: TableRef) -> Any:
    """The table's current metadata, before the request changes it; an ``ExecutionError`` when
    the catalog cannot be read (a store or catalog that is down), so the request fails
    naming the table before it writes anything."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        loaded = spark_table(session, ref)
        if delta_log.is_delta(loaded):
            return delta_restore.version_of(session, loaded)
        ops = _operations(loaded)
        return None if ops is None else ops.current()
    except (Py4JError, PySparkException) as exc:
        raise spark_failure(
            f"reading table {ref.name!r} before changing it failed: {describe_spark_error(exc)}",
            exc,
        ) from None


def _restore(session: SparkSession, ref: TableRef, before: Any, trail: commits.CommitTrail) -> None:
    loaded = spark_table(session, ref)
    if isinstance(before, delta_restore.DeltaVersion) or delta_log.is_delta(loaded):
        delta_before = before if isinstance(before, delta_restore.DeltaVersion) else None
        delta_restore.restore(session, ref, delta_before, loaded, trail.identity.request_id)
        return
    ops = _operations(loaded)
    if ops is None and before is None:
        return
    if ops is None:
        _bring_back(session, ref, before)
        return
    current = ops.current()
    if before is not None and current.metadataFileLocation() == before.metadataFileLocation():
        return
    foreign = trail.unsure(ref) or _foreign_commit(
        current, before, trail.locations(ref), trail.identity.request_id
    )
    if foreign is not None:
        log.warning(
            "%s.%s: not restored after the failed request: %s; the table is left as it is, "
            "and a retry continues from there",
            ref.schema,
            ref.name,
            foreign,
        )
        return
    if before is None:
        drop_created(session, ref)
        return
    ops.commit(current, _target(session, ops, current, before))
    log.info("restored %s.%s to its state before the failed request", ref.schema, ref.name)


# A REST catalog's operations send the changes a metadata object records (its ``changes()``),
# not the object: given ``before`` as it was loaded (no changes), a commit sent nothing and the
# table stayed as the failed request left it, while the log said "restored".
_REST_OPERATIONS = "org.apache.iceberg.rest.RESTTableOperations"


def _target(session: SparkSession, ops: Any, current: Any, before: Any) -> Any:
    """What to commit over ``current`` to get ``before``'s state back: for a REST catalog,
    ``current`` with the updates that lead back (``_reverted``); for catalogs that swap whole
    metadata files (Hadoop, Hive), ``before`` rebuilt so that its counters do not go back
    (``_rewound``)."""
    if str(ops.getClass().getName()) == _REST_OPERATIONS:
        return _reverted(session, current, before)
    return _rewound(session, current, before)


def _rewound(session: SparkSession, current: Any, before: Any) -> Any:
    """``before``'s metadata built anew: the snapshots the request added go through the builder
    (which raises the last sequence number and v3's next row id past them) and are removed
    again, so the next commit cannot reuse a sequence number or a row id.

    Built from ``before``, not ``current`` (as ``_reverted`` is): the schemas and sort orders a
    request's rewrite added stay in ``current``'s lists, and a sort order left referring to a
    rewrite's field made the retried rewrite fail ("Cannot find source column for sort field",
    measured on a soft-delete table switched to history mode, failed after its rewrite)."""
    jvm = session._jvm
    assert jvm is not None
    builder = jvm.org.apache.iceberg.TableMetadata.buildFrom(before)
    had = {int(s.snapshotId()) for s in java_list(before.snapshots())}
    added = sorted(
        (s for s in java_list(current.snapshots()) if int(s.snapshotId()) not in had),
        key=lambda s: int(s.sequenceNumber()),
    )
    ids = jvm.java.util.HashSet()
    for snapshot in added:
        builder.addSnapshot(snapshot)
        ids.add(jvm.java.lang.Long.valueOf(str(snapshot.snapshotId())))
    if not ids.isEmpty():
        builder.removeSnapshots(ids)
    return builder.build()


def _bring_back(session: SparkSession, ref: TableRef, before: Any) -> None:
    """A table the failed request dropped: registered again at the metadata file it had
    before, where the catalog keeps a dropped table's files (Hive, REST: DROP TABLE without
    PURGE); the Hadoop catalog deletes them, and cannot register a table."""
    try:
        catalog, ident = catalog_and_identifier(session, ref)
        jvm = session._jvm
        assert jvm is not None
        # (Namespace, name): py4j cannot call the String... overloads with plain arguments.
        namespace = jvm.org.apache.iceberg.catalog.Namespace.of(ident.namespace())
        identifier = jvm.org.apache.iceberg.catalog.TableIdentifier.of(namespace, ref.name)
        catalog.icebergCatalog().registerTable(identifier, before.metadataFileLocation())
    except Exception as exc:  # noqa: BLE001 - said below; the request's own error follows
        log.warning(
            "%s.%s was dropped by the failed request and cannot be brought back (%s): its "
            "catalog deletes a dropped table's files or cannot register a table",
            ref.schema,
            ref.name,
            type(exc).__name__,
        )
        return
    log.info("registered %s.%s again, dropped by the failed request", ref.schema, ref.name)


def _reverted(session: SparkSession, current: Any, before: Any) -> Any:
    """``current`` changed back to ``before``'s schema, spec, sort order, properties and main
    branch, without the snapshots added since; each change recorded, as a REST commit needs (it
    sends the changes, not the object), and what only grows (the last sequence number, v3's
    next row id) keeps growing. (The schemas, specs and orders ``before`` used are all still in
    ``current``: Iceberg keeps them.)"""
    jvm = session._jvm
    assert jvm is not None
    builder = jvm.org.apache.iceberg.TableMetadata.buildFrom(current)
    builder.setCurrentSchema(before.currentSchemaId())
    builder.setDefaultPartitionSpec(before.defaultSpecId())
    builder.setDefaultSortOrder(before.defaultSortOrderId())
    wanted = before.properties()
    builder.setProperties(wanted)
    extra = jvm.java.util.HashSet()
    for key in java_list(current.properties().keySet()):
        if not wanted.containsKey(key):
            extra.add(key)
    if not extra.isEmpty():
        builder.removeProperties(extra)
    main = jvm.org.apache.iceberg.SnapshotRef.MAIN_BRANCH
    snapshot = before.currentSnapshot()
    if snapshot is not None:
        builder.setBranchSnapshot(snapshot.snapshotId(), main)
    elif current.currentSnapshot() is not None:
        builder.removeRef(main)
    had = {int(s.snapshotId()) for s in java_list(before.snapshots())}
    # A Set of Longs: the builder's other removeSnapshots takes a List of Snapshots.
    added = jvm.java.util.HashSet()
    for s in java_list(current.snapshots()):
        if int(s.snapshotId()) not in had:
            added.add(jvm.java.lang.Long.valueOf(str(s.snapshotId())))
    if not added.isEmpty():
        builder.removeSnapshots(added)
    return builder.build()


def _foreign_commit(current: Any, before: Any, ours: frozenset[str], request_id: str) -> str | None:
    """Why the commits from ``before`` to ``current`` are not all the request's own, or None
    when they are."""
    chain = [str(entry.file()) for entry in java_list(current.previousFiles())]
    chain.append(str(current.metadataFileLocation()))
    if before is not None:
        start = str(before.metadataFileLocation())
        if start not in chain:
            return "its metadata log no longer reaches the state before the request"
        chain = chain[chain.index(start) + 1 :]
    unknown = [location for location in chain if location not in ours]
    if unknown:
        return f"{len(unknown)} commit(s) since the request began are not its own"
    had = set() if before is None else {int(s.snapshotId()) for s in java_list(before.snapshots())}
    now = {int(s.snapshotId()): s for s in java_list(current.snapshots())}
    if not had <= set(now):
        return "snapshots it had before the request were expired meanwhile"
    for snapshot_id, snapshot in now.items():
        if snapshot_id in had:
            continue
        if str(snapshot.summary().get(commits.REQUEST_ID)) != request_id:
            return "another writer's snapshot was committed meanwhile"
    return None
