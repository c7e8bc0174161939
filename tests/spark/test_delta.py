"""Delta Lake tables written through the gRPC server (``table_format=delta``), in the same
JVM as the Iceberg tables, and read back by Spark and by delta-rs (``deltalake``)."""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from deltalake import DeltaTable, QueryBuilder
from pyspark.sql import SparkSession

from spark_destination.cli.reading import delta_reading_hints
from spark_destination.dialects.quoting import qualified
from spark_destination.engine.engine import Engine
from spark_destination.runtime.execute import faults
from spark_destination.runtime.execute.executor import Executor
from spark_destination.runtime.spark import delta_tables
from spark_destination.runtime.spark.session import SparkSettings
from spark_destination.server import form
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.delta_sync import COLUMNS, DAY1, DAY2, HEADER, ok
from tests.support.destination import (
    DELTA_CATALOG,
    DELTA_CONFIGURATION,
    UNMOD,
    Destination,
    Lake,
    column,
)

pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]


@pytest.fixture
def delta(dest: Destination) -> Destination:
    return replace(dest, configuration={**dest.configuration, **DELTA_CONFIGURATION})


@pytest.fixture
def delta_lake(lake: Lake) -> Lake:
    return replace(lake, catalog=DELTA_CATALOG, flush=None)


def _folder(spark: SparkSession, schema: str, table: str) -> str:
    (row,) = spark.sql(f"DESCRIBE DETAIL {qualified(DELTA_CATALOG, schema, table)}").collect()
    assert row["format"] == "delta"
    location: str = row["location"]
    return location.removeprefix("file:")


def _history(spark: SparkSession, schema: str, table: str) -> list[dict[str, object]]:
    frame = spark.sql(f"DESCRIBE HISTORY {qualified(DELTA_CATALOG, schema, table)}")
    return [r.asDict() for r in frame.orderBy("version").collect()]


def _delta_rs_rows(folder: str) -> Counter[tuple[object, ...]]:
    """(id, name, amount, _fivetran_deleted) of every row delta-rs reads through its plain
    Arrow export, which refuses a table with the ``columnMapping`` or ``deletionVectors``
    reader feature."""
    table = DeltaTable(folder).to_pyarrow_table(
        columns=["id", "name", "amount", "_fivetran_deleted"]
    )
    return Counter(tuple(row.values()) for row in table.to_pylist())


def _reader_features(folder: str) -> set[str]:
    return set(DeltaTable(folder).protocol().reader_features or ())


def test_a_sync_writes_a_delta_table_that_spark_and_delta_rs_read_alike(
    delta: Destination, delta_lake: Lake, spark: SparkSession, spark_settings: SparkSettings
) -> None:
    ok(delta.create("orders", COLUMNS))
    described = delta.describe("orders")
    assert [(c.name, c.primary_key) for c in described.table.columns] == [
        (c.name, c.primary_key) for c in COLUMNS
    ]
    assert described.table.columns[2].params.decimal.scale == 2
    folder = _folder(spark, delta.schema, "orders")
    # One folder per table under the warehouse.
    assert Path(folder).is_relative_to(Path(spark_settings.warehouse))

    rows = [["1", "a", "1.50", DAY1], ["2", "b", "2.50", DAY1], ["3", "c", "3.50", DAY1]]
    ok(delta.write("orders", COLUMNS, replace=[delta.write_file(HEADER, rows)]))
    update = delta.write_file(HEADER, [["1", UNMOD, "9.50", DAY2]])
    deleted = delta.write_file(["id", "_fivetran_synced"], [["2", DAY2]])
    ok(delta.write("orders", COLUMNS, update=[update], delete=[deleted]))

    expected = Counter({(1, "a", Decimal("9.50"), None): 1, (3, "c", Decimal("3.50"), None): 1})
    assert (
        delta_lake.counted(delta.schema, "orders", "id", "name", "amount", "_fivetran_deleted")
        == expected
    )
    assert _delta_rs_rows(folder) == expected
    # The DuckDB statements the demo prints read the same rows.
    hints = delta_reading_hints(spark_settings.warehouse, delta.schema, "orders")
    duck = duckdb.connect()
    statements = [line.strip() for line in hints.splitlines()[-3:]]
    for statement in statements[:2]:
        for part in statement.split(";"):
            if part.strip():
                duck.execute(part)
    scanned = duck.execute(
        statements[2].rstrip(";").replace("SELECT *", "SELECT id, name, amount, _fivetran_deleted")
    ).fetchall()
    assert Counter(scanned) == expected

    history = _history(spark, delta.schema, "orders")
    assert [h["operation"] for h in history] == ["CREATE TABLE", "MERGE", "MERGE"]
    # Each commit says which request made it and what it did (counts, never a value).
    second = json.loads(str(history[2]["userMetadata"]))
    assert second["spark-destination.request"] == "WriteBatch"
    assert len(second["spark-destination.request-id"]) == 32
    assert "9.50" not in str(history[2]["userMetadata"])
    assert history[2]["operationMetrics"]["numTargetRowsDeleted"] == "1"


