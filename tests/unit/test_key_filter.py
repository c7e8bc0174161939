"""Which values a small batch binds to the MERGE's key-filter markers, and when it binds none."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from spark_destination.dialects.rendered import KeyFilter
from spark_destination.runtime.execute.key_filter import key_filter_args

FILTER = KeyFilter(
    columns=(
        ("id", ("a0", "a1", "a2", "a3")),
        ("day", ("b0", "b1", "b2", "b3")),
    )
)


def test_distinct_values_per_column_bind_in_order_and_the_first_fills_the_rest() -> None:
    keys = pa.table(
        {
            "id": pa.array([5, 3, 5], pa.int64()),
            "day": pa.array([dt.date(2024, 1, 2)] * 3, pa.date32()),
        }
    )
    day = dt.date(2024, 1, 2)
    assert key_filter_args(FILTER, keys) == {
        "a0": 5,
        "a1": 3,
        "a2": 5,
        "a3": 5,
        "b0": day,
        "b1": day,
        "b2": day,
        "b3": day,
    }


def test_a_batch_with_more_values_than_markers_or_none_binds_nothing() -> None:
    many = pa.table(
        {"id": pa.array(range(5), pa.int64()), "day": pa.array([None] * 5, pa.date32())}
    )
    assert key_filter_args(FILTER, many) is None
    assert key_filter_args(FILTER, many.slice(0, 0)) is None
    assert key_filter_args(FILTER, None) is None
    # A column holding only NULL (refused by staging before this) binds nothing either.
    assert key_filter_args(FILTER, many.slice(0, 2)) is None


def test_a_key_named_on_more_rows_than_markers_binds_once() -> None:
    """Rows, not markers, repeat: a key upserted and deleted in one batch (two files) is one
    key, so a batch of more rows than markers but few keys is still filtered."""
    day = dt.date(2024, 1, 2)
    keys = pa.table(
        {
            "id": pa.array([1, 2, 1, 2, 3, 1], pa.int64()),
            "day": pa.array([day] * 6, pa.date32()),
        }
    )
    args = key_filter_args(FILTER, keys)
    assert args is not None
    assert [args[m] for m in ("a0", "a1", "a2", "a3")] == [1, 2, 3, 1]
    assert {args[m] for m in ("b0", "b1", "b2", "b3")} == {day}
