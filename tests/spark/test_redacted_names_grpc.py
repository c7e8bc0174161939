"""Tables whose column names match Spark's redaction patterns.

Spark redacts displayed table properties whose key or value matches
``spark.sql.redaction.options.regex`` (default ``(?i)url``) or ``spark.redaction.regex``
(``(?i)secret|password|token|access[.]?key``). The Fivetran metadata property names the columns,
so ``SHOW TBLPROPERTIES`` reads it back as ``*********(redacted)``. These tests drive CreateTable,
DescribeTable, WriteBatch and AlterTable through gRPC for such tables, on the shared session with
Spark's default patterns and on a server of its own started with both patterns set to ``.*``.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import grpc
import pytest
from pyspark.sql import SparkSession

from spark_destination.dialects.quoting import qualified
from spark_destination.engine import engine as engine_module
from spark_destination.local_services.server_process import server_process
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.support.destination import NULL, UNMOD, Destination, Lake, column

pytestmark = pytest.mark.spark

SYNC = "2024-03-01T10:00:00.000Z"
SENSITIVE = ["url", "image_url", "password", "token", "secret_key", "access_key"]
OPTIONS_REGEX = "spark.sql.redaction.options.regex"
# Both of Spark's patterns made as wide as an operator can make them.
REDACT_EVERYTHING = "spark.redaction.regex=.*\nspark.sql.redaction.options.regex=.*"


def outcome(response) -> str:
    return response.WhichOneof("response")


def clicks() -> list:
    """A key-less table as Fivetran sends it: ``_fivetran_id`` is its key."""
    return [
        column("_fivetran_id", "STRING", pk=True),
        *(column(name, "STRING") for name in SENSITIVE),
        column("n", "SHORT"),
        column("doc", "JSON"),
        column("amount", "DECIMAL", precision=18, scale=4),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]


def pages() -> list:
    return [
        column("id", "INT", pk=True),
        column("url", "STRING"),
        column("_fivetran_synced", "UTC_DATETIME"),
    ]


def exercise(dest: Destination, read_rows) -> None:  # noqa: ANN001 - a callable of the caller's
    """CreateTable, DescribeTable, WriteBatch (replace, update with unmodified, delete) and
    AlterTable on both tables; DescribeTable answers exactly what was sent every time."""
    columns = clicks()
    assert outcome(dest.create("clicks", columns)) == "success"
    described = dest.describe("clicks")
    assert outcome(described) == "table"
    assert list(described.table.columns) == columns

    header = [c.name for c in columns]
    rows = [
        ["a", *(f"{name}-a" for name in SENSITIVE), "7", '{"k": 1}', "12.3456", SYNC],
        ["b", *(f"{name}-b" for name in SENSITIVE), "-3", "[]", "-0.0001", SYNC],
        ["c", *(NULL for _ in SENSITIVE), NULL, NULL, NULL, SYNC],
    ]
    update = [["a", "https://x", *(UNMOD for _ in SENSITIVE[1:]), "8", UNMOD, UNMOD, SYNC]]
    response = dest.write(
        "clicks",
        columns,
        replace=[dest.write_file(header, rows)],
        update=[dest.write_file(header, update)],
        delete=[dest.write_file(["_fivetran_id", "_fivetran_synced"], [["b", SYNC]])],
    )
    assert outcome(response) == "success", response
    stored = {r["_fivetran_id"]: r for r in read_rows("clicks")}
    assert set(stored) == {"a", "c"}
    assert stored["a"]["url"] == "https://x" and stored["a"]["password"] == "password-a"
    assert stored["a"]["n"] == 8 and stored["a"]["doc"] == '{"k": 1}'
    assert stored["a"]["amount"] == Decimal("12.3456")
    assert stored["c"]["token"] is None

    # AlterTable: a new sensitive-named column and SHORT -> INT (metadata only).
    altered = [*columns[:-1], column("api_token", "STRING"), columns[-1]]
    altered[len(SENSITIVE) + 1] = column("n", "INT")
    assert outcome(dest.alter("clicks", altered)) == "success"
    described = dest.describe("clicks")
    assert sorted(described.table.columns, key=lambda c: c.name) == sorted(
        altered, key=lambda c: c.name
    )

    # A table with a primary key and a `url` column: the key must not be read from the
    # redacted property, or every WriteBatch fails with "no primary key".
    assert outcome(dest.create("pages", pages())) == "success"
    assert list(dest.describe("pages").table.columns) == pages()
    page_rows = [["1", "https://a", SYNC], ["2", "https://b", SYNC]]
    response = dest.write(
        "pages", pages(), replace=[dest.write_file(["id", "url", "_fivetran_synced"], page_rows)]
    )
    assert outcome(response) == "success", response
    assert sorted(r["url"] for r in read_rows("pages")) == ["https://a", "https://b"]


def test_sensitive_column_names_with_spark_default_redaction(dest: Destination, lake: Lake) -> None:
    # Sanity check of the premise: the display path really is redacted on this session.
    exercise(dest, lambda table: lake.rows(dest.schema, table))
    shown = lake.child().sql(
        f"SHOW TBLPROPERTIES {qualified(lake.catalog, dest.schema, 'pages')}"  # noqa: S608
    )
    assert "redacted" in {r[0]: r[1] for r in shown.collect()}["fivetran.columns"]


def test_a_runtime_redaction_setting_in_spark_conf_applies_to_the_request(
    dest: Destination, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``spark.sql.redaction.options.regex`` can be set on the live session: a request's
    ``spark_conf`` sets it on that request's own session (where it redacts), not on the shared
    one, and nothing breaks."""
    sessions: list[SparkSession] = []
    executor = engine_module.Executor

    def recording(session: SparkSession, **kwargs: Any) -> Any:
        sessions.append(session)
        return executor(session, **kwargs)

    monkeypatch.setattr(engine_module, "Executor", recording)
    dest.configuration = {**dest.configuration, "spark_conf": f"{OPTIONS_REGEX}=.*"}
    exercise(dest, lambda table: lake.rows(dest.schema, table))
    assert sessions and all(s.conf.get(OPTIONS_REGEX) == ".*" for s in sessions)
    # It takes effect there: even a property naming nothing sensitive is shown redacted.
    show = f"SHOW TBLPROPERTIES {qualified(lake.catalog, dest.schema, 'pages')}"
    in_request = dict(sessions[-1].sql(show).collect())
    elsewhere = dict(lake.child().sql(show).collect())
    assert "redacted" in in_request["format-version"]
    assert elsewhere["format-version"] == "2"
    assert lake.session.conf.get(OPTIONS_REGEX) != ".*"


