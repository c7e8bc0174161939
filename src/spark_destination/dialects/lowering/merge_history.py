"""Lowering of a WriteHistoryBatch (SCD type 2): one MERGE, its source built from one CTE per
step, each by its own builder below.

The staged rows and the stored versions of their keys are put in one relation and windowed
per key in (``__sd_order``, start, seq) order: every per-key value (earliest start, delete
time, newest surviving version, the fill of unmodified columns, the last of repeated versions)
comes out of that one sort, so the table is read once for the source (and once by the MERGE
itself) and no per-key aggregate has to be joined back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sqlglot import exp

from spark_destination.core.model import Column
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
    markers_for,
    number,
    op_is,
    text,
)
from spark_destination.dialects.lowering.merge_history_filled import filled_versions_context
from spark_destination.dialects.lowering.merge_history_full import (
    ACTION,
    ACTION_CLOSE,
    ACTION_INSERT,
    CLOSE_GAP,
    DELETED_AT,
    EARLIEST,
    POS,
    delete_time,
    earliest_start,
    full_versions_context,
)
from spark_destination.dialects.quoting import identifier
from spark_destination.dialects.rendered import Form, KeyFilter, MergeHistory, Statement
from spark_destination.planner.ir import (
    OP_COLUMN,
    SEQ_COLUMN,
    MergeHistoryOp,
    RowOp,
    masked_columns,
    unmodified_column,
)

# Names used inside the MERGE source; the ``__sd_`` prefix cannot collide with Fivetran columns.
ROWS: Final = "__sd_rows"
ALL: Final = "__sd_all"
WINDOWED: Final = "__sd_windowed"
BASED: Final = "__sd_based"
FILLED: Final = "__sd_filled"
SURVIVES: Final = "__sd_survives"
ORDER: Final = "__sd_order"
BASE: Final = "__sd_base"
NEXT_ORDER: Final = "__sd_next_order"
NEXT_START: Final = "__sd_next_start"
LAST: Final = "__sd_last"
STORED: Final = "__sd_stored_"
# ``__sd_order`` of a row in the windowed source: stored versions first, then the batch's
# update/upsert rows (new versions), then its earliest-start and delete rows.
STORED_ORDER: Final = 0
VERSION_ORDER: Final = 1
OTHER_ORDER: Final = 2
# ``__sd_seq`` of a stored version: before every staged row.
STORED_SEQ: Final = -1
ACTION_DELETE: Final = "delete"
FULL: Final = "merge_history_full"
FILLED_TEMPLATE: Final = "merge_history_filled"


@dataclass(frozen=True, slots=True, kw_only=True)
class Cte:
    """One step of the source: its name and what it selects."""

    name: exp.Identifier
    select: list[exp.Expr]


@dataclass(frozen=True, slots=True, kw_only=True)
class RowsCte:
    name: exp.Identifier
    view: exp.Identifier
    select: list[exp.Expr]


@dataclass(frozen=True, slots=True, kw_only=True)
class AllCte:
    name: exp.Identifier
    batch_select: list[exp.Expr]
    stored_select: list[exp.Expr]
    stored_where: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangesSelect:
    select: list[exp.Expr]
    where: exp.Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeHistoryContext:
    table: exp.Table
    target: exp.Identifier
    source: exp.Identifier
    rows: RowsCte
    all: AllCte
    windowed: Cte
    based: Cte
    filled: Cte
    changes: ChangesSelect
    on: exp.Expr
    deleting: exp.Expr
    assignments: list[exp.Expr]
    inserting: exp.Expr
    insert_columns: list[exp.Identifier]
    insert_values: list[exp.Expr]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Shape:
    """The columns of the op by role, and the window every step shares."""

    op: MergeHistoryOp
    keys: list[Column]
    start: Column
    # Columns whose value a version carries (and an update may leave unmodified).
    values: list[Column]

    def over(self, this: exp.Expr, frame: str | None) -> exp.Window:
        """``this`` over the key's rows in window order, from the first row to ``frame``
        (``CURRENT ROW`` or ``UNBOUNDED`` following; None: no frame)."""
        spec = None
        if frame is not None:
            spec = exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end=frame)
            if frame == "UNBOUNDED":
                spec.set("end_side", "FOLLOWING")
        order = exp.Order(
            expressions=[
                exp.Ordered(this=col(ORDER)),
                exp.Ordered(this=col(self.start.name)),
                exp.Ordered(this=col(SEQ_COLUMN)),
            ]
        )
        return exp.Window(
            this=this,
            partition_by=[col(c.name) for c in self.keys],
            order=order,
            spec=spec,
            over="OVER",
        )

    def whole(self, this: exp.Expr) -> exp.Window:
        return self.over(this, "UNBOUNDED")


def _order_is(order: int) -> exp.Expr:
    return exp.EQ(this=col(ORDER), expression=number(order))


def _first(array: exp.Expr) -> exp.Expr:
    return exp.func("ELEMENT_AT", array, number(1))


def lower_merge_history(r: Renderer, op: MergeHistoryOp) -> Statement:
    """The MERGE, and its key-filter form (``Form.KEY_FILTER``): both reads of the table, the
    stored versions of the batch's keys and the MERGE's target, also filtered by the markers
    the runtime binds to a small batch's keys, so they skip the files that cannot hold them."""
    start = next(c for c in op.columns if c.name == op.start)
    shape = _Shape(
        op=op,
        keys=[c for c in op.columns if c.name in op.key],
        start=start,
        values=[c for c in op.columns if c.name not in op.key and c.name != op.start],
    )
    summary = f"merge history batch into {op.table.name!r}"
    sql = r.template("merge_history", _context(r, shape, None))
    # Without the sentinel no value is ever unmodified: no filled form.
    fills = op.unmodified_string is not None
    forms = [(Form.FULL_VERSIONS, r.template(FULL, full_versions_context(r, op, None)))]
    if fills:
        filled = filled_versions_context(r, op, None)
        forms.append((Form.FILLED_VERSIONS, r.template(FILLED_TEMPLATE, filled)))
    key_filter = markers_for(op.filter_key, r.dialect.key_filter_slots)
    if key_filter is not None:
        forms.append((Form.KEY_FILTER, r.template("merge_history", _context(r, shape, key_filter))))
        full = full_versions_context(r, op, key_filter)
        forms.append((Form.FULL_VERSIONS_KEY_FILTER, r.template(FULL, full)))
        if fills:
            filled_filtered = filled_versions_context(r, op, key_filter)
            forms.append(
                (Form.FILLED_VERSIONS_KEY_FILTER, r.template(FILLED_TEMPLATE, filled_filtered))
            )
    run = MergeHistory(view=op.view, table=op.table)
    return r.statement(op, sql, summary, forms=tuple(forms), key_filter=key_filter, run=run)


