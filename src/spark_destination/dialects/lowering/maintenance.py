"""Lowering of table maintenance, per ``Target.maintenance``: Iceberg's ``CALL
<catalog>.system.<procedure>(name => value)`` and the health query over its metadata tables;
Delta's ``OPTIMIZE``, ``VACUUM`` and ``DESCRIBE DETAIL``. The planner plans only the ops of the
dialect's maintenance style (``planner.maintenance``); each style's templates are checked when
the dialect is built (``base.MAINTENANCE_TEMPLATES``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, assert_never

from sqlglot import exp

from spark_destination.dialects.lowering.common import Renderer
from spark_destination.dialects.quoting import (
    identifier,
    literal,
    qualified,
    utc_timestamp_text,
)
from spark_destination.dialects.quoting import table as table_name
from spark_destination.dialects.rendered import Statement
from spark_destination.planner.ir import (
    ExpireSnapshotsOp,
    MaintenanceOp,
    OptimizeOp,
    RemoveOrphanFilesOp,
    RewriteDataFilesOp,
    RewritePositionDeletesOp,
    TableHealthOp,
    TableRef,
    VacuumOp,
)
from spark_destination.planner.target import Maintenance

# Iceberg's procedure namespace inside every Iceberg catalog.
SYSTEM_NAMESPACE: Final = "system"
# ``rewrite_data_files``' strategy that sorts by the table's sort order.
SORT_STRATEGY: Final = "sort"
# Column order of the health query's one row (``runtime.execute.maintenance.table_health``).
HEALTH_COLUMNS: Final = (
    "data_files",
    "delete_files",
    "snapshots",
    "oldest_snapshot_ms",
    "refs_with_own_retention",
)
# Iceberg's main branch, and the retention settings a branch or tag may carry (columns of the
# ``refs`` metadata table): either kind of ref may make ``expire_snapshots`` remove snapshots
# younger than the cut-off it is given.
MAIN_BRANCH: Final = "main"
REF_RETENTION_COLUMNS: Final = (
    "max_reference_age_in_ms",
    "min_snapshots_to_keep",
    "max_snapshot_age_in_ms",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Argument:
    """One named procedure argument; ``timestamp``: the value is a timestamp literal's text."""

    name: exp.Identifier
    value: exp.Expr
    timestamp: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    procedure: exp.Table
    arguments: list[Argument]


@dataclass(frozen=True, slots=True, kw_only=True)
class HealthContext:
    data_files: exp.Table
    delete_files: exp.Table
    snapshots: exp.Table
    refs: exp.Table
    committed_at: exp.Identifier
    ref_name: exp.Identifier
    main_branch: exp.Literal
    ref_retention: list[exp.Identifier]
    aliases: list[exp.Identifier]


@dataclass(frozen=True, slots=True, kw_only=True)
class OptimizeContext:
    table: exp.Table
    # Empty: compaction only.
    cluster_by: list[exp.Identifier]


@dataclass(frozen=True, slots=True, kw_only=True)
class VacuumContext:
    table: exp.Table
    hours: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class DetailContext:
    table: exp.Table


def _table_argument(table: TableRef) -> exp.Literal:
    # The procedure resolves this string in its own catalog with Spark's identifier parser:
    # quoted parts keep odd names intact.
    return literal(qualified(table.schema, table.name))


def _timestamp(name: str, value: datetime) -> Argument:
    """Procedure arguments must be literals (Iceberg's CALL grammar takes no CAST
    expression): the skeleton writes ``TIMESTAMP`` before the text."""
    return Argument(name=identifier(name), value=literal(utc_timestamp_text(value)), timestamp=True)


def _options(pairs: tuple[tuple[str, str], ...]) -> Argument:
    # map('key', 'value', …): Iceberg's procedures take options as a string map.
    flat = [literal(part) for pair in pairs for part in pair]
    return Argument(name=identifier("options"), value=exp.Anonymous(this="map", expressions=flat))


def _metadata_table(table: TableRef, name: str) -> exp.Table:
    """``catalog.schema.table.name``: one of Iceberg's metadata tables of ``table``."""
    return exp.Table(
        this=exp.Dot(this=identifier(table.name), expression=identifier(name)),
        db=identifier(table.schema),
        catalog=identifier(table.catalog),
    )


