"""Delta tables on S3 (``table_format=delta`` with ``storage=s3``), on a real S3 server
(SeaweedFS, ``local_services.object_store``), written through Hadoop's S3A: with the Hadoop
catalog type (the tables found again in the bucket by a new server) and in a Hive metastore
whose tables live on the same bucket.

Each server runs in a process of its own, started bare as Fivetran starts it: the first
request's configuration starts its JVM, the one that decides whether S3A's jars and settings
are in it. The tables are read back by delta-rs straight from the bucket.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from deltalake import DeltaTable
from pyiceberg.catalog.hive import _HiveClient

from spark_destination.local_services.metastore import Metastore
from spark_destination.local_services.object_store import READ_ONLY, REGION, ObjectStore
from spark_destination.local_services.server_process import ServerProcess, server_process
from spark_destination.server import form
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from tests.support.delta_sync import COLUMNS, DAY1, DAY2, HEADER, driver_of, ok
from tests.support.destination import UNMOD, Destination

pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]

SCHEMA = "sales_s3"
ROWS = [["1", "a", "1.50", DAY1], ["2", "b", "2.50", DAY1], ["3", "c", "3.50", DAY1]]
# After the second write: 1 updated, 2 deleted.
SECOND = Counter({(1, "a", Decimal("9.50")): 1, (3, "c", Decimal("3.50")): 1})


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    with server_process(log_file=tmp_path / "server.log") as running:
        yield running


def _delta_rs(store: ObjectStore, location: str) -> DeltaTable:
    """The table as delta-rs opens it, straight from the bucket."""
    admin = store.admin
    options = {
        "AWS_ENDPOINT_URL": store.endpoint,
        "AWS_ACCESS_KEY_ID": admin.access_key,
        "AWS_SECRET_ACCESS_KEY": admin.secret_key,
        "AWS_REGION": REGION,
        "AWS_ALLOW_HTTP": "true",
    }
    bucket_path = location.split("://", 1)[1]
    return DeltaTable(f"s3://{bucket_path}", storage_options=options)


def _rows(table: DeltaTable) -> Counter[tuple[object, ...]]:
    read = table.to_pyarrow_table(columns=["id", "name", "amount"])
    return Counter(tuple(row.values()) for row in read.to_pylist())


def _sync(driver: Destination) -> None:
    """CreateTable, three rows, then an update of one and a delete of another."""
    ok(driver.create("orders", COLUMNS))
    ok(driver.write("orders", COLUMNS, replace=[driver.write_file(HEADER, ROWS)]))
    update = driver.write_file(HEADER, [["1", UNMOD, "9.50", DAY2]])
    deleted = driver.write_file(["id", "_fivetran_synced"], [["2", DAY2]])
    ok(driver.write("orders", COLUMNS, update=[update], delete=[deleted]))


def test_delta_tables_on_s3_with_the_hadoop_catalog_are_found_again_by_a_new_server(
    s3_store: ObjectStore, tmp_path: Path
) -> None:
    configuration = {
        **s3_store.s3_configuration(),
        "table_format": "delta",
        "warehouse": s3_store.bucket_uri("delta_lake"),
    }
    location = f"{s3_store.bucket_uri('delta_lake')}/{SCHEMA}.db/orders"
    with server_process(log_file=tmp_path / "first.log") as first:
        driver = driver_of(first, tmp_path / "first", configuration, SCHEMA)
        for name in (form.TEST_SETTINGS, form.TEST_WAREHOUSE, form.TEST_CATALOG):
            response = driver.stub.Test(common.TestRequest(name=name, configuration=configuration))
            assert response.WhichOneof("response") == "success", (name, response)
        _sync(driver)
        # A value the column's type refuses: a task naming the row and column, and the table
        # stays at the version it had.
        version = _delta_rs(s3_store, location).version()
        bad = driver.write_file(HEADER, [["4", "d", "not a number", DAY2]])
        refused = driver.write("orders", COLUMNS, replace=[bad])
        assert refused.WhichOneof("response") == "task"
        assert "amount" in refused.task.message
        assert "not a number" not in refused.task.message
        assert _delta_rs(s3_store, location).version() == version
        # Other keys for the same warehouse: S3A's settings are fixed when the JVM starts, so
        # the request is refused naming the setting, never either key.
        other = {**configuration, **s3_store.s3_configuration(READ_ONLY)}
        refused = replace(driver, configuration=other).create("returns", COLUMNS)
        assert refused.WhichOneof("response") == "task"
        message = refused.task.message
        assert "restart the destination" in message
        assert "fs.s3a.access.key" in message
        assert "fs.s3a.secret.key" in message
        for who in (s3_store.admin, s3_store.identities[READ_ONLY]):
            assert who.access_key not in message
            assert who.secret_key not in message
        assert _delta_rs(s3_store, location).version() == version
    assert _rows(_delta_rs(s3_store, location)) == SECOND

    with server_process(log_file=tmp_path / "second.log") as second:
        driver = driver_of(second, tmp_path / "second", configuration, SCHEMA)
        described = driver.describe("orders")
        assert not described.not_found
        assert [c.name for c in described.table.columns] == [c.name for c in COLUMNS]
        more = driver.write_file(HEADER, [["4", "d", "4.50", DAY2]])
        ok(driver.write("orders", COLUMNS, replace=[more]))
    table = _delta_rs(s3_store, location)
    assert _rows(table) == SECOND + Counter({(4, "d", Decimal("4.50")): 1})
    operations = [entry["operation"] for entry in table.history()]
    assert operations == ["MERGE", "MERGE", "MERGE", "CREATE TABLE"]


# Each mechanism runs in CI on its own (S3 above, a metastore in test_delta_hive.py); the two
# together take a server of their own, about a minute.
@pytest.mark.delta_all
def test_delta_tables_on_s3_are_registered_in_a_hive_metastore_on_the_same_bucket(
    s3_store: ObjectStore, s3_metastore: Metastore, server: ServerProcess, tmp_path: Path
) -> None:
    configuration = {
        **s3_store.hive_configuration(s3_metastore.uri, "delta_hive"),
        "catalog": "delta_hms_s3",
        "table_format": "delta",
    }
    driver = driver_of(server, tmp_path / "driver", configuration, SCHEMA)
    _sync(driver)
    with _HiveClient(s3_metastore.uri) as client:
        table = client.get_table(SCHEMA, "orders")
    assert table.parameters["spark.sql.sources.provider"] == "delta"
    location = table.sd.location
    assert (
        location.split("://", 1)[1]
        == f"{s3_store.bucket_uri('delta_hive')}/{SCHEMA}.db/orders".split("://", 1)[1]
    )
    assert _rows(_delta_rs(s3_store, location)) == SECOND


def test_a_jvm_started_without_s3a_answers_delta_on_s3_with_a_task_naming_the_restart(
    dest: Destination, s3_store: ObjectStore
) -> None:
    """The suite's shared JVM started for local Iceberg tables: without S3A's jars and
    settings it cannot reach Delta's files on S3, and says so before anything runs."""
    configuration = {
        **s3_store.s3_configuration(),
        "table_format": "delta",
        "warehouse": s3_store.bucket_uri("refused_delta"),
    }
    refused = replace(dest, configuration=configuration).create("orders", COLUMNS)
    assert refused.WhichOneof("response") == "task"
    message = refused.task.message
    assert "restart the destination" in message
    assert "s3a" in message
    assert s3_store.admin.secret_key not in message
