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


def test_a_batch_with_more_rows_than_markers_or_none_binds_nothing() -> None:
    many = pa.table(
        {"id": pa.array(range(5), pa.int64()), "day": pa.array([None] * 5, pa.date32())}
    )
    assert key_filter_args(FILTER, many) is None
    assert key_filter_args(FILTER, many.slice(0, 0)) is None
    assert key_filter_args(FILTER, None) is None
    # A column holding only NULL (refused by staging before this) binds nothing either.
    assert key_filter_args(FILTER, many.slice(0, 2)) is None