def lower_maintenance(r: Renderer, op: MaintenanceOp) -> Statement:
    table = op.table
    arguments = [Argument(name=identifier("table"), value=_table_argument(table))]
    match op:
        case RewriteDataFilesOp():
            if op.sort:
                # The table's sort order: the compacted files are sorted as a whole, so a
                # small batch's key filter skips row groups (and files) again.
                arguments.append(
                    Argument(name=identifier("strategy"), value=literal(SORT_STRATEGY))
                )
            if op.small_file_bytes is None:
                selection: tuple[tuple[str, str], ...] = (
                    ("delete-file-threshold", str(op.delete_file_threshold)),
                )
            else:
                # What batches added (small files) and files mostly deleted; a large file
                # with a few deletes keeps them (its delete file is compacted in step 2).
                # min-input-files 2: Iceberg rewrites a group of candidates only from five
                # files on by default, so a table with a few small files (and their delete
                # files) would never be compacted; one lone file is never rewritten for its
                # size alone.
                selection = (
                    ("min-file-size-bytes", str(op.small_file_bytes)),
                    ("min-input-files", "2"),
                    ("delete-ratio-threshold", repr(op.delete_ratio)),
                )
            options = (
                *selection,
                # Delete files whose rows were all rewritten away would otherwise stay live
                # (and be read) until a later rewrite notices them.
                ("remove-dangling-deletes", "true"),
                *((("rewrite-all", "true"),) if op.rewrite_all else ()),
            )
            arguments.append(_options(options))
            name, summary = "rewrite_data_files", "compact data files and apply delete files"
        case RewritePositionDeletesOp():
            # rewrite-all: one delete file per data file is the usual state (too few to reach
            # the default minimum), and rewriting drops the ones whose data files are gone.
            arguments.append(_options((("rewrite-all", "true"),)))
            name, summary = "rewrite_position_delete_files", "compact position-delete files"
        case ExpireSnapshotsOp():
            arguments += [
                _timestamp("older_than", op.older_than),
                Argument(name=identifier("retain_last"), value=exp.Literal.number(op.retain_last)),
            ]
            name = "expire_snapshots"
            summary = (
                f"expire snapshots older than {op.older_than.isoformat()} "
                f"(keep the last {op.retain_last})"
            )
        case RemoveOrphanFilesOp():
            arguments.append(_timestamp("older_than", op.older_than))
            if op.prefix_listing:
                arguments.append(Argument(name=identifier("prefix_listing"), value=exp.true()))
            name = "remove_orphan_files"
            summary = f"remove unreferenced files older than {op.older_than.isoformat()}"
        case OptimizeOp():
            optimize = OptimizeContext(
                table=r.table(table), cluster_by=[identifier(c) for c in op.cluster_by]
            )
            names = ", ".join(repr(c) for c in op.cluster_by)
            clustered = f", clustered by {names}" if op.cluster_by else ""
            summary = f"compact the data files of {table.name!r}{clustered}"
            return r.statement(op, r.template("optimize", optimize), summary)
        case VacuumOp():
            vacuum = VacuumContext(table=r.table(table), hours=exp.Literal.number(op.retain_hours))
            summary = (
                f"delete the files of {table.name!r} no version of the last "
                f"{op.retain_hours} hours references"
            )
            return r.statement(op, r.template("vacuum", vacuum), summary)
        case TableHealthOp() if r.dialect.maintenance is Maintenance.OPTIMIZE_AND_VACUUM:
            sql = r.template("table_health", DetailContext(table=r.table(table)))
            return r.statement(op, sql, f"read the file count and size of {table.name!r}")
        case TableHealthOp():
            context = HealthContext(
                data_files=_metadata_table(table, "data_files"),
                delete_files=_metadata_table(table, "delete_files"),
                snapshots=_metadata_table(table, "snapshots"),
                refs=_metadata_table(table, "refs"),
                committed_at=identifier("committed_at"),
                ref_name=identifier("name"),
                main_branch=literal(MAIN_BRANCH),
                ref_retention=[identifier(c) for c in REF_RETENTION_COLUMNS],
                aliases=[identifier(c) for c in HEALTH_COLUMNS],
            )
            sql = r.template("table_health", context)
            return r.statement(op, sql, f"count files and snapshots of {table.name!r}")
        case _:
            assert_never(op)
    procedure = table_name(table.catalog, SYSTEM_NAMESPACE, name)
    sql = r.template("maintenance_call", CallContext(procedure=procedure, arguments=arguments))
    return r.statement(op, sql, f"{summary} of {table.name!r}")
