"""Lowering of deferred write mode: the append, the merge flush, its clean-up and the counters
read before it.

**The fold.** The result must equal ``merge`` mode applied request by request. Merge mode's
own fold of one batch ("delete if any row deletes, else upsert if any, else update; per column
the latest value that is not unmodified") is right only because a batch's delete files come
last. Across batches they do not, so the flush reads each key's pending rows, ordered by the
counter, as a sequence of assignments:

* a delete makes the key absent;
* an upsert makes it present: with the row's values when it was absent (NULL where unmodified:
  merge mode inserts NULL there), overlaid on the row when present (merge mode's matched
  update keeps what is unmodified);
* an update overlays its values that are not unmodified, and is ignored while the key is
  absent.

With ``D`` = the key's last delete and ``U`` = its first upsert after ``D`` (its first upsert
at all when it has no delete), that gives: ``D`` and no ``U``: DELETE. ``D`` and ``U``: the
row is replaced by the fold of the rows from ``U`` on (a column no row sets is NULL). No ``D``:
when the table has the key, every pending row's values overlay it (a column no row sets keeps
its value); when it has not, the fold of the rows from ``U`` on is inserted (nothing without
``U``). A column the request did not name is unmodified on every row of it (merge mode leaves
it as it is on a match and NULL on an insert), as ``AppendPendingOp`` stores it.

In SQL: a window finds ``D``, a second one ``U``, one ``GROUP BY`` per key computes the
flags and, per column, the overlay value (the last value set by any row), whether any row
set it, and the replacement (the last value set from ``U`` on); one MERGE applies them:
matched-delete, matched-replace, matched-overlay (``CASE WHEN`` the mask), not-matched insert.
The pending rows are few (what small batches bring between flushes), the table is read once.

**Re-running a flush.** A flush that a crash interrupted runs again, so exactly-once needs
the flush to be idempotent, or to know what it already did. It is idempotent for every key but
one kind: applying the fold to its own result gives the same row when the key was deleted
(delete, or replace by the same row), when the table had the key (the overlay sets the same
values again), and when it had not and no update came before ``U`` (the inserted row is then
exactly what the overlay of every row gives). It is not when the table lacked the key and an
update before ``U`` set a column no row from ``U`` on sets: the first run inserts NULL there
(the update was ignored: the key was absent), a second run finds the key and overlays the
update's value. No fold of the pending rows alone can tell "present
before the flush" from "inserted by an earlier run of it", so the flush that re-runs must know
whether its earlier run committed: ``runtime.execute.deferred`` records the table's snapshot
before each MERGE and, after a crash, runs only the clean-up when the table has moved on since.
Appending more rows meanwhile changes nothing: only rows up to the highest counter a flush
read are folded and then deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, assert_never

from sqlglot import exp

from spark_destination.dialects.lowering.common import (
    SOURCE_ALIAS,
    TARGET_ALIAS,
    Renderer,
    alias,
    assign,
    col,
    is_null,
    keys_equal,
    keys_in_markers,
    latest,
    markers_for,
    text,
    unless_unmodified,
)
from spark_destination.dialects.lowering.migrations import TruncateContext
from spark_destination.dialects.quoting import identifier
from spark_destination.dialects.rendered import Bind, FlushMerge, Form, KeyFilter, Statement
from spark_destination.planner.ir import (
    BATCH_COLUMN,
    BATCH_MARKER,
    HIGH_MARKER,
    OP_COLUMN,
    SEQ_BASE_MARKER,
    SEQ_COLUMN,
    AppendPendingOp,
    ClearPendingOp,
    FlushPendingOp,
    PendingKeysOp,
    PendingOp,
    PendingStatsOp,
    RowOp,
    unmodified_column,
)

# Columns the flush computes (the ``__sd_`` prefix: no table column can be called so).
LAST_DELETE: Final = "__sd_last_delete"
FIRST_UPSERT: Final = "__sd_first_upsert"
DELETED: Final = "__sd_deleted"
UPSERTED: Final = "__sd_upserted"
REPLACED_PREFIX: Final = "__sd_replaced_"
# Aliases of the flush's two window passes.
DELETES_ALIAS: Final = "d"
ROWS_ALIAS: Final = "r"
# What ``PendingStatsOp`` returns, in order (``runtime.execute.deferred`` reads it).
STATS_OUTPUTS: Final = ("low", "high", "rows", "batches", "last_batch")


def replaced_column(name: str) -> str:
    """The flush's column holding ``name``'s value when the key's row is replaced."""
    return REPLACED_PREFIX + name


@dataclass(frozen=True, slots=True, kw_only=True)
class AppendContext:
    pending: exp.Table
    columns: list[exp.Identifier]
    values: list[exp.Expr]
    view: exp.Identifier


