"""Lowering of ``RecordChangesOp``: the schema's changes table, created when missing, and the
records of the values a write's staging changed (bad_value_policy=null).

Two statements, both run only when staging changed a value: ``CREATE TABLE IF NOT EXISTS``
with the table format's properties, then a MERGE that inserts each staged record the table does
not hold yet, matched on table, batch file, data row, column and the row's
``_fivetran_synced``, so a request retried after a crash adds no record twice. The table name
is compared as a literal on the target alone, so the scan of the changes table skips the files
of other tables' records (one file per recording request, each of one table). The row's key is
written as a JSON object (``TO_JSON`` of a struct named by the key columns), its
``_fivetran_synced`` as stored; the bad value never reaches the records.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from spark_destination.dialects.lowering.common import (
    SOURCE_ALIAS,
    TARGET_ALIAS,
    Renderer,
    alias,
    col,
    text,
)
from spark_destination.dialects.lowering.ddl import CreateTableContext
from spark_destination.dialects.quoting import identifier
from spark_destination.dialects.rendered import RecordChanges, Statement
from spark_destination.planner.bad_values import (
    CHANGES_COLUMNS,
    CHANGES_PRIMARY_KEY,
    CHANGES_RECORDED_AT,
    CHANGES_SYNCED,
    CHANGES_TABLE_NAME,
    RECORD_BATCH_FILE,
    RECORD_CHANGE,
    RECORD_COLUMN,
    RECORD_FILE_ROW,
    RECORD_REASON,
    RECORD_SYNCED,
    record_key_column,
)
from spark_destination.planner.ir import RecordChangesOp

# The columns a record is matched on (besides the table's name and ``_fivetran_synced``).
_MATCHED_ON = (RECORD_BATCH_FILE, RECORD_FILE_ROW, RECORD_COLUMN)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordChangesContext:
    table: exp.Table
    target: exp.Identifier
    source: exp.Identifier
    view: exp.Identifier
    values: list[exp.Expr]
    on: exp.Expr
    insert_columns: list[exp.Identifier]
    insert_values: list[exp.Expr]


def lower_record_changes(r: Renderer, op: RecordChangesOp) -> tuple[Statement, ...]:
    changes = op.changes.name
    create = CreateTableContext(
        table=r.table(op.changes),
        columns=[r.column_definition(c) for c in CHANGES_COLUMNS],
        using=r.using(),
        properties=r.properties(()),
        partitioned_by=[],  # an append-only log, read whole: no layout
    )
    when = "when staging changed a value"
    # Both run only then; the changes table is shared with other requests.
    run = RecordChanges(view=op.view, changes=op.changes)
    return (
        r.statement(
            op,
            r.template("create_changes_table", create),
            f"create the changes table {changes!r} if missing ({when})",
            run=run,
        ),
        r.statement(
            op,
            r.template("record_changes", _context(r, op)),
            f"record the values changed in {op.table.name!r} in {changes!r} ({when})",
            run=run,
        ),
    )


def _timestamp(expression: exp.Expr, r: Renderer) -> exp.Expr:
    synced = next(c for c in CHANGES_COLUMNS if c.name == CHANGES_SYNCED)
    return exp.cast(expression, r.dialect.sql_type(synced))


def _context(r: Renderer, op: RecordChangesOp) -> RecordChangesContext:
    key = exp.JSONFormat(
        this=exp.Struct(
            expressions=[
                exp.PropertyEQ(this=identifier(name), expression=col(record_key_column(i)))
                for i, name in enumerate(op.key)
            ]
        )
    )
    synced = col(RECORD_SYNCED) if op.synced else exp.Null()
    values = [
        alias(text(op.table.name), CHANGES_TABLE_NAME),
        *(col(name) for name in (RECORD_COLUMN, RECORD_CHANGE, RECORD_REASON)),
        *(col(name) for name in (RECORD_BATCH_FILE, RECORD_FILE_ROW)),
        alias(key, CHANGES_PRIMARY_KEY),
        alias(_timestamp(synced, r), CHANGES_SYNCED),
        alias(exp.CurrentTimestamp(), CHANGES_RECORDED_AT),
    ]
    on = exp.and_(
        exp.EQ(this=col(CHANGES_TABLE_NAME, TARGET_ALIAS), expression=text(op.table.name)),
        *(
            exp.EQ(this=col(name, TARGET_ALIAS), expression=col(name, SOURCE_ALIAS))
            for name in _MATCHED_ON
        ),
        exp.NullSafeEQ(
            this=col(CHANGES_SYNCED, TARGET_ALIAS), expression=col(CHANGES_SYNCED, SOURCE_ALIAS)
        ),
    )
    return RecordChangesContext(
        table=r.table(op.changes),
        target=identifier(TARGET_ALIAS),
        source=identifier(SOURCE_ALIAS),
        view=identifier(op.records),
        values=values,
        on=on,
        insert_columns=[identifier(c.name) for c in CHANGES_COLUMNS],
        insert_values=[col(c.name, SOURCE_ALIAS) for c in CHANGES_COLUMNS],
    )