def _context(r: Renderer, shape: _Shape, key_filter: KeyFilter | None) -> MergeHistoryContext:
    op = shape.op
    action = col(ACTION, SOURCE_ALIAS)
    on = exp.and_(
        keys_equal([c.name for c in (*shape.keys, shape.start)], TARGET_ALIAS, SOURCE_ALIAS),
        exp.NEQ(this=action.copy(), expression=text(ACTION_INSERT)),
        *(keys_in_markers(key_filter, TARGET_ALIAS) if key_filter else ()),
    )
    return MergeHistoryContext(
        table=r.table(op.table),
        target=identifier(TARGET_ALIAS),
        source=identifier(SOURCE_ALIAS),
        rows=_rows(r, shape),
        all=_all(r, shape, key_filter),
        windowed=_windowed(r, shape),
        based=_based(r, shape),
        filled=_filled(r, shape),
        changes=_changes(r, shape),
        on=on,
        deleting=exp.EQ(this=action.copy(), expression=text(ACTION_DELETE)),
        assignments=[assign(name, col(name, SOURCE_ALIAS)) for name in (op.end, op.active)],
        inserting=exp.EQ(this=action.copy(), expression=text(ACTION_INSERT)),
        insert_columns=[identifier(c.name) for c in op.columns],
        insert_values=[col(c.name, SOURCE_ALIAS) for c in op.columns],
    )


