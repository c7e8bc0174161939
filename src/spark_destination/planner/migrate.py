"""Planning of Migrate (reference §9): one pure function from the request and the current
state of the tables it names to the operations that carry it out.

Every operation is all-or-nothing or converges when retried:

* Where one statement does the work it is one Iceberg commit: ``UPDATE`` (update a column,
  copy a column's values), ``INSERT OVERWRITE`` (fill a copied table), one ``MERGE`` (record a
  column change as history, keep the latest version per key).
* Where DDL and DML are unavoidable, the plan is derived from the *current* state, so a retry
  after a failure half-way skips the steps that are done and repeats only idempotent ones:
  the column metadata property is written first (it may name columns that do not exist yet;
  DescribeTable ignores those), then the column is added if it is missing, then it is filled.
* The Hadoop catalog cannot rename tables, so ``rename_table`` is create + ``INSERT
  OVERWRITE`` + drop of the source: a target with the source's columns is taken for an
  interrupted earlier attempt and overwritten; a missing source with an existing target means
  the rename is done. ``copy_table_to_history_mode`` creates its (new) target the same way and
  fills it with one ``INSERT OVERWRITE``.
* ``SOFT_DELETE_TO_HISTORY`` rewrites the table in place in ONE Iceberg commit, like an
  AlterTable rewrite: ``CREATE OR REPLACE TABLE t ... AS SELECT ... FROM t``
  (``RewriteToHistoryOp``) drops the soft-delete column and appends ``_fivetran_start`` (NOT
  NULL), ``_fivetran_end`` and ``_fivetran_active`` with the values of "Switching to history
  mode": soft-deleted rows get ``active = false`` and ``start = end = 0001-01-01T00:00:00Z``
  (Fivetran's minimum for destinations other than MySQL); the others (all rows when the table
  has no such column) ``active = true``, ``start`` = the table's ``MAX(_fivetran_synced)``
  (now when it has no such column or no rows) and ``end = 9999-12-31T23:59:59.999Z``. Readers
  see the soft-delete table or the history table, never a missing or empty one. Then the
  identifier fields (key + ``_fivetran_start``; REPLACE TABLE drops them) are set, the other
  history columns made nullable (the catalog keeps the query's nullability, and a history
  table CreateTable makes has them nullable) and, last, the column metadata is written. Until
  then DescribeTable does not list ``_fivetran_start`` as a key column, so a retry sees a table
  with the history columns, without the soft-delete column and without the new key: it skips
  the rewrite and repeats the (idempotent) remaining steps. A table whose metadata has
  ``_fivetran_start`` in the key is done.
"""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import (
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    SYNCED,
    Column,
    Table,
)
from spark_destination.core.names import check_not_reserved
from spark_destination.core.requests import (
    AddColumnInHistoryMode,
    AddColumnWithDefaultValue,
    CopyColumn,
    CopyTable,
    CopyTableToHistoryMode,
    DropColumnInHistoryMode,
    DropTable,
    MigrateRequest,
    RenameColumn,
    RenameTable,
    TableSyncModeMigration,
    UpdateColumnValue,
)
from spark_destination.planner.ir import (
    ColumnChange,
    CopyRowsOp,
    CopyRowsToHistoryOp,
    DropTableOp,
    Op,
    Plan,
    RenameColumnOp,
    SetColumnValueOp,
    TableRef,
)
from spark_destination.planner.migrate_history import (
    add_column_in_history,
    drop_column_in_history,
    sync_mode,
)
from spark_destination.planner.migrate_steps import (
    HISTORY_COLUMNS,
    Tables,
    add_column_ops,
    check_value_ops,
    fill_table,
    history_columns,
    is_history,
    metadata_op,
    new_column,
    no_history_columns,
    null_or,
    require_table,
    rewrite_ops,
    table_column,
)
from spark_destination.planner.tables import table_ref
from spark_destination.planner.target import Target


def migrate_tables(request: MigrateRequest) -> tuple[str, ...]:
    """The tables a Migrate reads or changes: the engine locks and describes exactly these."""
    op = request.operation
    match op:
        case CopyTable() | RenameTable() | CopyTableToHistoryMode():
            return tuple(dict.fromkeys((op.from_table or request.table, op.to_table)))
        case _:
            return (request.table,)


