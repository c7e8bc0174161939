"""Deferred write mode end to end: WriteBatch appends to the intermediate table and leaves the
table alone; flushes run before AlterTable, Truncate, Migrate and history batches, on the timer
and the threshold, on demand, at a graceful stop and after another process left rows pending;
a flush racing a WriteBatch; a failed or interrupted flush. Every table read is compared with
what merge mode gives for the same requests (a second schema written in merge mode)."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any
from unittest import mock

import pytest

from spark_destination.core.config import parse_config
from spark_destination.dialects.quoting import qualified
from spark_destination.dialects.render import render_plan
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.engine.table_format import catalog_of, configured_dialect
from spark_destination.planner.deferred import plan_flush
from spark_destination.planner.ir import HIGH_MARKER, FlushPendingOp, TableRef
from spark_destination.runtime.execute import faults
from spark_destination.runtime.execute.executor import Batch, Executor
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.spark.conftest import CATALOG
from tests.spark.test_history_grpc import history_columns, write_history
from tests.support.destination import (
    DELTA,
    METASTORES,
    NULL,
    UNMOD,
    Destination,
    Lake,
    column,
    mode_configuration,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_destination.runtime.spark.session import SparkSettings

# One write mode is enough: it sets both modes itself.
pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]
# Also on Delta in every run: a flush's restore and its recovery read the table's own
# history, Delta's log there (SPARK_DESTINATION_CATALOG=delta runs the whole module on Delta).
ALSO_ON_DELTA = pytest.mark.parametrize(
    "catalog_kind", tuple(dict.fromkeys((CATALOG, DELTA))), indirect=True
)
# On Delta in CI: a flush whose MERGE committed is finished, not run again; a failed flush's
# restore of both tables on Delta runs with SPARK_DESTINATION_DELTA_ALL=1.
DELTA_IN_CI = {"test_an_interrupted_flush_whose_merge_committed_is_finished_not_repeated"}

SYNC1, SYNC2, SYNC3 = (
    "2024-03-01T10:00:00.000Z",
    "2024-03-02T10:00:00.000Z",
    "2024-03-03T10:00:00.000Z",
)
COLUMNS = [
    column("id", "INT", pk=True),
    column("v", "STRING"),
    column("n", "INT"),
    column("_fivetran_synced", "UTC_DATETIME"),
    column("_fivetran_deleted", "BOOLEAN"),
]
HEADER = [c.name for c in COLUMNS]
# The request of a sync that no longer sends ``n``: merge mode keeps it on a match and inserts
# NULL for a new key.
WITHOUT_N = [c for c in COLUMNS if c.name != "n"]
HEADER_WITHOUT_N = [c.name for c in WITHOUT_N]
DEFERRED = mode_configuration("deferred")
MERGE = mode_configuration("merge")


def ok(response: Any) -> None:
    assert response.WhichOneof("response") == "success", response


@contextlib.contextmanager
def both(dest: Destination) -> Iterator[tuple[Destination, Destination]]:
    """The same driver (its catalog) in deferred mode and, on a schema of its own, in merge
    mode."""
    deferred = Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration={**dest.configuration, **DEFERRED},
        schema=dest.schema,
    )
    merged = Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration={**dest.configuration, **MERGE},
        schema=dest.schema + "_merge",
    )
    yield deferred, merged


def rows(lake: Lake, schema: str, table: str = "t") -> list[tuple[Any, ...]]:
    """The table exactly as stored (no flush), ordered by its first key column."""
    frame = lake.child().table(qualified(lake.catalog, schema, table))
    return sorted((tuple(r) for r in frame.collect()), key=lambda r: (r[0], repr(r)))


def tables(lake: Lake, schema: str) -> set[str]:
    found = lake.child().sql(f"SHOW TABLES IN {qualified(lake.catalog, schema)}")
    return {r["tableName"] for r in found.collect()}


def write_both(
    pair: tuple[Destination, Destination],
    rows_by_kind: dict[str, list[list[str]]],
    *,
    header: list[str] = HEADER,
    columns: list[common.Column] = COLUMNS,
    table: str = "t",
) -> None:
    """One WriteBatch, in both modes, from the same files."""
    deferred, merged = pair
    files = {kind: [deferred.write_file(header, r)] for kind, r in rows_by_kind.items()}
    for driver in pair:
        ok(driver.write(table, columns, **files))  # type: ignore[arg-type]


def create_both(pair: tuple[Destination, Destination], table: str = "t") -> None:
    for driver in pair:
        ok(driver.create(table, COLUMNS))


# A sequence that needs the fold's order across batches: key 7 updated while absent (ignored),
# then upserted by a request without ``n`` (n NULL); key 1 deleted, then upserted again.
SEQUENCE: list[tuple[dict[str, list[list[str]]], bool]] = [
    ({"replace": [["1", "a", "1", SYNC1, "false"], ["2", "b", "2", SYNC1, "false"]]}, False),
    ({"update": [["7", UNMOD, "5", SYNC2, "false"], ["2", "b2", UNMOD, SYNC2, "false"]]}, False),
    ({"replace": [["7", "seven", SYNC2, "false"]]}, True),  # without n
    ({"delete": [["1", NULL, NULL, SYNC2, NULL]]}, False),
    (
        {
            "replace": [["1", "again", NULL, SYNC3, "false"]],
            "update": [["2", UNMOD, "9", SYNC3, "true"]],  # a soft delete
        },
        False,
    ),
]


def _shape(without_n: bool) -> tuple[list[str], list[common.Column]]:
    return (HEADER_WITHOUT_N, WITHOUT_N) if without_n else (HEADER, COLUMNS)


def write_sequence(pair: tuple[Destination, Destination]) -> None:
    for files, without_n in SEQUENCE:
        header, columns = _shape(without_n)
        write_both(pair, files, header=header, columns=columns)


def write_sequence_to(driver: Destination) -> None:
    for files, without_n in SEQUENCE:
        header, columns = _shape(without_n)
        written = {kind: [driver.write_file(header, r)] for kind, r in files.items()}
        ok(driver.write("t", columns, **written))  # type: ignore[arg-type]


def test_write_batch_appends_and_the_intermediate_table_stays_out_of_sight(
    dest: Destination, lake: Lake, engine: Engine
) -> None:
    with both(dest) as pair:
        deferred, merged = pair
        create_both(pair)
        write_sequence(pair)
        assert rows(lake, deferred.schema) == []  # nothing merged yet: readers see the old table
        assert tables(lake, deferred.schema) == {"t", "sd__pending__t"}
        # DescribeTable shows the table's own columns; the intermediate table cannot be named.
        described = deferred.describe("t")
        assert [c.name for c in described.table.columns] == HEADER
        refused = deferred.describe("sd__pending__t")
        assert refused.WhichOneof("response") == "task" and "reserves" in refused.task.message
        written = deferred.write("sd__pending__t", COLUMNS)
        assert written.WhichOneof("response") == "task"
        outcome = engine.flush(deferred.configuration, deferred.schema, "t")
        assert outcome is not None and (outcome.batches, outcome.rows) == (5, 8)
        assert rows(lake, deferred.schema) == rows(lake, merged.schema)
        assert rows(lake, deferred.schema, "sd__pending__t") == []
        again = engine.flush(deferred.configuration, deferred.schema, "t")
        assert again is not None and again.rows == 0


def test_alter_table_flushes_first_then_a_new_intermediate_table_follows_the_columns(
    dest: Destination, lake: Lake
) -> None:
    wider = [*COLUMNS, column("extra", "STRING")]
    with both(dest) as pair:
        create_both(pair)
        write_sequence(pair)
        for driver in pair:
            ok(driver.alter("t", wider))
        assert rows(lake, pair[0].schema) == rows(lake, pair[1].schema)
        assert rows(lake, pair[0].schema, "sd__pending__t") == []
        header = [c.name for c in wider]
        write_both(
            pair, {"replace": [["3", "c", "3", SYNC3, "false", "x"]]}, header=header, columns=wider
        )
        lake.flush()  # type: ignore[misc]
        assert rows(lake, pair[0].schema) == rows(lake, pair[1].schema)
        stored = lake.child().table(qualified(lake.catalog, pair[0].schema, "sd__pending__t"))
        assert "extra" in stored.columns and "__sd_unmodified_extra" in stored.columns


def test_truncate_flushes_first(dest: Destination, lake: Lake) -> None:
    with both(dest) as pair:
        create_both(pair)
        write_sequence(pair)
        cut = datetime.fromisoformat(SYNC3.replace("Z", "+00:00"))
        for driver in pair:
            ok(driver.truncate("t", cut, soft=True))
        # Rows synced before SYNC3 (key 7: pending until the truncate) are soft-deleted in
        # both; key 2 was soft-deleted by its update.
        deferred = rows(lake, pair[0].schema)
        assert deferred == rows(lake, pair[1].schema)
        assert {r[0]: r[4] for r in deferred} == {1: False, 2: True, 7: True}


def migrate(driver: Destination, table: str, **operation: Any) -> pb.MigrateResponse:
    return driver.stub.Migrate(
        pb.MigrateRequest(
            configuration=driver.configuration,
            details=pb.MigrationDetails(schema=driver.schema, table=table, **operation),
        )
    )


def test_migrate_rename_copy_and_drop_flush_first_and_take_the_intermediate_table_along(
    dest: Destination, lake: Lake
) -> None:
    with both(dest) as pair:
        create_both(pair)
        write_sequence(pair)
        copy = pb.CopyOperation(copy_table=pb.CopyTable(from_table="t", to_table="copied"))
        rename = pb.RenameOperation(rename_table=pb.RenameTable(from_table="t", to_table="moved"))
        for driver in pair:
            ok(migrate(driver, "t", copy=copy))
            ok(migrate(driver, "t", rename=rename))
        deferred, merged = (p.schema for p in pair)
        for table in ("copied", "moved"):
            assert rows(lake, deferred, table) == rows(lake, merged, table) != []
        assert "sd__pending__t" not in tables(lake, deferred) and "t" not in tables(lake, deferred)
        write_both(pair, {"replace": [["4", "d", "4", SYNC3, "false"]]}, table="moved")
        assert "sd__pending__moved" in tables(lake, deferred)
        for driver in pair:
            ok(migrate(driver, "moved", drop=pb.DropOperation(drop_table=True)))
        assert tables(lake, deferred) == {"copied"}


def test_a_history_batch_flushes_first(dest: Destination, lake: Lake) -> None:
    columns = history_columns(column("v", "STRING"))
    header = [c.name for c in columns]
    tmax = "9999-12-31T23:59:59.999Z"
    with both(dest) as pair:
        for driver in pair:
            ok(driver.create("h", columns))
        first = [["1", "a", SYNC1, tmax, "true", SYNC1]]
        write_both(pair, {"replace": first}, header=header, columns=columns, table="h")
        earliest = pair[0].write_file(["id", "_fivetran_start"], [["1", SYNC2]])
        second = pair[0].write_file(header, [["1", "b", SYNC2, tmax, "true", SYNC2]])
        for driver in pair:
            ok(write_history(driver, "h", columns, earliest=[earliest], replace=[second]))
        # Flushed before the history batch: the first version is closed, the second active.
        stored = rows(lake, pair[0].schema, "h")
        assert stored == rows(lake, pair[1].schema, "h")
        assert [r[4] for r in stored] == [False, True]


def test_a_flush_racing_write_batches_on_the_same_table(
    dest: Destination, lake: Lake, engine: Engine
) -> None:
    with both(dest) as pair:
        create_both(pair)
        errors: list[BaseException] = []

        def flush_often(stop: threading.Event) -> None:
            while not stop.is_set():
                try:
                    engine.flush(pair[0].configuration, pair[0].schema, "t")
                except BaseException as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)
                    return

        stop = threading.Event()
        flusher = threading.Thread(target=flush_often, args=(stop,))
        flusher.start()
        try:
            for i in range(6):
                upsert = [str(i % 3), f"v{i}", str(i), SYNC1, "false"]
                update = [str((i + 1) % 3), UNMOD, str(-i), SYNC2, "false"]
                write_both(pair, {"replace": [upsert], "update": [update]})
        finally:
            stop.set()
            flusher.join(timeout=600)
        assert errors == []
        engine.flush(pair[0].configuration, pair[0].schema, "t")
        assert rows(lake, pair[0].schema) == rows(lake, pair[1].schema) != []


def _fresh_engine(spark: SparkSession, settings: SparkSettings, **defaults: str) -> Engine:
    """Another engine on the same session and warehouse: a process that knows nothing yet;
    ``defaults`` (a driver's configuration: its catalog and write mode) go with each request."""
    configuration = {"warehouse": settings.warehouse, "catalog": settings.catalog}
    provider = SessionProvider.shared(spark, parse_config(configuration))
    return Engine(provider, defaults={**configuration, **defaults})


def _requests(driver: Destination) -> list[Any]:
    """The SEQUENCE's WriteBatch requests as plain dataclasses (for engines without gRPC)."""
    from spark_destination.server.mapping import change_from_proto

    made = []
    for files, without_n in SEQUENCE:
        header, columns = _shape(without_n)
        paths = {kind: [driver.write_file(header, r)] for kind, r in files.items()}
        every = [f for fs in paths.values() for f in fs]
        params = driver.params()
        proto = pb.WriteBatchRequest(
            schema_name=driver.schema,
            table=common.Table(name="t", columns=columns),
            keys=dict(every),
            replace_files=[p for p, _ in paths.get("replace", [])],
            update_files=[p for p, _ in paths.get("update", [])],
            delete_files=[p for p, _ in paths.get("delete", [])],
            file_params=pb.FileParams(
                compression=params.compression.value,
                encryption=params.encryption.value,
                null_string=NULL,
                unmodified_string=UNMOD,
            ),
        )
        made.append(change_from_proto(proto))
    return made


def test_rows_left_pending_by_another_process_are_flushed_by_the_first_request(
    dest: Destination, lake: Lake, spark: SparkSession, spark_settings: SparkSettings
) -> None:
    with both(dest) as pair:
        create_both(pair)
        requests = _requests(pair[0])
        first = _fresh_engine(spark, spark_settings, **pair[0].configuration)
        for request in requests[:3]:
            first.apply({}, request)
        # That process is gone (never stopped). A new one, in merge mode, knows of nothing
        # pending, finds the rows at its first touch of the table and merges them first.
        second = _fresh_engine(spark, spark_settings, **pair[1].configuration)
        assert second.pending() == []
        for request in requests[3:]:
            second.apply({}, request)
        write_sequence_to(pair[1])
        assert rows(lake, pair[0].schema, "sd__pending__t") == []
        assert rows(lake, pair[0].schema) == rows(lake, pair[1].schema)


@ALSO_ON_DELTA
def test_an_interrupted_flush_whose_merge_committed_is_finished_not_repeated(
    dest: Destination, lake: Lake, spark: SparkSession, spark_settings: SparkSettings
) -> None:
    with both(dest) as pair:
        create_both(pair)
        write_sequence(pair)
        process = _fresh_engine(spark, spark_settings, **pair[0].configuration)
        # As a kill between the MERGE's commit and the clean-up leaves it: nothing restored.
        with (
            mock.patch(
                "spark_destination.runtime.execute.deferred.restored_on_failure",
                lambda *_: contextlib.nullcontext(),
            ),
            faults.inject("before 1:ClearPendingOp", table="t") as hits,
            pytest.raises(faults.InjectedFault),
        ):
            process.flush({}, pair[0].schema, "t")
        assert hits
        merged_once = rows(lake, pair[0].schema)
        assert merged_once == rows(lake, pair[1].schema)
        assert len(rows(lake, pair[0].schema, "sd__pending__t")) == 8
        # The next process finishes the clean-up and merges nothing again.
        outcome = _fresh_engine(spark, spark_settings, **pair[0].configuration).flush(
            {}, pair[0].schema, "t"
        )
        assert outcome is not None and (outcome.completed_rows, outcome.rows) == (8, 0)
        assert rows(lake, pair[0].schema, "sd__pending__t") == []
        assert rows(lake, pair[0].schema) == merged_once


def test_the_fold_alone_would_not_survive_a_second_run_for_a_key_updated_while_absent(
    dest: Destination, lake: Lake, engine: Engine
) -> None:
    """Why flushes record the table's snapshot: the MERGE run twice on the same pending rows
    turns key 7's n (NULL: updated while absent, then upserted without n) into the update's 5."""
    with both(dest) as pair:
        create_both(pair)
        write_sequence(pair)
        config = engine.config(pair[0].configuration)
        ref = TableRef(catalog=catalog_of(config), schema=pair[0].schema, name="t")
        pending = TableRef(catalog=ref.catalog, schema=pair[0].schema, name="sd__pending__t")
        dialect = configured_dialect(config)
        executor = Executor(engine.sessions.for_request(config))
        table = executor.describe(ref)
        assert table is not None
        (merge,) = (
            s
            for s in render_plan(plan_flush(ref, table, pending, target=dialect), dialect)
            if isinstance(s.op, FlushPendingOp)
        )
        for _ in range(2):
            executor.run((merge,), Batch(parameters={HIGH_MARKER: 10**9}))
            if _ == 0:
                assert rows(lake, pair[0].schema) == rows(lake, pair[1].schema)
        by_key = {r[0]: r for r in rows(lake, pair[0].schema)}
        assert by_key[7][2] == 5  # merge mode (and one flush) leave it NULL


@ALSO_ON_DELTA
def test_a_failed_flush_leaves_both_tables_as_they_were(
    dest: Destination, lake: Lake, engine: Engine
) -> None:
    with both(dest) as pair:
        create_both(pair)
        write_sequence(pair)
        with (
            faults.inject("before 1:ClearPendingOp", table="t"),
            pytest.raises(faults.InjectedFault),
        ):
            engine.flush(pair[0].configuration, pair[0].schema, "t")
        assert rows(lake, pair[0].schema) == []
        assert len(rows(lake, pair[0].schema, "sd__pending__t")) == 8
        outcome = engine.flush(pair[0].configuration, pair[0].schema, "t")
        assert outcome is not None and (outcome.completed_rows, outcome.rows) == (0, 8)
        assert rows(lake, pair[0].schema) == rows(lake, pair[1].schema)


def wait_until(condition: Any, seconds: float = 300.0) -> None:
    """Poll (the scheduler's flushes run on their own threads); no time is asserted."""
    pause = threading.Event()
    for _ in range(int(seconds * 2)):
        if condition():
            return
        pause.wait(0.5)


def test_the_timer_flushes_on_its_own(dest: Destination, lake: Lake, engine: Engine) -> None:
    timed = {**dest.configuration, **DEFERRED, "merge_interval_ms": "200"}
    driver = Destination(
        stub=dest.stub, workdir=dest.workdir, configuration=timed, schema=dest.schema
    )
    ok(driver.create("t", COLUMNS))
    row = [["1", "a", "1", SYNC1, "false"]]
    ok(driver.write("t", COLUMNS, replace=[driver.write_file(HEADER, row)]))
    # No flush is asked for: the table gets the row once the timer fires.
    wait_until(lambda: rows(lake, driver.schema))
    engine.wait_for_flushes()
    assert [r[:3] for r in rows(lake, driver.schema)] == [(1, "a", 1)]


def test_the_threshold_flushes_after_the_request_that_reaches_it(
    dest: Destination, lake: Lake, engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    counted = {**dest.configuration, **DEFERRED, "merge_records_threshold": "3"}
    driver = Destination(
        stub=dest.stub, workdir=dest.workdir, configuration=counted, schema=dest.schema
    )
    ok(driver.create("t", COLUMNS))
    two = [["1", "a", "1", SYNC1, "false"], ["2", "b", "2", SYNC1, "false"]]
    ok(driver.write("t", COLUMNS, replace=[driver.write_file(HEADER, two)]))
    engine.wait_for_flushes()
    assert rows(lake, driver.schema) == []  # 2 rows pending: below the threshold
    with caplog.at_level(logging.INFO, logger="spark_destination.engine.deferred"):
        third = [["3", "c", "3", SYNC1, "false"]]
        ok(driver.write("t", COLUMNS, replace=[driver.write_file(HEADER, third)]))
        wait_until(lambda: len(rows(lake, driver.schema)) == 3)
        engine.wait_for_flushes()
    assert [r[0] for r in rows(lake, driver.schema)] == [1, 2, 3]
    assert any("merge flush (scheduled) folded 2 batch(es), 3 row(s)" in m for m in caplog.messages)


def test_a_graceful_stop_flushes_and_logs_whats_pending(
    dest: Destination,
    lake: Lake,
    spark: SparkSession,
    spark_settings: SparkSettings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with both(dest) as pair:
        create_both(pair)
        process = _fresh_engine(spark, spark_settings, **pair[0].configuration)
        for request in _requests(pair[0])[:2]:
            process.apply({}, request)
        with caplog.at_level(logging.INFO, logger="spark_destination.engine.deferred"):
            process.close()
        schema = pair[0].schema
        assert (
            f"stopping: {schema}.t has 4 row(s) in 2 batch(es) pending; flushing" in caplog.messages
        )
        assert "stopped with no rows pending" in caplog.messages
        assert {r[0] for r in rows(lake, schema)} == {1, 2}
        # Counts and names only: no value of a row reaches the log.
        assert not any("b2" in m or "seven" in m for m in caplog.messages)


def test_the_flush_command_is_refused_while_a_server_holds_the_warehouse(
    engine: Engine, spark_settings: SparkSettings
) -> None:
    engine.claim_warehouse({})  # this test process is the server of the warehouse
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "spark_destination.cli",
            "flush",
            "--warehouse",
            spark_settings.warehouse,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert "in use by another spark-destination server" in result.stderr
    assert "A running server flushes by itself" in result.stderr


def test_a_name_too_long_for_an_intermediate_table_works_in_merge_mode_only(
    dest: Destination, lake: Lake, catalog_kind: str
) -> None:
    # A valid table name whose intermediate table's name (13 more) is too long: 250 of the 255
    # bytes of a path name; a Hive metastore takes at most 128 characters.
    name = "t" * (120 if catalog_kind in METASTORES else 250)
    with both(dest) as (deferred, merged):
        row = [["1", "a", "1", SYNC1, "false"]]
        ok(merged.create(name, COLUMNS))
        ok(merged.write(name, COLUMNS, replace=[merged.write_file(HEADER, row)]))
        assert [r[:2] for r in rows(lake, merged.schema, name)] == [(1, "a")]
        ok(deferred.create(name, COLUMNS))
        refused = deferred.write(name, COLUMNS, replace=[deferred.write_file(HEADER, row)])
        assert refused.WhichOneof("response") == "task"
        assert "intermediate_table_prefix" in refused.task.message
