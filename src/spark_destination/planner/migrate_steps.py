"""What the Migrate planners share: constants, lookups of the tables and columns a
request names, and the steps several operations take (metadata, added columns, table fills)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final

from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import (
    DELETED,
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    Column,
    DataType,
    Table,
    utc_instant,
)
from spark_destination.core.names import check_not_reserved
from spark_destination.core.requests import (
    MigrateRequest,
)
from spark_destination.planner import metadata
from spark_destination.planner.ir import (
    AddColumnsOp,
    CheckLiteralOp,
    ColumnChange,
    CreateTableOp,
    Op,
    RewriteTableOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
    TableRef,
)
from spark_destination.planner.target import Target

HISTORY_COLUMNS: Final = (HISTORY_START, HISTORY_END, HISTORY_ACTIVE)
# The tester sends the literal "NULL" for set_column_to_null; "" means no value either.
NULL_VALUES: Final = frozenset({"", "NULL"})

Tables = Mapping[str, Table | None]


def require_table(request: MigrateRequest, current: Table | None, name: str | None = None) -> Table:
    if current is None:
        raise InvalidRequestError(
            f"table {request.schema!r}.{name or request.table!r} does not exist; Migrate cannot "
            "change it"
        )
    return current


def table_column(table: Table, name: str) -> Column:
    if not name:
        raise InvalidRequestError(f"Migrate of {table.name!r} names no column")
    column = table.column(name)
    if column is None:
        raise InvalidRequestError(f"table {table.name!r} has no column {name!r}")
    return column


def null_or(text: str) -> str | None:
    return None if text in NULL_VALUES else text


def operation_time(text: str, what: str) -> datetime:
    try:
        return utc_instant(text)
    except ValueError:
        raise InvalidRequestError(
            f"{what}: operation_timestamp {text!r} is not an ISO-8601 instant"
        ) from None


def metadata_op(ref: TableRef, columns: Sequence[Column]) -> SetPropertiesOp:
    return SetPropertiesOp(table=ref, properties=((metadata.PROPERTY, metadata.encode(columns)),))


def new_column(table: Table, name: str, data_type: DataType) -> Column:
    if not name:
        raise InvalidRequestError(f"Migrate of {table.name!r} names no column")
    check_not_reserved("column", name)
    if data_type is DataType.UNSPECIFIED:
        raise InvalidRequestError(f"column {name!r} of {table.name!r} has no data type")
    return Column(name=name, type=data_type)


def add_column_ops(ref: TableRef, table: Table, column: Column) -> list[Op]:
    """Metadata first (naming a column that does not exist yet is harmless), then the column."""
    return [metadata_op(ref, (*table.columns, column)), AddColumnsOp(table=ref, columns=(column,))]


def check_value_ops(column: Column, value: str | None) -> list[Op]:
    return [] if value is None else [CheckLiteralOp(column=column, value=value)]


def is_history(table: Table) -> bool:
    return all(table.column(c) is not None for c in HISTORY_COLUMNS)


def same_shape(target: Target, table: Table, columns: Sequence[Column]) -> bool:
    """An existing table that an interrupted copy of ``columns`` could have left behind."""
    return len(table.columns) == len(columns) and all(
        a.name == b.name and a.primary_key == b.primary_key and target.same_storage(a, b)
        for a, b in zip(table.columns, columns, strict=True)
    )


def key_of(columns: Sequence[Column]) -> tuple[str, ...]:
    return tuple(c.name for c in columns if c.primary_key)


def rewrite_ops(ref: TableRef, changes: Sequence[ColumnChange]) -> list[Op]:
    """The table rewritten as ``changes`` in one commit (where the target cannot rename or
    drop a column in place), then its key set again: a rewrite loses it."""
    ops: list[Op] = [RewriteTableOp(table=ref, columns=tuple(changes))]
    if key := key_of([c.target for c in changes]):
        ops.append(SetPrimaryKeyOp(table=ref, columns=key))
    return ops


def fill_table(
    sql_target: Target,
    target: TableRef,
    existing: Table | None,
    columns: Sequence[Column],
    rows: Op,
) -> list[Op]:
    """Create ``target`` with ``columns`` unless an earlier attempt did, then replace its rows."""
    ops: list[Op] = []
    if existing is None:
        properties = ((metadata.PROPERTY, metadata.encode(columns)),)
        ops.append(CreateTableOp(table=target, columns=tuple(columns), properties=properties))
    elif not same_shape(sql_target, existing, columns):
        raise InvalidRequestError(
            f"table {target.schema!r}.{target.name!r} already exists with other columns; "
            "Migrate will not overwrite it"
        )
    if key_of(columns):
        # Repeated on a retry: an interrupted attempt may have created the table without them.
        ops.append(SetPrimaryKeyOp(table=target, columns=key_of(columns)))
    ops.append(rows)
    return ops


def history_columns(table: Table, *, from_soft_delete: bool = True) -> tuple[Column, ...]:
    """The columns of ``table`` switched to history mode: from soft-delete mode
    ``_fivetran_deleted`` goes (see ``planner.migrate_history``: the SDK drops it whichever column
    marked the deletes), the three history columns come last and ``_fivetran_start`` joins the
    primary key."""
    dropped = {*HISTORY_COLUMNS, DELETED} if from_soft_delete else set(HISTORY_COLUMNS)
    kept = tuple(c for c in table.columns if c.name not in dropped)
    return (
        *kept,
        Column(name=HISTORY_START, type=DataType.UTC_DATETIME, primary_key=True),
        Column(name=HISTORY_END, type=DataType.UTC_DATETIME),
        Column(name=HISTORY_ACTIVE, type=DataType.BOOLEAN),
    )


def no_history_columns(table: Table) -> None:
    """A table that is not in history mode must not hold some of the history columns: the
    switch adds all three."""
    present = [c for c in HISTORY_COLUMNS if table.column(c) is not None]
    if present:
        raise InvalidRequestError(
            f"table {table.name!r} is not a history-mode table but already has column(s) "
            + ", ".join(repr(c) for c in present)
        )