@dataclass(frozen=True, slots=True, kw_only=True)
class StatsContext:
    pending: exp.Table
    outputs: list[exp.Expr]


@dataclass(frozen=True, slots=True, kw_only=True)
class KeysContext:
    pending: exp.Table
    key: list[exp.Identifier]
    flushed: exp.Expr
    limit: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class FlushContext:
    table: exp.Table
    target: exp.Identifier
    source: exp.Identifier
    pending: exp.Table
    deletes: exp.Identifier
    rows: exp.Identifier
    key: list[exp.Identifier]
    # The pending rows' columns the fold reads, then with the first window's result.
    columns: list[exp.Identifier]
    windowed: list[exp.Identifier]
    last_delete: exp.Expr
    first_upsert: exp.Expr
    flushed: exp.Expr
    # Per key: the two flags, then per column the overlay value, its mask and the replacement.
    folded: list[exp.Expr]
    on: exp.Expr
    deleting: exp.Expr
    replacing: exp.Expr
    replacements: list[exp.Expr]
    overlays: list[exp.Expr]
    inserting: exp.Expr
    insert_columns: list[exp.Identifier]
    insert_values: list[exp.Expr]


def lower_pending(r: Renderer, op: PendingOp) -> Statement:
    match op:
        case AppendPendingOp():
            summary = f"append the batch to {op.pending.name!r} (pending for {op.table.name!r})"
            sql = r.template("append_pending", _append(r, op))
            return r.statement(op, sql, summary, run=Bind(markers=(SEQ_BASE_MARKER, BATCH_MARKER)))
        case PendingStatsOp():
            stats = StatsContext(pending=r.table(op.pending), outputs=_stats())
            summary = f"count the rows pending in {op.pending.name!r}"
            return r.statement(op, r.template("pending_stats", stats), summary)
        case PendingKeysOp():
            keys = KeysContext(
                pending=r.table(op.pending),
                key=[identifier(k) for k in op.key],
                flushed=_flushed(),
                limit=exp.Literal.number(op.limit),
            )
            summary = f"read the distinct keys pending in {op.pending.name!r}"
            sql = r.template("pending_keys", keys)
            return r.statement(op, sql, summary, run=Bind(markers=(HIGH_MARKER,)))
        case FlushPendingOp():
            summary = f"merge flush of {op.pending.name!r} into {op.table.name!r}"
            sql = r.template("flush_pending", _flush(r, op, None))
            # The batch MERGE's number of markers first: binding thousands costs seconds.
            narrow = min(op.filter_slots, r.dialect.key_filter_slots)
            key_filter = markers_for(op.filter_key, narrow)
            run = FlushMerge(table=op.table)
            if key_filter is None:
                return r.statement(op, sql, summary, run=run)
            forms = [(Form.KEY_FILTER, r.template("flush_pending", _flush(r, op, key_filter)))]
            wide = markers_for(op.filter_key, op.filter_slots) if op.filter_slots > narrow else None
            if wide is not None:
                forms.append(
                    (Form.WIDE_KEY_FILTER, r.template("flush_pending", _flush(r, op, wide)))
                )
            return r.statement(
                op,
                sql,
                summary,
                forms=tuple(forms),
                key_filter=key_filter,
                wide_key_filter=wide,
                run=run,
            )
        case ClearPendingOp():
            # A plain DELETE, as a hard truncate is: the truncate skeleton.
            clear = TruncateContext(table=r.table(op.pending), assignments=[], where=_flushed())
            summary = f"delete the flushed rows from {op.pending.name!r}"
            sql = r.template("truncate", clear)
            return r.statement(op, sql, summary, run=Bind(markers=(HIGH_MARKER,)))
        case _:
            assert_never(op)


def _append(r: Renderer, op: AppendPendingOp) -> AppendContext:
    """Each intermediate column from the staged view, in the intermediate table's order."""
    staged, masked = set(op.staged), set(op.masked)
    keys = [c for c in op.columns if c.name in op.key]
    others = [c for c in op.columns if c.name not in op.key]
    names: list[str] = []
    values: list[exp.Expr] = []

    def add(name: str, value: exp.Expr) -> None:
        names.append(name)
        values.append(value if isinstance(value, exp.Column) else alias(value, name))

    for column in (*keys, *others):
        if column.name in staged:
            add(column.name, col(column.name))
        else:
            add(column.name, exp.cast(exp.Null(), r.dialect.sql_type(column)))
    for column in others:
        mask = unmodified_column(column.name)
        if column.name in masked:
            add(mask, col(mask))
        else:
            # Not named by the request: unmodified on every row (merge mode leaves it).
            add(mask, exp.true() if column.name not in staged else exp.false())
    add(OP_COLUMN, col(OP_COLUMN))
    add(SEQ_COLUMN, exp.Add(this=exp.Placeholder(this=SEQ_BASE_MARKER), expression=col(SEQ_COLUMN)))
    add(BATCH_COLUMN, exp.Placeholder(this=BATCH_MARKER))
    return AppendContext(
        pending=r.table(op.pending),
        columns=[identifier(n) for n in names],
        values=values,
        view=identifier(op.view),
    )