def plan_migrate(request: MigrateRequest, tables: Tables, *, catalog: str, target: Target) -> Plan:
    """``tables`` maps each name of ``migrate_tables(request)`` to its current state."""
    op = request.operation
    ref = table_ref(catalog, request.schema, request.table, target=target)
    current = tables.get(request.table)
    match op:
        case DropTable():
            if current is None:
                return Plan(ops=(), noop_reason="the table does not exist (already dropped)")
            return Plan(ops=(DropTableOp(table=ref),))
        case UpdateColumnValue():
            return _update_column_value(op, ref, require_table(request, current))
        case AddColumnWithDefaultValue():
            return _add_column_with_default(op, ref, require_table(request, current))
        case CopyColumn():
            return _copy_column(target, op, ref, require_table(request, current))
        case RenameColumn():
            return _rename_column(target, op, ref, require_table(request, current))
        case CopyTable():
            return _copy_table(target, request, op, tables, catalog)
        case RenameTable():
            return _rename_table(target, request, op, tables, catalog)
        case CopyTableToHistoryMode():
            return _copy_table_to_history(target, request, op, tables, catalog)
        case AddColumnInHistoryMode():
            return add_column_in_history(op, ref, require_table(request, current))
        case DropColumnInHistoryMode():
            return drop_column_in_history(op, ref, require_table(request, current))
        case TableSyncModeMigration():
            return sync_mode(target, request, op, tables, ref)
        case _:
            assert_never(op)


# --- single-table operations ----------------------------------------------------------------


def _set_column_value(
    ref: TableRef, table: Table, column: Column, value: str | None, refusal: str
) -> Plan:
    """Every row's ``column`` set to ``value`` (checked first); never a key column."""
    if column.primary_key:
        raise InvalidRequestError(
            f"column {column.name!r} of {table.name!r} is part of the primary key; {refusal}"
        )
    return Plan(
        ops=(
            *check_value_ops(column, value),
            SetColumnValueOp(table=ref, column=column, value=value),
        )
    )


def _update_column_value(op: UpdateColumnValue, ref: TableRef, table: Table) -> Plan:
    column = table_column(table, op.column)
    refusal = "update_column_value would give every row the same key"
    return _set_column_value(ref, table, column, null_or(op.value), refusal)


def _add_column_with_default(op: AddColumnWithDefaultValue, ref: TableRef, table: Table) -> Plan:
    value = null_or(op.default_value)
    existing = table.column(op.column)
    if existing is not None:
        # Fivetran still sends the operation when the column exists: skip the ADD, still fill.
        refusal = "its value cannot be set for every row"
        return _set_column_value(ref, table, existing, value, refusal)
    column = new_column(table, op.column, op.column_type)
    ops: list[Op] = [*check_value_ops(column, value), *add_column_ops(ref, table, column)]
    if value is not None:
        ops.append(SetColumnValueOp(table=ref, column=column, value=value))
    return Plan(ops=tuple(ops))


def _copy_column(sql_target: Target, op: CopyColumn, ref: TableRef, table: Table) -> Plan:
    source = table_column(table, op.from_column)
    if not op.to_column or op.to_column == op.from_column:
        raise InvalidRequestError(
            f"copy_column of {table.name!r} needs a to_column other than {op.from_column!r}"
        )
    check_not_reserved("column", op.to_column)
    target = table.column(op.to_column)
    ops: list[Op] = []
    if target is None:
        target = replace(source, name=op.to_column, primary_key=False)
        ops += add_column_ops(ref, table, target)
    elif target.primary_key or not sql_target.same_storage(source, target):
        raise InvalidRequestError(
            f"table {table.name!r} already has a column {op.to_column!r} that cannot take the "
            f"values of {op.from_column!r}"
        )
    ops.append(SetColumnValueOp(table=ref, column=target, from_column=source.name))
    return Plan(ops=tuple(ops))


def _rename_column(sql_target: Target, op: RenameColumn, ref: TableRef, table: Table) -> Plan:
    source, target = table.column(op.from_column), table.column(op.to_column)
    if not op.to_column:
        raise InvalidRequestError(f"rename_column of {table.name!r} names no to_column")
    check_not_reserved("column", op.to_column)
    if source is not None and target is not None:
        raise InvalidRequestError(
            f"table {table.name!r} already has a column {op.to_column!r}; cannot rename "
            f"{op.from_column!r} to it"
        )
    if source is None and target is None:
        raise InvalidRequestError(f"table {table.name!r} has no column {op.from_column!r}")
    if source is None:
        # An earlier attempt renamed it: only the metadata may still need its final form.
        return Plan(ops=(metadata_op(ref, table.columns),))
    renamed = replace(source, name=op.to_column)
    final = tuple(renamed if c.name == source.name else c for c in table.columns)
    rename: tuple[Op, ...] = (
        RenameColumnOp(table=ref, from_column=source.name, to_column=op.to_column),
    )
    if not sql_target.renames_columns_in_place:
        changes = tuple(
            ColumnChange(source=c, target=renamed if c.name == source.name else c)
            for c in table.columns
        )
        rename = tuple(rewrite_ops(ref, changes))
    return Plan(
        ops=(
            # Both names first, so the Fivetran type survives an interruption after the rename.
            metadata_op(ref, (*table.columns, renamed)),
            *rename,
            metadata_op(ref, final),
        )
    )


