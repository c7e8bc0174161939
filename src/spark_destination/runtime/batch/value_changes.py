"""What ``bad_value_policy=null`` changed in a batch: per file, the values NULLed or truncated,
turned into the staged records view the changes table is written from, and counted for the
request's Warning.

A record names the table's column, the change, the reason (what was expected, never the value),
the batch file, the data row in the file (1 = the first row after the header), the row's
primary key (typed, as staged) and its ``_fivetran_synced``. The bad value itself is never kept:
the typed column holds NULL (or the truncated text) and the text is not copied anywhere.
Runtime layer: no pyspark here.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from spark_destination.planner.bad_values import (
    RECORD_BATCH_FILE,
    RECORD_CHANGE,
    RECORD_COLUMN,
    RECORD_FILE_ROW,
    RECORD_REASON,
    RECORD_SYNCED,
    record_key_column,
)

__all__ = [
    "Change",
    "ChangeCount",
    "ColumnChanges",
    "count_changes",
    "file_records",
    "records_schema",
]


class Change(enum.Enum):
    """What the destination did to a value its column cannot hold: the ``change`` column of a
    record in the changes table."""

    NULLED = "NULLED"
    TRUNCATED = "TRUNCATED"


@dataclass(frozen=True, slots=True)
class ColumnChanges:
    """Values of one column of one batch file changed for one reason: ``rows`` are the
    0-based data rows of the file (int64)."""

    column: str
    change: Change
    reason: str
    rows: pa.Array


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeCount:
    """How many values of a column were changed for one reason (for the Warning and the log)."""

    column: str
    change: Change
    reason: str
    count: int


def records_schema(key_types: Sequence[pa.DataType], synced_type: pa.DataType) -> pa.Schema:
    """The staged records view: one row per changed value."""
    return pa.schema(
        [
            pa.field(RECORD_COLUMN, pa.string(), nullable=False),
            pa.field(RECORD_CHANGE, pa.string(), nullable=False),
            pa.field(RECORD_REASON, pa.string(), nullable=False),
            pa.field(RECORD_BATCH_FILE, pa.string(), nullable=False),
            pa.field(RECORD_FILE_ROW, pa.int64(), nullable=False),
            *(pa.field(record_key_column(i), t) for i, t in enumerate(key_types)),
            pa.field(RECORD_SYNCED, synced_type),
        ]
    )


def file_records(
    path: str,
    typed: pa.Table,
    changes: Sequence[ColumnChanges],
    *,
    key: Sequence[str],
    synced: str | None,
    schema: pa.Schema,
) -> pa.Table:
    """The records of one decoded file (``typed``: its rows in file order)."""
    parts = []
    for changed in changes:
        count = len(changed.rows)
        rows = typed.take(changed.rows)
        synced_values = (
            rows.column(synced)
            if synced is not None
            else pa.nulls(count, schema.field(RECORD_SYNCED).type)
        )
        columns = [
            pa.repeat(pa.scalar(changed.column, pa.string()), count),
            pa.repeat(pa.scalar(changed.change.value, pa.string()), count),
            pa.repeat(pa.scalar(changed.reason, pa.string()), count),
            pa.repeat(pa.scalar(path, pa.string()), count),
            pc.add(changed.rows, 1),  # data rows count from 1, as in error messages
            *(rows.column(name) for name in key),
            synced_values,
        ]
        parts.append(pa.Table.from_arrays(columns, schema=schema))
    return pa.concat_tables(parts) if parts else schema.empty_table()


def count_changes(records: pa.Table) -> tuple[ChangeCount, ...]:
    """Changed values per column, change and reason, in column order of first appearance."""
    if not records.num_rows:
        return ()
    names = [RECORD_COLUMN, RECORD_CHANGE, RECORD_REASON]
    grouped = records.group_by(names, use_threads=False).aggregate([(RECORD_FILE_ROW, "count")])
    return tuple(
        ChangeCount(
            column=row[RECORD_COLUMN],
            change=Change(row[RECORD_CHANGE]),
            reason=row[RECORD_REASON],
            count=row[f"{RECORD_FILE_ROW}_count"],
        )
        for row in grouped.to_pylist()
    )
