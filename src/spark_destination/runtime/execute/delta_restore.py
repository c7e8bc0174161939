"""Put a Delta table a failed request touched back at the version before it, undoing only the
request's own commits (``restore`` does the same for Iceberg).

Every commit a statement makes carries the request's identity in its commit info
(``commits.delta_user_metadata``). When a request fails, each Delta table it touched is put
back with Delta's own ``RESTORE`` (``DeltaTable.restoreToVersion``, a new commit that
re-adds the files of the version before), but only when every commit since that version
carries the request's id: another writer's commit (an OPTIMIZE, an append) is never erased,
and the table is then left for the request's retry to converge from. A table the failed
request created is dropped, under the same rule.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute import delta_log
from spark_destination.runtime.execute.table_loader import drop_created

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DeltaVersion:
    """A Delta table's folder and the version it was at."""

    path: str
    version: int


def version_of(session: SparkSession, loaded: Any) -> DeltaVersion:
    path = delta_log.path_of(loaded)
    return DeltaVersion(path=path, version=delta_log.latest_version(session, path))


def _all_own(session: SparkSession, path: str, since: int, request_id: str) -> bool:
    """Every commit after version ``since`` carries ``request_id`` in its commit info."""
    return all(
        commit.user_metadata is not None and request_id in commit.user_metadata
        for commit in delta_log.commits_since(session, path, since)
    )


def restore(
    session: SparkSession, ref: TableRef, before: DeltaVersion | None, loaded: Any, request_id: str
) -> None:
    """Put ``ref`` back at ``before`` (None: the request created it) where every commit since
    is the request's own."""
    if loaded is None or not delta_log.is_delta(loaded):
        return
    now = version_of(session, loaded)
    since = -1 if before is None else before.version
    if now.version == since:
        return
    if not _all_own(session, now.path, since, request_id):
        log.warning(
            "%s.%s: not restored after the failed request: another writer committed to it "
            "since; the table is left as it is, and a retry continues from there",
            ref.schema,
            ref.name,
        )
        return
    if before is None:
        drop_created(session, ref)
        return
    delta_log.restore_to(session, now.path, before.version)
    log.info("restored %s.%s to version %d", ref.schema, ref.name, before.version)
