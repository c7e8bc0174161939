"""The lake on S3, against a real S3 server (SeaweedFS, ``local_services.object_store``,
started for the run on loopback and stopped by its pid), through the gRPC server as Fivetran
drives it.

- The setup tests name each misconfiguration within seconds: a wrong secret (the key field,
  never the secret), an unknown access key, an unknown bucket, an endpoint that does not
  answer, a permission the identity lacks (the action).
- The Hadoop catalog on S3 is refused, naming the catalogs to use.
- The destination's own tables (intermediate, changes, probe) take names SeaweedFS's REST
  catalog accepts (it refuses names that do not start with a lower-case letter or digit).
- Orphan removal lists the table's location through its FileIO and leaves a sibling table's
  files and a fresh uncommitted file alone.
- pyiceberg (its REST catalog over SigV4, and ``StaticTable`` on the metadata file), DuckDB
  (``iceberg_scan`` over httpfs, offline) and Spark read the same rows.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from spark_destination.engine.engine import Engine
from spark_destination.local_services.object_store import (
    NO_LIST,
    READ_ONLY,
    REGION,
    TABLE_BUCKET,
    ObjectStore,
)
from spark_destination.local_services.server_process import free_port
from spark_destination.planner.maintenance import MaintenancePolicy
from spark_destination.server import form
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.destination import NULL, UNMOD, Destination, Lake, column

pytestmark = pytest.mark.spark

ON_S3 = pytest.mark.parametrize("catalog_kind", ["rest_s3", "hive_s3"], indirect=True)
COLUMNS = [column("id", "INT", pk=True), column("v", "STRING"), column("n", "INT")]
HEADER = [c.name for c in COLUMNS]
# A setup test must answer a misconfiguration within this (the form's user waits on it).
SETUP_ANSWER_S = 30.0


def _test(dest: Destination, name: str, configuration: dict[str, str]) -> tuple[Any, float]:
    started = time.monotonic()
    response = dest.stub.Test(common.TestRequest(name=name, configuration=configuration))
    return response, time.monotonic() - started


def _ok(response: Any) -> None:
    assert response.WhichOneof("response") == "success", response


def _failure(dest: Destination, configuration: dict[str, str]) -> str:
    """The first failing setup test's message for ``configuration`` (they run in the form's
    order, as Fivetran runs them), each answered within ``SETUP_ANSWER_S``."""
    for name in (form.TEST_SETTINGS, form.TEST_WAREHOUSE, form.TEST_CATALOG):
        response, seconds = _test(dest, name, configuration)
        print(f"setup test {name} answered in {seconds:.1f} s")
        assert seconds < SETUP_ANSWER_S, (name, seconds)
        if response.WhichOneof("response") == "failure":
            return str(response.failure)
    raise AssertionError("every setup test passed")


def _secrets(configuration: dict[str, str]) -> list[str]:
    return [configuration[k] for k in ("s3_secret_access_key",) if configuration.get(k)]


@ON_S3
def test_a_wrong_secret_is_named_by_its_key_field_never_its_value(dest: Destination) -> None:
    wrong = {**dest.configuration, "s3_secret_access_key": "not-the-secret-" + uuid.uuid4().hex}
    message = _failure(dest, wrong)
    assert "s3_secret_access_key" in message, message
    for secret in (*_secrets(wrong), *_secrets(dest.configuration)):
        assert secret not in message


@ON_S3
def test_an_unknown_access_key_is_named(dest: Destination) -> None:
    message = _failure(dest, {**dest.configuration, "s3_access_key_id": "SDNOBODY" + "0" * 12})
    assert "s3_access_key_id" in message, message


@pytest.mark.parametrize("catalog_kind", ["hive_s3"], indirect=True)
def test_an_unknown_bucket_is_named(dest: Destination) -> None:
    missing = f"s3://nobucket{uuid.uuid4().hex[:8]}/lake"
    message = _failure(dest, {**dest.configuration, "warehouse": missing})
    assert "does not exist" in message and "warehouse" in message, message


@ON_S3
def test_an_endpoint_that_does_not_answer_is_named(dest: Destination) -> None:
    silent = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    message = _failure(dest, {**dest.configuration, "s3_endpoint": silent})
    assert "does not answer" in message and "s3_endpoint" in message, message


@pytest.mark.parametrize(
    ("identity", "action"), [(READ_ONLY, "s3:PutObject"), (NO_LIST, "s3:ListBucket")]
)
@pytest.mark.parametrize("catalog_kind", ["hive_s3"], indirect=True)
def test_a_missing_permission_is_named_by_its_action(
    dest: Destination, s3_store: ObjectStore, identity: str, action: str
) -> None:
    who = s3_store.identities[identity]
    configuration = {
        **dest.configuration,
        "s3_access_key_id": who.access_key,
        "s3_secret_access_key": who.secret_key,
    }
    message = _failure(dest, configuration)
    assert action in message, message
    assert who.secret_key not in message


@pytest.mark.parametrize("catalog_kind", ["hive_s3"], indirect=True)
def test_a_write_the_bucket_refuses_is_a_task_and_changes_nothing(
    dest: Destination, lake: Lake, s3_store: ObjectStore
) -> None:
    """A permission the bucket refuses is the user's to fix: a task naming the table (never a
    gRPC error Fivetran would retry for ever), the table as it was, the server serving on."""
    _ok(dest.create("t", COLUMNS))
    _ok(dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, [["1", "a", "1"]])]))
    before = Counter(tuple(r.values()) for r in lake.rows(dest.schema, "t"))
    who = s3_store.identities[READ_ONLY]
    refused = Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration={
            **dest.configuration,
            "s3_access_key_id": who.access_key,
            "s3_secret_access_key": who.secret_key,
        },
        schema=dest.schema,
    )
    batch = dest.write_file(HEADER, [["2", "b", "2"]])
    response = refused.write("t", COLUMNS, replace=[batch])
    assert response.WhichOneof("response") == "task", response
    assert "'t'" in response.task.message and who.secret_key not in response.task.message
    assert Counter(tuple(r.values()) for r in lake.rows(dest.schema, "t")) == before
    _ok(dest.write("t", COLUMNS, replace=[batch]))


def test_the_hadoop_catalog_on_s3_is_refused_naming_the_catalogs_to_use(
    dest: Destination, s3_store: ObjectStore
) -> None:
    configuration = {**s3_store.s3_configuration(), "warehouse": s3_store.bucket_uri("wh")}
    response, _ = _test(dest, form.TEST_SETTINGS, configuration)
    assert response.WhichOneof("response") == "failure"
    assert "cannot keep tables on S3" in response.failure
    assert "catalog_type rest" in response.failure and "hive" in response.failure
    created = dest.stub.CreateTable(
        pb.CreateTableRequest(
            configuration=configuration,
            schema_name=dest.schema,
            table=common.Table(name="t", columns=COLUMNS),
        )
    )
    assert created.WhichOneof("response") == "task"
    assert "cannot keep tables on S3" in created.task.message


@pytest.mark.parametrize("catalog_kind", ["rest_s3"], indirect=True)
def test_the_destinations_own_tables_fit_an_s3_tables_style_catalog(
    dest: Destination, lake: Lake
) -> None:
    # SeaweedFS's catalog refuses a table or namespace name that does not start with a
    # lower-case letter or digit: the earlier __sd_ names failed the first CreateTable there.
    deferred = Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration={
            **dest.configuration,
            "write_mode": "deferred",
            "merge_interval_ms": "-1",
            "bad_value_policy": "null",
        },
        schema=dest.schema,
    )
    _ok(deferred.create("t", COLUMNS))
    batch = deferred.write_file(HEADER, [["1", "a", "10"], ["2", "b", "not a number"]])
    written = deferred.write("t", COLUMNS, replace=[batch])
    assert written.WhichOneof("response") == "warning", written
    tables = {
        row[1]
        for row in lake.child().sql(f"SHOW TABLES IN {lake.catalog}.`{dest.schema}`").collect()
    }
    assert tables == {"t", "sd__pending__t", "sd__changes"}
    for name in ("TEST_SETTINGS", "TEST_WAREHOUSE", "TEST_CATALOG"):  # the sd__setup probe
        _ok(_test(dest, getattr(form, name), dest.configuration)[0])
    assert Counter(tuple(r.values()) for r in lake.rows(dest.schema, "t")) == Counter(
        {(1, "a", 10): 1, (2, "b", None): 1}
    )


@ON_S3
def test_orphan_removal_leaves_a_sibling_tables_files_and_a_fresh_uncommitted_file(
    dest: Destination, lake: Lake, engine: Engine
) -> None:
    _ok(dest.create("t", COLUMNS))
    _ok(dest.create("t2", COLUMNS))  # its location starts with t's
    for table, value in (("t", "a"), ("t2", "b")):
        for i in range(2):
            batch = dest.write_file(HEADER, [[str(i), value, str(i)]])
            _ok(dest.write(table, COLUMNS, replace=[batch]))
    session = lake.child()
    location = (
        session.sql(f"DESCRIBE TABLE EXTENDED {lake.catalog}.`{dest.schema}`.t")
        .filter("col_name = 'Location'")
        .collect()[0]["data_type"]
    )
    # A write still in flight: a data file under t's location that no snapshot references.
    io = _file_io(session, lake, dest.schema, "t")
    fresh = f"{location}/data/in-flight-{uuid.uuid4().hex}.parquet"
    stream = io.newOutputFile(fresh).createOrOverwrite()
    stream.write(bytearray(b"PAR1 not yet committed"))
    stream.close()
    t2_before = _files(lake, dest.schema, "t2")
    rows_before = Counter(tuple(r.values()) for r in lake.rows(dest.schema, "t2"))

    report = engine.maintain(
        dest.configuration,
        dest.schema,
        "t",
        policy=MaintenancePolicy(retention=timedelta(0)),
        now=datetime.now(UTC) + timedelta(seconds=1),
    )
    assert report.after.snapshots <= report.before.snapshots
    assert io.newInputFile(fresh).exists(), "a file a write has not committed yet was deleted"
    assert _files(lake, dest.schema, "t2") == t2_before
    assert Counter(tuple(r.values()) for r in lake.rows(dest.schema, "t2")) == rows_before
    io.deleteFile(fresh)


def _file_io(session: Any, lake: Lake, schema: str, table: str) -> Any:
    """The Iceberg table's own FileIO (the catalog's S3FileIO, its credentials)."""
    jvm = session.sparkContext._jvm
    plugin = session._jsparkSession.sessionState().catalogManager().catalog(lake.catalog)
    namespace = session.sparkContext._gateway.new_array(jvm.java.lang.String, 1)
    namespace[0] = schema
    ident = jvm.org.apache.spark.sql.connector.catalog.Identifier.of(namespace, table)
    return plugin.loadTable(ident).table().io()


def _files(lake: Lake, schema: str, table: str) -> set[str]:
    frame = lake.child().table(f"{lake.catalog}.`{schema}`.`{table}`.all_files")
    return {row["file_path"] for row in frame.select("file_path").collect()}


@ON_S3
def test_pyiceberg_duckdb_and_spark_read_the_same_rows_from_s3(
    dest: Destination, lake: Lake, s3_store: ObjectStore, catalog_kind: str
) -> None:
    _ok(dest.create("t", COLUMNS))
    upsert = dest.write_file(HEADER, [["1", "a", "10"], ["2", "b", "20"], ["3", NULL, "30"]])
    _ok(dest.write("t", COLUMNS, replace=[upsert]))
    update = dest.write_file(HEADER, [["2", "B", UNMOD]])
    delete = dest.write_file(HEADER, [["3", NULL, NULL]])
    _ok(dest.write("t", COLUMNS, update=[update], delete=[delete]))  # a delete file on S3
    spark_rows = Counter(tuple(r.values()) for r in lake.rows(dest.schema, "t"))
    assert spark_rows == Counter({(1, "a", 10): 1, (2, "B", 20): 1})

    admin = s3_store.admin
    s3 = {
        "s3.endpoint": s3_store.endpoint,
        "s3.access-key-id": admin.access_key,
        "s3.secret-access-key": admin.secret_key,
        "s3.region": REGION,
        "s3.force-virtual-addressing": "false",
    }
    metadata = _metadata_location(lake, dest.schema, "t")
    from pyiceberg.table import StaticTable

    static = StaticTable.from_metadata(metadata, properties=s3).scan().to_arrow()
    assert _arrow_rows(static) == spark_rows
    if catalog_kind == "rest_s3":
        from pyiceberg.catalog.rest import RestCatalog

        catalog = RestCatalog(
            "seaweed",
            uri=s3_store.catalog_uri,
            warehouse=f"s3://{TABLE_BUCKET}",
            **{
                "rest.sigv4-enabled": "true",
                "rest.signing-region": REGION,
                "rest.signing-name": "s3",
                "client.access-key-id": admin.access_key,
                "client.secret-access-key": admin.secret_key,
                "client.region": REGION,
                **s3,
            },
        )
        through = catalog.load_table((dest.schema, "t")).scan().to_arrow()
        assert _arrow_rows(through) == spark_rows
    assert _duckdb_rows(metadata, s3_store) == spark_rows


def _metadata_location(lake: Lake, schema: str, table: str) -> str:
    frame = lake.child().table(f"{lake.catalog}.`{schema}`.`{table}`.metadata_log_entries")
    return str(frame.orderBy("timestamp", ascending=False).first()["file"])


def _arrow_rows(table: Any) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row.values()) for row in table.select(HEADER).to_pylist())


def _duckdb_rows(metadata: str, s3_store: ObjectStore) -> Counter[tuple[Any, ...]]:
    import duckdb

    from spark_destination.cli.reading import duckdb_extension_dir

    admin = s3_store.admin
    connection = duckdb.connect()
    connection.execute(f"SET extension_directory = '{duckdb_extension_dir()}'")
    connection.execute("SET autoinstall_known_extensions = false")
    connection.execute("LOAD httpfs")
    connection.execute("LOAD iceberg")
    endpoint = s3_store.endpoint.removeprefix("http://")
    connection.execute(
        "CREATE SECRET seaweed (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, "
        "URL_STYLE 'path', USE_SSL false)",
        [admin.access_key, admin.secret_key, REGION, endpoint],
    )
    rows = connection.execute(
        "SELECT id, v, n FROM iceberg_scan(?)", [metadata.replace("s3a://", "s3://")]
    ).fetchall()
    return Counter(tuple(row) for row in rows)


@pytest.mark.parametrize("catalog_kind", ["rest_s3"], indirect=True)
def test_a_name_the_catalog_refuses_is_a_task_naming_it_and_nothing_is_created(
    dest: Destination,
) -> None:
    # Fivetran names a table that starts with a digit with a leading underscore; an S3
    # Tables-style catalog takes no such name.
    response = dest.create("_2024_sales", COLUMNS)
    assert response.WhichOneof("response") == "task", response
    assert "_2024_sales" in response.task.message
    assert "must start with a letter or digit" in response.task.message
    assert dest.describe("_2024_sales").not_found


@ON_S3
def test_the_s3_secret_never_reaches_a_log_a_message_or_the_tables(
    dest: Destination, lake: Lake, capfd: pytest.CaptureFixture[str], caplog: Any
) -> None:
    import logging

    caplog.set_level(logging.INFO)  # the server's level (its log setup keeps py4j at WARNING)
    secret = dest.configuration["s3_secret_access_key"]
    for name in (form.TEST_SETTINGS, form.TEST_WAREHOUSE, form.TEST_CATALOG):
        _ok(_test(dest, name, dest.configuration)[0])
    _ok(dest.create("t", COLUMNS))
    _ok(dest.write("t", COLUMNS, replace=[dest.write_file(HEADER, [["1", "a", "1"]])]))
    bad = _test(dest, form.TEST_WAREHOUSE, {**dest.configuration, "s3_access_key_id": "SDX"})[0]
    assert bad.WhichOneof("response") == "failure"
    session = lake.child()
    table = f"{lake.catalog}.`{dest.schema}`.t"
    summaries = [str(r["summary"]) for r in session.table(f"{table}.snapshots").collect()]
    properties = [str(r) for r in session.sql(f"SHOW TBLPROPERTIES {table}").collect()]
    out, err = capfd.readouterr()
    for text in (out, err, caplog.text, bad.failure, *summaries, *properties):
        assert secret not in text
