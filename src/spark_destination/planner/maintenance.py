"""Planning of table maintenance: what ``spark-destination maintain`` (and the automatic mode)
runs on one table, in order.

Merge-on-read leaves a delete file per batch and every request adds a snapshot, so after many
small syncs reads and MERGEs slow down and storage grows. The plan:

0. when the table's layout is not the configured one (``planner.layout``): give it that
   layout (properties, write order, partitioning; the format version only goes up), and
   rewrite every file in step 1 (unless only how reads are planned changed);
1. ``rewrite_data_files``: compact small data files; files with delete files are rewritten
   with the deletes applied; a sorted layout compacts with the sort strategy, so the files
   that batches added (each spanning the whole key range) are merged back into order. With
   a layout (the engine always passes one for Iceberg) only files under ``SMALL_FILE_BYTES``
   and files with 30 % of their rows deleted are rewritten: large files keep a few deletes;
2. ``rewrite_position_delete_files``: compact what position deletes remain and drop dangling
   ones;
3. ``expire_snapshots`` older than the retention (the latest is always kept), which deletes
   files only expired snapshots referenced (so also the files step 1 replaced). Left out when
   the table's snapshots say it would expire nothing (``SnapshotState``: none older than the
   cut-off, and no branch or tag with retention of its own): the procedure still commits and
   runs Spark jobs over the table's manifests to find no file to delete (1.7-2.2 s on a
   1.65M-row table minutes old, docs/benchmarks.md), and automatic maintenance holds the
   table's next sync meanwhile;
4. ``remove_orphan_files`` older than the retention, and never younger than a day, so a write
   still in flight elsewhere is never mistaken for an orphan. Left out when a listing of the
   table's location found no file older than that cut-off (``FileAges``): the procedure would
   also read every manifest to delete nothing. The listing is asked for only where it is cheap
   and likely to pay (``orphan_listing_cutoff``: a table whose snapshots are all younger than
   the cut-off; an older one has files that old).

Steps 1-3 each commit (or only delete unreferenced files): a retry after a failure converges.

That is Iceberg's plan (``Maintenance.SNAPSHOT_PROCEDURES``). A Delta table
(``Maintenance.OPTIMIZE_AND_VACUUM``) gets the commands that do the same there:

1. ``OPTIMIZE … ZORDER BY`` the key: compaction (deletion vectors applied to the files it
   rewrites), the key's rows kept together;
2. ``VACUUM … RETAIN n HOURS``: removes the files no version within the retention references
   and files Delta never referenced (what steps 3 and 4 remove). Delta refuses a retention
   under ``Target.minimum_retention`` while its safety check is on: such a request is refused
   here, before anything runs. ``remove_orphans`` has no separate step there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, assert_never

from spark_destination.core.errors import InvalidRequestError
from spark_destination.planner.ir import (
    ExpireSnapshotsOp,
    MaintenanceOp,
    OptimizeOp,
    Plan,
    RemoveOrphanFilesOp,
    RewriteDataFilesOp,
    RewritePositionDeletesOp,
    SetLayoutOp,
    TableLayout,
    TableRef,
    VacuumOp,
)
from spark_destination.planner.layout import layout_change, rewrites_files
from spark_destination.planner.target import Maintenance, Target

# Orphan-file removal never looks at files younger than this: a concurrent writer's files are
# unreferenced until it commits (Iceberg's own procedure defaults to three days). The minute
# over a day: the procedure refuses a cut-off less than a day before its own start, which
# comes after the planning's ``now`` (and a ``now`` a little ahead of the engine's clock).
ORPHAN_MIN_AGE: Final = timedelta(days=1, minutes=1)
RETAIN_LAST_SNAPSHOTS: Final = 1
# With a layout, compaction rewrites files below this size (what small batches add) and files
# with much of their rows deleted, not the large files a table's bulk lives in: its cost follows
# what changed since the last run, not the table's size.
SMALL_FILE_BYTES: Final = 32 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotState:
    """What the table's metadata says of its snapshots, read just before planning."""

    # The oldest snapshot's commit time (None: the table has no snapshot).
    oldest: datetime | None
    # A branch or tag besides ``main``, or a ref with retention settings of its own: they may
    # expire snapshots younger than the cut-off.
    refs_with_own_retention: bool

    def expires_nothing_before(self, cutoff: datetime) -> bool:
        """Whether ``expire_snapshots`` with ``cutoff`` would find no snapshot to expire."""
        return not self.refs_with_own_retention and (self.oldest is None or self.oldest >= cutoff)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileAges:
    """What a listing of the table's location found, just before planning."""

    # No file under the table's location was last modified before this time.
    none_before: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class MaintenancePolicy:
    retention: timedelta = timedelta(days=7)
    # False skips step 4, which lists every file under the table's location (slow on object
    # stores).
    remove_orphans: bool = True
    # Step 4 lists through the table's FileIO, not Hadoop's file systems (object storage).
    prefix_listing: bool = False


