"""Planning of deferred write mode: append now, merge flush later.

A deferred WriteBatch is staged as in merge mode, then every staged row is appended to the
table's **intermediate table** (``AppendPendingOp``: one commit, the table is not read). A
**merge flush** (``FlushPendingOp``) later folds every pending row into the table with one
MERGE, and ``ClearPendingOp`` deletes the rows it folded.

The intermediate table lives in the table's schema, named ``intermediate_table_prefix`` + the
table's name. The prefix starts with ``core.names.OWN_PREFIX``, which no Fivetran table may start
with: the name can never be one Fivetran creates, a request can never name it, and
DescribeTable of the real table never shows it. Its rows (``pending_columns``): the key
columns, every other column of the table (nullable), an unmodified mask per non-key column, the
row's operation, a counter ordering every row of the table across batches and the batch number.
The layout it was made for is kept in its ``LAYOUT_PROPERTY``: a table whose columns changed
(AlterTable, which flushes first, so it is empty) gets a new intermediate table.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Final, assert_never

from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import Column, DataType, Table
from spark_destination.core.names import MAX_NAME_BYTES
from spark_destination.core.requests import WriteBatchRequest
from spark_destination.planner import metadata
from spark_destination.planner.ir import (
    BATCH_COLUMN,
    OP_COLUMN,
    SEQ_COLUMN,
    AppendPendingOp,
    ClearPendingOp,
    CreateTableOp,
    DropTableOp,
    ExpireSnapshotsOp,
    FlushPendingOp,
    MaintenanceOp,
    MergeBatchOp,
    Op,
    PendingKeysOp,
    PendingStatsOp,
    Plan,
    StageBatchOp,
    TableRef,
    VacuumOp,
    masked_columns,
    unmodified_column,
)
from spark_destination.planner.tables import check_names, filter_key, merge_key
from spark_destination.planner.target import Maintenance, Target
from spark_destination.planner.write import plan_write_batch

# The intermediate table's property holding the layout (``pending_layout``) it was made for.
LAYOUT_PROPERTY: Final = "spark_destination.pending-layout"


def pending_ref(table: TableRef, prefix: str, *, target: Target) -> TableRef:
    """The intermediate table of ``table``: ``prefix`` + its name, in its schema."""
    name = prefix + table.name
    size = len(name.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise InvalidRequestError(
            f"the intermediate table of table {table.name!r} would be named {prefix!r} plus "
            f"the table's name, {size} bytes (UTF-8), longer than the {MAX_NAME_BYTES} bytes a "
            "table name can have: choose a shorter intermediate_table_prefix, or write the "
            "table in merge mode"
        )
    try:
        check_names(target, table.catalog, table.schema, name)
    except InvalidRequestError as exc:
        # A catalog may take shorter names than a path (a Hive metastore: 128 characters).
        raise InvalidRequestError(
            f"the intermediate table of table {table.name!r} would be named {prefix!r} plus the "
            f"table's name, which the catalog refuses: {exc}: choose a shorter or other "
            "intermediate_table_prefix, or write the table in merge mode"
        ) from None
    return TableRef(catalog=table.catalog, schema=table.schema, name=name)


def pending_columns(columns: tuple[Column, ...], key: tuple[str, ...]) -> tuple[Column, ...]:
    """The intermediate table's columns for a table of ``columns`` matched on ``key``."""
    keys = tuple(replace(c, primary_key=True) for c in columns if c.name in key)
    values = tuple(replace(c, primary_key=False) for c in columns if c.name not in key)
    masks = tuple(Column(name=unmodified_column(c.name), type=DataType.BOOLEAN) for c in values)
    bookkeeping = (
        Column(name=OP_COLUMN, type=DataType.STRING),
        Column(name=SEQ_COLUMN, type=DataType.LONG),
        Column(name=BATCH_COLUMN, type=DataType.LONG),
    )
    return (*keys, *values, *masks, *bookkeeping)


def pending_layout(table: Table) -> str:
    """What ``LAYOUT_PROPERTY`` holds for ``table``'s intermediate table."""
    return metadata.encode(pending_columns(table.columns, merge_key(table)))