def _stats() -> list[exp.Expr]:
    seq, batch = col(SEQ_COLUMN), col(BATCH_COLUMN)
    values: list[exp.Expr] = [
        exp.Min(this=seq),
        exp.Max(this=seq.copy()),
        exp.Count(this=exp.Star()),
        exp.Count(this=exp.Distinct(expressions=[batch])),
        exp.Max(this=batch.copy()),
    ]
    return [alias(v, name) for v, name in zip(values, STATS_OUTPUTS, strict=True)]


def _flushed() -> exp.Expr:
    """The rows a flush folds: counter at most the highest it read."""
    return exp.LTE(this=col(SEQ_COLUMN), expression=exp.Placeholder(this=HIGH_MARKER))


def _per_key(function: type[exp.AggFunc], value: exp.Expr, key: list[str]) -> exp.Expr:
    return exp.Window(this=function(this=value), partition_by=[col(k) for k in key])


def _op_is(row_op: RowOp) -> exp.Expr:
    return exp.EQ(this=col(OP_COLUMN), expression=text(row_op.value))


def _flush(r: Renderer, op: FlushPendingOp, key_filter: KeyFilter | None) -> FlushContext:
    key = [c.name for c in op.columns if c.name in op.key]
    others = [c.name for c in op.columns if c.name not in op.key]
    seq = col(SEQ_COLUMN)
    read = [*key, *others, *(unmodified_column(n) for n in others), OP_COLUMN, SEQ_COLUMN]
    # D: the key's last delete.
    last_delete = _per_key(
        exp.Max, exp.Case(ifs=[exp.If(this=_op_is(RowOp.DELETE), true=seq.copy())]), key
    )
    # U: the key's first upsert after D (after nothing when it has no delete).
    after_delete = exp.or_(
        is_null(col(LAST_DELETE)), exp.GT(this=seq.copy(), expression=col(LAST_DELETE))
    )
    first_upsert = _per_key(
        exp.Min,
        exp.Case(ifs=[exp.If(this=exp.and_(_op_is(RowOp.UPSERT), after_delete), true=seq.copy())]),
        key,
    )
    from_upsert = exp.GTE(this=seq.copy(), expression=col(FIRST_UPSERT))
    folded: list[exp.Expr] = [
        alias(exp.not_(is_null(exp.Max(this=col(LAST_DELETE)))), DELETED),
        alias(exp.not_(is_null(exp.Max(this=col(FIRST_UPSERT)))), UPSERTED),
    ]
    for name in others:
        mask = col(unmodified_column(name))
        set_here = exp.not_(mask.copy())
        folded += [
            alias(latest(name, set_here.copy()), name),
            alias(exp.Min(this=mask), unmodified_column(name)),
            alias(latest(name, set_here, from_upsert.copy()), replaced_column(name)),
        ]
    deleted, upserted = col(DELETED, SOURCE_ALIAS), col(UPSERTED, SOURCE_ALIAS)
    return FlushContext(
        table=r.table(op.table),
        target=identifier(TARGET_ALIAS),
        source=identifier(SOURCE_ALIAS),
        pending=r.table(op.pending),
        deletes=identifier(DELETES_ALIAS),
        rows=identifier(ROWS_ALIAS),
        key=[identifier(k) for k in key],
        columns=[identifier(n) for n in read],
        windowed=[identifier(n) for n in (*read, LAST_DELETE)],
        last_delete=alias(last_delete, LAST_DELETE),
        first_upsert=alias(first_upsert, FIRST_UPSERT),
        flushed=_flushed(),
        folded=folded,
        on=exp.and_(
            keys_equal(key, TARGET_ALIAS, SOURCE_ALIAS),
            *(keys_in_markers(key_filter, TARGET_ALIAS) if key_filter else ()),
        ),
        deleting=exp.and_(deleted.copy(), exp.not_(upserted.copy())),
        replacing=deleted,
        replacements=[assign(n, col(replaced_column(n), SOURCE_ALIAS)) for n in others],
        overlays=[assign(n, unless_unmodified(n, col(n, TARGET_ALIAS))) for n in others],
        inserting=upserted,
        insert_columns=[identifier(c.name) for c in op.columns],
        insert_values=[
            col(c.name if c.name in op.key else replaced_column(c.name), SOURCE_ALIAS)
            for c in op.columns
        ],
    )