def test_truncate_and_add_column_on_delta(
    delta: Destination, delta_lake: Lake, spark: SparkSession
) -> None:
    ok(delta.create("t", COLUMNS))
    rows = [["1", "a", "1.00", DAY1], ["2", "b", "2.00", DAY2]]
    ok(delta.write("t", COLUMNS, replace=[delta.write_file(HEADER, rows)]))
    cut = datetime(2024, 1, 1, 12, tzinfo=UTC)
    ok(delta.truncate("t", cut, soft=True))
    assert delta_lake.counted(delta.schema, "t", "id", "_fivetran_deleted") == Counter(
        {(1, True): 1, (2, None): 1}
    )
    ok(delta.truncate("t", datetime(2024, 1, 3, tzinfo=UTC)))
    assert delta_lake.counted(delta.schema, "t", "id") == Counter()

    wider = [*COLUMNS, column("extra", "LONG")]
    ok(delta.alter("t", wider))
    assert [c.name for c in delta.describe("t").table.columns] == [c.name for c in wider]
    ok(
        delta.write(
            "t",
            wider,
            replace=[delta.write_file([*HEADER, "extra"], [["5", "e", "5.00", DAY2, "7"]])],
        )
    )
    assert delta_lake.counted(delta.schema, "t", "id", "extra") == Counter({(5, 7): 1})
    assert _delta_rs_rows(_folder(spark, delta.schema, "t")) == Counter(
        {(5, "e", Decimal("5.00"), None): 1}
    )


def test_a_failed_request_puts_the_delta_table_back_at_its_version(
    delta: Destination, delta_lake: Lake, spark: SparkSession
) -> None:
    ok(delta.create("r", COLUMNS))
    ok(delta.write("r", COLUMNS, replace=[delta.write_file(HEADER, [["1", "a", "1.00", DAY1]])]))
    wider = [*COLUMNS, column("extra", "LONG")]
    request = pb.AlterTableRequest(
        configuration=delta.configuration,
        schema_name=delta.schema,
        table=common.Table(name="r", columns=wider),
    )
    before = _history(spark, delta.schema, "r")
    # The AlterTable's plan: its last step boundary comes after the column was added.
    with faults.recording() as seen:
        ok(delta.stub.AlterTable(replace_request(request, "r_probe", delta)))
    boundaries = list(dict.fromkeys(b.name for b in seen))
    assert boundaries, "the AlterTable has one statement: nothing to fail between"
    with faults.inject(boundaries[-1]) as hits:
        response = delta.stub.AlterTable(request)
    assert hits and response.WhichOneof("response") == "task"
    after = _history(spark, delta.schema, "r")
    # A commit added the column, then RESTORE put the version before back.
    assert after[-1]["operation"] == "RESTORE"
    assert len(after) > len(before) + 1
    assert [c.name for c in delta.describe("r").table.columns] == [c.name for c in COLUMNS]
    assert delta_lake.counted(delta.schema, "r", "id", "name") == Counter({(1, "a"): 1})
    ok(delta.stub.AlterTable(request))
    assert [c.name for c in delta.describe("r").table.columns] == [c.name for c in wider]


