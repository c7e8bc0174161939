"""Bad requests (not bad files): a table that does not exist (nothing may be created), a
malformed configuration, an AlterTable to a type the column cannot take, a Migrate of a missing
table or column, a Truncate on a missing column. Each answers a task naming what is wrong,
changes nothing (rows, Iceberg snapshots, DescribeTable) and the server keeps serving."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from spark_destination.core.names import OWN_PREFIX, RESERVED_PREFIX
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from tests.support.bad_input import (
    SECRET,
    Files,
    JvmLog,
    assert_clean_failure,
    csv_text,
    sealed,
    send,
    state,
)
from tests.support.destination import NULL, UNMOD, Destination, Lake, column

pytestmark = pytest.mark.spark


@pytest.fixture
def jvm_log(lake: Lake) -> JvmLog:
    return JvmLog(lake)


SYNC1 = "2024-03-01T10:00:00.000Z"


def table() -> list[common.Column]:
    return [
        column("id", "INT", pk=True),
        column("note", "STRING"),
        column("at", "UTC_DATETIME"),
        column("blob", "BINARY"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]


HEADER = ["id", "note", "at", "blob", "_fivetran_synced"]


def good_files(dest: Destination, first: int = 1) -> Files:
    rows = [[str(first), SECRET, SYNC1, "AAEC", SYNC1]]
    path, key = sealed(dest, f"good_{first}.csv.zstd.aes", csv_text(HEADER, rows))
    return Files(replace=[path], keys={path: key})


def with_type(columns: list[common.Column], name: str, type_name: str) -> list[common.Column]:
    out = []
    for c in columns:
        copy = common.Column()
        copy.CopyFrom(c)
        if c.name == name:
            copy.type = getattr(common, type_name)
        out.append(copy)
    return out


def migrate(dest: Destination, name: str, **operation: object) -> pb.MigrateResponse:
    return dest.stub.Migrate(
        pb.MigrateRequest(
            configuration=dest.configuration,
            details=pb.MigrationDetails(schema=dest.schema, table=name, **operation),
        )
    )


def history_batch(dest: Destination, name: str) -> pb.WriteBatchResponse:
    files = good_files(dest, 5)
    return dest.stub.WriteHistoryBatch(
        pb.WriteHistoryBatchRequest(
            configuration=dest.configuration,
            schema_name=dest.schema,
            table=common.Table(name=name, columns=table()),
            keys=files.keys,
            replace_files=files.replace,
            file_params=pb.FileParams(
                compression=pb.ZSTD,
                encryption=pb.AES,
                null_string=NULL,
                unmodified_string=UNMOD,
            ),
        )
    )


def truncate_missing_column(dest: Destination) -> pb.TruncateResponse:
    request = pb.TruncateRequest(
        configuration=dest.configuration,
        schema_name=dest.schema,
        table_name="t",
        synced_column="nope",
    )
    request.utc_delete_before.FromDatetime(datetime(2030, 1, 1, tzinfo=UTC).replace(tzinfo=None))
    return dest.stub.Truncate(request)


def with_config(dest: Destination, **configuration: str) -> Destination:
    """``dest`` (its catalog) with ``configuration``'s keys changed."""
    return Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration={**dest.configuration, **configuration},
        schema=dest.schema,
    )


Request = Callable[[Destination], object]

