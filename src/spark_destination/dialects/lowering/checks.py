"""Lowering of the read-only check queries, and the layout of each one's result row.

Which columns a check reports on is decided here, once: the query's outputs and the
``CheckOutput`` layout the runtime reads them with come from the same list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, assert_never

from sqlglot import exp

from spark_destination.core.model import Column
from spark_destination.dialects import values
from spark_destination.dialects.lowering.common import (
    Renderer,
    alias,
    col,
    is_null,
    number,
    timestamp,
)
from spark_destination.dialects.rendered import (
    CheckOutput,
    CheckStoredValues,
    OutputKind,
    Refusal,
    Refuse,
    Statement,
)
from spark_destination.planner.ir import (
    CheckConversionsOp,
    CheckHistoryStartOp,
    CheckLiteralOp,
    CheckUniqueKeyOp,
    ColumnChange,
)

CheckOp = CheckLiteralOp | CheckHistoryStartOp | CheckConversionsOp | CheckUniqueKeyOp

# Output names; the ``__sd_`` prefix cannot collide with Fivetran columns.
_NOTHING: Final = "check_none"
_BAD: Final = "__sd_bad"
_LATEST: Final = "__sd_latest"
_DUPLICATES: Final = "__sd_duplicate_keys"


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputsContext:
    """A one-row query over ``view`` (a table)."""

    outputs: list[exp.Expr]
    view: exp.Table


@dataclass(frozen=True, slots=True, kw_only=True)
class LiteralContext:
    output: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryStartContext:
    output: exp.Expr
    table: exp.Table
    where: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class UniqueKeyContext:
    output: exp.Expr
    row: exp.Expr
    table: exp.Table
    key: list[exp.Expr]
    repeated: exp.Expr


def lower_check(r: Renderer, op: CheckOp) -> Statement:
    context: object
    match op:
        case CheckLiteralOp():
            bad = values.invalid(r.dialect, exp.Literal.string(op.value), op.column)
            output = alias(exp.false() if bad is None else bad, _BAD)
            sql = r.template("check_literal", LiteralContext(output=output))
            layout = (_output(r, OutputKind.REFUSED, op.column),)
            summary = f"check the value for column {op.column.name!r}"
            target = (
                f"column {op.column.name!r} ({layout[0].sql_type}, Fivetran type "
                f"{op.column.type.name})"
            )
            # The request's value is the user's to see, never the logs'.
            refuse = Refuse(
                refusal=Refusal.VALUE,
                message=(f"value {op.value!r} does not convert to {target}",),
                loggable=(f"the requested value does not convert to {target}",),
            )
            return r.statement(op, sql, summary, layout=layout, run=refuse)
        case CheckHistoryStartOp():
            ts = timestamp(op.operation_timestamp)
            where = exp.and_(col(op.active), exp.GT(this=col(op.start), expression=ts))
            context = HistoryStartContext(
                output=alias(exp.Max(this=col(op.start)), _LATEST),
                table=r.table(op.table),
                where=where,
            )
            sql = r.template("check_history_start", context)
            layout = (CheckOutput(kind=OutputKind.LATEST_START),)
            summary = f"check no active version of {op.table.name!r} starts later"
            refuse = Refuse(
                refusal=Refusal.REQUEST,
                message=(
                    f"table {op.table.name!r} has active versions starting at ",
                    f", after the operation timestamp {op.operation_timestamp.isoformat()}",
                ),
            )
            return r.statement(op, sql, summary, layout=layout, run=refuse)
        case CheckConversionsOp():
            return _check_conversions(r, op)
        case CheckUniqueKeyOp():
            rows = exp.Count(this=exp.Star())
            context = UniqueKeyContext(
                output=alias(rows, _DUPLICATES),
                row=number(1),
                table=r.table(op.table),
                key=[converted(r, c) for c in op.key],
                repeated=exp.GT(this=rows.copy(), expression=number(1)),
            )
            sql = r.template("check_unique_key", context)
            layout = (CheckOutput(kind=OutputKind.DUPLICATE_KEYS),)
            summary = f"check the new key of {op.table.name!r} is unique"
            key = ", ".join(repr(c.target.name) for c in op.key)
            refuse = Refuse(
                refusal=Refusal.REQUEST,
                message=(
                    f"the new primary key ({key}) of table {op.table.name!r} is not unique "
                    "in the existing rows: ",
                    " key value(s) occur on more than one row; the table was not changed "
                    "(deduplicate the rows or re-sync the table, then retry)",
                ),
            )
            return r.statement(op, sql, summary, layout=layout, run=refuse)
        case _:
            assert_never(op)


def _output(r: Renderer, kind: OutputKind, column: Column) -> CheckOutput:
    return CheckOutput(kind=kind, column=column, sql_type=r.dialect.type_text(column))


def _stored_value(r: Renderer, change: ColumnChange) -> exp.Expr:
    """The column's stored value (a typed NULL for a new column)."""
    if change.source is None:
        return exp.cast(exp.Null(), r.dialect.sql_type(change.target))
    return col(change.source.name)


def converted(r: Renderer, change: ColumnChange) -> exp.Expr:
    """The stored value converted to the column's new type (fails on a bad value)."""
    if change.source is None:
        return _stored_value(r, change)
    return values.convert(r.dialect, col(change.source.name), change.source, change.target)


def _check_conversions(r: Renderer, op: CheckConversionsOp) -> Statement:
    outputs: list[exp.Expr] = []
    layout: list[CheckOutput] = []
    for change in op.conversions:
        if change.source is None:
            continue
        raw = col(change.source.name)
        bad = values.unconvertible(r.dialect, raw, change.source, change.target)
        if bad is None:
            continue
        bad = exp.and_(exp.not_(is_null(raw)), bad)
        sample = exp.Min(
            this=exp.Case(ifs=[exp.If(this=bad.copy(), true=exp.cast(raw.copy(), "STRING"))])
        )
        position = len(layout) // 2
        outputs.append(alias(exp.func("COUNT_IF", bad), f"bad_count_{position}"))
        outputs.append(alias(sample, f"bad_value_{position}"))
        layout += [
            CheckOutput(kind=OutputKind.BAD_COUNT, change=change),
            CheckOutput(kind=OutputKind.BAD_VALUE, change=change),
        ]
    for index, change in enumerate(op.not_null):
        # The stored value: converting a non-NULL value never yields NULL (ANSI).
        nulls = exp.func("COUNT_IF", is_null(_stored_value(r, change)))
        outputs.append(alias(nulls, f"null_count_{index}"))
        layout.append(CheckOutput(kind=OutputKind.NULL_COUNT, change=change))
    if not outputs:
        outputs.append(alias(number(0), _NOTHING))
        layout.append(CheckOutput(kind=OutputKind.NOTHING))
    sql = r.template("check_conversions", OutputsContext(outputs=outputs, view=r.table(op.table)))
    summary = f"check the stored values of {op.table.name!r} convert"
    run = CheckStoredValues(table=op.table)
    return r.statement(op, sql, summary, layout=tuple(layout), run=run)