def _rows(r: Renderer, shape: _Shape) -> RowsCte:
    """1. The staged (typed) rows, every value column as a one-element array of its value,
    NULL when unmodified (so a genuine NULL is not "unmodified"); an unmodified start is
    staged as NULL."""
    op = shape.op
    masked = set(masked_columns(op.columns, op.key, op.unmodified_string))
    select: list[exp.Expr] = [identifier(c.name) for c in (*shape.keys, shape.start)]
    for column in shape.values:
        wrapped: exp.Expr = exp.Array(expressions=[col(column.name)])
        if column.name in masked:
            mask = col(unmodified_column(column.name))
            wrapped = exp.Case(ifs=[exp.If(this=mask, true=exp.Null())], default=wrapped)
        select.append(alias(wrapped, column.name))
    select += [identifier(OP_COLUMN), identifier(SEQ_COLUMN)]
    return RowsCte(name=identifier(ROWS), view=identifier(op.view), select=select)


def _all(r: Renderer, shape: _Shape, key_filter: KeyFilter | None) -> AllCte:
    """2. Batch rows and the stored versions of the batch's keys (values wrapped the same
    way), each with its ``__sd_order``."""
    columns = [identifier(c.name) for c in (*shape.keys, shape.start, *shape.values)]
    row_order = exp.Case(
        ifs=[exp.If(this=op_is(RowOp.UPDATE, RowOp.UPSERT), true=number(VERSION_ORDER))],
        default=number(OTHER_ORDER),
    )
    batch_select: list[exp.Expr] = [
        *columns,
        identifier(OP_COLUMN),
        identifier(SEQ_COLUMN),
        alias(row_order, ORDER),
    ]
    stored_select: list[exp.Expr] = [identifier(c.name) for c in (*shape.keys, shape.start)]
    stored_select += [alias(exp.Array(expressions=[col(c.name)]), c.name) for c in shape.values]
    stored_select += [
        alias(exp.Null(), OP_COLUMN),
        alias(number(STORED_SEQ), SEQ_COLUMN),
        alias(number(STORED_ORDER), ORDER),
    ]
    keys = [col(c.name) for c in shape.keys]
    batch_keys = exp.select(*(k.copy() for k in keys)).from_(exp.table_(ROWS, quoted=True))
    stored_keys: exp.Expr = (
        exp.Tuple(expressions=keys) if len(keys) > 1 else exp.Paren(this=keys[0])
    )
    stored_where: exp.Expr = exp.In(this=stored_keys, query=exp.Subquery(this=batch_keys))
    if key_filter is not None:
        stored_where = exp.and_(stored_where, *keys_in_markers(key_filter, None))
    return AllCte(
        name=identifier(ALL),
        batch_select=batch_select,
        stored_select=stored_select,
        stored_where=stored_where,
    )


def _windowed(r: Renderer, shape: _Shape) -> Cte:
    """3. Per key (whole-partition frames): the earliest start of the batch and the (latest)
    delete timestamp; per row its position and the next row's order and start."""
    start = col(shape.start.name)
    earliest = earliest_start(shape.whole, shape.start.name)
    deleted_at = delete_time(shape.whole, _first(col(shape.op.end)))
    position = shape.over(exp.func("ROW_NUMBER"), None)
    next_order = shape.over(exp.func("LEAD", col(ORDER), number(1), number(-1)), None)
    next_start = shape.over(exp.func("LEAD", start.copy()), None)
    select = [
        alias(earliest, EARLIEST),
        alias(deleted_at, DELETED_AT),
        alias(position, POS),
        alias(next_order, NEXT_ORDER),
        alias(next_start, NEXT_START),
    ]
    return Cte(name=identifier(WINDOWED), select=select)


def _survives(shape: _Shape) -> exp.Expr:
    """A stored version survives if it starts before the key's earliest start."""
    earliest = col(EARLIEST)
    return exp.or_(is_null(earliest), exp.LT(this=col(shape.start.name), expression=earliest))


def _based(r: Renderer, shape: _Shape) -> Cte:
    """4. Whether a stored version survives; the newest surviving one (the last in window
    order) is the fill base."""
    surviving_stored = exp.and_(_order_is(STORED_ORDER), exp.paren(_survives(shape)))
    base = shape.whole(exp.Max(this=exp.Case(ifs=[exp.If(this=surviving_stored, true=col(POS))])))
    select = [alias(_survives(shape), SURVIVES), alias(base, BASE)]
    return Cte(name=identifier(BASED), select=select)


