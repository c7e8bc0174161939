"""Run a table-maintenance plan and read a table's health (files and snapshots).

Statements are rendered once, by the engine, like every other plan; this module runs them one
by one so the procedures' result rows (counts of files rewritten, removed…) reach the log. Each
goes through ``Executor.sql``, the path of every other statement: a transient failure (a commit
that lost a race with another writer) is retried, any other becomes an ``ExecutionError``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from spark_destination.dialects.rendered import RenderedPlan, Statement
from spark_destination.planner.ir import TableHealthOp, TableRef
from spark_destination.planner.maintenance import SnapshotState
from spark_destination.runtime.execute import faults
from spark_destination.runtime.execute.executor import Executor

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableHealth:
    data_files: int
    delete_files: int
    snapshots: int
    # The oldest snapshot's commit time, in milliseconds since the epoch (None: no snapshot).
    oldest_snapshot_ms: int | None = None
    # Branches or tags besides main, and refs with retention settings of their own.
    refs_with_own_retention: int = 0

    def snapshot_state(self) -> SnapshotState:
        oldest = self.oldest_snapshot_ms
        return SnapshotState(
            oldest=None if oldest is None else datetime.fromtimestamp(oldest / 1000, UTC),
            refs_with_own_retention=self.refs_with_own_retention > 0,
        )

    def text(self) -> str:
        return (
            f"{self.data_files} data file(s), {self.delete_files} delete file(s), "
            f"{self.snapshots} snapshot(s)"
        )


@dataclass(slots=True, kw_only=True)
class MaintenanceReport:
    table: TableRef
    before: TableHealth
    after: TableHealth | None = None
    # (step summary, seconds, the values of the procedure's first result row, in the order of
    # its result columns: ``Executor.sql`` returns values, not column names)
    # Each step's summary, seconds and result row as (column, value) pairs.
    steps: list[tuple[str, float, tuple[tuple[str, object], ...]]] = field(default_factory=list)

    def text(self) -> str:
        after = self.after.text() if self.after else "?"
        lines = [f"{self.table.schema}.{self.table.name}: before {self.before.text()}"]
        for summary, seconds, result in self.steps:
            values = ", ".join(f"{name}={value}" for name, value in result)
            lines.append(f"  {summary}: {seconds:.2f} s{'; result ' + values if values else ''}")
        lines.append(f"  after {after}")
        return "\n".join(lines)


# The column of Delta's DESCRIBE DETAIL row that counts the table's data files.
DELTA_FILE_COUNT: Final = "numFiles"


def table_health(executor: Executor, health: Statement) -> TableHealth:
    """Run a rendered ``TableHealthOp`` (one row: data files, delete files, snapshots, the
    oldest snapshot's time, refs with retention of their own)."""
    assert isinstance(health.op, TableHealthOp)
    names: list[str] = []
    row = executor.sql(health.sql, what=health.summary, columns=names)[0]
    if DELTA_FILE_COUNT in names:
        # Delta's DESCRIBE DETAIL: the live data files; deletion vectors and versions are
        # not counted there, and VACUUM, not snapshot expiry, removes old files.
        return TableHealth(
            data_files=int(row[names.index(DELTA_FILE_COUNT)]),
            delete_files=0,
            snapshots=0,
            oldest_snapshot_ms=None,
            refs_with_own_retention=0,
        )
    data_files, delete_files, snapshots, oldest, refs = row
    return TableHealth(
        data_files=int(data_files),
        delete_files=int(delete_files),
        snapshots=int(snapshots),
        oldest_snapshot_ms=None if oldest is None else int(oldest),
        refs_with_own_retention=int(refs),
    )


def run_maintenance(
    executor: Executor,
    table: TableRef,
    statements: RenderedPlan,
    health: Statement,
    before: TableHealth,
) -> MaintenanceReport:
    """Run ``statements`` one by one; the report holds the table's health ``before`` them (read
    by the caller, which planned with it) and after them (``health`` run again)."""
    report = MaintenanceReport(table=table, before=before)
    for index, statement in enumerate(statements):
        faults.boundary(index, statement.op)
        started = time.perf_counter()
        names: list[str] = []
        rows = executor.sql(statement.sql, what=statement.summary, columns=names)
        # Counts (or, for orphan files, the first location): never row values.
        result = tuple(zip(names, rows[0], strict=False)) if rows else ()
        report.steps.append((statement.summary, time.perf_counter() - started, result))
    report.after = table_health(executor, health)
    log.info("maintenance of %s", report.text().replace("\n", ";"))
    return report
