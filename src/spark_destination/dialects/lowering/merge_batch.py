"""Lowering of a WriteBatch: one MERGE applies every upsert, update and delete of the batch.

The MERGE reads the typed staged view (``StageBatchOp``): values are typed, the null sentinel
is NULL and "unmodified" is a boolean mask column, so no value is compared with a sentinel or
cast from text, as in a bare MERGE from a typed view.

The statement is rendered in up to four forms: with the branch that folds a repeated key's
staged rows into one source row; without it (``Form.UNIQUE_KEYS``), which the runtime runs
when staging found no repeated key, the usual case; and each of those with the table's key
columns also filtered by parameter markers (``Form.FOLDED_KEY_FILTER``, ``Form.KEY_FILTER``),
which the runtime binds to the keys of a small batch. The filter sits in the ON clause and
names only the target, so Spark pushes it into the table scan: the table format then skips data
files and Parquet row groups whose statistics or bloom filters rule every key out, and a small
batch no longer reads the whole table. It changes no result: a target row it excludes matches
no source row anyway. It also narrows the commit's conflict check: Iceberg checks files another
writer added meanwhile against the scan's filter, so without it any concurrent append conflicts.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from spark_destination.core.model import Column
from spark_destination.dialects.lowering.common import (
    BATCH_ALIAS,
    SOURCE_ALIAS,
    TARGET_ALIAS,
    Renderer,
    alias,
    assign,
    col,
    keys_equal,
    keys_in_markers,
    latest,
    markers_for,
    text,
    unless_unmodified,
)
from spark_destination.dialects.quoting import identifier
from spark_destination.dialects.rendered import Form, KeyFilter, MergeBatch, Statement
from spark_destination.planner.ir import (
    DUP_COLUMN,
    OP_COLUMN,
    SEQ_COLUMN,
    MergeBatchOp,
    RowOp,
    masked_columns,
    unmodified_column,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeBatchContext:
    table: exp.Table
    target: exp.Identifier
    source: exp.Identifier
    batch: exp.Identifier
    view: exp.Identifier
    # The staged (typed) columns: key, values, unmodified masks.
    decoded: list[exp.Identifier]
    op: exp.Identifier
    seq: exp.Identifier
    fold: bool
    unique: exp.Expr
    repeated: exp.Expr
    # A repeated key's rows folded into one: key, last value per column, folded op.
    folded: list[exp.Expr]
    fold_op: exp.Expr
    key: list[exp.Identifier]
    on: exp.Expr
    deleting: exp.Expr
    assignments: list[exp.Expr]
    inserting: exp.Expr
    insert_columns: list[exp.Identifier]
    insert_values: list[exp.Expr]


def lower_merge_batch(r: Renderer, op: MergeBatchOp) -> Statement:
    summary = f"merge batch into {op.table.name!r}"
    folding = r.template("merge_batch", _context(r, op, fold=True))
    unique = r.template("merge_batch", _context(r, op, fold=False))
    forms = [(Form.UNIQUE_KEYS, unique)]
    key_filter = markers_for(op.filter_key, r.dialect.key_filter_slots)
    if key_filter is not None:
        filtered = _context(r, op, fold=False, key_filter=key_filter)
        forms.append((Form.KEY_FILTER, r.template("merge_batch", filtered)))
        folded = _context(r, op, fold=True, key_filter=key_filter)
        forms.append((Form.FOLDED_KEY_FILTER, r.template("merge_batch", folded)))
    run = MergeBatch(view=op.view, table=op.table)
    return r.statement(op, folding, summary, forms=tuple(forms), key_filter=key_filter, run=run)


def _on(key_columns: list[Column], key_filter: KeyFilter | None) -> exp.Expr:
    """The key match, then (key-filter form) each filtered target key column IN its markers."""
    match = keys_equal([c.name for c in key_columns], TARGET_ALIAS, SOURCE_ALIAS)
    if key_filter is None:
        return match
    return exp.and_(match, *keys_in_markers(key_filter, TARGET_ALIAS))


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
    op: MergeBatchOp, key_columns: list[Column], value_columns: list[Column]
) -> list[exp.Expr]:
    """The key, then per column the latest value that is not "unmodified" (``latest``), then
    the masks (every row unmodified: still unmodified)."""
    masked = set(masked_columns(op.columns, op.key, op.unmodified_string))
    folded: list[exp.Expr] = [col(c.name) for c in key_columns]
    masks: list[exp.Expr] = []
    for column in value_columns:
        set_here: list[exp.Expr] = []
        if column.name in masked:
            mask = col(unmodified_column(column.name))
            set_here.append(exp.not_(mask.copy()))
            masks.append(alias(exp.Min(this=mask), unmodified_column(column.name)))
        folded.append(alias(latest(column.name, *set_here), column.name))
    return folded + masks


def _value(op: MergeBatchOp, column: Column, masked: set[str], kept: exp.Expr) -> exp.Expr:
    """The staged (typed) value of ``column`` in the source, or ``kept`` where unmodified."""
    if column.name not in masked:
        return col(column.name, SOURCE_ALIAS)
    return unless_unmodified(column.name, kept)


def _context(
    r: Renderer, op: MergeBatchOp, *, fold: bool, key_filter: KeyFilter | None = None
) -> MergeBatchContext:
    key_columns = [c for c in op.columns if c.name in op.key]
    value_columns = [c for c in op.columns if c.name not in op.key]
    masked = set(masked_columns(op.columns, op.key, op.unmodified_string))
    decoded = [identifier(c.name) for c in (*key_columns, *value_columns)] + [
        identifier(unmodified_column(c.name)) for c in value_columns if c.name in masked
    ]
    assignments = [
        assign(c.name, _value(op, c, masked, col(c.name, TARGET_ALIAS))) for c in value_columns
    ]
    insert_columns: list[exp.Identifier] = []
    insert_values: list[exp.Expr] = []
    if op.has_upserts:
        # An unmodified value is staged as NULL: a new row gets NULL there.
        insert_columns = [identifier(c.name) for c in op.columns]
        insert_values = [col(c.name, SOURCE_ALIAS) for c in op.columns]
    dup = col(DUP_COLUMN)
    return MergeBatchContext(
        table=r.table(op.table),
        target=identifier(TARGET_ALIAS),
        source=identifier(SOURCE_ALIAS),
        batch=identifier(BATCH_ALIAS),
        view=identifier(op.view),
        decoded=decoded,
        op=identifier(OP_COLUMN),
        seq=identifier(SEQ_COLUMN),
        fold=fold,
        unique=exp.not_(dup),
        repeated=dup.copy(),
        folded=_folded(op, key_columns, value_columns),
        fold_op=alias(_fold_op(), OP_COLUMN),
        key=[identifier(c.name) for c in key_columns],
        on=_on(key_columns, key_filter),
        deleting=_source_op_is(RowOp.DELETE),
        assignments=assignments,
        inserting=_source_op_is(RowOp.UPSERT),
        insert_columns=insert_columns,
        insert_values=insert_values,
    )


def _source_op_is(row_op: RowOp) -> exp.Expr:
    return exp.EQ(this=col(OP_COLUMN, SOURCE_ALIAS), expression=text(row_op.value))
