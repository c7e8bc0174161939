"""Planning of ``bad_value_policy=null``: values that fail to convert are captured (nulled or
cut, and recorded) instead of failing the batch.

With the policy a batch write stages non-key values its columns cannot hold as NULL (or, in a
column whose dialect limits its length, as the text cut to the limit) and records every such
change in the schema's changes table before the MERGE changes the table. What may change:

* only *lenient* columns: not a key column (the row could not be placed), not a column a row
  operation requires (history mode's ``_fivetran_start`` / ``_fivetran_end`` /
  ``_fivetran_active``) and none of Fivetran's own columns (``_fivetran_synced`` drives
  Truncate and dates the record, ``_fivetran_deleted`` soft deletes, ``_fivetran_id`` is a
  key): Fivetran writes those, so a bad one means a broken file, which fails under either
  policy, as undecodable files and malformed rows do;
* a value too long for a column the dialect declares with a length (``Target.
  string_length_limit``; Iceberg strings have none) is cut to it and recorded TRUNCATED.

The changes table (``changes_table``, in the written table's schema; its name is in the
destination's reserved space, so no Fivetran table can be called so and DescribeTable never
sees it) has one row per changed value: ``CHANGES_COLUMNS``. Records are written by a MERGE
keyed by table, batch file, data row, column and the row's ``_fivetran_synced``, before the
table's own MERGE: a request that fails afterwards has both restored (the runtime holds the
changes table for the rest of the request and restores it with the table); after a crash
between the two commits the records are there without the change, and the retried request adds
no second copy and then makes the change. The bad value itself is never stored.
"""

from __future__ import annotations

from typing import Final, TypedDict

from spark_destination.core.model import (
    DELETED,
    FIVETRAN_ID,
    HISTORY_ACTIVE,
    HISTORY_END,
    HISTORY_START,
    SYNCED,
    Column,
    DataType,
)
from spark_destination.planner.ir import RecordChangesOp, TableRef
from spark_destination.planner.tables import check_names
from spark_destination.planner.target import Target

# Fivetran's own columns: never NULLed, whatever the policy.
FIVETRAN_COLUMNS: Final = frozenset(
    {SYNCED, DELETED, FIVETRAN_ID, HISTORY_START, HISTORY_END, HISTORY_ACTIVE}
)

# The staged records view a write's staging registers when it changed a value (one row each).
RECORDS_VIEW: Final = "sd_changes"
RECORD_COLUMN: Final = "column_name"
RECORD_CHANGE: Final = "change"
RECORD_REASON: Final = "reason"
RECORD_BATCH_FILE: Final = "batch_file"
RECORD_FILE_ROW: Final = "file_row"
RECORD_SYNCED: Final = "__sd_synced"
_RECORD_KEY_PREFIX: Final = "__sd_key_"


def record_key_column(index: int) -> str:
    """The records view's copy of the row's ``index``-th key column (by position: a key
    column may have any name)."""
    return f"{_RECORD_KEY_PREFIX}{index}"


# The changes table's columns, in order (declared with each dialect's types).
CHANGES_TABLE_NAME: Final = "table_name"
CHANGES_PRIMARY_KEY: Final = "primary_key"
CHANGES_SYNCED: Final = SYNCED
CHANGES_RECORDED_AT: Final = "recorded_at"
CHANGES_COLUMNS: Final = (
    Column(name=CHANGES_TABLE_NAME, type=DataType.STRING),
    Column(name=RECORD_COLUMN, type=DataType.STRING),
    Column(name=RECORD_CHANGE, type=DataType.STRING),
    Column(name=RECORD_REASON, type=DataType.STRING),
    Column(name=RECORD_BATCH_FILE, type=DataType.STRING),
    Column(name=RECORD_FILE_ROW, type=DataType.LONG),
    # The row's key as a JSON object of key column -> value.
    Column(name=CHANGES_PRIMARY_KEY, type=DataType.STRING),
    Column(name=CHANGES_SYNCED, type=DataType.UTC_DATETIME),
    Column(name=CHANGES_RECORDED_AT, type=DataType.UTC_DATETIME),
)


def lenient_columns(columns: tuple[Column, ...], key: tuple[str, ...]) -> tuple[str, ...]:
    """The columns whose bad values become NULL: neither keys nor Fivetran's own (history
    mode's required columns among them)."""
    strict = {*key, *FIVETRAN_COLUMNS}
    return tuple(c.name for c in columns if c.name not in strict)


def max_lengths(columns: tuple[Column, ...], target: Target) -> tuple[tuple[str, int], ...]:
    """The columns the target declares with a length, and that length (in characters)."""
    limits = ((c.name, target.string_length_limit(c)) for c in columns)
    return tuple((name, limit) for name, limit in limits if limit is not None)


class StagingPolicy(TypedDict):
    """The ``StageBatchOp`` fields a write's bad-value handling sets."""

    lenient: tuple[str, ...]
    max_lengths: tuple[tuple[str, int], ...]
    changes_view: str | None
    changes_key: tuple[str, ...]


def staging_policy(
    columns: tuple[Column, ...],
    primary_key: tuple[str, ...],
    target: Target,
    changes_table: str | None,
) -> StagingPolicy:
    """How a write stages values that do not fit: with a ``changes_table``
    (bad_value_policy=null) lenient columns change and are recorded with the row's
    ``primary_key``; without, all fail. History mode's required columns are Fivetran's own, so
    never lenient."""
    recorded = changes_table is not None
    return StagingPolicy(
        lenient=lenient_columns(columns, primary_key) if recorded else (),
        max_lengths=max_lengths(columns, target),
        changes_view=RECORDS_VIEW if recorded else None,
        changes_key=primary_key if recorded else (),
    )


def recording(
    table: TableRef,
    changes_table: str | None,
    *,
    view: str,
    primary_key: tuple[str, ...],
    columns: tuple[Column, ...],
    target: Target,
) -> tuple[RecordChangesOp, ...]:
    """The op recording what staging changed in the schema's changes table (none without a
    ``changes_table``: bad_value_policy=fail changes nothing)."""
    if changes_table is None:
        return ()
    check_names(target, table.catalog, table.schema, changes_table)
    return (
        RecordChangesOp(
            table=table,
            changes=TableRef(catalog=table.catalog, schema=table.schema, name=changes_table),
            view=view,
            records=RECORDS_VIEW,
            key=primary_key,
            synced=any(c.name == SYNCED for c in columns),
        ),
    )