def replace_request(
    request: pb.AlterTableRequest, table: str, delta: Destination
) -> pb.AlterTableRequest:
    """The same AlterTable on a twin table created for it (to enumerate its boundaries)."""
    ok(delta.create(table, COLUMNS))
    twin = pb.AlterTableRequest()
    twin.CopyFrom(request)
    twin.table.name = table
    return twin


def test_iceberg_and_delta_tables_share_one_jvm(
    dest: Destination,
    delta: Destination,
    lake: Lake,
    delta_lake: Lake,
    spark: SparkSession,
    spark_settings: SparkSettings,
) -> None:
    # Iceberg by name: the run's own table format may be Delta (SPARK_DESTINATION_CATALOG).
    iceberg = replace(
        dest,
        configuration={**dest.configuration, "write_mode": "merge", "table_format": "iceberg"},
    )
    if lake.on_delta:
        lake = replace(lake, catalog=spark_settings.catalog)
    ok(iceberg.create("same", COLUMNS))
    ok(delta.create("same", COLUMNS))
    ok(
        iceberg.write(
            "same", COLUMNS, replace=[iceberg.write_file(HEADER, [["1", "i", "1.00", DAY1]])]
        )
    )
    ok(delta.write("same", COLUMNS, replace=[delta.write_file(HEADER, [["1", "d", "1.00", DAY1]])]))
    assert lake.counted(dest.schema, "same", "name") == Counter({("i",): 1})
    assert delta_lake.counted(delta.schema, "same", "name") == Counter({("d",): 1})
    assert _folder(spark, delta.schema, "same") != ""


def test_delta_refuses_settings_it_cannot_work_with(delta: Destination) -> None:
    for extra, named in (
        ({"catalog_type": "rest", "catalog_uri": "http://127.0.0.1:1"}, "catalog_type rest"),
    ):
        configured = replace(delta, configuration={**delta.configuration, **extra})
        response = configured.create("refused", COLUMNS)
        assert response.WhichOneof("response") == "task"
        assert named in response.task.message


def test_maintain_optimizes_and_vacuums_a_delta_table(
    engine: Engine, delta: Destination, delta_lake: Lake, spark: SparkSession
) -> None:
    ok(delta.create("m", COLUMNS))
    for n in range(3):
        rows = [[str(n * 10 + i), f"n{i}", "1.00", DAY1] for i in range(10)]
        ok(delta.write("m", COLUMNS, replace=[delta.write_file(HEADER, rows)]))
    deleted = delta.write_file(["id", "_fivetran_synced"], [["0", DAY2], ["15", DAY2]])
    ok(delta.write("m", COLUMNS, delete=[deleted]))
    expected = delta_lake.counted(delta.schema, "m", "id", "name")
    assert len(expected) == 28

    report = engine.maintain(delta.configuration, delta.schema, "m")

    assert [step.split(" ")[0] for step, _, _ in report.steps] == ["compact", "delete"]
    assert report.after is not None and report.after.data_files < report.before.data_files
    operations = [h["operation"] for h in _history(spark, delta.schema, "m")]
    assert operations[-3:] == ["OPTIMIZE", "VACUUM START", "VACUUM END"]
    assert delta_lake.counted(delta.schema, "m", "id", "name") == expected
    assert (
        Counter(r[:2] for r in _delta_rs_rows(_folder(spark, delta.schema, "m")).elements())
        == expected
    )