def create_pending(table: Table, pending: TableRef) -> CreateTableOp:
    """The intermediate table of ``table``, empty."""
    columns = pending_columns(table.columns, merge_key(table))
    return CreateTableOp(
        table=pending,
        columns=columns,
        properties=((LAYOUT_PROPERTY, metadata.encode(columns)),),
    )


def plan_deferred_write(
    request: WriteBatchRequest,
    current: Table | None,
    *,
    catalog: str,
    target: Target,
    pending: TableRef,
    existing_layout: str | None,
    changes_table: str | None = None,
) -> Plan:
    """Stage the batch as merge mode does (same checks, same bad-value policy: the values it
    changes are recorded before the append, as merge mode records them before its MERGE), then
    append it to ``pending``, after creating it when it is missing (``existing_layout`` None)
    or replacing it when it was made for other columns or an unknown layout (``""``; it is
    empty then: the engine flushes it first)."""
    merged = plan_write_batch(
        request, current, catalog=catalog, target=target, changes_table=changes_table
    )
    if merged.noop_reason is not None:
        return merged
    # Merge mode's plan, by kind: its staging, the records of changed values, its MERGE.
    stage = next(op for op in merged.ops if isinstance(op, StageBatchOp))
    merge = next(op for op in merged.ops if isinstance(op, MergeBatchOp))
    recorded = [op for op in merged.ops if op is not stage and op is not merge]
    assert current is not None  # plan_write_batch refuses a missing table
    ops: list[Op] = [stage, *recorded]
    if existing_layout != pending_layout(current):
        if existing_layout is not None:
            ops.append(DropTableOp(table=pending))
        ops.append(create_pending(current, pending))
    ops.append(
        AppendPendingOp(
            table=merge.table,
            pending=pending,
            view=stage.view,
            columns=current.columns,
            key=merge.key,
            staged=tuple(c.name for c in merge.columns),
            masked=masked_columns(merge.columns, merge.key, merge.unmodified_string),
        )
    )
    return Plan(ops=tuple(ops))


def plan_flush(table: TableRef, current: Table, pending: TableRef, *, target: Target) -> Plan:
    """A merge flush of ``table`` (as it is: ``current``): read the pending rows' counters
    (and, when the key can filter the table's scan, their distinct keys), fold the rows up to
    the highest counter into the table, delete them from ``pending``. The runtime binds the
    highest counter it read, and the keys when at most the target's ``flush_filter_slots``
    (``runtime.execute.deferred``)."""
    key = merge_key(current)
    slots = target.flush_filter_slots
    filtered = filter_key(current.columns, key) if slots > 0 else ()
    keys: tuple[Op, ...] = (
        (PendingKeysOp(table=table, pending=pending, key=filtered, limit=slots + 1),)
        if filtered
        else ()
    )
    return Plan(
        ops=(
            PendingStatsOp(table=table, pending=pending),
            *keys,
            FlushPendingOp(
                table=table,
                pending=pending,
                columns=current.columns,
                key=key,
                filter_key=filtered,
                filter_slots=slots if filtered else 0,
            ),
            ClearPendingOp(table=table, pending=pending),
        )
    )


def plan_pending_stats(table: TableRef, pending: TableRef) -> Plan:
    """Read what ``pending`` holds (the engine's first look at a table)."""
    return Plan(ops=(PendingStatsOp(table=table, pending=pending),))


def plan_drop_pending(pending: TableRef) -> Plan:
    """Drop an intermediate table (its table was dropped, renamed or is gone)."""
    return Plan(ops=(DropTableOp(table=pending),))


def plan_expire_pending(pending: TableRef, *, now: datetime, target: Target) -> Plan:
    """Forget the intermediate table's old snapshots and their files: every append and every
    clean-up commits one, and the table is only ever read at its latest."""
    op: MaintenanceOp
    match target.maintenance:
        case Maintenance.SNAPSHOT_PROCEDURES:
            op = ExpireSnapshotsOp(table=pending, older_than=now, retain_last=1)
        case Maintenance.OPTIMIZE_AND_VACUUM:
            hours = -(-target.minimum_retention // timedelta(hours=1))
            op = VacuumOp(table=pending, retain_hours=int(hours))
        case _:
            assert_never(target.maintenance)
    return Plan(ops=(op,))
