"""The sorted layout's bloom filters are sized for the keys a row group holds (``planner.layout``),
and a table whose filters only differ in size is not rewritten whole by maintenance."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from spark_destination.core.config import parse_config
from spark_destination.core.model import Column, DataType, DecimalParams
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner.ir import RewriteDataFilesOp, SetLayoutOp, TableRef
from spark_destination.planner.layout import (
    BLOOM_FILTER_BITS_PER_KEY,
    BLOOM_FILTER_MAX_SHARE,
    BLOOM_FILTER_MIN_BYTES,
    bloom_filter_bytes,
    table_layout,
)
from spark_destination.planner.maintenance import MaintenancePolicy, plan_maintenance

KEY = Column(name="id", type=DataType.LONG, primary_key=True)
# The benchmark's 12 columns, whose 1 MiB row groups held ~11,600 rows each.
BENCH = (
    KEY,
    Column(name="qty", type=DataType.INT),
    Column(name="price", type=DataType.DECIMAL, decimal=DecimalParams(precision=18, scale=4)),
    Column(name="score", type=DataType.DOUBLE),
    Column(name="name", type=DataType.STRING),
    Column(name="city", type=DataType.STRING),
    Column(name="day", type=DataType.NAIVE_DATE),
    Column(name="active", type=DataType.BOOLEAN),
    Column(name="updated_at", type=DataType.UTC_DATETIME),
    Column(name="note", type=DataType.STRING),
    Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
    Column(name="_fivetran_deleted", type=DataType.BOOLEAN),
)
NARROW = (KEY, Column(name="qty", type=DataType.INT))
WIDE = (KEY, *(Column(name=f"c{i}", type=DataType.STRING) for i in range(60)))
MIB = 1 << 20


def test_the_bench_tables_filters_give_its_rows_about_ten_bits_per_key() -> None:
    size = bloom_filter_bytes(MIB, BENCH)
    # 16 KiB: ~11 bits for each of the ~11,600 keys its row groups held (64 KiB before: 45).
    assert size == 16 << 10
    assert BLOOM_FILTER_BITS_PER_KEY <= size * 8 / 11_600 < 2 * BLOOM_FILTER_BITS_PER_KEY


@pytest.mark.parametrize("columns", [NARROW, BENCH, WIDE], ids=["narrow", "bench", "wide"])
@pytest.mark.parametrize("row_group", [64 << 10, MIB, 8 * MIB])
def test_a_filter_is_a_power_of_two_within_its_bounds(
    columns: tuple[Column, ...], row_group: int
) -> None:
    size = bloom_filter_bytes(row_group, columns)
    assert size & (size - 1) == 0
    assert BLOOM_FILTER_MIN_BYTES <= size <= max(row_group // BLOOM_FILTER_MAX_SHARE, 1024)


def test_wider_rows_get_smaller_filters_and_bigger_row_groups_bigger_ones() -> None:
    narrow, bench, wide = (bloom_filter_bytes(MIB, c) for c in (NARROW, BENCH, WIDE))
    assert narrow > bench > wide
    assert bloom_filter_bytes(8 * MIB, BENCH) == 8 * bench
    # A narrow table's many keys per row group are capped at a sixteenth of its bytes.
    assert narrow == MIB // BLOOM_FILTER_MAX_SHARE


def test_the_sorted_layout_sizes_its_filters_by_its_columns() -> None:
    settings = parse_config({}).layout_of("s", "t")
    assert table_layout(settings, BENCH, ("id",)).bloom_filter_bytes == bloom_filter_bytes(
        settings.row_group_bytes, BENCH
    )
    assert table_layout(settings, WIDE, ("id",)).bloom_filter_bytes < table_layout(
        settings, BENCH, ("id",)
    ).bloom_filter_bytes


def _maintenance(layout_current: tuple[object, object]) -> list[object]:
    layout, current = layout_current
    plan = plan_maintenance(
        TableRef(catalog="lake", schema="s", name="t"),
        MaintenancePolicy(retention=timedelta(hours=168)),
        now=datetime(2024, 5, 17, tzinfo=UTC),
        target=SPARK_ICEBERG,
        key=("id",),
        layout=layout,  # type: ignore[arg-type]
        current=current,  # type: ignore[arg-type]
    )
    return list(plan.ops)


def test_maintenance_resizes_filters_without_rewriting_every_file() -> None:
    layout = table_layout(parse_config({}).layout_of("s", "t"), BENCH, ("id",))
    older = replace(layout, bloom_filter_bytes=64 << 10)  # a table laid out before the sizing
    ops = _maintenance((layout, older))
    (change,) = (op for op in ops if isinstance(op, SetLayoutOp))
    assert change.layout.bloom_filter_bytes == layout.bloom_filter_bytes
    (rewrite,) = (op for op in ops if isinstance(op, RewriteDataFilesOp))
    assert not rewrite.rewrite_all
    # A change that moves rows (here: a plain table made sorted) still rewrites every file.
    plain = table_layout(parse_config({"table_layout": "plain"}).layout_of("s", "t"), BENCH, ())
    (rewrite,) = (op for op in _maintenance((layout, plain)) if isinstance(op, RewriteDataFilesOp))
    assert rewrite.rewrite_all
