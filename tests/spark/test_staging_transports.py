"""Both ways of handing a batch to Spark give the same table: Arrow through the driver (what a
cluster master uses) and Parquet on RAM-backed tmpfs (the local default)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_destination.core.config import parse_config
from spark_destination.core.model import Column, DataType, DecimalParams, FileParams, Table
from spark_destination.core.requests import CreateTableRequest, WriteBatchRequest
from spark_destination.dialects.quoting import qualified
from spark_destination.runtime.batch.staging import Transport
from spark_destination.runtime.spark.session import SparkSettings
from spark_destination.service.engine import Engine, SessionProvider
from spark_destination.tester.batch_writer import new_key, write_batch_file

pytestmark = pytest.mark.spark

PARAMS = FileParams(null_string="NUL", unmodified_string="UNM")
TABLE = Table(
    name="t",
    columns=(
        Column(name="id", type=DataType.INT, primary_key=True),
        Column(name="amount", type=DataType.DECIMAL, decimal=DecimalParams(precision=9, scale=2)),
        Column(name="note", type=DataType.STRING),
    ),
)


@pytest.mark.parametrize("transport", [Transport.ARROW, Transport.TMPFS_PARQUET])
def test_transports_give_the_same_table(
    transport: Transport, spark: SparkSession, spark_settings: SparkSettings, tmp_path: Path
) -> None:
    configuration = {"warehouse": spark_settings.warehouse, "catalog": spark_settings.catalog}
    engine = Engine(
        SessionProvider.shared(spark, parse_config(configuration)),
        defaults=configuration,
        transport=transport,
    )
    schema = f"transport_{transport.name.lower()}"
    engine.create_table({}, CreateTableRequest(schema=schema, table=TABLE))
    replace, update = tmp_path / "r.csv", tmp_path / "u.csv"
    keys = {str(replace): new_key(), str(update): new_key()}
    write_batch_file(
        replace,
        ["note", "id", "amount"],
        [["a", "1", "1.10"], ["b", "2", "NUL"], ["b2", "2", "2.20"]],
        params=PARAMS,
        key=keys[str(replace)],
    )
    write_batch_file(
        update,
        ["id", "note", "amount"],
        [["1", "", "UNM"], ["9", "x", "9.99"]],
        params=PARAMS,
        key=keys[str(update)],
    )
    result = engine.write_batch(
        {},
        WriteBatchRequest(
            schema=schema,
            table=TABLE,
            replace_files=(str(replace),),
            update_files=(str(update),),
            file_params=PARAMS,
            keys=keys,
        ),
    )
    assert result.outcome is not None and result.outcome.staged_rows == 5
    rows = spark.newSession().table(qualified("lake", schema, "t")).orderBy("id").collect()
    assert [(r.id, str(r.amount), r.note) for r in rows] == [(1, "1.10", ""), (2, "2.20", "b2")]