def test_a_start_up_setting_that_differs_from_the_running_jvm_is_refused(
    dest: Destination,
) -> None:
    dest.configuration = {**dest.configuration, "spark_conf": "spark.redaction.regex=.*"}
    response = dest.create("pages", pages())
    assert outcome(response) == "task"
    assert "spark.redaction.regex" in response.task.message
    assert "new JVM" in response.task.message


@pytest.fixture(scope="module")
def redacting_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A server process whose JVM starts with both redaction patterns set to ``.*``."""
    workdir = tmp_path_factory.mktemp("redacting")
    warehouse = workdir / "warehouse"
    with server_process(
        log_file=workdir / "server.log", flags=["--warehouse", str(warehouse)]
    ) as server:
        yield server.address, warehouse


def test_sensitive_column_names_with_everything_redacted(
    redacting_server: tuple[str, Path], tmp_path: Path, lake: Lake
) -> None:
    address, warehouse = redacting_server
    with grpc.insecure_channel(address) as channel:
        dest = Destination(
            stub=pb_grpc.DestinationConnectorStub(channel),
            workdir=tmp_path,
            configuration={"spark_conf": REDACT_EVERYTHING},
            schema="redacted",
        )
        session = lake.child()
        session.conf.set("spark.sql.catalog.redacted_lake", "org.apache.iceberg.spark.SparkCatalog")
        session.conf.set("spark.sql.catalog.redacted_lake.type", "hadoop")
        session.conf.set("spark.sql.catalog.redacted_lake.warehouse", str(warehouse))

        def read_rows(table: str) -> list[dict]:
            frame = session.table(qualified("redacted_lake", "redacted", table))
            return [row.asDict() for row in frame.collect()]

        exercise(dest, read_rows)
