"""Planning of table maintenance: what ``spark-destination maintain`` (and the automatic mode)
runs on one table, in order.

Merge-on-read leaves a delete file per batch and every request adds a snapshot, so after many
small syncs reads and MERGEs slow down and storage grows. The plan:

1. ``rewrite_data_files``: compact small data files; files with delete files are rewritten
   with the deletes applied;
2. ``rewrite_position_delete_files``: compact what position deletes remain and drop dangling
   ones;
3. ``expire_snapshots`` older than the retention (the latest is always kept), which deletes
   files only expired snapshots referenced (so also the files step 1 replaced);
4. ``remove_orphan_files`` older than the retention, and never younger than a day, so a write
   still in flight elsewhere is never mistaken for an orphan.

Steps 1-3 each commit (or only delete unreferenced files): a retry after a failure converges.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from spark_destination.core.errors import InvalidRequestError
from spark_destination.planner.ir import (
    ExpireSnapshotsOp,
    Plan,
    RemoveOrphanFilesOp,
    RewriteDataFilesOp,
    RewritePositionDeletesOp,
    TableRef,
)

# Orphan-file removal never looks at files younger than this: a concurrent writer's files are
# unreferenced until it commits (Iceberg's own procedure defaults to three days).
ORPHAN_MIN_AGE: Final = timedelta(days=1)
RETAIN_LAST_SNAPSHOTS: Final = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class MaintenancePolicy:
    retention: timedelta = timedelta(days=7)
    # False skips step 4, which lists every file under the table's location (slow on object
    # stores).
    remove_orphans: bool = True


def plan_maintenance(table: TableRef, policy: MaintenancePolicy, *, now: datetime) -> Plan:
    if policy.retention < timedelta(0):
        raise InvalidRequestError("the snapshot retention cannot be negative")
    now = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    expire_before = now - policy.retention
    ops: list[
        RewriteDataFilesOp | RewritePositionDeletesOp | ExpireSnapshotsOp | RemoveOrphanFilesOp
    ] = [
        RewriteDataFilesOp(table=table),
        RewritePositionDeletesOp(table=table),
        ExpireSnapshotsOp(
            table=table, older_than=expire_before, retain_last=RETAIN_LAST_SNAPSHOTS
        ),
    ]
    if policy.remove_orphans:
        orphan_before = min(expire_before, now - ORPHAN_MIN_AGE)
        ops.append(RemoveOrphanFilesOp(table=table, older_than=orphan_before))
    return Plan(ops=tuple(ops))
