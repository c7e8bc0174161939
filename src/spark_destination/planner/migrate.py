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

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Final, assert_never

from spark_destination.dialects import spark_iceberg
from spark_destination.errors import InvalidRequestError, UnsupportedOperationError
from spark_destination.model import (
    DELETED,
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    SYNCED,
    Column,
    DataType,
    Table,
)
from spark_destination.planner import metadata
from spark_destination.planner.history import history_key
from spark_destination.planner.ir import (
    AddColumnsOp,
    CheckHistoryStartOp,
    CheckLiteralOp,
    CopyRowsOp,
    CopyRowsToHistoryOp,
    CreateTableOp,
    DropColumnsOp,
    DropNotNullOp,
    DropTableOp,
    HistoryColumnChangeOp,
    KeepLatestVersionsOp,
    Op,
    Plan,
    RenameColumnOp,
    RewriteToHistoryOp,
    SetColumnValueOp,
    SetIdentifierFieldsOp,
    SetPropertiesOp,
    TableRef,
)
from spark_destination.planner.tables import table_ref
from spark_destination.requests import (
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
    SyncModeMigrationType,
    TableSyncModeMigration,
    UpdateColumnValue,
)

HISTORY_COLUMNS: Final = (HISTORY_START, HISTORY_END, HISTORY_ACTIVE)
# The tester sends the literal "NULL" for set_column_to_null; "" means no value either.
NULL_VALUES: Final = frozenset({"", "NULL"})

Tables = Mapping[str, Table | None]


def migrate_tables(request: MigrateRequest) -> tuple[str, ...]:
    """The tables a Migrate reads or changes: the engine locks and describes exactly these."""
    op = request.operation
    match op:
        case CopyTable() | RenameTable() | CopyTableToHistoryMode():
            return tuple(dict.fromkeys((op.from_table or request.table, op.to_table)))
        case _:
            return (request.table,)


def plan_migrate(request: MigrateRequest, tables: Tables, *, catalog: str) -> Plan:
    """``tables`` maps each name of ``migrate_tables(request)`` to its current state."""
    op = request.operation
    ref = table_ref(catalog, request.schema, request.table)
    current = tables.get(request.table)
    match op:
        case DropTable():
            if current is None:
                return Plan(ops=(), noop_reason="the table does not exist (already dropped)")
            return Plan(ops=(DropTableOp(table=ref),))
        case UpdateColumnValue():
            return _update_column_value(request, op, ref, _require(request, current))
        case AddColumnWithDefaultValue():
            return _add_column_with_default(request, op, ref, _require(request, current))
        case CopyColumn():
            return _copy_column(op, ref, _require(request, current))
        case RenameColumn():
            return _rename_column(op, ref, _require(request, current))
        case CopyTable():
            return _copy_table(request, op, tables, catalog)
        case RenameTable():
            return _rename_table(request, op, tables, catalog)
        case CopyTableToHistoryMode():
            return _copy_table_to_history(request, op, tables, catalog)
        case AddColumnInHistoryMode():
            return _add_column_in_history(request, op, ref, _require(request, current))
        case DropColumnInHistoryMode():
            return _drop_column_in_history(request, op, ref, _require(request, current))
        case TableSyncModeMigration():
            return _sync_mode(request, op, tables, catalog)
        case _:
            assert_never(op)


# --- helpers --------------------------------------------------------------------------------


def _require(request: MigrateRequest, current: Table | None, name: str | None = None) -> Table:
    if current is None:
        raise InvalidRequestError(
            f"table {request.schema!r}.{name or request.table!r} does not exist; Migrate cannot "
            "change it"
        )
    return current


def _column(table: Table, name: str) -> Column:
    if not name:
        raise InvalidRequestError(f"Migrate of {table.name!r} names no column")
    column = table.column(name)
    if column is None:
        raise InvalidRequestError(f"table {table.name!r} has no column {name!r}")
    return column


def _value(text: str) -> str | None:
    return None if text in NULL_VALUES else text


