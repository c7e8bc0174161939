"""The batch and history MERGEs' key filter: a small batch reads only the data files that may
hold its keys, and gives the same table as the unfiltered MERGE.

The proof that the filter reaches the table scan: the data files of an old batch whose keys
the new batch does not touch are deleted from disk. The small batch still succeeds (the scan
skips those files by their key statistics), while a batch too large for the filter, or one
touching those keys, fails because it must read them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from spark_destination.core.config import parse_config
from spark_destination.core.errors import DestinationError
from spark_destination.core.model import Column, DataType, FileParams, Table
from spark_destination.core.requests import CreateTableRequest
from spark_destination.dialects.quoting import qualified
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.engine import Engine, Result, SessionProvider
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.runtime.spark.session import SparkSettings
from tests.spark.conftest import CATALOG
from tests.support.destination import DELTA, Lake
from tests.support.requests import batch_request

pytestmark = [
    pytest.mark.spark,
    # What a MERGE's scan reads is counted in Iceberg's files metadata table and scan metrics;
    # Delta's data skipping is its own and is not measured here.
    pytest.mark.skipif(CATALOG == DELTA, reason="reads Iceberg's files metadata and scan metrics"),
]

UNM = "UNM"
PARAMS = FileParams(null_string="NUL", unmodified_string=UNM)
COLUMNS = (
    Column(name="id", type=DataType.LONG, primary_key=True),
    Column(name="code", type=DataType.STRING, primary_key=True),
    Column(name="qty", type=DataType.INT),
    Column(name="note", type=DataType.STRING),
)
TABLE = Table(name="t", columns=COLUMNS)
HEADER = [c.name for c in COLUMNS]
SCHEMA = "key_filter"


class _Writer:
    def __init__(self, engine: Engine, folder: Path, table: Table, *, history: bool = False):
        self.engine, self.folder, self.table, self.history = engine, folder, table, history
        self.count = 0

    def write(self, config: dict[str, str] | None = None, **files: list[list[str]]) -> Result:
        paths: dict[str, tuple[str, ...]] = {}
        keys: dict[str, bytes] = {}
        header = [c.name for c in self.table.columns]
        for kind, rows in files.items():
            self.count += 1
            path = self.folder / f"b{self.count}.csv"
            keys[str(path)] = new_key()
            write_batch_file(path, header, rows, params=PARAMS, key=keys[str(path)])
            paths[kind] = (str(path),)
        request = batch_request(
            SCHEMA, self.table, paths, params=PARAMS, keys=keys, history=self.history
        )
        return self.engine.apply(config or {}, request)


@pytest.fixture
def create(
    spark: SparkSession, spark_settings: SparkSettings, catalog_configuration: dict[str, str]
) -> Callable[[Table], Engine]:
    """Makes an engine on the shared session whose requests go to the test's catalog, and
    creates a table through it."""

    def created(table: Table) -> Engine:
        configuration = {"warehouse": spark_settings.warehouse, "catalog": spark_settings.catalog}
        provider = SessionProvider.shared(spark, parse_config(configuration))
        engine = Engine(provider, defaults={**configuration, **catalog_configuration})
        engine.apply({}, CreateTableRequest(schema=SCHEMA, table=table))
        return engine

    return created


def _data_files(lake: Lake, table: str = "t") -> set[str]:
    name = qualified(lake.catalog, SCHEMA, table) + ".files"
    return {
        r[0] for r in lake.child().sql(f"SELECT file_path FROM {name} WHERE content = 0").collect()
    }  # noqa: S608


def _rows(lake: Lake, table: str = "t") -> list[tuple[object, ...]]:
    # A new session: the root session's catalog caches the table as it last loaded it.
    session = lake.child()
    session.conf.set("spark.sql.session.timeZone", "UTC")
    rows = session.table(qualified(lake.catalog, SCHEMA, table)).where("id >= 1000").orderBy("id")
    return [tuple(r) for r in rows.collect()]


def test_a_small_batch_reads_only_the_files_that_may_hold_its_keys(
    create: Callable[[Table], Engine], lake: Lake, tmp_path: Path
) -> None:
    engine = create(TABLE)
    writer = _Writer(engine, tmp_path, TABLE)
    writer.write(replace=[[str(i), "a", "1", "old"] for i in range(1, 51)])
    old = _data_files(lake)
    writer.write(replace=[[str(i), "b", "1", "old"] for i in range(1000, 1051)])
    for path in old:  # the first batch's rows are gone from disk, not from the table
        os.remove(urlparse(path).path)

    # Too many keys for the filter: the MERGE reads every file, and fails on the missing one.
    slots = SPARK_ICEBERG.key_filter_slots
    with pytest.raises(DestinationError):
        writer.write(replace=[[str(2000 + i), "b", "2", "big"] for i in range(slots + 1)])
    # A key inside the deleted files' range: those files may hold it, so they are read.
    with pytest.raises(DestinationError):
        writer.write(replace=[["7", "a", "2", "new"]])

    # A small batch away from them: upserts (new and existing), an update leaving a column
    # unmodified, and a delete.
    writer.write(
        replace=[["1000", "b", "5", "five"], ["3000", "b", "6", "six"]],
        update=[["1001", "b", UNM, "upd"]],
        delete=[["1002", "b", UNM, UNM]],
    )
    # A small batch naming keys twice (upserted, then deleted; upserted, then updated): the
    # MERGE folds them and is still filtered, or it would read the deleted files.
    writer.write(
        replace=[["1003", "b", "7", "seven"], ["1004", "b", "8", "eight"]],
        update=[["1004", "b", UNM, "upd"]],
        delete=[["1003", "b", UNM, UNM]],
    )
    expected = [(i, "b", 1, "old") for i in range(1000, 1051)]
    expected[0] = (1000, "b", 5, "five")
    expected[1] = (1001, "b", 1, "upd")
    expected[4] = (1004, "b", 8, "upd")
    del expected[2:4]
    expected.append((3000, "b", 6, "six"))
    assert _rows(lake) == expected


DEFERRED = {"write_mode": "deferred", "merge_interval_ms": "-1"}


def test_a_merge_flush_reads_only_the_files_that_may_hold_its_pending_keys(
    create: Callable[[Table], Engine], lake: Lake, tmp_path: Path
) -> None:
    """Deferred mode: the flush binds the pending keys as the batch MERGE does. Unfiltered,
    its join moved every row of the table, so a flush of one small batch cost several times
    that batch's MERGE in merge mode."""
    table = dataclasses.replace(TABLE, name="flushed")
    engine = create(table)
    writer = _Writer(engine, tmp_path, table)
    writer.write(replace=[[str(i), "a", "1", "old"] for i in range(1, 51)])
    old = _data_files(lake, "flushed")
    writer.write(replace=[[str(i), "b", "1", "old"] for i in range(1000, 1051)])
    for path in old:  # the first batch's rows are gone from disk, not from the table
        os.remove(urlparse(path).path)

    # Two pending batches away from the deleted files, folded by one filtered flush.
    writer.write(DEFERRED, replace=[["1000", "b", "5", "five"], ["3000", "b", "6", "six"]])
    writer.write(DEFERRED, update=[["1001", "b", UNM, "upd"]], delete=[["1002", "b", UNM, UNM]])
    engine.flush(DEFERRED, SCHEMA, "flushed")
    expected = [(i, "b", 1, "old") for i in range(1000, 1051)]
    expected[0] = (1000, "b", 5, "five")
    expected[1] = (1001, "b", 1, "upd")
    del expected[2]
    expected.append((3000, "b", 6, "six"))
    assert _rows(lake, "flushed") == expected

    # More keys than a batch MERGE binds: the flush's wide filter still keeps to them.
    wide = SPARK_ICEBERG.key_filter_slots + 20
    writer.write(DEFERRED, replace=[[str(4000 + i), "b", "3", "w"] for i in range(wide)])
    engine.flush(DEFERRED, SCHEMA, "flushed")
    expected += [(4000 + i, "b", 3, "w") for i in range(wide)]
    assert _rows(lake, "flushed") == expected

    # More pending keys than the filter binds: the flush reads every file, and fails on the
    # missing one (its rows stay pending).
    slots = SPARK_ICEBERG.flush_filter_slots
    writer.write(DEFERRED, replace=[[str(2000 + i), "b", "2", "big"] for i in range(slots + 1)])
    with pytest.raises(DestinationError):
        engine.flush(DEFERRED, SCHEMA, "flushed")
    assert _rows(lake, "flushed") == expected


