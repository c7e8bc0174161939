"""Lowering of a ``TableLayout``: the partitioning a CREATE (or a rewrite's CREATE OR REPLACE)
declares, the write order set after it, and the statements that give an existing table
another layout (``SetLayoutOp``). Properties come from the dialect
(``Dialect.layout_properties``); a dialect without one renders no layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from spark_destination.dialects.lowering.common import Renderer, col, number
from spark_destination.dialects.quoting import identifier, literal
from spark_destination.dialects.rendered import Statement
from spark_destination.planner.ir import Op, SetLayoutOp, TableLayout, TableRef


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteOrderContext:
    table: exp.Table
    # Empty: unordered.
    columns: list[exp.Identifier]


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionFieldContext:
    table: exp.Table
    field: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutPropertiesContext:
    table: exp.Table
    properties: list[tuple[exp.Literal, exp.Literal]]


def partitioned_by(r: Renderer, layout: TableLayout | None) -> list[exp.Expr]:
    """The ``PARTITIONED BY`` transforms of ``layout`` (empty: unpartitioned)."""
    if layout is None or layout.bucket_by is None or not r.dialect.lays_out_tables:
        return []
    return [_bucket(layout)]


def _bucket(layout: TableLayout) -> exp.Expr:
    assert layout.bucket_by is not None
    return exp.PartitionedByBucket(this=col(layout.bucket_by), expression=number(layout.buckets))


def layout_properties(r: Renderer, layout: TableLayout | None) -> tuple[tuple[str, str], ...]:
    if layout is None or r.dialect.layout is None:
        return ()
    return r.dialect.layout.properties(layout)


def write_order(
    r: Renderer, op: Op, table: TableRef, layout: TableLayout | None
) -> tuple[Statement, ...]:
    """After a CREATE: the write order ``layout`` asks for (none for an unordered layout)."""
    if layout is None or not layout.sort_by or not r.dialect.lays_out_tables:
        return ()
    return (_write_order(r, op, table, layout.sort_by),)


def set_write_order(
    r: Renderer, op: Op, table: TableRef, columns: tuple[str, ...] | None
) -> tuple[Statement, ...]:
    """The write order ``columns`` (empty: unordered; None: none set)."""
    if columns is None or not r.dialect.lays_out_tables:
        return ()
    return (_write_order(r, op, table, columns),)


def _write_order(r: Renderer, op: Op, table: TableRef, columns: tuple[str, ...]) -> Statement:
    context = WriteOrderContext(table=r.table(table), columns=[identifier(c) for c in columns])
    if columns:
        names = ", ".join(repr(c) for c in columns)
        summary = f"sort the rows of each file written to {table.name!r} by {names}"
    else:
        summary = f"write the rows of {table.name!r} in arrival order"
    return r.statement(op, r.template("set_write_order", context), summary)


def lower_set_layout(r: Renderer, op: SetLayoutOp) -> tuple[Statement, ...]:
    """Only what differs between ``op.current`` and ``op.layout`` (nothing where the dialect
    renders no layout: the planner plans none there)."""
    if not r.dialect.lays_out_tables:
        return ()
    statements: list[Statement] = []
    wanted = dict(layout_properties(r, op.layout))
    had = dict(layout_properties(r, op.current))
    changed = [(k, v) for k, v in wanted.items() if had.get(k) != v]
    # A bloom filter the layout no longer has is switched off (a property cannot be absent
    # and mean "off" for a table that had it on).
    changed += [(k, "false") for k in had if k not in wanted and had[k] == "true"]
    if changed:
        context = LayoutPropertiesContext(
            table=r.table(op.table), properties=[(literal(k), literal(v)) for k, v in changed]
        )
        summary = f"set the layout properties of {op.table.name!r}"
        statements.append(r.statement(op, r.template("set_properties", context), summary))
    if op.layout.sort_by != op.current.sort_by:
        statements.append(_write_order(r, op, op.table, op.layout.sort_by))
    old = (op.current.bucket_by, op.current.buckets)
    new = (op.layout.bucket_by, op.layout.buckets)
    if old != new:
        if op.current.bucket_by is not None:
            field = PartitionFieldContext(table=r.table(op.table), field=_bucket(op.current))
            summary = f"stop partitioning new files of {op.table.name!r} by bucket"
            statements.append(r.statement(op, r.template("drop_partition_field", field), summary))
        if op.layout.bucket_by is not None:
            field = PartitionFieldContext(table=r.table(op.table), field=_bucket(op.layout))
            summary = (
                f"partition new files of {op.table.name!r} by bucket({op.layout.buckets}, "
                f"{op.layout.bucket_by!r})"
            )
            statements.append(r.statement(op, r.template("add_partition_field", field), summary))
    return tuple(statements)
