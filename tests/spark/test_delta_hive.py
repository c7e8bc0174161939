"""Delta tables in a real Hive metastore (``table_format=delta`` with ``catalog_type=hive``):
the server's Spark keeps its session catalog, Delta's, in the metastore Iceberg's catalog
names, so a Delta table is registered where Delta users and other engines look for it.

The server runs in a process of its own: the session catalog's store is fixed when its JVM
starts, and the suite's shared JVM keeps its catalog in memory (the last test shows that
JVM refuses Delta tables in a metastore, naming the setting). The metastore is read through
its own Thrift API (pyiceberg's client), and the tables' files by delta-rs, at the location
the metastore gives.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from deltalake import DeltaTable
from hive_metastore.ttypes import Database
from pyiceberg.catalog.hive import _HiveClient

from spark_destination.local_services.metastore import (
    Metastore,
    destination_configuration,
)
from spark_destination.local_services.server_process import server_process
from spark_destination.server import form
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from tests.support.delta_sync import COLUMNS, DAY1, DAY2, HEADER, driver_of, ok
from tests.support.destination import UNMOD, Destination

pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]

SCHEMA = "delta_sales"
CATALOG = "delta_hms"
# Spark's name for a data source table's format, in the metastore's table parameters.
PROVIDER = "spark.sql.sources.provider"


def _configuration(metastore: Metastore) -> dict[str, str]:
    return {"catalog": CATALOG, "table_format": "delta", **destination_configuration(metastore)}


def _flags(configuration: dict[str, str]) -> list[str]:
    return [
        part
        for key, value in configuration.items()
        for part in (f"--{key.replace('_', '-')}", value)
    ]


def _delta_rs_rows(location: str) -> Counter[tuple[object, ...]]:
    table = DeltaTable(location).to_pyarrow_table(columns=["id", "name", "amount"])
    return Counter(tuple(row.values()) for row in table.to_pylist())


def test_a_delta_table_lives_in_the_metastore_and_a_new_server_finds_it_there(
    metastore: Metastore, tmp_path: Path
) -> None:
    """The schema is made in the metastore first, at a location outside the warehouse (as an
    administrator may): the table goes where the metastore says, so only the metastore, not a
    look through the warehouse's folders, can find it again. A second server process (a new
    JVM) describes and writes it; an Iceberg table shares the schema."""
    elsewhere = tmp_path / "elsewhere" / SCHEMA
    with _HiveClient(metastore.uri) as client:
        client.create_database(Database(name=SCHEMA, locationUri=elsewhere.as_uri()))
    configuration = _configuration(metastore)
    with server_process(log_file=tmp_path / "first.log", flags=_flags(configuration)) as first:
        driver = driver_of(first, tmp_path / "first", configuration, SCHEMA)
        for name in (form.TEST_SETTINGS, form.TEST_WAREHOUSE, form.TEST_CATALOG):
            response = driver.stub.Test(common.TestRequest(name=name, configuration=configuration))
            assert response.WhichOneof("response") == "success", (name, response)
        ok(driver.create("orders", COLUMNS))
        rows = [["1", "a", "1.50", DAY1], ["2", "b", "2.50", DAY1], ["3", "c", "3.50", DAY1]]
        ok(driver.write("orders", COLUMNS, replace=[driver.write_file(HEADER, rows)]))
        iceberg = replace(driver, configuration={**configuration, "table_format": "iceberg"})
        ok(iceberg.create("events", COLUMNS))

    with _HiveClient(metastore.uri) as client:
        table = client.get_table(SCHEMA, "orders")
        listed = set(client.get_all_tables(SCHEMA))
        events = client.get_table(SCHEMA, "events")
    assert table.parameters[PROVIDER] == "delta"
    location = table.sd.location
    assert Path(location.removeprefix("file:")) == elsewhere / "orders"
    assert listed == {"orders", "events"}
    assert events.parameters["table_type"] == "ICEBERG"
    expected = Counter({(1, "a", Decimal("1.50")): 1, (2, "b", Decimal("2.50")): 1})
    expected[(3, "c", Decimal("3.50"))] += 1
    assert _delta_rs_rows(location) == expected

    with server_process(log_file=tmp_path / "second.log", flags=_flags(configuration)) as second:
        driver = driver_of(second, tmp_path / "second", configuration, SCHEMA)
        described = driver.describe("orders")
        assert not described.not_found
        assert [(c.name, c.primary_key) for c in described.table.columns] == [
            (c.name, c.primary_key) for c in COLUMNS
        ]
        assert described.table.columns[2].params.decimal.scale == 2
        update = driver.write_file(HEADER, [["1", UNMOD, "9.50", DAY2]])
        deleted = driver.write_file(["id", "_fivetran_synced"], [["2", DAY2]])
        ok(driver.write("orders", COLUMNS, update=[update], delete=[deleted]))
    del expected[(1, "a", Decimal("1.50"))], expected[(2, "b", Decimal("2.50"))]
    expected[(1, "a", Decimal("9.50"))] += 1
    assert _delta_rs_rows(location) == expected
    versions = [entry["operation"] for entry in DeltaTable(location).history()]
    assert versions == ["MERGE", "MERGE", "CREATE TABLE"]


def test_a_jvm_that_keeps_delta_tables_in_memory_refuses_a_metastore_naming_the_setting(
    dest: Destination, tmp_path: Path
) -> None:
    """The suite's shared JVM started for a Hadoop catalog: its session catalog is in memory,
    and cannot become a metastore without a new JVM. The task says so, and how to start,
    before the metastore is asked anything (none answers at this address)."""
    uri = "thrift://127.0.0.1:1"
    configuration = {
        "catalog": CATALOG,
        "table_format": "delta",
        "catalog_type": "hive",
        "catalog_uri": uri,
        "warehouse": str(tmp_path / "warehouse"),
    }
    configured = replace(dest, configuration=configuration)
    response = configured.create("refused", COLUMNS)
    assert response.WhichOneof("response") == "task"
    message = response.task.message
    assert "keeps them in memory" in message
    assert f"the Hive metastore at {uri}" in message
    assert "--catalog-type" in message
