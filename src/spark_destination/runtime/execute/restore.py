"""Put the tables a failed request touched back exactly as they were before it.

Iceberg commits one statement at a time; a request of several statements (an AlterTable that
adds a column then rewrites the table, a Migrate that copies then drops, a CreateTable that
creates then sets the key) that fails half-way would leave a table between two states. So before
running a plan the current metadata of each table it touches is kept (a reference to an object
already loaded: no I/O), and when the plan fails:

- a table that existed is recommitted with that metadata through Iceberg's own
  ``TableOperations.commit`` (optimistic: it fails if another writer moved the table meanwhile),
  which restores schema, properties, identifier fields, the snapshot list and the current
  snapshot: the rows and snapshot ids are exactly those before the request (data files the
  failed statements wrote are unreferenced, removed by orphan-file clean-up);
- a table that did not exist is dropped.

A table the failed request did not change is not touched (its metadata file is the same).
Restoring is best effort: if it fails too (the JVM is gone) that is logged and the request's
own error is raised; the planners' retry-from-current-state design still converges.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute.table_loader import catalog_and_identifier, spark_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


@contextlib.contextmanager
def restored_on_failure(session: SparkSession, tables: Sequence[TableRef]) -> Iterator[None]:
    """Run the body; if it raises, restore ``tables`` to their state before it."""
    saved = [(ref, _metadata(session, ref)) for ref in tables]
    try:
        yield
    except BaseException:
        for ref, metadata in saved:
            try:
                _restore(session, ref, metadata)
            except Exception as exc:  # the request's own error matters more
                log.warning(
                    "could not restore %s.%s after a failed request (%s); its retry converges "
                    "from the current state",
                    ref.schema,
                    ref.name,
                    type(exc).__name__,
                )
        raise


def _operations(session: SparkSession, ref: TableRef) -> Any:
    """The Iceberg ``TableOperations`` of ``ref`` through the session's catalog, or None."""
    loaded = spark_table(session, ref)
    return None if loaded is None else loaded.table().operations()


def _metadata(session: SparkSession, ref: TableRef) -> Any:
    ops = _operations(session, ref)
    return None if ops is None else ops.current()


def _restore(session: SparkSession, ref: TableRef, before: Any) -> None:
    ops = _operations(session, ref)
    if ops is None and before is None:
        return
    if before is None:
        catalog, ident = catalog_and_identifier(session, ref)
        catalog.dropTable(ident)
        log.info("dropped %s.%s, created by the failed request", ref.schema, ref.name)
        return
    if ops is None:
        # Dropped by the failed request: the Hadoop catalog deletes a dropped table's files,
        # so there is nothing to restore from.
        log.warning("%s.%s was dropped by the failed request", ref.schema, ref.name)
        return
    ops.refresh()
    current = ops.current()
    if current.metadataFileLocation() == before.metadataFileLocation():
        return
    ops.commit(current, before)
    log.info("restored %s.%s to its state before the failed request", ref.schema, ref.name)
