"""Lowering of table maintenance: Iceberg's ``CALL <catalog>.system.<procedure>(name => value)``
and the health query over its metadata tables.

Only dialects whose templates folder has ``maintenance_call`` / ``table_health`` (today
``spark_iceberg``) render these; another dialect gets a ``RenderError`` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, assert_never

import jinja2

from spark_destination.core.errors import RenderError
from spark_destination.dialects.lowering.common import Renderer
from spark_destination.dialects.quoting import ident, qualified, string_literal, utc_timestamp_text
from spark_destination.dialects.rendered import Statement
from spark_destination.planner.ir import (
    ExpireSnapshotsOp,
    MaintenanceOp,
    RemoveOrphanFilesOp,
    RewriteDataFilesOp,
    RewritePositionDeletesOp,
    TableHealthOp,
    TableRef,
)

# Iceberg's procedure namespace inside every Iceberg catalog.
SYSTEM_NAMESPACE: Final = "system"
# Column order of the health query's one row.
HEALTH_COLUMNS: Final = ("data_files", "delete_files", "snapshots")


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    procedure: str
    # (quoted argument name, literal) pairs, in order.
    arguments: list[tuple[str, str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class HealthContext:
    data_files: str
    delete_files: str
    snapshots: str
    data_files_alias: str
    delete_files_alias: str
    snapshots_alias: str


def _table_argument(table: TableRef) -> str:
    # The procedure resolves this string in its own catalog with Spark's identifier parser:
    # quoted parts keep odd names intact.
    return string_literal(qualified(table.schema, table.name))


def _timestamp(value: datetime) -> str:
    """``TIMESTAMP '…'``: procedure arguments must be literals (Iceberg's CALL grammar takes
    no CAST expression)."""
    return "TIMESTAMP " + string_literal(utc_timestamp_text(value))


def _options(pairs: tuple[tuple[str, str], ...]) -> str:
    # map('key', 'value', …): Iceberg's procedures take options as a string map.
    return "map(" + ", ".join(f"{string_literal(k)}, {string_literal(v)}" for k, v in pairs) + ")"


def _template(r: Renderer, name: str, context: object) -> str:
    try:
        return r.template(name, context)
    except jinja2.TemplateNotFound:
        raise RenderError(
            f"table maintenance is not available for dialect {r.dialect.name} (it renders "
            "Iceberg's CALL procedures)"
        ) from None


def lower_maintenance(r: Renderer, op: MaintenanceOp) -> Statement:
    table = op.table
    arguments: list[tuple[str, str]] = [(ident("table"), _table_argument(table))]
    match op:
        case RewriteDataFilesOp():
            options = (
                ("delete-file-threshold", str(op.delete_file_threshold)),
                # Delete files whose rows were all rewritten away would otherwise stay live
                # (and be read) until a later rewrite notices them.
                ("remove-dangling-deletes", "true"),
            )
            arguments.append((ident("options"), _options(options)))
            name, summary = "rewrite_data_files", "compact data files and apply delete files"
        case RewritePositionDeletesOp():
            # rewrite-all: one delete file per data file is the usual state (too few to reach
            # the default minimum), and rewriting drops the ones whose data files are gone.
            arguments.append((ident("options"), _options((("rewrite-all", "true"),))))
            name, summary = "rewrite_position_delete_files", "compact position-delete files"
        case ExpireSnapshotsOp():
            arguments += [
                (ident("older_than"), _timestamp(op.older_than)),
                (ident("retain_last"), str(int(op.retain_last))),
            ]
            name = "expire_snapshots"
            summary = (
                f"expire snapshots older than {op.older_than.isoformat()} "
                f"(keep the last {op.retain_last})"
            )
        case RemoveOrphanFilesOp():
            arguments.append((ident("older_than"), _timestamp(op.older_than)))
            name = "remove_orphan_files"
            summary = f"remove unreferenced files older than {op.older_than.isoformat()}"
        case TableHealthOp():
            parts = (table.catalog, table.schema, table.name)
            context = HealthContext(
                data_files=qualified(*parts, "data_files"),
                delete_files=qualified(*parts, "delete_files"),
                snapshots=qualified(*parts, "snapshots"),
                data_files_alias=ident("data_files"),
                delete_files_alias=ident("delete_files"),
                snapshots_alias=ident("snapshots"),
            )
            sql = _template(r, "table_health", context)
            return r.statement(op, sql, f"count files and snapshots of {table.name!r}")
        case _:
            assert_never(op)
    procedure = qualified(table.catalog, SYSTEM_NAMESPACE, name)
    sql = _template(r, "maintenance_call", CallContext(procedure=procedure, arguments=arguments))
    # CALL is outside sqlglot's Spark grammar: checked as a command.
    return r.statement(op, sql, f"{summary} of {table.name!r}", command=True)
