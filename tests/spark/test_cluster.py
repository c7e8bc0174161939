"""End to end on a real Spark standalone cluster: a loopback master and one worker started from
pip's pyspark, and the destination server as a subprocess with ``--master spark://…`` (this
test process already holds a local SparkContext, and a process can hold only one).

The Fivetran-like client drives the server over gRPC; the tables are read back from the same
Hadoop warehouse with the test run's local session. One cluster, small data: CI cost is the
cluster's start (~20 s) plus the server's Spark start on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from spark_destination.local_services.cluster import (
    LOOPBACK,
    Cluster,
    alive_workers,
    standalone_cluster,
)
from spark_destination.local_services.server_process import server_process
from spark_destination.runtime.spark.artifacts import ICEBERG_RUNTIME
from spark_destination.runtime.spark.session import register_catalog
from spark_destination.server import form
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.spark.test_history_grpc import (
    ACTIVE,
    END,
    START,
    TMAX,
    history_columns,
    minus_ms,
    ts,
    write_history,
)
from tests.spark.test_write_batch_grpc import HEADER, SYNC1, SYNC2, by_id, orders, outcome
from tests.support.destination import NULL, UNMOD, Destination, Lake, column

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# One write mode is enough: its server is a process of its own, in the product's default mode.
pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]

READER_CATALOG = "cluster_lake"
# What a request on the cluster carries: small executors (the worker offers 1 core, 1 GiB).
CLUSTER_CONFIGURATION = {"executor_memory": "512m", "executor_cores": "1", "driver_memory": "1g"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


@pytest.fixture(scope="module")
def cluster_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cluster-warehouse")


@pytest.fixture(scope="module")
def cluster_stub(
    cluster: Cluster, cluster_warehouse: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[pb_grpc.DestinationConnectorStub]:
    with server_process(
        log_file=tmp_path_factory.mktemp("cluster-server") / "server.log",
        flags=["--master", cluster.master_url, "--warehouse", str(cluster_warehouse)],
        env={"SPARK_LOCAL_IP": LOOPBACK},
    ) as server:
        yield server.stub


_schemas = iter(range(1_000_000))


@pytest.fixture
def cdest(cluster_stub: pb_grpc.DestinationConnectorStub, tmp_path: Path) -> Destination:
    return Destination(
        stub=cluster_stub,
        workdir=tmp_path,
        configuration=dict(CLUSTER_CONFIGURATION),
        schema=f"cluster_{next(_schemas)}",
    )


class _ReaderSession:
    """Hands ``Lake`` child sessions that have the cluster's warehouse registered (a catalog
    set on one session is not inherited by ``newSession()``)."""

    def __init__(self, spark: SparkSession, warehouse: Path) -> None:
        self._spark, self._warehouse = spark, warehouse

    def newSession(self) -> SparkSession:  # noqa: N802 - SparkSession's name
        child = self._spark.newSession()
        register_catalog(child, READER_CATALOG, str(self._warehouse))
        return child


@pytest.fixture(scope="module")
def clake(spark: SparkSession, cluster_warehouse: Path) -> Lake:
    """Reads the cluster server's warehouse from this process's local session."""
    reader = _ReaderSession(spark, cluster_warehouse)
    return Lake(session=reader, catalog=READER_CATALOG)  # type: ignore[arg-type]


def _test(cdest: Destination, name: str) -> common.TestResponse:
    request = common.TestRequest(name=name, configuration=cdest.configuration)
    return cdest.stub.Test(request)


def test_the_warehouse_test_passes_and_requests_run_on_the_cluster_executors(
    cdest: Destination, cluster: Cluster, clake: Lake
) -> None:
    assert _test(cdest, form.TEST_WAREHOUSE).WhichOneof("response") == "success"
    assert outcome(cdest.create("orders", orders())) == "success"
    rows = [[str(i), f"{i}.50", f"n{i}", SYNC1, "false"] for i in range(1, 201)]
    assert outcome(cdest.write("orders", orders(), replace=[cdest.write_file(HEADER, rows)])) == (
        "success"
    )
    assert len(clake.rows(cdest.schema, "orders")) == 200

    # The destination is an application of the standalone master, holding the worker's core.
    worker = alive_workers(cluster.web_url)[0]
    assert worker["coresused"] == 1
    assert worker["memoryused"] == 512  # MiB: executor_memory reached the executor
    # The executor fetched the Iceberg jars from the driver (spark.jars): they are in its
    # working folder on the worker, so the MERGE above ran with them on the executor.
    work = cluster.log_dir.parent / "worker"
    fetched = {p.name for p in work.glob("app-*/*/*.jar")}
    assert ICEBERG_RUNTIME.file_name in fetched, fetched


def test_write_batch_update_delete_truncate_and_alter_on_the_cluster(
    cdest: Destination, clake: Lake
) -> None:
    assert outcome(cdest.create("orders", orders())) == "success"
    seed = [[str(i), f"{i}.00", f"note {i}", SYNC1, "false"] for i in range(1, 6)]
    assert outcome(cdest.write("orders", orders(), replace=[cdest.write_file(HEADER, seed)])) == (
        "success"
    )
    # One request: an upsert, an update that leaves `note` unmodified and NULLs `amount`, and
    # a delete.
    upsert = cdest.write_file(HEADER, [["6", "6.00", "six", SYNC2, "false"]])
    update = cdest.write_file(HEADER, [["2", NULL, UNMOD, SYNC2, "false"]])
    delete = cdest.write_file(HEADER, [["3", UNMOD, UNMOD, SYNC2, "true"]])
    response = cdest.write("orders", orders(), replace=[upsert], update=[update], delete=[delete])
    assert outcome(response) == "success"
    table = by_id(clake, cdest)
    assert sorted(table) == [1, 2, 4, 5, 6]
    assert table[2]["amount"] is None and table[2]["note"] == "note 2"
    assert table[6]["note"] == "six"

    # Truncate: only rows synced before the cut-off (rows 1, 4, 5 from SYNC1) go.
    before = datetime.fromisoformat(SYNC2.replace("Z", "+00:00"))
    assert outcome(cdest.truncate("orders", before)) == "success"
    assert sorted(by_id(clake, cdest)) == [2, 6]

    # AlterTable adds a column; DescribeTable reports the new definition.
    altered = [*orders(), column("city", "STRING")]
    assert outcome(cdest.alter("orders", altered)) == "success"
    assert list(cdest.describe("orders").table.columns) == altered
    assert all(row["city"] is None for row in clake.rows(cdest.schema, "orders"))


def test_history_batch_on_the_cluster(cdest: Destination, clake: Lake) -> None:
    columns = history_columns(column("col1", "STRING"))
    header = [c.name for c in columns]
    assert outcome(cdest.create("hist", columns)) == "success"
    t1, t2 = "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"
    first = cdest.write_file(header, [["1", "a", t1, TMAX, "true", t1]])
    assert outcome(write_history(cdest, "hist", columns, replace=[first])) == "success"
    earliest = cdest.write_file(["id", START], [["1", t2]])
    update = cdest.write_file(header, [["1", "b", t2, TMAX, "true", t2]])
    response = write_history(cdest, "hist", columns, earliest=[earliest], update=[update])
    assert outcome(response) == "success"
    versions = {(r["col1"], r[START], r[END], r[ACTIVE]) for r in clake.rows(cdest.schema, "hist")}
    assert versions == {
        ("a", ts(t1), minus_ms(t2), False),
        ("b", ts(t2), ts(TMAX), True),
    }


def test_bad_input_on_the_cluster_is_a_task_and_leaves_the_table_unchanged(
    cdest: Destination, clake: Lake
) -> None:
    assert outcome(cdest.create("orders", orders())) == "success"
    good = cdest.write_file(HEADER, [["1", "1.00", "one", SYNC1, "false"]])
    assert outcome(cdest.write("orders", orders(), replace=[good])) == "success"
    snapshots = clake.snapshot_count(cdest.schema, "orders")

    bad = cdest.write_file(HEADER, [["2", "not-a-number", "two", SYNC2, "false"]])
    response = cdest.write("orders", orders(), replace=[bad])
    assert outcome(response) == "task"
    message = response.task.message
    assert "'amount'" in message and "data row 1" in message
    assert "not-a-number" not in message
    assert sorted(by_id(clake, cdest)) == [1]
    assert clake.snapshot_count(cdest.schema, "orders") == snapshots
    # The server keeps serving.
    assert outcome(cdest.describe("orders")) == "table"
