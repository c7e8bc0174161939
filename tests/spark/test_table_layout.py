"""Table layouts on real Iceberg tables: CreateTable gives a table the configured layout,
maintenance keeps it (and re-sorts what batches added), AlterTable's rewrite keeps it, an
existing table takes a new layout at its next maintenance, and format version 3 writes deletion
vectors instead of position-delete files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pyspark.sql import SparkSession

from spark_destination.core.config import parse_config
from spark_destination.dialects.quoting import qualified
from spark_destination.engine.engine import Engine
from spark_destination.planner.ir import TableLayout
from spark_destination.planner.layout import READ_OPEN_FILE_BYTES
from spark_destination.planner.maintenance import MaintenancePolicy
from tests.spark.test_write_batch_grpc import HEADER, SYNC1, SYNC2, by_id, orders, outcome
from tests.support.destination import UNMOD, Destination, Lake, column

pytestmark = pytest.mark.spark


def _layout(engine: Engine, dest: Destination, table: str = "orders") -> TableLayout:
    layout = engine.table_layout(dest.configuration, dest.schema, table)
    assert layout is not None
    return layout


def _fill(dest: Destination, lake: Lake, batches: int) -> None:
    """40 rows in descending key order, then small batches (an upsert of a new key, an update
    and a delete each): every batch adds a data file spanning its keys.

    Deferred mode: each batch is flushed before the next (as a timer shorter than the time
    between syncs does), so the table gets merge mode's commits."""
    assert outcome(dest.create("orders", orders())) == "success"
    seed = [[str(i), f"{i}.00", f"note {i}", SYNC1, "false"] for i in reversed(range(40))]
    replace = [dest.write_file(HEADER, seed)]
    assert outcome(dest.write("orders", orders(), replace=replace)) == "success"
    lake.settle()
    for n in range(batches):
        upsert = dest.write_file(HEADER, [[str(100 - n), "1.00", "new", SYNC2, "false"]])
        update = dest.write_file(HEADER, [[str(n), f"{n}.99", UNMOD, SYNC2, "false"]])
        delete = dest.write_file(HEADER, [[str(39 - n), UNMOD, UNMOD, SYNC2, "true"]])
        response = dest.write(
            "orders", orders(), replace=[upsert], update=[update], delete=[delete]
        )
        assert outcome(response) == "success"
        lake.settle()


def _maintain(engine: Engine, dest: Destination) -> list[str]:
    report = engine.maintain(
        dest.configuration,
        dest.schema,
        "orders",
        policy=MaintenancePolicy(retention=timedelta(0)),
        now=datetime.now(UTC) + timedelta(seconds=1),
    )
    return [step for step, _, _ in report.steps]


def _data_files(lake: Lake, dest: Destination) -> list[str]:
    files = qualified(lake.catalog, dest.schema, "orders") + ".data_files"
    return [row[0] for row in lake.child().table(files).select("file_path").collect()]


def _keys_in_file_order(spark: SparkSession, path: str) -> list[int]:
    # Parquet keeps rows in the order they were written: read the file itself, not the table.
    return [row[0] for row in spark.read.parquet(path).select("id").collect()]


def test_create_table_gives_the_sorted_layout_by_default(engine: Engine, dest: Destination) -> None:
    assert outcome(dest.create("orders", orders())) == "success"
    layout = _layout(engine, dest)
    assert layout.sort_by == ("id",)
    assert layout.bloom_filter == ("id",)
    assert layout.row_group_bytes == parse_config({}).layout_of("s", "t").row_group_bytes
    assert 0 < layout.bloom_filter_bytes < layout.row_group_bytes
    assert layout.format_version == 2 and layout.bucket_by is None
    assert layout.read_open_file_bytes == READ_OPEN_FILE_BYTES


