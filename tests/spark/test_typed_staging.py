"""Typed staging end to end: all 15 types through both transports and both batch-file formats
give the same table; repeated keys are compared as typed values (``1`` and ``01`` are one INT
key); a value that does not fit fails before anything is written."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_destination.core.config import parse_config
from spark_destination.core.errors import ValueConversionError
from spark_destination.core.model import Column, DataType, DecimalParams, FileParams, Table
from spark_destination.core.requests import BatchFiles, CreateTableRequest, WriteBatchRequest
from spark_destination.dialects.quoting import qualified
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.replay.batch_writer import (
    new_key,
    write_batch_file,
    write_parquet_batch_file,
)
from spark_destination.runtime.batch.staging import Transport
from spark_destination.runtime.spark.session import SparkSettings
from tests.support.destination import Lake

pytestmark = pytest.mark.spark

NUL, UNM = "NUL", "UNM"
PARAMS = FileParams(null_string=NUL, unmodified_string=UNM)
COLUMNS = (
    Column(name="id", type=DataType.INT, primary_key=True),
    Column(name="flag", type=DataType.BOOLEAN),
    Column(name="small", type=DataType.SHORT),
    Column(name="big", type=DataType.LONG),
    Column(name="amount", type=DataType.DECIMAL, decimal=DecimalParams(precision=9, scale=2)),
    Column(name="ratio", type=DataType.FLOAT),
    Column(name="score", type=DataType.DOUBLE),
    Column(name="day", type=DataType.NAIVE_DATE),
    Column(name="local", type=DataType.NAIVE_DATETIME),
    Column(name="at", type=DataType.UTC_DATETIME),
    Column(name="payload", type=DataType.BINARY),
    Column(name="doc", type=DataType.XML),
    Column(name="note", type=DataType.STRING),
    Column(name="attrs", type=DataType.JSON),
    Column(name="clock", type=DataType.NAIVE_TIME),
)
TABLE = Table(name="t", columns=COLUMNS)
HEADER = [c.name for c in COLUMNS]
REPLACE = [
    ["1", "true", "-3", "9223372036854775807", "12.340", "1.5", "-2.25", "2024-02-29",
     "2024-02-29T10:15:30.123456789", "9999-12-31T23:59:59.999Z", "aGk=", "<a/>", "x", "{}",
     "10:15"],
    ["2", NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL, NUL],
    ["3", "FALSE", "7", "1", "1", "1", "1", "0001-01-01", "0001-01-01T00:00:00",
     "2025-11-21T14:59:47.315Z", "[B@7d4991ad", "", "", "[]", "23:59:59.5"],
]  # fmt: skip
# Repeated keys spelled differently: ``01`` is key 1 and ``0003`` key 3.
UPDATE = [
    ["01", UNM, UNM, UNM, "7.5", UNM, UNM, UNM, UNM, UNM, UNM, UNM, NUL, UNM, UNM],
    ["0003", UNM, "8", UNM, UNM, UNM, UNM, UNM, UNM, UNM, UNM, UNM, "three", UNM, UNM],
    ["9", "true", "1", "1", "1", "1", "1", "2000-01-01", "2000-01-01T00:00:00",
     "2000-01-01T00:00:00Z", "", "", "", "", "00:00"],
]  # fmt: skip
UTC = dt.UTC
EXPECTED = [
    (1, True, -3, 9223372036854775807, Decimal("7.50"), 1.5, -2.25, dt.date(2024, 2, 29),
     dt.datetime(2024, 2, 29, 10, 15, 30, 123456),
     dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC), b"hi", "<a/>", None, "{}",
     "10:15"),
    (2,) + (None,) * 14,
    (3, False, 8, 1, Decimal("1.00"), 1.0, 1.0, dt.date(1, 1, 1), dt.datetime(1, 1, 1),
     dt.datetime(2025, 11, 21, 14, 59, 47, 315000, tzinfo=UTC), b"[B@7d4991ad", "", "three",
     "[]", "23:59:59.5"),
]  # fmt: skip


def _engine(
    spark: SparkSession,
    settings: SparkSettings,
    catalog: dict[str, str],
    transport: Transport,
    fmt: str,
) -> Engine:
    """An engine on the shared session whose requests go to ``catalog`` (the test's)."""
    configuration = {
        "warehouse": settings.warehouse,
        "catalog": settings.catalog,
        "batch_file_format": fmt,
    }
    return Engine(
        SessionProvider.shared(spark, parse_config(configuration)),
        defaults={**configuration, **catalog},
        transport=transport,
    )


def _write(path: Path, rows: list[list[str]], fmt: str, key: bytes) -> None:
    if fmt == "parquet":
        write_parquet_batch_file(path, COLUMNS, HEADER, rows, params=PARAMS, key=key)
    else:
        write_batch_file(path, HEADER, rows, params=PARAMS, key=key)


def _read(lake: Lake, schema: str) -> list[tuple[object, ...]]:
    spark = lake.child()
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    rows = spark.table(qualified(lake.catalog, schema, "t")).orderBy("id").collect()
    out = []
    for row in rows:
        values = list(row)
        at = HEADER.index("at")
        if values[at] is not None:  # collect() gives local naive datetimes: make them UTC
            values[at] = values[at].replace(tzinfo=UTC)
        if values[HEADER.index("payload")] is not None:
            values[HEADER.index("payload")] = bytes(values[HEADER.index("payload")])
        out.append(tuple(values))
    return out


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("transport", [Transport.ARROW, Transport.TMPFS_PARQUET])
def test_all_types_through_every_transport_and_format(
    transport: Transport,
    fmt: str,
    spark: SparkSession,
    spark_settings: SparkSettings,
    catalog_configuration: dict[str, str],
    lake: Lake,
    tmp_path: Path,
) -> None:
    engine = _engine(spark, spark_settings, catalog_configuration, transport, fmt)
    schema = f"typed_{transport.name.lower()}_{fmt}"
    engine.apply({}, CreateTableRequest(schema=schema, table=TABLE))
    replace, update = tmp_path / f"r.{fmt}", tmp_path / f"u.{fmt}"
    keys = {str(replace): new_key(), str(update): new_key()}
    _write(replace, REPLACE, fmt, keys[str(replace)])
    _write(update, UPDATE, fmt, keys[str(update)])
    request = WriteBatchRequest(
        schema=schema,
        table=TABLE,
        files=BatchFiles(replace=(str(replace),), update=(str(update),), params=PARAMS, keys=keys),
    )
    result = engine.apply({}, request)
    assert result.outcome is not None and result.outcome.staged_rows == 6
    # Key 9 is an update of an unknown key: ignored. Keys 1/01 and 3/0003 fold into one row.
    assert _read(lake, schema) == EXPECTED


def test_a_value_that_does_not_fit_fails_before_anything_is_written(
    spark: SparkSession,
    spark_settings: SparkSettings,
    catalog_configuration: dict[str, str],
    lake: Lake,
    tmp_path: Path,
) -> None:
    engine = _engine(spark, spark_settings, catalog_configuration, Transport.TMPFS_PARQUET, "csv")
    schema = "typed_refused"
    engine.apply({}, CreateTableRequest(schema=schema, table=TABLE))
    path = tmp_path / "bad.csv"
    key = new_key()
    bad = [list(REPLACE[0]), list(REPLACE[2])]
    bad[1][HEADER.index("flag")] = "yes"  # Spark's CAST took it as true
    write_batch_file(path, HEADER, bad, params=PARAMS, key=key)
    request = WriteBatchRequest(
        schema=schema,
        table=TABLE,
        files=BatchFiles(replace=(str(path),), params=PARAMS, keys={str(path): key}),
    )
    commits = lake.snapshot_count(schema, "t")  # Delta's CREATE is a version of its own
    with pytest.raises(ValueConversionError, match="'flag' \\(BOOLEAN\\).*data row 2"):
        engine.apply({}, request)
    assert lake.snapshot_count(schema, "t") == commits