def test_each_merge_reports_what_its_scan_of_the_target_read(
    create: Callable[[Table], Engine], lake: Lake, tmp_path: Path
) -> None:
    """The outcome (and the log) says how many data files the MERGE's scan kept and skipped:
    what an operator reads to see the key filter prune."""
    table = dataclasses.replace(TABLE, name="scans")
    engine = create(table)
    writer = _Writer(engine, tmp_path, table)
    writer.write(replace=[[str(i), "a", "1", "old"] for i in range(1, 51)])
    writer.write(replace=[[str(i), "b", "1", "old"] for i in range(1000, 1051)])

    small = writer.write(replace=[["1000", "b", "5", "five"]])
    assert small.outcome is not None
    (scan,) = small.outcome.scans
    assert scan.table == f"{lake.catalog}.key_filter.scans"
    assert (scan.data_files, scan.skipped_data_files, scan.delete_files) == (1, 1, 0)
    assert 0 < scan.rows <= 51 and scan.data_file_bytes > 0

    slots = SPARK_ICEBERG.key_filter_slots
    big = writer.write(replace=[[str(2000 + i), "b", "2", "big"] for i in range(slots + 1)])
    assert big.outcome is not None
    (scan,) = big.outcome.scans
    # Unfiltered: every data file, and the delete file the small batch's update left.
    assert (scan.data_files, scan.skipped_data_files, scan.delete_files) == (3, 0, 1)