def _timestamp(text: str, what: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidRequestError(
            f"{what}: operation_timestamp {text!r} is not an ISO-8601 instant"
        ) from None
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


def _metadata(ref: TableRef, columns: Sequence[Column]) -> SetPropertiesOp:
    return SetPropertiesOp(table=ref, properties=((metadata.PROPERTY, metadata.encode(columns)),))


def _new_column(table: Table, name: str, data_type: DataType) -> Column:
    if not name:
        raise InvalidRequestError(f"Migrate of {table.name!r} names no column")
    if data_type is DataType.UNSPECIFIED:
        raise InvalidRequestError(f"column {name!r} of {table.name!r} has no data type")
    return Column(name=name, type=data_type)


def _add_column_ops(ref: TableRef, table: Table, column: Column) -> list[Op]:
    """Metadata first (naming a column that does not exist yet is harmless), then the column."""
    return [_metadata(ref, (*table.columns, column)), AddColumnsOp(table=ref, columns=(column,))]


def _check(column: Column, value: str | None) -> list[Op]:
    return [] if value is None else [CheckLiteralOp(column=column, value=value)]


def _is_history(table: Table) -> bool:
    return all(table.column(c) is not None for c in HISTORY_COLUMNS)


def _storage(column: Column) -> object:
    # Iceberg stores SMALLINT as INT: a SHORT column reads back as INT until metadata says more.
    if column.type is DataType.SHORT:
        column = replace(column, type=DataType.INT)
    return spark_iceberg.sql_type(column)


def _same_storage(a: Column, b: Column) -> bool:
    return _storage(a) == _storage(b)


def _same_shape(table: Table, columns: Sequence[Column]) -> bool:
    """An existing target that an interrupted copy of ``columns`` could have left behind."""
    return len(table.columns) == len(columns) and all(
        a.name == b.name and a.primary_key == b.primary_key and _same_storage(a, b)
        for a, b in zip(table.columns, columns, strict=True)
    )


def _key(columns: Sequence[Column]) -> tuple[str, ...]:
    return tuple(c.name for c in columns if c.primary_key)


def _fill(
    target: TableRef, existing: Table | None, columns: Sequence[Column], rows: Op
) -> list[Op]:
    """Create ``target`` with ``columns`` unless an earlier attempt did, then replace its rows."""
    ops: list[Op] = []
    if existing is None:
        properties = (
            *spark_iceberg.TABLE_PROPERTIES,
            (metadata.PROPERTY, metadata.encode(columns)),
        )
        ops.append(CreateTableOp(table=target, columns=tuple(columns), properties=properties))
    elif not _same_shape(existing, columns):
        raise InvalidRequestError(
            f"table {target.schema!r}.{target.name!r} already exists with other columns; "
            "Migrate will not overwrite it"
        )
    if _key(columns):
        # Repeated on a retry: an interrupted attempt may have created the table without them.
        ops.append(SetIdentifierFieldsOp(table=target, columns=_key(columns)))
    ops.append(rows)
    return ops


# --- single-table operations ----------------------------------------------------------------


def _update_column_value(
    request: MigrateRequest, op: UpdateColumnValue, ref: TableRef, table: Table
) -> Plan:
    column = _column(table, op.column)
    value = _value(op.value)
    if column.primary_key:
        raise InvalidRequestError(
            f"column {column.name!r} of {table.name!r} is part of the primary key; "
            "update_column_value would give every row the same key"
        )
    return Plan(
        ops=(*_check(column, value), SetColumnValueOp(table=ref, column=column, value=value))
    )


def _add_column_with_default(
    request: MigrateRequest, op: AddColumnWithDefaultValue, ref: TableRef, table: Table
) -> Plan:
    value = _value(op.default_value)
    existing = table.column(op.column)
    if existing is not None:
        # Fivetran still sends the operation when the column exists: skip the ADD, still fill.
        if existing.primary_key:
            raise InvalidRequestError(
                f"column {existing.name!r} of {table.name!r} is part of the primary key; "
                "its value cannot be set for every row"
            )
        return Plan(
            ops=(
                *_check(existing, value),
                SetColumnValueOp(table=ref, column=existing, value=value),
            )
        )
    column = _new_column(table, op.column, op.column_type)
    ops: list[Op] = [*_check(column, value), *_add_column_ops(ref, table, column)]
    if value is not None:
        ops.append(SetColumnValueOp(table=ref, column=column, value=value))
    return Plan(ops=tuple(ops))


def _copy_column(op: CopyColumn, ref: TableRef, table: Table) -> Plan:
    source = _column(table, op.from_column)
    if not op.to_column or op.to_column == op.from_column:
        raise InvalidRequestError(
            f"copy_column of {table.name!r} needs a to_column other than {op.from_column!r}"
        )
    target = table.column(op.to_column)
    ops: list[Op] = []
    if target is None:
        target = replace(source, name=op.to_column, primary_key=False)
        ops += _add_column_ops(ref, table, target)
    elif target.primary_key or not _same_storage(source, target):
        raise InvalidRequestError(
            f"table {table.name!r} already has a column {op.to_column!r} that cannot take the "
            f"values of {op.from_column!r}"
        )
    ops.append(SetColumnValueOp(table=ref, column=target, from_column=source.name))
    return Plan(ops=tuple(ops))


def _rename_column(op: RenameColumn, ref: TableRef, table: Table) -> Plan:
    source, target = table.column(op.from_column), table.column(op.to_column)
    if not op.to_column:
        raise InvalidRequestError(f"rename_column of {table.name!r} names no to_column")
    if source is not None and target is not None:
        raise InvalidRequestError(
            f"table {table.name!r} already has a column {op.to_column!r}; cannot rename "
            f"{op.from_column!r} to it"
        )
    if source is None and target is None:
        raise InvalidRequestError(f"table {table.name!r} has no column {op.from_column!r}")
    if source is None:
        # An earlier attempt renamed it: only the metadata may still need its final form.
        return Plan(ops=(_metadata(ref, table.columns),))
    renamed = replace(source, name=op.to_column)
    final = tuple(renamed if c.name == source.name else c for c in table.columns)
    return Plan(
        ops=(
            # Both names first, so the Fivetran type survives an interruption after the rename.
            _metadata(ref, (*table.columns, renamed)),
            RenameColumnOp(table=ref, from_column=source.name, to_column=op.to_column),
            _metadata(ref, final),
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


def _copy_table(request: MigrateRequest, op: CopyTable, tables: Tables, catalog: str) -> Plan:
    source_name, target_name = _names(request, op.from_table, op.to_table)
    source = _require(request, tables.get(source_name), source_name)
    source_ref = table_ref(catalog, request.schema, source_name)
    target_ref = table_ref(catalog, request.schema, target_name)
    rows = CopyRowsOp(
        source=source_ref, target=target_ref, columns=tuple(c.name for c in source.columns)
    )
    return Plan(ops=tuple(_fill(target_ref, tables.get(target_name), source.columns, rows)))


def _rename_table(request: MigrateRequest, op: RenameTable, tables: Tables, catalog: str) -> Plan:
    source_name, target_name = _names(request, op.from_table, op.to_table)
    source, target = tables.get(source_name), tables.get(target_name)
    if source is None and target is not None:
        return Plan(ops=(), noop_reason=f"{source_name!r} is gone and {target_name!r} exists")
    source = _require(request, source, source_name)
    source_ref = table_ref(catalog, request.schema, source_name)
    target_ref = table_ref(catalog, request.schema, target_name)
    rows = CopyRowsOp(
        source=source_ref, target=target_ref, columns=tuple(c.name for c in source.columns)
    )
    return Plan(
        ops=(*_fill(target_ref, target, source.columns, rows), DropTableOp(table=source_ref))
    )


def history_columns(table: Table, deleted: str) -> tuple[Column, ...]:
    """The columns of ``table`` switched to history mode: the soft-delete column goes, the
    three history columns come last and ``_fivetran_start`` joins the primary key."""
    kept = tuple(c for c in table.columns if c.name != deleted and c.name not in HISTORY_COLUMNS)
    return (
        *kept,
        Column(name=HISTORY_START, type=DataType.UTC_DATETIME, primary_key=True),
        Column(name=HISTORY_END, type=DataType.UTC_DATETIME),
        Column(name=HISTORY_ACTIVE, type=DataType.BOOLEAN),
    )


def _to_history(
    source: Table, source_ref: TableRef, target_ref: TableRef, target: Table | None, deleted: str
) -> list[Op]:
    if _is_history(source):
        raise InvalidRequestError(f"table {source.name!r} is already a history-mode table")
    _no_history_columns(source)
    present = deleted if deleted and source.column(deleted) is not None else None
    columns = history_columns(source, present or "")
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
    return _fill(target_ref, target, columns, rows)


def _no_history_columns(table: Table) -> None:
    """A table that is not in history mode must not hold some of the history columns: the
    switch adds all three."""
    present = [c for c in HISTORY_COLUMNS if table.column(c) is not None]
    if present:
        raise InvalidRequestError(
            f"table {table.name!r} is not a history-mode table but already has column(s) "
            + ", ".join(repr(c) for c in present)
        )


def _copy_table_to_history(
    request: MigrateRequest, op: CopyTableToHistoryMode, tables: Tables, catalog: str
) -> Plan:
    source_name, target_name = _names(request, op.from_table, op.to_table)
    source = _require(request, tables.get(source_name), source_name)
    source_ref = table_ref(catalog, request.schema, source_name)
    target_ref = table_ref(catalog, request.schema, target_name)
    return Plan(
        ops=tuple(
            _to_history(
                source, source_ref, target_ref, tables.get(target_name), op.soft_deleted_column
            )
        )
    )


# --- history mode -------------------------------------------------------------------------------


def _history_table(table: Table, what: str) -> tuple[str, ...]:
    if not _is_history(table):
        raise InvalidRequestError(
            f"{what} needs a history-mode table; {table.name!r} lacks "
            + ", ".join(repr(c) for c in HISTORY_COLUMNS if table.column(c) is None)
        )
    return history_key(table)


def _add_column_in_history(
    request: MigrateRequest, op: AddColumnInHistoryMode, ref: TableRef, table: Table
) -> Plan:
    key = _history_table(table, "add_column_in_history_mode")
    at = _timestamp(op.operation_timestamp, f"add_column_in_history_mode of {table.name!r}")
    value = _value(op.default_value)
    column = table.column(op.column)
    ops: list[Op] = []
    if column is None:
        column = _new_column(table, op.column, op.column_type)
        ops += _check(column, value)
        ops.append(
            CheckHistoryStartOp(
                table=ref, start=HISTORY_START, active=HISTORY_ACTIVE, operation_timestamp=at
            )
        )
        ops += _add_column_ops(ref, table, column)
        columns = (*table.columns, column)
    else:
        # Present already: an interrupted earlier attempt (or Fivetran re-sending the change).
        if column.primary_key or column.name in HISTORY_COLUMNS:
            raise InvalidRequestError(
                f"column {column.name!r} of {table.name!r} is a key or history column"
            )
        ops += _check(column, value)
        ops.append(
            CheckHistoryStartOp(
                table=ref, start=HISTORY_START, active=HISTORY_ACTIVE, operation_timestamp=at
            )
        )
        columns = table.columns
    ops.append(_history_change(ref, columns, key, column, value, at, only_non_null=False))
    return Plan(ops=tuple(ops))


def _drop_column_in_history(
    request: MigrateRequest, op: DropColumnInHistoryMode, ref: TableRef, table: Table
) -> Plan:
    key = _history_table(table, "drop_column_in_history_mode")
    at = _timestamp(op.operation_timestamp, f"drop_column_in_history_mode of {table.name!r}")
    column = _column(table, op.column)
    if column.primary_key or column.name in (*HISTORY_COLUMNS, SYNCED):
        raise InvalidRequestError(
            f"column {column.name!r} of {table.name!r} is a key or system column and cannot be "
            "dropped in history mode"
        )
    return Plan(
        ops=(
            CheckHistoryStartOp(
                table=ref, start=HISTORY_START, active=HISTORY_ACTIVE, operation_timestamp=at
            ),
            # The physical column stays: older versions keep their values.
            _history_change(ref, table.columns, key, column, None, at, only_non_null=True),
        )
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


def _sync_mode(
    request: MigrateRequest, op: TableSyncModeMigration, tables: Tables, catalog: str
) -> Plan:
    match op.type:
        case SyncModeMigrationType.SOFT_DELETE_TO_HISTORY:
            return _soft_delete_to_history(request, op, tables, catalog)
        case SyncModeMigrationType.HISTORY_TO_SOFT_DELETE:
            return _history_to_soft_delete(request, op, tables, catalog)
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


def _soft_delete_to_history(
    request: MigrateRequest, op: TableSyncModeMigration, tables: Tables, catalog: str
) -> Plan:
    ref = table_ref(catalog, request.schema, request.table)
    table = _require(request, tables.get(request.table))
    deleted = op.soft_deleted_column or DELETED
    if not _is_history(table):
        _no_history_columns(table)
        deleted_column = table.column(deleted)
        if deleted_column is not None and deleted_column.primary_key:
            raise InvalidRequestError(
                f"column {deleted!r} of {table.name!r} is part of the primary key; it cannot be "
                "the soft-delete column"
            )
        columns = history_columns(table, deleted)
        rewrite = RewriteToHistoryOp(
            table=ref,
            columns=tuple(c for c in table.columns if c.name != deleted),
            deleted=deleted if deleted_column is not None else None,
            synced=SYNCED if table.column(SYNCED) is not None else None,
            start=HISTORY_START,
            end=HISTORY_END,
            active=HISTORY_ACTIVE,
            properties=spark_iceberg.TABLE_PROPERTIES,
        )
        return Plan(ops=(rewrite, *_finish_history(ref, columns)))
    start = table.column(HISTORY_START)
    assert start is not None
    if start.primary_key:
        return Plan(ops=(), noop_reason=f"{request.table!r} is already a history-mode table")
    if table.column(deleted) is not None:
        raise InvalidRequestError(
            f"table {table.name!r} has the history columns and the soft-delete column "
            f"{deleted!r}; it is neither a soft-delete nor a history-mode table"
        )
    # The rewrite (one commit) is done and the column metadata is not: an earlier attempt failed
    # in between. Repeat the remaining steps; each is idempotent.
    return Plan(ops=tuple(_finish_history(ref, history_columns(table, ""))))


def _finish_history(ref: TableRef, columns: Sequence[Column]) -> list[Op]:
    """After ``RewriteToHistoryOp``: the key with ``_fivetran_start`` as identifier fields, the
    other history columns nullable as in a table CreateTable made, then (last, see the module
    docstring) the column metadata."""
    return [
        SetIdentifierFieldsOp(table=ref, columns=_key(columns)),
        DropNotNullOp(table=ref, column=HISTORY_END),
        DropNotNullOp(table=ref, column=HISTORY_ACTIVE),
        _metadata(ref, columns),
    ]


def _history_to_soft_delete(
    request: MigrateRequest, op: TableSyncModeMigration, tables: Tables, catalog: str
) -> Plan:
    ref = table_ref(catalog, request.schema, request.table)
    table = _require(request, tables.get(request.table))
    deleted = op.soft_deleted_column or DELETED
    if not _is_history(table):
        if table.column(deleted) is not None and not any(table.column(c) for c in HISTORY_COLUMNS):
            # Done by an earlier attempt; rewrite the metadata in its final form.
            return Plan(ops=(_metadata(ref, table.columns),))
        _history_table(table, "HISTORY_TO_SOFT_DELETE")
    key = history_key(table)
    ops: list[Op] = []
    deleted_column = table.column(deleted)
    if deleted_column is None:
        deleted_column = Column(name=deleted, type=DataType.BOOLEAN)
        ops += _add_column_ops(ref, table, deleted_column)
    final = tuple(c for c in (*table.columns, deleted_column) if c.name not in HISTORY_COLUMNS)
    final = tuple({c.name: c for c in final}.values())
    ops += [
        KeepLatestVersionsOp(
            table=ref, key=key, start=HISTORY_START, active=HISTORY_ACTIVE, deleted=deleted
        ),
        SetIdentifierFieldsOp(table=ref, columns=key),
        DropColumnsOp(table=ref, columns=HISTORY_COLUMNS),
        _metadata(ref, final),
    ]
    return Plan(ops=tuple(ops))
