"""Lowering of the WriteHistoryBatch MERGE's full-versions form (``Form.FULL_VERSIONS``).

When no staged value is "unmodified" and no key has more than one new version in the batch,
a new version needs nothing from the stored ones: its row is complete. Then the stored versions
need not be read before the MERGE (the general form reads them, unions them with the batch and
windows both per key: measured ~2x the cost of this form for 1M versions). The source is the
batch alone, windowed per key to give its earliest start and delete time; the MERGE matches
each key's stored versions by key only, through one ``close`` row per key, and

- deletes a stored version that starts at or after the key's earliest start,
- closes (end one millisecond before the earliest start, inactive) one that starts before it
  and is active or ends at or after it (on a consistent history only the newest surviving
  version can end that late; the general form closes that one alone),
- closes an active version at the delete time when the key has a delete row and no earliest
  start,

and inserts the new versions (``insert`` rows never match): the same outcome as the general
form on every history whose versions of a key do not overlap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

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
    number,
    op_is,
    text,
)
from spark_destination.dialects.quoting import identifier
from spark_destination.dialects.rendered import KeyFilter
from spark_destination.planner.ir import SEQ_COLUMN, MergeHistoryOp, RowOp

KEYED: Final = "__sd_keyed"
EARLIEST: Final = "__sd_earliest"
DELETED_AT: Final = "__sd_deleted_at"
POS: Final = "__sd_pos"
ACTION: Final = "__sd_action"
ACTION_INSERT: Final = "insert"
ACTION_CLOSE: Final = "close"
# A superseded version ends one millisecond before its successor starts (Fivetran's rule).
CLOSE_GAP: Final = exp.Interval(this=exp.Literal.string("1"), unit=exp.Var(this="MILLISECOND"))


def earliest_start(over: Callable[[exp.Expr], exp.Expr], start: str) -> exp.Expr:
    """A key's earliest start (``over``: a window over the key's rows): the least start of its
    earliest-start rows and of its new versions."""

    def least(*ops: RowOp) -> exp.Expr:
        return over(exp.Min(this=exp.Case(ifs=[exp.If(this=op_is(*ops), true=col(start))])))

    return exp.func("LEAST", least(RowOp.EARLIEST_START), least(RowOp.UPDATE, RowOp.UPSERT))


def delete_time(over: Callable[[exp.Expr], exp.Expr], end: exp.Expr) -> exp.Expr:
    """A key's delete time: the latest ``end`` of its delete rows (``over``: as above)."""
    return over(exp.Max(this=exp.Case(ifs=[exp.If(this=op_is(RowOp.DELETE), true=end)])))


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionsClauses:
    """The MERGE clauses the full- and filled-versions forms share
    (``merge_history_versions_clauses.sql.j2``): one close row per key matches its stored
    versions; new versions are inserted."""

    on: exp.Expr
    deleting: exp.Expr
    closing: exp.Expr
    close_assignments: list[exp.Expr]
    ending: exp.Expr
    end_assignments: list[exp.Expr]
    inserting: exp.Expr
    insert_columns: list[exp.Identifier]
    insert_values: list[exp.Expr]


@dataclass(frozen=True, slots=True, kw_only=True)
class FullVersionsContext:
    table: exp.Table
    target: exp.Identifier
    source: exp.Identifier
    view: exp.Identifier
    keyed: exp.Identifier
    windows: list[exp.Expr]
    versions: list[exp.Expr]
    version_where: exp.Expr
    closes: list[exp.Expr]
    close_where: exp.Expr
    clauses: VersionsClauses


def full_versions_context(
    r: Renderer, op: MergeHistoryOp, key_filter: KeyFilter | None
) -> FullVersionsContext:
    keys = [c.name for c in op.columns if c.name in op.key]
    end, active = col(op.end), col(op.active)

    def per_key(this: exp.Expr, *, ordered: bool = False) -> exp.Window:
        order = exp.Order(expressions=[exp.Ordered(this=col(SEQ_COLUMN))]) if ordered else None
        return exp.Window(this=this, partition_by=[col(k) for k in keys], order=order, over="OVER")

    windows = [
        alias(earliest_start(per_key, op.start), EARLIEST),
        alias(delete_time(per_key, end), DELETED_AT),
        alias(per_key(exp.func("ROW_NUMBER"), ordered=True), POS),
    ]
    deleting = exp.not_(is_null(col(DELETED_AT)))
    versions: list[exp.Expr] = []
    closes: list[exp.Expr] = []
    for column in op.columns:
        name = column.name
        if name == op.end:  # a new version deleted in the same batch ends at the delete time
            when = exp.and_(deleting.copy(), active.copy())
            ended = exp.Case(ifs=[exp.If(this=when, true=col(DELETED_AT))], default=col(name))
            versions.append(alias(ended, name))
        elif name == op.active:
            inactive = exp.Case(
                ifs=[exp.If(this=deleting.copy(), true=exp.false())], default=col(name)
            )
            versions.append(alias(inactive, name))
        else:
            versions.append(col(name))
        closes.append(col(name) if name in op.key else alias(exp.Null(), name))
    versions += [alias(exp.Null(), EARLIEST), alias(exp.Null(), DELETED_AT)]
    closes += [col(EARLIEST), col(DELETED_AT)]
    versions.append(alias(text(ACTION_INSERT), ACTION))
    closes.append(alias(text(ACTION_CLOSE), ACTION))

    action = col(ACTION, SOURCE_ALIAS)
    on = exp.and_(
        keys_equal(keys, TARGET_ALIAS, SOURCE_ALIAS),
        exp.EQ(this=action.copy(), expression=text(ACTION_CLOSE)),
        *(keys_in_markers(key_filter, TARGET_ALIAS) if key_filter else ()),
    )
    stored_start = col(op.start, TARGET_ALIAS)
    stored_end = col(op.end, TARGET_ALIAS)
    stored_active = col(op.active, TARGET_ALIAS)
    earliest_s = col(EARLIEST, SOURCE_ALIAS)
    deleted_s = col(DELETED_AT, SOURCE_ALIAS)
    closing = exp.and_(
        exp.not_(is_null(earliest_s.copy())),
        exp.paren(
            exp.or_(stored_active.copy(), exp.GTE(this=stored_end, expression=earliest_s.copy()))
        ),
    )
    ending = exp.and_(
        is_null(earliest_s.copy()), exp.not_(is_null(deleted_s.copy())), stored_active.copy()
    )
    return FullVersionsContext(
        table=r.table(op.table),
        target=identifier(TARGET_ALIAS),
        source=identifier(SOURCE_ALIAS),
        view=identifier(op.view),
        keyed=identifier(KEYED),
        windows=windows,
        versions=versions,
        version_where=op_is(RowOp.UPDATE, RowOp.UPSERT),
        closes=closes,
        close_where=exp.EQ(this=col(POS), expression=number(1)),
        clauses=VersionsClauses(
            on=on,
            deleting=exp.GTE(this=stored_start, expression=earliest_s.copy()),
            closing=closing,
            close_assignments=[
                assign(op.end, exp.Sub(this=earliest_s.copy(), expression=CLOSE_GAP.copy())),
                assign(op.active, exp.false()),
            ],
            ending=ending,
            end_assignments=[
                assign(op.end, deleted_s.copy()),
                assign(op.active, exp.false()),
            ],
            inserting=exp.EQ(this=action.copy(), expression=text(ACTION_INSERT)),
            insert_columns=[identifier(c.name) for c in op.columns],
            insert_values=[col(c.name, SOURCE_ALIAS) for c in op.columns],
        ),
    )