REQUEST_CASES: dict[str, tuple[Request, tuple[str, ...]]] = {
    "WriteBatch to a missing table": (
        lambda d: send(d, "absent", table(), good_files(d, 5)),
        ("'absent'", "does not exist"),
    ),
    "WriteHistoryBatch to a missing table": (
        lambda d: history_batch(d, "absent"),
        ("'absent'", "does not exist"),
    ),
    "catalog name with a dash": (
        lambda d: send(with_config(d, catalog="my-lake"), "t", table(), good_files(d, 5)),
        ("catalog", "'my-lake'"),
    ),
    "catalog name that is SQL": (
        lambda d: send(with_config(d, catalog="x; DROP TABLE t"), "t", table(), good_files(d, 5)),
        ("catalog",),
    ),
    "unknown master URL": (
        lambda d: send(with_config(d, spark_master="foo://bar:1"), "t", table(), good_files(d, 5)),
        ("spark_master", "'foo://bar:1'"),
    ),
    "spark_conf line without '='": (
        lambda d: send(with_config(d, spark_conf="spark.sql.foo"), "t", table(), good_files(d, 5)),
        ("spark_conf", "spark.sql.foo"),
    ),
    "spark_conf key outside spark.*": (
        lambda d: send(with_config(d, spark_conf="java.x=1"), "t", table(), good_files(d, 5)),
        ("spark_conf", "java.x"),
    ),
    "bad driver_memory": (
        lambda d: send(with_config(d, driver_memory="lots"), "t", table(), good_files(d, 5)),
        ("driver_memory",),
    ),
    "AlterTable UTC_DATETIME to INT": (
        lambda d: d.alter("t", with_type(table(), "at", "INT")),
        ("'at'", "UTC_DATETIME", "INT"),
    ),
    "AlterTable BINARY to LONG": (
        lambda d: d.alter("t", with_type(table(), "blob", "LONG")),
        ("'blob'", "BINARY", "LONG"),
    ),
    "AlterTable of a missing table": (
        lambda d: d.alter("absent", table()),
        ("'absent'",),
    ),
    "Migrate rename_column of a missing column": (
        lambda d: migrate(
            d,
            "t",
            rename=pb.RenameOperation(
                rename_column=pb.RenameColumn(from_column="nope", to_column="x")
            ),
        ),
        ("'nope'",),
    ),
    "Migrate rename_table of a missing table": (
        lambda d: migrate(
            d,
            "absent",
            rename=pb.RenameOperation(
                rename_table=pb.RenameTable(from_table="absent", to_table="x")
            ),
        ),
        ("'absent'",),
    ),
    "Migrate drop_column_in_history_mode of a missing table": (
        lambda d: migrate(
            d,
            "absent",
            drop=pb.DropOperation(
                drop_column_in_history_mode=pb.DropColumnInHistoryMode(
                    column="note", operation_timestamp="2024-01-01T00:00:00Z"
                )
            ),
        ),
        ("'absent'",),
    ),
    "Truncate on a missing synced column": (truncate_missing_column, ("'nope'",)),
}


def _tables(lake: Lake, schema: str) -> set[str]:
    session = lake.child()
    if (
        not session.sql(f"SHOW NAMESPACES IN {lake.catalog}")
        .filter(f"namespace = '{schema}'")
        .count()
    ):
        return set()
    # The destination's own tables (deferred mode's intermediate tables) are no Fivetran table.
    shown = session.sql(f"SHOW TABLES IN {lake.catalog}.{schema}").collect()
    return {r.tableName for r in shown if not r.tableName.startswith((OWN_PREFIX, RESERVED_PREFIX))}


@pytest.mark.parametrize("name", list(REQUEST_CASES))
def test_bad_request_fails_cleanly(
    name: str, dest: Destination, lake: Lake, caplog: pytest.LogCaptureFixture, jvm_log: JvmLog
) -> None:
    caplog.set_level(logging.INFO)
    assert dest.create("t", table()).WhichOneof("response") == "success"
    assert send(dest, "t", table(), good_files(dest, 1)).WhichOneof("response") == "success"
    before = state(dest, lake, "t")
    request, expected = REQUEST_CASES[name]
    response = request(dest)
    assert_clean_failure(response, expected=expected, caplog=caplog, jvm_log=jvm_log)
    assert state(dest, lake, "t") == before
    assert _tables(lake, dest.schema) == {"t"}  # nothing created, nothing dropped
    # The server keeps serving with the good configuration.
    assert send(dest, "t", table(), good_files(dest, 2)).WhichOneof("response") == "success"
    assert [r["id"] for r in lake.rows(dest.schema, "t", order_by="id")] == [1, 2]