# --- table copies -----------------------------------------------------------------------------


def _names(request: MigrateRequest, from_table: str, to_table: str) -> tuple[str, str]:
    source = from_table or request.table
    if not to_table:
        raise InvalidRequestError(f"Migrate of {source!r} names no to_table")
    if to_table == source:
        raise InvalidRequestError(f"Migrate of {source!r} names the same table as its target")
    return source, to_table


def _copy_table(
    sql_target: Target, request: MigrateRequest, op: CopyTable, tables: Tables, catalog: str
) -> Plan:
    source_name, target_name = _names(request, op.from_table, op.to_table)
    source = require_table(request, tables.get(source_name), source_name)
    source_ref = table_ref(catalog, request.schema, source_name, target=sql_target)
    target_ref = table_ref(catalog, request.schema, target_name, target=sql_target)
    rows = CopyRowsOp(
        source=source_ref, target=target_ref, columns=tuple(c.name for c in source.columns)
    )
    return Plan(
        ops=tuple(fill_table(sql_target, target_ref, tables.get(target_name), source.columns, rows))
    )


def _rename_table(
    sql_target: Target, request: MigrateRequest, op: RenameTable, tables: Tables, catalog: str
) -> Plan:
    source_name, target_name = _names(request, op.from_table, op.to_table)
    source, target = tables.get(source_name), tables.get(target_name)
    if source is None and target is not None:
        return Plan(ops=(), noop_reason=f"{source_name!r} is gone and {target_name!r} exists")
    source = require_table(request, source, source_name)
    source_ref = table_ref(catalog, request.schema, source_name, target=sql_target)
    target_ref = table_ref(catalog, request.schema, target_name, target=sql_target)
    rows = CopyRowsOp(
        source=source_ref, target=target_ref, columns=tuple(c.name for c in source.columns)
    )
    return Plan(
        ops=(
            *fill_table(sql_target, target_ref, target, source.columns, rows),
            DropTableOp(table=source_ref),
        )
    )


def _to_history(
    sql_target: Target,
    source: Table,
    source_ref: TableRef,
    target_ref: TableRef,
    target: Table | None,
    deleted: str,
) -> list[Op]:
    if is_history(source):
        raise InvalidRequestError(f"table {source.name!r} is already a history-mode table")
    no_history_columns(source)
    # The SDK's guide: copy the rows, then follow SOFT_DELETE_TO_HISTORY when a soft-delete column
    # is named (``_fivetran_deleted`` goes, see ``planner.migrate_history``), else LIVE_TO_HISTORY
    # (every column stays).
    present = deleted if deleted and source.column(deleted) is not None else None
    columns = history_columns(source, from_soft_delete=bool(deleted))
    rows = CopyRowsToHistoryOp(
        source=source_ref,
        target=target_ref,
        columns=tuple(c.name for c in columns if c.name not in HISTORY_COLUMNS),
        deleted=present,
        synced=SYNCED if source.column(SYNCED) is not None else None,
        start=HISTORY_START,
        end=HISTORY_END,
        active=HISTORY_ACTIVE,
    )
    return fill_table(sql_target, target_ref, target, columns, rows)


def _copy_table_to_history(
    sql_target: Target,
    request: MigrateRequest,
    op: CopyTableToHistoryMode,
    tables: Tables,
    catalog: str,
) -> Plan:
    source_name, target_name = _names(request, op.from_table, op.to_table)
    source = require_table(request, tables.get(source_name), source_name)
    source_ref = table_ref(catalog, request.schema, source_name, target=sql_target)
    target_ref = table_ref(catalog, request.schema, target_name, target=sql_target)
    return Plan(
        ops=tuple(
            _to_history(
                sql_target,
                source,
                source_ref,
                target_ref,
                tables.get(target_name),
                op.soft_deleted_column,
            )
        )
    )