def _is_base() -> exp.Expr:
    return exp.EQ(this=col(POS), expression=col(BASE))


def _filled(r: Renderer, shape: _Shape) -> Cte:
    """5. Unmodified columns of a new version carry, in window order, the last value of the
    base or of an earlier new version; a new version is kept if the next row is not a new
    version with the same start (the later staged row wins)."""
    op = shape.op
    is_version = _order_is(VERSION_ORDER)
    select: list[exp.Expr] = [identifier(c.name) for c in (*shape.keys, shape.start)]
    for column in shape.values:
        carried_from = exp.or_(is_version.copy(), _is_base())
        carried = shape.over(
            exp.IgnoreNulls(
                this=exp.Last(this=exp.Case(ifs=[exp.If(this=carried_from, true=col(column.name))]))
            ),
            "CURRENT ROW",
        )
        select.append(alias(_first(carried), column.name))
    for name in (op.end, op.active):
        select.append(alias(_first(col(name)), STORED + name))
    last = exp.and_(
        is_version.copy(),
        exp.not_(
            exp.and_(
                exp.EQ(this=col(NEXT_ORDER), expression=number(VERSION_ORDER)),
                exp.EQ(this=col(NEXT_START), expression=col(shape.start.name)),
            )
        ),
    )
    select += [identifier(n) for n in (ORDER, EARLIEST, DELETED_AT, SURVIVES, POS, BASE)]
    select.append(alias(last, LAST))
    return Cte(name=identifier(FILLED), select=select)


def _changes(r: Renderer, shape: _Shape) -> ChangesSelect:
    """6. The MERGE source: new versions to insert and stored versions to delete or close."""
    op = shape.op
    earliest = col(EARLIEST)
    deleted_at = col(DELETED_AT)
    deleting = exp.not_(is_null(deleted_at))
    has_earliest = exp.not_(is_null(earliest))
    stored_end = col(STORED + op.end)
    stored_active = col(STORED + op.active)
    is_version = _order_is(VERSION_ORDER)
    select: list[exp.Expr] = [identifier(c.name) for c in (*shape.keys, shape.start)]
    for column in shape.values:
        name = column.name
        if name == op.end:
            inserted: exp.Expr = exp.Case(
                ifs=[
                    exp.If(this=exp.and_(deleting.copy(), col(op.active)), true=deleted_at.copy())
                ],
                default=col(name),
            )
            changed: exp.Expr = exp.Case(
                ifs=[
                    exp.If(
                        this=has_earliest.copy(),
                        true=exp.Sub(this=earliest.copy(), expression=CLOSE_GAP.copy()),
                    )
                ],
                default=deleted_at.copy(),
            )
        elif name == op.active:
            inserted = exp.Case(
                ifs=[exp.If(this=deleting.copy(), true=exp.false())], default=col(name)
            )
            changed = exp.false()
        else:
            inserted, changed = col(name), exp.Null()
        value = exp.Case(ifs=[exp.If(this=is_version.copy(), true=inserted)], default=changed)
        select.append(alias(value, name))
    survives = col(SURVIVES)
    action = exp.Case(
        ifs=[
            exp.If(this=is_version.copy(), true=text(ACTION_INSERT)),
            exp.If(this=survives.copy(), true=text(ACTION_CLOSE)),
        ],
        default=text(ACTION_DELETE),
    )
    select.append(alias(action, ACTION))
    change_where = exp.or_(
        exp.not_(survives.copy()),
        exp.and_(
            has_earliest.copy(),
            exp.or_(
                stored_active.copy(),
                exp.and_(_is_base(), exp.GTE(this=stored_end.copy(), expression=earliest.copy())),
            ),
        ),
        exp.and_(is_null(earliest), deleting.copy(), stored_active.copy()),
    )
    where = exp.or_(
        exp.and_(is_version.copy(), col(LAST)),
        exp.and_(_order_is(STORED_ORDER), exp.paren(change_where)),
    )
    return ChangesSelect(select=select, where=where)
