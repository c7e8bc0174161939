"""Lowering of a WriteBatch: one MERGE applies every upsert, update and delete of the batch.

The statement is rendered in two forms: with the branch that folds a repeated key's staged
rows into one source row, and without it (``Form.UNIQUE_KEYS``), which the runtime runs when
staging found no repeated key, the usual case.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from spark_destination.dialects.lowering.common import (
    BATCH_ALIAS,
    SOURCE_ALIAS,
    TARGET_ALIAS,
    Renderer,
    alias,
    assign,
    col,
    is_sentinel,
    keys_equal,
    raise_error,
    text,
)
from spark_destination.dialects.quoting import ident
from spark_destination.model import Column
from spark_destination.planner.ir import DUP_COLUMN, OP_COLUMN, SEQ_COLUMN, MergeBatchOp, RowOp
from spark_destination.rendered import Form, Statement


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeBatchContext:
    table: str
    target: str
    source: str
    batch: str
    view: str
    # The staged rows with key columns decoded (other columns stay raw until the MERGE).
    decoded: list[str]
    op: str
    seq: str
    fold: bool
    unique: str
    repeated: str
    # A repeated key's rows folded into one: key, last value per column, folded op.
    folded: list[str]
    fold_op: str
    key: list[str]
    on: str
    deleting: str
    assignments: list[str]
    inserting: str
    insert_columns: list[str]
    insert_values: list[str]


def lower_merge_batch(r: Renderer, op: MergeBatchOp) -> Statement:
    summary = f"merge batch into {op.table.name!r}"
    folding = r.template("merge_batch", _context(r, op, fold=True))
    unique = r.template("merge_batch", _context(r, op, fold=False))
    return r.statement(op, folding, summary, forms=((Form.UNIQUE_KEYS, unique),))


def _key_value(r: Renderer, column: Column, op: MergeBatchOp) -> exp.Expr:
    """A key column's value; a sentinel in a key column fails the statement."""
    raw = col(column.name)
    sentinels = [s for s in (op.null_string, op.unmodified_string) if s is not None]
    if not sentinels:
        return r.decode(raw, column)
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.or_(*(is_sentinel(raw, s) for s in sentinels)),
                true=raise_error(f"key column {column.name} is NULL"),
            )
        ],
        default=r.decode(raw, column),
    )


def _fold_op() -> exp.Expr:
    """A folded key's op: delete if any row deletes, else upsert if any upserts, else update."""
    row_op = col(OP_COLUMN)
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.Max(this=exp.EQ(this=row_op.copy(), expression=text(o.value))),
                true=text(o.value),
            )
            for o in (RowOp.DELETE, RowOp.UPSERT)
        ],
        default=text(RowOp.UPDATE.value),
    )


def _folded(
    r: Renderer, op: MergeBatchOp, key_columns: list[Column], value_columns: list[Column]
) -> list[str]:
    """The key, then per column the latest value that is not "unmodified" (none at all:
    unmodified)."""
    seq = col(SEQ_COLUMN)
    folded = [ident(c.name) for c in key_columns]
    for column in value_columns:
        raw = col(column.name)
        last: exp.Expr = exp.func("MAX_BY", raw.copy(), seq.copy())
        if op.unmodified_string is not None:
            last = exp.Coalesce(
                this=exp.Filter(
                    this=last,
                    expression=exp.Where(
                        this=exp.NEQ(this=raw.copy(), expression=text(op.unmodified_string))
                    ),
                ),
                expressions=[text(op.unmodified_string)],
            )
        folded.append(r.sql(alias(last, column.name)))
    return folded


def _context(r: Renderer, op: MergeBatchOp, *, fold: bool) -> MergeBatchContext:
    key_columns = [c for c in op.columns if c.name in op.key]
    value_columns = [c for c in op.columns if c.name not in op.key]
    decoded = [r.sql(alias(_key_value(r, c, op), c.name)) for c in key_columns] + [
        ident(c.name) for c in value_columns
    ]
    assignments = []
    for column in value_columns:
        value = r.value(
            col(column.name, SOURCE_ALIAS),
            column,
            null_string=op.null_string,
            unmodified_string=op.unmodified_string,
            unmodified=col(column.name, TARGET_ALIAS),
        )
        assignments.append(r.sql(assign(column.name, value)))
    insert_columns: list[str] = []
    insert_values: list[str] = []
    if op.has_upserts:
        for column in op.columns:
            source = col(column.name, SOURCE_ALIAS)
            insert_columns.append(ident(column.name))
            if column.name in op.key:
                insert_values.append(r.sql(source))
                continue
            value = r.value(
                source,
                column,
                null_string=op.null_string,
                unmodified_string=op.unmodified_string,
                unmodified=exp.Null(),
            )
            insert_values.append(r.sql(value))
    dup = col(DUP_COLUMN)
    return MergeBatchContext(
        table=r.table(op.table),
        target=ident(TARGET_ALIAS),
        source=ident(SOURCE_ALIAS),
        batch=ident(BATCH_ALIAS),
        view=ident(op.view),
        decoded=decoded,
        op=ident(OP_COLUMN),
        seq=ident(SEQ_COLUMN),
        fold=fold,
        unique=r.sql(exp.not_(dup)),
        repeated=r.sql(dup),
        folded=_folded(r, op, key_columns, value_columns),
        fold_op=r.sql(alias(_fold_op(), OP_COLUMN)),
        key=[ident(c.name) for c in key_columns],
        on=r.sql(keys_equal([c.name for c in key_columns], TARGET_ALIAS, SOURCE_ALIAS)),
        deleting=r.sql(_source_op_is(RowOp.DELETE)),
        assignments=assignments,
        inserting=r.sql(_source_op_is(RowOp.UPSERT)),
        insert_columns=insert_columns,
        insert_values=insert_values,
    )


def _source_op_is(row_op: RowOp) -> exp.Expr:
    return exp.EQ(this=col(OP_COLUMN, SOURCE_ALIAS), expression=text(row_op.value))
