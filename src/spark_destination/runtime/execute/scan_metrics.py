"""What a MERGE's scans of its target read, from Spark's SQL metrics of the executed plan.

Iceberg's scan node (``BatchScanExec``) reports, per statement, the data and delete files its
planning kept and skipped (partition and min/max pruning of whole files) and their total size;
row groups are skipped later, while reading, so the rows the scan returned say how much of the
kept files was read. Together they show an operator whether a small batch's key filter prunes
(``docs/operations.md``). Counts and sizes only: never a value.

Bytes actually read from storage are not in those metrics (Iceberg reports file sizes);
``bytes_read`` here is the process's Hadoop file-system counter for the warehouse's scheme
around the statement: exact when one request runs at a time, more when others read meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from spark_destination.runtime.spark.java_values import java_class, scala_list

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Spark's plan nodes that wrap others without listing them as children.
_ADAPTIVE: Final = "AdaptiveSparkPlanExec"
_COMMAND_RESULT: Final = "CommandResultExec"
_QUERY_STAGE_SUFFIX: Final = "QueryStageExec"
_BATCH_SCAN: Final = "BatchScanExec"
# Iceberg's custom metrics of the scan node (``org.apache.iceberg.spark.source.metrics``) and
# Spark's row count.
_METRICS: Final = {
    "data_files": "resultDataFiles",
    "skipped_data_files": "skippedDataFiles",
    "delete_files": "resultDeleteFiles",
    "data_file_bytes": "totalDataFileSize",
    "delete_file_bytes": "totalDeleteFileSize",
    "rows": "numOutputRows",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanMetrics:
    """What the scans of one table in one statement read (summed over the scans)."""

    table: str
    data_files: int = 0
    skipped_data_files: int = 0
    delete_files: int = 0
    data_file_bytes: int = 0
    delete_file_bytes: int = 0
    rows: int = 0
    # The process's bytes read from the warehouse's file system during the statement.
    bytes_read: int | None = None

    def text(self) -> str:
        total = self.data_files + self.skipped_data_files
        read = "" if self.bytes_read is None else f"; {self.bytes_read / 1e6:.1f} MB read"
        return (
            f"scan of {self.table} kept {self.data_files} of {total} data file(s) "
            f"({self.data_file_bytes / 1e6:.1f} MB) and {self.delete_files} delete file(s) "
            f"({self.delete_file_bytes / 1e6:.2f} MB), returned {self.rows:,} row(s){read}"
        )


def target_scans(frame: DataFrame, table: str) -> ScanMetrics | None:
    """The metrics of the scans of ``table`` (``catalog.schema.name``) in ``frame``'s executed
    plan (a command's plan once it has run); None when none scans it."""
    plan: Any = frame._jdf.queryExecution().executedPlan()
    totals = dict.fromkeys(_METRICS, 0)
    found = False
    for node in _batch_scans(frame.sparkSession, plan):
        if str(node.table().name()) != table:
            continue
        found = True
        metrics = node.metrics()
        for field, name in _METRICS.items():
            if metrics.contains(name):
                totals[field] += int(metrics.apply(name).value())
    return ScanMetrics(table=table, **totals) if found else None


def _batch_scans(session: SparkSession, root: Any) -> Iterator[Any]:
    """The scan nodes in ``root``'s plan and in every plan it holds.

    A scan is a leaf, so each plan is asked for its leaves and for its subqueries (scalar and
    IN subqueries run as plans of their own under expressions; nested ones included) in a few
    calls, and only the leaves that hold a plan of their own (a command's, an adaptive plan's,
    a query stage's) are opened. Visiting every node, several py4j round trips each, took
    ~30 ms a small MERGE (docs/benchmarks.md, "Small syncs").
    """
    # (plan, whether its subqueries are still to be found: a subquery's own nested ones were
    # found with it, among the holding plan's)
    pending: list[tuple[Any, bool]] = [(root, True)]
    while pending:
        plan, find_subqueries = pending.pop()
        if find_subqueries:
            pending.extend((s, False) for s in scala_list(session, plan.subqueriesAll()))
        for leaf in scala_list(session, plan.collectLeaves()):
            name = leaf.getClass().getSimpleName()
            if name == _BATCH_SCAN:
                yield leaf
            elif name == _COMMAND_RESULT:
                pending.append((leaf.commandPhysicalPlan(), True))
            elif name == _ADAPTIVE:
                pending.append((leaf.executedPlan(), True))
            elif name.endswith(_QUERY_STAGE_SUFFIX):
                pending.append((leaf.plan(), True))


def bytes_read(session: SparkSession, scheme: str) -> int | None:
    """The process's Hadoop file-system counter of bytes read for ``scheme`` (None: unknown)."""
    file_system = java_class(session, "org.apache.hadoop.fs.FileSystem")
    statistics = file_system.getGlobalStorageStatistics().get(scheme)
    if statistics is None:
        return None
    value = statistics.getLong("bytesRead")
    return None if value is None else int(value)