def test_maintenance_keeps_the_layout_and_sorts_the_files_batches_added(
    spark: SparkSession, engine: Engine, dest: Destination, lake: Lake
) -> None:
    _fill(dest, lake, 3)
    rows = by_id(lake, dest)
    created = _layout(engine, dest)
    # Each write sorts its own rows: the seed's file is in key order although sent descending.
    assert len(_data_files(lake, dest)) > 1

    steps = _maintain(engine, dest)

    assert by_id(lake, dest) == rows
    assert _layout(engine, dest) == created
    assert steps[0].startswith("compact data files")
    (path,) = _data_files(lake, dest)
    keys = _keys_in_file_order(spark, path)
    assert keys == sorted(keys) and len(keys) == len(rows)


def test_alter_table_rewrite_keeps_the_layout(
    engine: Engine, dest: Destination, lake: Lake
) -> None:
    _fill(dest, lake, 1)
    created = _layout(engine, dest)
    # INT -> STRING is no widening: AlterTable rewrites the table (CREATE OR REPLACE … AS
    # SELECT), which drops the write order unless it is set again.
    changed = orders()
    changed[2] = column("note", "STRING")
    changed[1] = column("amount", "STRING")
    assert outcome(dest.alter("orders", changed)) == "success"
    assert _layout(engine, dest) == created
    assert len(by_id(lake, dest)) == 40


def test_an_existing_plain_table_takes_the_configured_layout_at_its_next_maintenance(
    spark: SparkSession, engine: Engine, dest: Destination, lake: Lake
) -> None:
    dest.configuration = {**dest.configuration, "table_layout": "plain"}
    _fill(dest, lake, 2)
    plain = _layout(engine, dest)
    assert plain.sort_by == () and plain.bloom_filter == () and plain.format_version == 2
    rows = by_id(lake, dest)

    # A table-level override: the table only; the others keep the configured keys.
    dest.configuration = {
        **dest.configuration,
        "table_layout": "plain",
        "table_overrides": f"{dest.schema}.orders: table_layout=sorted, format_version=3",
    }
    steps = _maintain(engine, dest)

    layout = _layout(engine, dest)
    assert layout.sort_by == ("id",) and layout.bloom_filter == ("id",)
    assert layout.format_version == 3
    assert steps[0].startswith("set the layout properties")
    assert by_id(lake, dest) == rows
    (path,) = _data_files(lake, dest)
    keys = _keys_in_file_order(spark, path)
    assert keys == sorted(keys)
    # Once laid out, maintenance changes nothing more.
    assert not _maintain(engine, dest)[0].startswith("set the layout")


def test_bucketed_layout_partitions_by_the_key(
    spark: SparkSession, engine: Engine, dest: Destination, lake: Lake
) -> None:
    dest.configuration = {**dest.configuration, "table_layout": "bucketed", "bucket_count": "4"}
    _fill(dest, lake, 2)
    layout = _layout(engine, dest)
    assert (layout.bucket_by, layout.buckets, layout.sort_by) == ("id", 4, ("id",))
    partitions = qualified(lake.catalog, dest.schema, "orders") + ".partitions"
    assert lake.child().table(partitions).count() == 4
    assert sorted(by_id(lake, dest)) == [*range(38), 99, 100]
    _maintain(engine, dest)
    assert _layout(engine, dest) == layout


def test_format_version_3_writes_deletion_vectors(
    spark: SparkSession, engine: Engine, dest: Destination, lake: Lake
) -> None:
    dest.configuration = {**dest.configuration, "format_version": "3"}
    _fill(dest, lake, 2)
    assert _layout(engine, dest).format_version == 3
    deletes = qualified(lake.catalog, dest.schema, "orders") + ".delete_files"
    formats = {row[0] for row in lake.child().table(deletes).select("file_format").collect()}
    # Deletion vectors live in Puffin files; v2's position deletes in Parquet.
    assert formats == {"PUFFIN"}
    assert sorted(by_id(lake, dest)) == [*range(38), 99, 100]