def test_a_merge_that_loses_a_race_to_another_delta_writer_runs_again_on_the_new_version(
    delta: Destination,
    delta_lake: Lake,
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    ok(delta.create("race", COLUMNS))
    ok(delta.write("race", COLUMNS, replace=[delta.write_file(HEADER, [["1", "a", "1.00", DAY1]])]))
    # Large enough that the MERGE's jobs run for a while: the other writer commits meanwhile.
    rows = [[str(i), "b", "2.00", DAY2] for i in range(2, 60_002)]
    batch = delta.write_file(HEADER, rows)
    table = qualified(DELTA_CATALOG, delta.schema, "race")
    committed: list[float] = []
    merge_windows: list[tuple[float, float]] = []
    original = Executor.sql

    def outside_writer() -> None:
        tracker = spark.sparkContext.statusTracker()
        deadline = time.monotonic() + 60
        while not tracker.getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.01)
        other = spark.newSession()
        other.sql(
            f"INSERT INTO {table} (id, name, amount, _fivetran_synced) "
            "VALUES (999999, 'outside', 9.00, TIMESTAMP'2024-01-03 00:00:00')"
        ).collect()
        committed.append(time.monotonic())

    def sql(self: Executor, text: str, *, what: str, **kwargs: Any) -> list[object]:
        if not what.startswith("merge") or merge_windows:
            return original(self, text, what=what, **kwargs)
        writer = threading.Thread(target=outside_writer)
        started = time.monotonic()
        writer.start()
        try:
            return original(self, text, what=what, **kwargs)
        finally:
            merge_windows.append((started, time.monotonic()))
            writer.join()

    monkeypatch.setattr(Executor, "sql", sql)
    with caplog.at_level(logging.WARNING, logger="spark_destination"):
        ok(delta.write("race", COLUMNS, replace=[batch]))

    # The other writer's commit landed inside the MERGE's window, and the MERGE lost the race
    # to it: Delta's conflict, retried.
    (start, end), (landed,) = merge_windows[0], committed
    assert start < landed < end
    retries = [r.getMessage() for r in caplog.records if "retry 1" in r.getMessage()]
    assert any("DeltaConcurrentModificationException" in m for m in retries), retries
    history = [h["operation"] for h in _history(spark, delta.schema, "race")]
    assert history[-2:] == ["WRITE", "MERGE"]
    # Every row once: the seed, the batch, and the other writer's row.
    expected = Counter({1: 1, 999999: 1, **dict.fromkeys(range(2, 60_002), 1)})
    assert delta_lake.counted(delta.schema, "race", "id") == Counter(
        {(k,): n for k, n in expected.items()}
    )