def test_tables_are_created_with_small_row_groups(
    create: Callable[[Table], Engine], lake: Lake
) -> None:
    """The filter skips Parquet row groups by their key range; created tables write row
    groups of 1 MiB (``row_group_size``; Iceberg's default, 128 MiB, would make one row group
    per file here)."""
    create(dataclasses.replace(TABLE, name="layout"))
    name = qualified(lake.catalog, SCHEMA, "layout")
    # ~30 MB of Parquet: written by Spark, laid out by the table.
    lake.child().range(400_000, numPartitions=1).selectExpr(
        "id", "uuid() AS code", "CAST(id % 1000 AS INT) AS qty", "repeat(uuid(), 2) AS note"
    ).writeTo(name).append()
    paths = _data_files(lake, "layout")
    groups = sum(pq.ParquetFile(urlparse(p).path).metadata.num_row_groups for p in paths)
    assert groups >= 20


DATED = Table(
    name="dated",
    columns=(
        Column(name="day", type=DataType.NAIVE_DATE, primary_key=True),
        Column(name="qty", type=DataType.INT),
    ),
)
# Year 1, a Julian-era date and one in the calendar switch (absent from the Julian-Gregorian
# calendar of java.sql.Date): bound through java.sql.Date they failed the request (years
# below 1000) or shifted ten days, so the filter missed the stored row and a duplicate key
# was inserted.
OLD_DAYS = ("0001-01-01", "1200-03-04", "1582-10-10", "2024-02-29")


def test_a_small_batch_keyed_by_old_dates_updates_the_stored_rows(
    create: Callable[[Table], Engine], lake: Lake, tmp_path: Path
) -> None:
    engine = create(DATED)
    writer = _Writer(engine, tmp_path, DATED)
    writer.write(replace=[[day, "1"] for day in OLD_DAYS])
    writer.write(replace=[[day, "2"] for day in OLD_DAYS])  # a small batch: the key filter
    rows = lake.child().table(qualified(lake.catalog, SCHEMA, "dated")).orderBy("day").collect()
    assert [(r.day.isoformat(), r.qty) for r in rows] == [(day, 2) for day in OLD_DAYS]


HISTORY = Table(
    name="h",
    columns=(
        Column(name="id", type=DataType.LONG, primary_key=True),
        Column(name="v", type=DataType.STRING),
        Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
        Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_active", type=DataType.BOOLEAN),
        Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
    ),
)
T1, T2, T3, SYNCED = (
    "2024-01-01T00:00:00Z",
    "2024-01-02T00:00:00Z",
    "2024-01-03T00:00:00Z",
    "2024-02-01T00:00:00Z",
)
TMAX = "9999-12-31T23:59:59.999Z"


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


# Complete new versions run the full-versions form; an unmodified value, the general form.
@pytest.mark.parametrize("unmodified", [False, True], ids=["full-versions", "unmodified"])
def test_a_small_history_batch_reads_only_the_files_that_may_hold_its_keys(
    create: Callable[[Table], Engine], lake: Lake, tmp_path: Path, unmodified: bool
) -> None:
    table = dataclasses.replace(HISTORY, name=f"h_{int(unmodified)}")
    engine = create(table)
    writer = _Writer(engine, tmp_path, table, history=True)

    def version(key: int, value: str, start: str) -> list[str]:
        return [str(key), value, start, TMAX, "true", SYNCED]

    writer.write(replace=[version(i, "old", T1) for i in range(1, 51)])
    old = _data_files(lake, table.name)
    writer.write(replace=[version(i, "old", T1) for i in range(1000, 1051)])
    for path in old:
        os.remove(urlparse(path).path)

    slots = SPARK_ICEBERG.key_filter_slots
    with pytest.raises(DestinationError):
        writer.write(replace=[version(2000 + i, "big", T2) for i in range(slots + 1)])

    # A new version of 1000 (closes the stored one), a new key, and a delete of 1001; and
    # maybe a new version of 1002 that keeps its stored value (the MERGE must read it).
    writer.write(
        replace=[version(1000, "new", T2), version(3000, "six", T2)],
        delete=[["1001", "NUL", "NUL", T3, "false", SYNCED]],
        **({"update": [version(1002, UNM, T2)]} if unmodified else {}),
    )
    closed = _at(T2) - dt.timedelta(milliseconds=1)
    expected = Counter(
        [
            (1000, "old", _at(T1), closed, False, _at(SYNCED)),
            (1000, "new", _at(T2), _at(TMAX), True, _at(SYNCED)),
            (1001, "old", _at(T1), _at(T3), False, _at(SYNCED)),
            *((i, "old", _at(T1), _at(TMAX), True, _at(SYNCED)) for i in range(1002, 1051)),
            (3000, "six", _at(T2), _at(TMAX), True, _at(SYNCED)),
        ]
    )
    if unmodified:
        expected -= Counter([(1002, "old", _at(T1), _at(TMAX), True, _at(SYNCED))])
        expected += Counter(
            [
                (1002, "old", _at(T1), closed, False, _at(SYNCED)),
                (1002, "old", _at(T2), _at(TMAX), True, _at(SYNCED)),
            ]
        )
    # A multiset: a history version stored twice must fail, as a set would hide it.
    assert Counter(_rows(lake, table.name)) == expected
