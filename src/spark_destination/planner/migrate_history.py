"""Planning of the Migrate operations on history-mode tables and of the sync-mode switches
(soft delete <-> history); see ``planner.migrate`` for the retry rules they follow."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import assert_never

from spark_destination.core.errors import InvalidRequestError, UnsupportedOperationError
from spark_destination.core.model import (
    DELETED,
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    SYNCED,
    Column,
    DataType,
    Table,
)
from spark_destination.core.requests import (
    AddColumnInHistoryMode,
    DropColumnInHistoryMode,
    MigrateRequest,
    SyncModeMigrationType,
    TableSyncModeMigration,
)
from spark_destination.planner.history import history_key
from spark_destination.planner.ir import (
    CheckHistoryStartOp,
    ColumnChange,
    DropColumnsOp,
    DropNotNullOp,
    HistoryColumnChangeOp,
    KeepLatestVersionsOp,
    Op,
    Plan,
    RewriteToHistoryOp,
    SetPrimaryKeyOp,
    TableRef,
)
from spark_destination.planner.migrate_steps import (
    HISTORY_COLUMNS,
    Tables,
    add_column_ops,
    check_value_ops,
    history_columns,
    is_history,
    key_of,
    metadata_op,
    new_column,
    no_history_columns,
    null_or,
    operation_time,
    require_table,
    rewrite_ops,
    table_column,
)
from spark_destination.planner.target import Target


def _history_table(table: Table, what: str) -> tuple[str, ...]:
    if not is_history(table):
        raise InvalidRequestError(
            f"{what} needs a history-mode table; {table.name!r} lacks "
            + ", ".join(repr(c) for c in HISTORY_COLUMNS if table.column(c) is None)
        )
    return history_key(table)


def add_column_in_history(op: AddColumnInHistoryMode, ref: TableRef, table: Table) -> Plan:
    key = _history_table(table, "add_column_in_history_mode")
    at = operation_time(op.operation_timestamp, f"add_column_in_history_mode of {table.name!r}")
    value = null_or(op.default_value)
    column = table.column(op.column)
    ops: list[Op] = []
    if column is None:
        column = new_column(table, op.column, op.column_type)
        ops += [*check_value_ops(column, value), _check_start(ref, at)]
        ops += add_column_ops(ref, table, column)
        columns = (*table.columns, column)
    else:
        # Present already: an interrupted earlier attempt (or Fivetran re-sending the change).
        if column.primary_key or column.name in HISTORY_COLUMNS:
            raise InvalidRequestError(
                f"column {column.name!r} of {table.name!r} is a key or history column"
            )
        ops += [*check_value_ops(column, value), _check_start(ref, at)]
        columns = table.columns
    ops.append(_history_change(ref, columns, key, column, value, at, only_non_null=False))
    return Plan(ops=tuple(ops))


def drop_column_in_history(op: DropColumnInHistoryMode, ref: TableRef, table: Table) -> Plan:
    key = _history_table(table, "drop_column_in_history_mode")
    at = operation_time(op.operation_timestamp, f"drop_column_in_history_mode of {table.name!r}")
    column = table_column(table, op.column)
    if column.primary_key or column.name in (*HISTORY_COLUMNS, SYNCED):
        raise InvalidRequestError(
            f"column {column.name!r} of {table.name!r} is a key or system column and cannot be "
            "dropped in history mode"
        )
    return Plan(
        ops=(
            _check_start(ref, at),
            # The physical column stays: older versions keep their values.
            _history_change(ref, table.columns, key, column, None, at, only_non_null=True),
        )
    )


def _check_start(ref: TableRef, at: datetime) -> CheckHistoryStartOp:
    """No version may start after the operation (it would be rewritten into the past)."""
    return CheckHistoryStartOp(
        table=ref, start=HISTORY_START, active=HISTORY_ACTIVE, operation_timestamp=at
    )


def _history_change(
    ref: TableRef,
    columns: tuple[Column, ...],
    key: tuple[str, ...],
    column: Column,
    value: str | None,
    at: datetime,
    *,
    only_non_null: bool,
) -> HistoryColumnChangeOp:
    return HistoryColumnChangeOp(
        table=ref,
        columns=columns,
        key=key,
        start=HISTORY_START,
        end=HISTORY_END,
        active=HISTORY_ACTIVE,
        column=column,
        value=value,
        operation_timestamp=at,
        only_non_null=only_non_null,
    )


def sync_mode(
    target: Target,
    request: MigrateRequest,
    op: TableSyncModeMigration,
    tables: Tables,
    ref: TableRef,
) -> Plan:
    deleted = op.soft_deleted_column or DELETED
    match op.type:
        case SyncModeMigrationType.SOFT_DELETE_TO_HISTORY:
            return _soft_delete_to_history(ref, _table(request, tables), deleted)
        case SyncModeMigrationType.HISTORY_TO_SOFT_DELETE:
            return _history_to_soft_delete(target, ref, _table(request, tables), deleted)
        case (
            SyncModeMigrationType.SOFT_DELETE_TO_LIVE
            | SyncModeMigrationType.HISTORY_TO_LIVE
            | SyncModeMigrationType.LIVE_TO_SOFT_DELETE
            | SyncModeMigrationType.LIVE_TO_HISTORY
        ):
            raise UnsupportedOperationError(
                f"table_sync_mode_migration {op.type.name} (live mode) is not supported"
            )
        case _:
            assert_never(op.type)


def _table(request: MigrateRequest, tables: Tables) -> Table:
    return require_table(request, tables.get(request.table))


def _soft_delete_to_history(ref: TableRef, table: Table, deleted: str) -> Plan:
    """SOFT_DELETE_TO_HISTORY as the SDK's schema-migration guide writes it: "Use
    ``soft_deleted_column`` to identify active records and set the values of ``_fivetran_start``,
    ``_fivetran_end``, and ``_fivetran_active`` columns appropriately", then "If
    ``_fivetran_deleted`` is present, then drop it". So the column named in the request only
    decides which rows are active; ``_fivetran_deleted`` goes whichever column that is, and a
    custom soft-delete column stays with its data (it is the source's own column)."""
    if not is_history(table):
        no_history_columns(table)
        deleted_column = table.column(deleted)
        if deleted_column is not None and deleted_column.primary_key:
            raise InvalidRequestError(
                f"column {deleted!r} of {table.name!r} is part of the primary key; it cannot be "
                "the soft-delete column"
            )
        columns = history_columns(table)
        rewrite = RewriteToHistoryOp(
            table=ref,
            columns=tuple(c for c in table.columns if c.name != DELETED),
            deleted=deleted if deleted_column is not None else None,
            synced=SYNCED if table.column(SYNCED) is not None else None,
            start=HISTORY_START,
            end=HISTORY_END,
            active=HISTORY_ACTIVE,
        )
        return Plan(ops=(rewrite, *_finish_history(ref, columns)))
    start = table.column(HISTORY_START)
    assert start is not None
    if start.primary_key:
        return Plan(ops=(), noop_reason=f"{table.name!r} is already a history-mode table")
    if table.column(DELETED) is not None:
        raise InvalidRequestError(
            f"table {table.name!r} has the history columns and the soft-delete column "
            f"{DELETED!r}; it is neither a soft-delete nor a history-mode table"
        )
    # The rewrite (one commit) is done and the column metadata is not: an earlier attempt failed
    # in between. Repeat the remaining steps; each is idempotent.
    return Plan(ops=tuple(_finish_history(ref, history_columns(table))))


def _finish_history(ref: TableRef, columns: Sequence[Column]) -> list[Op]:
    """After ``RewriteToHistoryOp``: the key with ``_fivetran_start`` as identifier fields, the
    other history columns nullable as in a table CreateTable made, then (last, see the module
    docstring) the column metadata."""
    return [
        SetPrimaryKeyOp(table=ref, columns=key_of(columns)),
        DropNotNullOp(table=ref, column=HISTORY_END),
        DropNotNullOp(table=ref, column=HISTORY_ACTIVE),
        metadata_op(ref, columns),
    ]


def _history_to_soft_delete(target: Target, ref: TableRef, table: Table, deleted: str) -> Plan:
    if not is_history(table):
        if table.column(deleted) is not None and not any(table.column(c) for c in HISTORY_COLUMNS):
            # Done by an earlier attempt; rewrite the metadata in its final form.
            return Plan(ops=(metadata_op(ref, table.columns),))
        _history_table(table, "HISTORY_TO_SOFT_DELETE")
    key = history_key(table)
    ops: list[Op] = []
    deleted_column = table.column(deleted)
    if deleted_column is None:
        deleted_column = Column(name=deleted, type=DataType.BOOLEAN)
        ops += add_column_ops(ref, table, deleted_column)
    final = tuple(c for c in (*table.columns, deleted_column) if c.name not in HISTORY_COLUMNS)
    final = tuple({c.name: c for c in final}.values())
    ops.append(
        KeepLatestVersionsOp(
            table=ref, key=key, start=HISTORY_START, active=HISTORY_ACTIVE, deleted=deleted
        )
    )
    if target.renames_columns_in_place:
        ops += [
            SetPrimaryKeyOp(table=ref, columns=key),
            DropColumnsOp(table=ref, columns=HISTORY_COLUMNS),
        ]
    else:
        keyed = tuple(replace(c, primary_key=c.name in key) for c in final)
        ops += rewrite_ops(ref, [ColumnChange(source=c, target=c) for c in keyed])
    ops.append(metadata_op(ref, final))
    return Plan(ops=tuple(ops))
