"""Run a table-maintenance plan and read a table's health (files and snapshots).

Statements are rendered once, by the engine, like every other plan; this module runs them one
by one so the procedures' result rows (counts of files rewritten, removed…) reach the log.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from spark_destination.core.errors import ExecutionError
from spark_destination.dialects.rendered import RenderedPlan, Statement
from spark_destination.planner.ir import (
    TableHealthOp,
    TableRef,
)
from spark_destination.runtime.execute.executor import Executor
from spark_destination.runtime.execute.spark_errors import describe_spark_error

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableHealth:
    data_files: int
    delete_files: int
    snapshots: int

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
    # (step summary, seconds, the procedure's result columns and values)
    steps: list[tuple[str, float, dict[str, object]]] = field(default_factory=list)

    def text(self) -> str:
        after = self.after.text() if self.after else "?"
        lines = [f"{self.table.schema}.{self.table.name}: before {self.before.text()}"]
        for summary, seconds, result in self.steps:
            counts = ", ".join(f"{k}={v}" for k, v in result.items())
            lines.append(f"  {summary}: {seconds:.2f} s{'; ' + counts if counts else ''}")
        lines.append(f"  after {after}")
        return "\n".join(lines)


def table_health(executor: Executor, health: Statement) -> TableHealth:
    """Run a rendered ``TableHealthOp`` (one row: data files, delete files, snapshots)."""
    assert isinstance(health.op, TableHealthOp) and health.sql is not None
    data_files, delete_files, snapshots = executor.sql(health.sql, what=health.summary)[0]
    return TableHealth(
        data_files=int(data_files), delete_files=int(delete_files), snapshots=int(snapshots)
    )


def run_maintenance(
    executor: Executor, table: TableRef, statements: RenderedPlan, health: Statement
) -> MaintenanceReport:
    report = MaintenanceReport(table=table, before=table_health(executor, health))
    for statement in statements:
        assert statement.sql is not None
        started = time.perf_counter()
        result = _run(executor, statement.sql, what=statement.summary)
        report.steps.append((statement.summary, time.perf_counter() - started, result))
    report.after = table_health(executor, health)
    log.info("maintenance of %s", report.text().replace("\n", ";"))
    return report


def _run(executor: Executor, sql: str, *, what: str) -> dict[str, object]:
    """Run one procedure call; its one result row by column name (counts only)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
        frame = executor.session.sql(sql)
        rows = frame.collect()
    except (PySparkException, Py4JJavaError) as exc:
        raise ExecutionError(f"{what} failed: {describe_spark_error(exc)}") from None
    return dict(rows[0].asDict()) if rows else {}
