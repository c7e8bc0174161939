"""Lowering of statements that change many rows of a table at once: truncate, column values,
table copies, history-mode changes and atomic table rewrites (AlterTable and Migrate)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Final, assert_never

from sqlglot import exp

from spark_destination.core.model import Column, DataType
from spark_destination.dialects import values
from spark_destination.dialects.edge import Skeleton
from spark_destination.dialects.lowering.checks import converted
from spark_destination.dialects.lowering.common import (
    SOURCE_ALIAS,
    TARGET_ALIAS,
    Renderer,
    alias,
    assign,
    col,
    is_null,
    keys_equal,
    number,
    text,
    timestamp,
    timestamp_text,
)
from spark_destination.dialects.lowering.layout import partitioned_by
from spark_destination.dialects.quoting import identifier
from spark_destination.dialects.rendered import Statement
from spark_destination.planner.ir import (
    CopyRowsOp,
    CopyRowsToHistoryOp,
    HistoryColumnChangeOp,
    KeepLatestVersionsOp,
    RewriteTableOp,
    RewriteToHistoryOp,
    SetColumnValueOp,
    TruncateOp,
)

RowsOp = (
    TruncateOp
    | SetColumnValueOp
    | CopyRowsOp
    | CopyRowsToHistoryOp
    | HistoryColumnChangeOp
    | KeepLatestVersionsOp
    | RewriteTableOp
    | RewriteToHistoryOp
)

# Fivetran's history-mode bounds: first versions of soft-deleted rows start and end at the
# minimum, active versions end at the maximum (reference: "Switching to history mode" names
# 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z for destinations other than MySQL).
# PySpark's collect() cannot return the minimum as a Python datetime (TimestampType.fromInternal
# calls datetime.fromtimestamp, which raises "year 0 is out of range" for it, even in UTC); the
# destination never reads such a value back into Python, so the documented value is kept.
HISTORY_MIN_TIMESTAMP: Final = "0001-01-01 00:00:00"
HISTORY_MAX_TIMESTAMP: Final = "9999-12-31 23:59:59.999"
# A superseded version ends one millisecond before its successor starts (Fivetran's rule).
CLOSE_GAP: Final = timedelta(milliseconds=1)
# Names used inside the statements; the ``__sd_`` prefix cannot collide with Fivetran columns.
_ACTION: Final = "__sd_action"
_RANK: Final = "__sd_rank"
_LATEST: Final = "__sd_latest"
_LATEST_ALIAS: Final = "m"
_INSERT: Final = "insert"
_CLOSE: Final = "close"
_FIX: Final = "fix"


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncateContext:
    table: exp.Table
    # Empty: delete the rows; else update them with these assignments.
    assignments: list[exp.Expr]
    where: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class SetColumnValueContext:
    table: exp.Table
    assignment: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyRowsContext:
    target: exp.Table
    source: exp.Table
    columns: list[exp.Identifier]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryRowsContext:
    """Rows of ``source`` (aliased ``s``) as first history versions, with the source's latest
    sync time from a one-row relation aliased ``m``."""

    target: exp.Table
    source: exp.Table
    select: list[exp.Expr]
    s: exp.Identifier
    m: exp.Identifier
    latest: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class RewriteContext:
    table: exp.Table
    using: exp.Var
    properties: list[tuple[exp.Literal, exp.Literal]]
    partitioned_by: list[exp.Expr]
    select: list[exp.Expr]


@dataclass(frozen=True, slots=True, kw_only=True)
class RewriteToHistoryContext:
    table: exp.Table
    using: exp.Var
    properties: list[tuple[exp.Literal, exp.Literal]]
    partitioned_by: list[exp.Expr]
    select: list[exp.Expr]
    s: exp.Identifier
    m: exp.Identifier
    latest: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryColumnChangeContext:
    table: exp.Table
    target: exp.Identifier
    source: exp.Identifier
    insert_select: list[exp.Expr]
    open_where: exp.Expr
    change_select: list[exp.Expr]
    change_where: exp.Expr
    on: exp.Expr
    closing: exp.Expr
    close_assignments: list[exp.Expr]
    fix_assignment: exp.Expr
    inserting: exp.Expr
    insert_columns: list[exp.Identifier]
    insert_values: list[exp.Expr]


@dataclass(frozen=True, slots=True, kw_only=True)
class KeepLatestContext:
    table: exp.Table
    target: exp.Identifier
    source: exp.Identifier
    select: list[exp.Expr]
    on: exp.Expr
    superseded: exp.Expr
    deleted_assignment: exp.Expr


def lower_rows(r: Renderer, op: RowsOp) -> Statement:
    match op:
        case TruncateOp():
            return r.statement(op, _truncate(r, op), f"truncate {op.table.name!r}")
        case SetColumnValueOp():
            value = (
                col(op.from_column)
                if op.from_column is not None
                else r.typed_literal(op.column, op.value)
            )
            context = SetColumnValueContext(
                table=r.table(op.table), assignment=assign(op.column.name, value, None)
            )
            sql = r.template("set_column_value", context)
            return r.statement(op, sql, f"set column {op.column.name!r} of {op.table.name!r}")
        case CopyRowsOp():
            context_rows = CopyRowsContext(
                target=r.table(op.target),
                source=r.table(op.source),
                columns=[identifier(c) for c in op.columns],
            )
            sql = r.template("copy_rows", context_rows)
            summary = f"copy the rows of {op.source.name!r} into {op.target.name!r}"
            return r.statement(op, sql, summary)
        case CopyRowsToHistoryOp():
            summary = f"copy the rows of {op.source.name!r} into history table {op.target.name!r}"
            return r.statement(op, _copy_rows_to_history(r, op), summary)
        case HistoryColumnChangeOp():
            summary = (
                f"record the change of column {op.column.name!r} as history of {op.table.name!r}"
            )
            return r.statement(op, _history_column_change(r, op), summary)
        case KeepLatestVersionsOp():
            summary = f"keep the latest version per key of {op.table.name!r}"
            return r.statement(op, _keep_latest_versions(r, op), summary)
        case RewriteTableOp():
            summary = f"rewrite {op.table.name!r} with the new columns"
            return r.statement(op, _rewrite_table(r, op), summary)
        case RewriteToHistoryOp():
            summary = f"rewrite {op.table.name!r} as a history-mode table"
            return r.statement(op, _rewrite_to_history(r, op), summary)
        case _:
            assert_never(op)


def _truncate(r: Renderer, op: TruncateOp) -> Skeleton:
    where: exp.Expr = exp.LT(this=col(op.synced_column), expression=timestamp(op.before))
    assignments: list[exp.Expr] = []
    if op.history_close is not None:
        end, active = op.history_close
        assignments = [assign(end, timestamp(op.before), None), assign(active, exp.false(), None)]
        where = exp.and_(where, col(active))
    elif op.soft_deleted_column is not None:
        deleted = col(op.soft_deleted_column)
        assignments = [assign(op.soft_deleted_column, exp.true(), None)]
        where = exp.and_(where, exp.not_(exp.Coalesce(this=deleted, expressions=[exp.false()])))
    context = TruncateContext(
        table=r.table(op.table),
        assignments=assignments,
        where=where,
    )
    return r.template("truncate", context)


def _history_values(
    deleted: str | None, synced: str | None
) -> tuple[exp.Expr, exp.Expr, exp.Expr, exp.Expr]:
    """The first-version history values of a soft-delete row aliased ``SOURCE_ALIAS``, with the
    table's latest sync time as ``_LATEST`` of a one-row relation aliased ``_LATEST_ALIAS``:
    (that latest value, start, end, active)."""
    latest: exp.Expr = exp.CurrentTimestamp()
    if synced is not None:
        latest = exp.Coalesce(this=exp.Max(this=col(synced)), expressions=[exp.CurrentTimestamp()])
    start: exp.Expr = col(_LATEST, _LATEST_ALIAS)
    end: exp.Expr = timestamp_text(HISTORY_MAX_TIMESTAMP)
    active: exp.Expr = exp.true()
    if deleted is not None:
        is_deleted = exp.Coalesce(this=col(deleted, SOURCE_ALIAS), expressions=[exp.false()])
        minimum = timestamp_text(HISTORY_MIN_TIMESTAMP)
        start = exp.Case(ifs=[exp.If(this=is_deleted.copy(), true=minimum.copy())], default=start)
        end = exp.Case(ifs=[exp.If(this=is_deleted.copy(), true=minimum.copy())], default=end)
        active = exp.not_(is_deleted.copy())
    return latest, start, end, active


def _history_select(
    columns: list[str], names: tuple[str, str, str], history: tuple[exp.Expr, ...]
) -> list[exp.Expr]:
    """The copied columns, then ``start``, ``end`` and ``active`` with their values."""
    select: list[exp.Expr] = [col(c, SOURCE_ALIAS) for c in columns]
    return select + [alias(v, n) for n, v in zip(names, history, strict=True)]


def _copy_rows_to_history(r: Renderer, op: CopyRowsToHistoryOp) -> Skeleton:
    latest, start, end, active = _history_values(op.deleted, op.synced)
    context = HistoryRowsContext(
        target=r.table(op.target),
        source=r.table(op.source),
        select=_history_select(
            list(op.columns), (op.start, op.end, op.active), (start, end, active)
        ),
        s=identifier(SOURCE_ALIAS),
        m=identifier(_LATEST_ALIAS),
        latest=alias(latest, _LATEST),
    )
    return r.template("copy_rows_to_history", context)


def _rewrite_to_history(r: Renderer, op: RewriteToHistoryOp) -> Skeleton:
    latest, start, end, active = _history_values(op.deleted, op.synced)
    # The key gains ``start``: a key column must be NOT NULL, and the runtime keeps the query's
    # nullability (the fallback is never used: every branch of ``start`` is non-NULL).
    start = values.non_null(
        r.dialect, start, Column(name=op.start, type=DataType.UTC_DATETIME, primary_key=True)
    )
    context = RewriteToHistoryContext(
        table=r.table(op.table),
        using=r.using(),
        properties=r.properties(
            (),
            layout=op.layout,
            replacing=True,
            columns=(*(c.name for c in op.columns), op.start, op.end, op.active),
        ),
        partitioned_by=partitioned_by(r, op.layout),
        select=_history_select(
            [c.name for c in op.columns], (op.start, op.end, op.active), (start, end, active)
        ),
        s=identifier(SOURCE_ALIAS),
        m=identifier(_LATEST_ALIAS),
        latest=alias(latest, _LATEST),
    )
    return r.template("rewrite_to_history", context)


def _rewrite_table(r: Renderer, op: RewriteTableOp) -> Skeleton:
    select: list[exp.Expr] = []
    for change in op.columns:
        value = converted(r, change)
        if change.target.primary_key:
            value = values.non_null(r.dialect, value, change.target)
        select.append(alias(value, change.target.name))
    context = RewriteContext(
        table=r.table(op.table),
        using=r.using(),
        properties=r.properties(
            (), layout=op.layout, replacing=True, columns=(c.target.name for c in op.columns)
        ),
        partitioned_by=partitioned_by(r, op.layout),
        select=select,
    )
    return r.template("rewrite_table", context)


def _history_column_change(r: Renderer, op: HistoryColumnChangeOp) -> Skeleton:
    ts = timestamp(op.operation_timestamp)
    closed_end = timestamp(op.operation_timestamp - CLOSE_GAP)
    value = r.typed_literal(op.column, op.value)
    insert_select: list[exp.Expr] = []
    for column in op.columns:
        if column.name == op.start:
            insert_select.append(alias(ts.copy(), column.name))
        elif column.name == op.column.name:
            insert_select.append(alias(value.copy(), column.name))
        else:
            insert_select.append(identifier(column.name))
    insert_select.append(alias(text(_INSERT), _ACTION))
    open_where: exp.Expr = exp.and_(
        col(op.active), exp.LT(this=col(op.start), expression=ts.copy())
    )
    if op.only_non_null:
        open_where = exp.and_(open_where, exp.not_(is_null(col(op.column.name))))
    at_ts = exp.EQ(this=col(op.start), expression=ts.copy())
    change_action = exp.Case(ifs=[exp.If(this=at_ts.copy(), true=text(_FIX))], default=text(_CLOSE))
    change_select: list[exp.Expr] = [identifier(c.name) for c in op.columns]
    change_select.append(alias(change_action, _ACTION))
    action = col(_ACTION, SOURCE_ALIAS)
    key_and_start = [c.name for c in op.columns if c.name in (*op.key, op.start)]
    on = exp.and_(
        keys_equal(key_and_start, TARGET_ALIAS, SOURCE_ALIAS),
        exp.NEQ(this=action.copy(), expression=text(_INSERT)),
    )
    context = HistoryColumnChangeContext(
        table=r.table(op.table),
        target=identifier(TARGET_ALIAS),
        source=identifier(SOURCE_ALIAS),
        insert_select=insert_select,
        open_where=open_where,
        change_select=change_select,
        change_where=exp.or_(open_where.copy(), at_ts.copy()),
        on=on,
        closing=exp.EQ(this=action.copy(), expression=text(_CLOSE)),
        close_assignments=[
            assign(op.end, closed_end),
            assign(op.active, exp.false()),
        ],
        fix_assignment=assign(op.column.name, value.copy()),
        inserting=exp.EQ(this=action.copy(), expression=text(_INSERT)),
        insert_columns=[identifier(c.name) for c in op.columns],
        insert_values=[col(c.name, SOURCE_ALIAS) for c in op.columns],
    )
    return r.template("history_column_change", context)


def _keep_latest_versions(r: Renderer, op: KeepLatestVersionsOp) -> Skeleton:
    rank = exp.Window(
        this=exp.func("ROW_NUMBER"),
        partition_by=[col(k) for k in op.key],
        order=exp.Order(expressions=[exp.Ordered(this=col(op.start), desc=True)]),
        over="OVER",
    )
    select: list[exp.Expr] = [identifier(k) for k in op.key]
    select += [identifier(op.start), identifier(op.active)]
    select.append(alias(rank, _RANK))
    deleted = exp.not_(exp.Coalesce(this=col(op.active, SOURCE_ALIAS), expressions=[exp.false()]))
    context = KeepLatestContext(
        table=r.table(op.table),
        target=identifier(TARGET_ALIAS),
        source=identifier(SOURCE_ALIAS),
        select=select,
        on=keys_equal([*op.key, op.start], TARGET_ALIAS, SOURCE_ALIAS),
        superseded=exp.GT(this=col(_RANK, SOURCE_ALIAS), expression=number(1)),
        deleted_assignment=assign(op.deleted, deleted),
    )
    return r.template("keep_latest_versions", context)