def orphan_cutoff(policy: MaintenancePolicy, now: datetime) -> datetime:
    """Files older than this (and unreferenced) are what ``remove_orphan_files`` deletes."""
    now = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    return min(now - policy.retention, now - ORPHAN_MIN_AGE)


def orphan_listing_cutoff(
    policy: MaintenancePolicy, now: datetime, target: Target, snapshots: SnapshotState
) -> datetime | None:
    """The cut-off a listing of the table's location should look for older files with, so
    that ``plan_maintenance`` may leave orphan removal out; None when no listing should be
    made: the step is not planned anyway, or the table has a snapshot older than the cut-off
    (its files are likely that old too, and the listing would only be repeated by the step)."""
    if target.maintenance is not Maintenance.SNAPSHOT_PROCEDURES or not policy.remove_orphans:
        return None
    if policy.prefix_listing:
        # The listing is Spark's file index, through Hadoop's file systems: none for s3://.
        return None
    cutoff = orphan_cutoff(policy, now)
    if snapshots.oldest is not None and snapshots.oldest < cutoff:
        return None
    return cutoff


def plan_maintenance(
    table: TableRef,
    policy: MaintenancePolicy,
    *,
    now: datetime,
    target: Target,
    key: tuple[str, ...] = (),
    layout: TableLayout | None = None,
    current: TableLayout | None = None,
    snapshots: SnapshotState | None = None,
    files: FileAges | None = None,
) -> Plan:
    """The maintenance of ``table`` (whose primary key is ``key``) on ``target``; a table
    whose layout is ``current`` gets ``layout`` first (both None: its layout is kept). Without
    ``snapshots`` and ``files`` (a preview, which reads no table) every step is planned."""
    if policy.retention < timedelta(0):
        raise InvalidRequestError("the snapshot retention cannot be negative")
    now = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    ops: list[MaintenanceOp | SetLayoutOp]
    match target.maintenance:
        case Maintenance.SNAPSHOT_PROCEDURES:
            expire_before = now - policy.retention
            ops = []
            change = None
            if layout is not None and current is not None:
                change = layout_change(table, layout, current)
                if change is not None:
                    ops.append(change)
            shape = change.layout if change else (current or layout)
            sort = shape is not None and bool(shape.sort_by)
            ops += [
                RewriteDataFilesOp(
                    table=table,
                    sort=sort,
                    rewrite_all=change is not None and rewrites_files(change),
                    small_file_bytes=SMALL_FILE_BYTES if layout is not None else None,
                ),
                RewritePositionDeletesOp(table=table),
            ]
            # Steps 1-2 only add snapshots newer than ``now``: the state read before them
            # still says what step 3 would find.
            if snapshots is None or not snapshots.expires_nothing_before(expire_before):
                ops.append(
                    ExpireSnapshotsOp(
                        table=table, older_than=expire_before, retain_last=RETAIN_LAST_SNAPSHOTS
                    )
                )
            orphan_before = orphan_cutoff(policy, now)
            # A file steps 1-3 write is newer than ``now``: the listing still says what step 4
            # would find.
            nothing_that_old = files is not None and files.none_before >= orphan_before
            if policy.remove_orphans and not nothing_that_old:
                ops.append(
                    RemoveOrphanFilesOp(
                        table=table,
                        older_than=orphan_before,
                        prefix_listing=policy.prefix_listing,
                    )
                )
        case Maintenance.OPTIMIZE_AND_VACUUM:
            if policy.retention < target.minimum_retention:
                hours = target.minimum_retention / timedelta(hours=1)
                raise InvalidRequestError(
                    f"a retention of {policy.retention / timedelta(hours=1):g} hours is below "
                    f"the {hours:g} hours {target.table_format}'s file clean-up accepts"
                )
            ops = [
                OptimizeOp(table=table, cluster_by=key),
                VacuumOp(
                    table=table, retain_hours=math.ceil(policy.retention / timedelta(hours=1))
                ),
            ]
        case _:
            assert_never(target.maintenance)
    return Plan(ops=tuple(ops))