def test_a_delta_table_an_earlier_process_left_in_the_warehouse_is_found_again(
    delta: Destination, delta_lake: Lake, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(delta.create("kept", COLUMNS))
    ok(delta.write("kept", COLUMNS, replace=[delta.write_file(HEADER, [["1", "a", "1.00", DAY1]])]))
    # The folder as a stopped server left it, under a schema this JVM's catalog never saw (an
    # in-memory session catalog forgets its tables when the JVM stops).
    folder = Path(_folder(spark, delta.schema, "kept"))
    later = replace(delta, schema=delta.schema + "_later")
    shutil.copytree(folder, folder.parent.parent / f"{later.schema}.db" / "kept")
    assert later.describe("kept").WhichOneof("response") == "not_found"
    monkeypatch.setattr(delta_tables, "_attached", set())  # as in a new JVM

    described = later.describe("kept")
    assert [(c.name, c.type) for c in described.table.columns] == [
        (c.name, c.type) for c in COLUMNS
    ]
    ok(later.write("kept", COLUMNS, replace=[later.write_file(HEADER, [["2", "b", "2.00", DAY2]])]))
    assert delta_lake.counted(later.schema, "kept", "id", "name") == Counter(
        {(1, "a"): 1, (2, "b"): 1}
    )


def test_the_setup_tests_pass_for_delta_tables(delta: Destination) -> None:
    for name in (form.TEST_SETTINGS, form.TEST_WAREHOUSE, form.TEST_CATALOG):
        request = common.TestRequest(name=name, configuration=delta.configuration)
        response = delta.stub.Test(request)
        assert response.WhichOneof("response") == "success", (name, response)


def test_a_type_change_rewrites_the_delta_table_in_one_commit(
    delta: Destination, delta_lake: Lake, spark: SparkSession
) -> None:
    ok(delta.create("w", COLUMNS))
    rows = [["1", "a", "1.50", DAY1], ["2", "b", "2.50", DAY1]]
    ok(delta.write("w", COLUMNS, replace=[delta.write_file(HEADER, rows)]))
    # INT -> LONG: Databricks widens in place; open-source Delta 3.3 refused it, so a rewrite.
    changed = [column("id", "LONG", pk=True), *COLUMNS[1:]]
    ok(delta.alter("w", changed))
    described = delta.describe("w").table.columns
    assert [(c.name, common.DataType.Name(c.type)) for c in described][:2] == [
        ("id", "LONG"),
        ("name", "STRING"),
    ]
    operations = [h["operation"] for h in _history(spark, delta.schema, "w")]
    assert operations[2] == "CREATE OR REPLACE TABLE AS SELECT"
    assert delta_lake.counted(delta.schema, "w", "id", "name", "amount") == Counter(
        {(1, "a", Decimal("1.50")): 1, (2, "b", Decimal("2.50")): 1}
    )
    fields = {
        f.name: f.dataType.simpleString()
        for f in spark.table(qualified(DELTA_CATALOG, delta.schema, "w")).schema.fields
    }
    assert fields["id"] == "bigint"
    assert _delta_rs_rows(_folder(spark, delta.schema, "w")) == Counter(
        {(1, "a", Decimal("1.50"), None): 1, (2, "b", Decimal("2.50"), None): 1}
    )


def test_renames_and_drops_leave_the_delta_table_readable_by_every_reader(
    delta: Destination, delta_lake: Lake, spark: SparkSession
) -> None:
    """No deletion vectors and no column mapping: a rename and a drop rewrite the table."""
    ok(delta.create("r", [*COLUMNS, column("gone", "STRING")]))
    rows = [["1", "a", "1.50", DAY1, "x"], ["2", "b", "2.50", DAY1, "y"]]
    ok(
        delta.write(
            "r",
            [*COLUMNS, column("gone", "STRING")],
            replace=[delta.write_file([*HEADER, "gone"], rows)],
        )
    )
    ok(
        delta.write(
            "r", COLUMNS, delete=[delta.write_file(["id", "_fivetran_synced"], [["2", DAY2]])]
        )
    )
    rename = pb.RenameOperation(rename_column=pb.RenameColumn(from_column="gone", to_column="kept"))
    request = pb.MigrateRequest(
        configuration=delta.configuration,
        details=pb.MigrationDetails(schema=delta.schema, table="r", rename=rename),
    )
    ok(delta.stub.Migrate(request))
    ok(delta.alter("r", COLUMNS, drop_columns=True))

    assert [c.name for c in delta.describe("r").table.columns] == [c.name for c in COLUMNS]
    operations = [h["operation"] for h in _history(spark, delta.schema, "r")]
    assert operations.count("CREATE OR REPLACE TABLE AS SELECT") == 2, operations
    folder = _folder(spark, delta.schema, "r")
    assert _reader_features(folder) == {"timestampNtz"}
    expected = Counter({(1, "a", Decimal("1.50"), None): 1})
    assert (
        delta_lake.counted(delta.schema, "r", "id", "name", "amount", "_fivetran_deleted")
        == expected
    )
    assert _delta_rs_rows(folder) == expected


def test_a_column_name_delta_refuses_as_it_is_turns_column_mapping_on(
    delta: Destination, delta_lake: Lake, spark: SparkSession
) -> None:
    plain = [column("id", "INT", pk=True), column("v", "STRING")]
    ok(delta.create("m", plain))
    folder = _folder(spark, delta.schema, "m")
    assert _reader_features(folder) == {"timestampNtz"}
    wider = [*plain, column("full name", "STRING")]
    ok(delta.alter("m", wider))
    rows = [["1", "a", "Ada Lovelace"], ["2", "b", "Grace Hopper"]]
    ok(delta.write("m", wider, replace=[delta.write_file(["id", "v", "full name"], rows)]))
    assert "columnMapping" in _reader_features(folder)
    expected = Counter({(1, "a", "Ada Lovelace"): 1, (2, "b", "Grace Hopper"): 1})
    assert delta_lake.counted(delta.schema, "m", "id", "v", "full name") == expected
    # delta-rs reads the mapped names through its query engine.
    query = 'SELECT id, v, "full name" FROM t'
    read = QueryBuilder().register("t", DeltaTable(folder)).execute(query).read_all()
    assert Counter(tuple(r.values()) for r in pa.table(read).to_pylist()) == expected
