"""The batch MERGE's key filter: a small batch reads only the data files that may hold its
keys, and gives the same table as the unfiltered MERGE.

The proof that the filter reaches the table scan: the data files of an old batch whose keys
the new batch does not touch are deleted from disk. The small batch still succeeds (the scan
skips those files by their key statistics), while a batch too large for the filter, or one
touching those keys, fails because it must read them.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

import pytest
from pyspark.sql import SparkSession

from spark_destination.config import parse_config
from spark_destination.dialects.quoting import qualified
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine import Engine, SessionProvider
from spark_destination.errors import DestinationError
from spark_destination.model import Column, DataType, FileParams, Table
from spark_destination.requests import CreateTableRequest, WriteBatchRequest
from spark_destination.runtime.session import SparkSettings
from spark_destination.testing.batch_writer import new_key, write_batch_file

pytestmark = pytest.mark.spark

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
    def __init__(self, engine: Engine, folder: Path) -> None:
        self.engine, self.folder, self.count = engine, folder, 0

    def write(self, **files: list[list[str]]) -> None:
        paths: dict[str, tuple[str, ...]] = {}
        keys: dict[str, bytes] = {}
        for kind, rows in files.items():
            self.count += 1
            path = self.folder / f"b{self.count}.csv"
            keys[str(path)] = new_key()
            write_batch_file(path, HEADER, rows, params=PARAMS, key=keys[str(path)])
            paths[f"{kind}_files"] = (str(path),)
        request = WriteBatchRequest(
            schema=SCHEMA,
            table=TABLE,
            file_params=PARAMS,
            keys=keys,
            **paths,  # type: ignore[arg-type]
        )
        self.engine.write_batch({}, request)


def _data_files(spark: SparkSession) -> set[str]:
    name = qualified("lake", SCHEMA, "t") + ".files"
    return {
        r[0]
        for r in spark.newSession().sql(f"SELECT file_path FROM {name} WHERE content = 0").collect()
    }  # noqa: S608


def _rows(spark: SparkSession) -> list[tuple[object, ...]]:
    # A new session: the root session's catalog caches the table as it last loaded it.
    table = spark.newSession().table(qualified("lake", SCHEMA, "t"))
    return [tuple(r) for r in table.where("id >= 1000").orderBy("id", "code").collect()]


def test_a_small_batch_reads_only_the_files_that_may_hold_its_keys(
    spark: SparkSession, spark_settings: SparkSettings, tmp_path: Path
) -> None:
    configuration = {"warehouse": spark_settings.warehouse, "catalog": spark_settings.catalog}
    engine = Engine(
        SessionProvider.shared(spark, parse_config(configuration)), defaults=configuration
    )
    engine.create_table({}, CreateTableRequest(schema=SCHEMA, table=TABLE))
    writer = _Writer(engine, tmp_path)
    writer.write(replace=[[str(i), "a", "1", "old"] for i in range(1, 51)])
    old = _data_files(spark)
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
    expected = [(i, "b", 1, "old") for i in range(1000, 1051)]
    expected[0] = (1000, "b", 5, "five")
    expected[1] = (1001, "b", 1, "upd")
    del expected[2]
    expected.append((3000, "b", 6, "six"))
    assert _rows(spark) == expected
