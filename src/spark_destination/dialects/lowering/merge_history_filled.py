"""Lowering of the WriteHistoryBatch MERGE's filled-versions form (``Form.FILLED_VERSIONS``).

When some staged value is "unmodified" but no key has more than one new version in the batch,
a new version's unmodified columns come from one place: the newest stored version that
survives the batch (start before the key's earliest start). That version is found with a join
and a per-key aggregate, not by the general form's union of the batch with every stored
version of its keys, sorted and windowed per key (1M versions with half the columns
unmodified, same staged batch, bare statements: 19.5-23.6 s against 30.7-33.7 s).

The source is the full-versions form's (``merge_history_full``), built from aggregates instead
of windows:

1. ``__sd_per_key``: per key of the batch, its earliest start and delete time (GROUP BY);
2. ``__sd_newest_stored``: per key of 1., its aggregates and the values of its newest stored
   version that starts before the earliest start (``MAX_BY`` over the stored versions joined
   to 1.; NULL when there is none);
3. ``__sd_filled``: the batch's new versions, each unmodified value taken from 2. (NULL when
   the key has no surviving version, as in the general form);

then the new versions are inserted and one ``close`` row per key (from 1.) deletes, closes or
ends the key's stored versions, exactly as in the full-versions form.

1. is read twice (by 2. and by the close rows), each time for all its columns: Spark then
computes the aggregate once and reuses its exchange. Were 3. to join 1. for the delete time
and 2. to select only the stored values, each use would prune other columns and Spark would
compute the aggregate three times: a warm 1M-version batch took ~12.1 s so, against ~10.5 s
(docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sqlglot import exp

from spark_destination.dialects.lowering.common import (
    TARGET_ALIAS,
    Renderer,
    alias,
    col,
    keys_equal,
    keys_in_markers,
    op_is,
)
from spark_destination.dialects.lowering.merge_history_full import (
    DELETED_AT,
    EARLIEST,
    VersionsClauses,
    delete_time,
    earliest_start,
    full_versions_context,
)
from spark_destination.dialects.quoting import identifier
from spark_destination.dialects.rendered import KeyFilter
from spark_destination.planner.ir import MergeHistoryOp, RowOp, masked_columns, unmodified_column

PER_KEY: Final = "__sd_per_key"
NEWEST_STORED: Final = "__sd_newest_stored"
FILLED: Final = "__sd_filled"
# The struct of a key's newest surviving stored version's values.
STORED_VALUES: Final = "__sd_stored_values"
# Aliases inside the source: a staged row, its key's aggregates, its key's aggregates with its
# newest stored version.
ROW_ALIAS: Final = "r"
KEY_ALIAS: Final = "k"
STORED_ALIAS: Final = "b"


@dataclass(frozen=True, slots=True, kw_only=True)
class FilledVersionsContext:
    table: exp.Table
    target: exp.Identifier
    source: exp.Identifier
    view: exp.Identifier
    per_key: exp.Identifier
    keys: list[exp.Identifier]
    aggregates: list[exp.Expr]
    newest_stored: exp.Identifier
    per_key_columns: list[exp.Expr]
    stored_values: exp.Expr
    stored_on: exp.Expr
    filled: exp.Identifier
    row_alias: exp.Identifier
    key_alias: exp.Identifier
    stored_alias: exp.Identifier
    filled_select: list[exp.Expr]
    base_on: exp.Expr
    version_where: exp.Expr
    versions: list[exp.Expr]
    closes: list[exp.Expr]
    clauses: VersionsClauses


def filled_versions_context(
    r: Renderer, op: MergeHistoryOp, key_filter: KeyFilter | None
) -> FilledVersionsContext:
    keys = [c.name for c in op.columns if c.name in op.key]
    masked = set(masked_columns(op.columns, op.key, op.unmodified_string))
    # The columns a new version may leave unmodified: its start never (a required value).
    fillable = [c.name for c in op.columns if c.name in masked and c.name != op.start]
    full = full_versions_context(r, op, key_filter)

    def as_is(this: exp.Expr) -> exp.Expr:  # aggregates over the GROUP BY, not windows
        return this

    aggregates = [
        alias(earliest_start(as_is, op.start), EARLIEST),
        alias(delete_time(as_is, col(op.end)), DELETED_AT),
    ]
    stored_values = exp.func(
        "MAX_BY",
        exp.Struct(expressions=[alias(col(c, TARGET_ALIAS), c) for c in fillable]),
        col(op.start, TARGET_ALIAS),
    )
    stored_on = exp.and_(
        keys_equal(keys, KEY_ALIAS, TARGET_ALIAS),
        # NULL (a key without new versions, nothing to fill) keeps no stored version.
        exp.LT(this=col(op.start, TARGET_ALIAS), expression=col(EARLIEST, KEY_ALIAS)),
        *(keys_in_markers(key_filter, TARGET_ALIAS) if key_filter else ()),
    )
    # Every column of 1., so that both its uses read the same columns (module docstring).
    per_key_columns: list[exp.Expr] = [col(n, KEY_ALIAS) for n in (*keys, EARLIEST, DELETED_AT)]
    filled_select: list[exp.Expr] = []
    for column in op.columns:
        name = column.name
        value: exp.Expr = col(name, ROW_ALIAS)
        if name in fillable:
            stored = exp.Dot(
                this=col(STORED_VALUES, STORED_ALIAS), expression=exp.to_identifier(name, True)
            )
            mask = col(unmodified_column(name), ROW_ALIAS)
            value = alias(exp.Case(ifs=[exp.If(this=mask, true=stored)], default=value), name)
        filled_select.append(value)
    filled_select.append(col(DELETED_AT, STORED_ALIAS))
    return FilledVersionsContext(
        table=full.table,
        target=full.target,
        source=full.source,
        view=full.view,
        per_key=identifier(PER_KEY),
        keys=[identifier(k) for k in keys],
        aggregates=aggregates,
        newest_stored=identifier(NEWEST_STORED),
        per_key_columns=per_key_columns,
        stored_values=alias(stored_values, STORED_VALUES),
        stored_on=stored_on,
        filled=identifier(FILLED),
        row_alias=identifier(ROW_ALIAS),
        key_alias=identifier(KEY_ALIAS),
        stored_alias=identifier(STORED_ALIAS),
        filled_select=filled_select,
        base_on=keys_equal(keys, ROW_ALIAS, STORED_ALIAS),
        version_where=op_is(RowOp.UPDATE, RowOp.UPSERT, table=ROW_ALIAS),
        versions=full.versions,
        closes=full.closes,
        clauses=full.clauses,
    )
