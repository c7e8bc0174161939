"""Planning of Truncate: only rows synced before the cut-off, hard or soft."""

from __future__ import annotations

from datetime import UTC, datetime

from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import (
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    Column,
    DataType,
    Table,
)
from spark_destination.core.requests import TruncateRequest
from spark_destination.planner import metadata
from spark_destination.planner.ir import AddColumnsOp, Plan, SetPropertiesOp, TruncateOp
from spark_destination.planner.tables import table_ref
from spark_destination.planner.target import Target


def to_millis(value: datetime) -> datetime:
    """``utc_delete_before`` has millisecond precision: anything finer is noise."""
    utc = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return utc.replace(microsecond=utc.microsecond // 1000 * 1000)


def plan_truncate(
    request: TruncateRequest, current: Table | None, *, catalog: str, target: Target
) -> Plan:
    ref = table_ref(catalog, request.target.schema, request.target.table, target=target)
    if current is None:
        return Plan(ops=(), noop_reason="the table does not exist (nothing to truncate)")
    if current.column(request.synced_column) is None:
        raise InvalidRequestError(
            f"table {request.target.table!r} has no column {request.synced_column!r} to truncate by"
        )
    deleted = request.soft.deleted_column if request.soft else None
    if deleted is not None and current.column(deleted) is None and _is_history(current):
        # A history table has no soft-delete column and must not get one: keep its history
        # intact by closing the active versions synced before the cut-off (see
        # ``planner.history``). A hard truncate removes those rows, as for any table.
        return Plan(
            ops=(
                TruncateOp(
                    table=ref,
                    synced_column=request.synced_column,
                    before=to_millis(request.utc_delete_before),
                    soft_deleted_column=None,
                    history_close=(HISTORY_END, HISTORY_ACTIVE),
                ),
            )
        )
    ops: list[AddColumnsOp | SetPropertiesOp | TruncateOp] = []
    if deleted is not None and current.column(deleted) is None:
        # A soft truncate may be the first soft delete a table sees: Fivetran adds the column.
        added = Column(name=deleted, type=DataType.BOOLEAN)
        ops += [
            AddColumnsOp(table=ref, columns=(added,)),
            SetPropertiesOp(
                table=ref,
                properties=((metadata.PROPERTY, metadata.encode((*current.columns, added))),),
            ),
        ]
    ops.append(
        TruncateOp(
            table=ref,
            synced_column=request.synced_column,
            before=to_millis(request.utc_delete_before),
            soft_deleted_column=deleted,
        )
    )
    return Plan(ops=tuple(ops))


def _is_history(table: Table) -> bool:
    return all(table.column(c) is not None for c in (HISTORY_START, HISTORY_END, HISTORY_ACTIVE))
