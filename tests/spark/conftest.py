"""One SparkSession for the whole test run: a JVM costs 5-10 s to start, and a process can
hold only one (``build_session`` refuses a second)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from spark_destination.runtime.spark.session import SparkSettings, build_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_MARKER = "spark: needs a JVM and a local Spark session (slow start-up, shared across the run)"


def pytest_configure(config: pytest.Config) -> None:
    # pyproject.toml registers the marker; register it here only when run without that file
    # (``--strict-markers`` would otherwise reject it).
    registered = (line.split(":", 1)[0].strip() for line in config.getini("markers"))
    if "spark" not in registered:
        config.addinivalue_line("markers", _MARKER)


@pytest.fixture(scope="session")
def spark_settings(tmp_path_factory: pytest.TempPathFactory) -> SparkSettings:
    """The settings of the shared session; the warehouse lives in a per-run temp folder.

    The relocated Jackson jar uses the default cache (``$SPARK_DESTINATION_CACHE`` or
    ``~/.cache/spark-destination``), as in production, so it is built once per machine.
    """
    return SparkSettings(warehouse=str(tmp_path_factory.mktemp("warehouse")))


@pytest.fixture(scope="session")
def spark(spark_settings: SparkSettings) -> Iterator[SparkSession]:
    session = build_session(spark_settings)
    try:
        yield session
    finally:
        session.stop()


# --- The destination behind a real gRPC server, driven the way Fivetran drives it ------------

import random  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from pathlib import Path  # noqa: E402

import grpc  # noqa: E402

from spark_destination.core.config import parse_config  # noqa: E402
from spark_destination.core.model import Compression, Encryption, FileParams  # noqa: E402
from spark_destination.dialects.quoting import qualified  # noqa: E402
from spark_destination.server.app import create_server  # noqa: E402
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common  # noqa: E402
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb  # noqa: E402
from spark_destination.server.proto.fivetran_sdk.v2 import (  # noqa: E402
    destination_sdk_pb2_grpc as pb_grpc,
)
from spark_destination.service.engine import Engine, SessionProvider  # noqa: E402
from spark_destination.tester.batch_writer import new_key, shuffled, write_batch_file  # noqa: E402

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
UNMOD = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
TYPES = {t: getattr(common, t) for t in common.DataType.keys()}  # noqa: SIM118


def column(
    name: str,
    type_name: str,
    *,
    pk: bool = False,
    precision: int | None = None,
    scale: int | None = None,
) -> common.Column:
    col = common.Column(name=name, type=TYPES[type_name], primary_key=pk)
    if precision is not None:
        col.params.decimal.precision = precision
        col.params.decimal.scale = scale or 0
    return col


@dataclass
class Destination:
    """A Fivetran-like driver: writes batch files as Fivetran does and calls the server."""

    stub: pb_grpc.DestinationConnectorStub
    workdir: Path
    configuration: dict[str, str]
    schema: str
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    counter: int = 0

    def write_file(
        self,
        header: list[str],
        rows: list[list[str]],
        *,
        encrypted: bool = True,
    ) -> tuple[str, bytes]:
        self.counter += 1
        path = self.workdir / f"batch_{self.counter}.csv{'.zstd.aes' if encrypted else ''}"
        order = shuffled(header, self.rng)
        index = [header.index(h) for h in order]
        key = new_key()
        write_batch_file(
            path,
            order,
            ([row[i] for i in index] for row in rows),
            params=self.params(encrypted),
            key=key if encrypted else None,
            rng=self.rng,
        )
        return str(path), key

    @staticmethod
    def params(encrypted: bool = True) -> FileParams:
        return FileParams(
            compression=Compression.ZSTD if encrypted else Compression.OFF,
            encryption=Encryption.AES if encrypted else Encryption.NONE,
            null_string=NULL,
            unmodified_string=UNMOD,
        )

    def create(
        self, name: str, columns: list[common.Column], schema: str | None = None
    ) -> pb.CreateTableResponse:
        return self.stub.CreateTable(
            pb.CreateTableRequest(
                configuration=self.configuration,
                schema_name=schema or self.schema,
                table=common.Table(name=name, columns=columns),
            )
        )

    def describe(self, name: str, schema: str | None = None) -> pb.DescribeTableResponse:
        return self.stub.DescribeTable(
            pb.DescribeTableRequest(
                configuration=self.configuration, schema_name=schema or self.schema, table_name=name
            )
        )

    def alter(
        self, name: str, columns: list[common.Column], drop_columns: bool = False
    ) -> pb.AlterTableResponse:
        return self.stub.AlterTable(
            pb.AlterTableRequest(
                configuration=self.configuration,
                schema_name=self.schema,
                table=common.Table(name=name, columns=columns),
                drop_columns=drop_columns,
            )
        )

    def write(
        self,
        name: str,
        columns: list[common.Column],
        *,
        replace: list[tuple[str, bytes]] = (),
        update: list[tuple[str, bytes]] = (),
        delete: list[tuple[str, bytes]] = (),
        encrypted: bool = True,
        schema: str | None = None,
    ) -> pb.WriteBatchResponse:
        files = [*replace, *update, *delete]
        params = self.params(encrypted)
        request = pb.WriteBatchRequest(
            configuration=self.configuration,
            schema_name=schema or self.schema,
            table=common.Table(name=name, columns=columns),
            keys=dict(files) if encrypted else {},
            replace_files=[p for p, _ in replace],
            update_files=[p for p, _ in update],
            delete_files=[p for p, _ in delete],
            file_params=pb.FileParams(
                compression=params.compression.value,
                encryption=params.encryption.value,
                null_string=NULL,
                unmodified_string=UNMOD,
            ),
        )
        return self.stub.WriteBatch(request)

    def truncate(self, name: str, before: datetime, soft: bool = False) -> pb.TruncateResponse:
        request = pb.TruncateRequest(
            configuration=self.configuration,
            schema_name=self.schema,
            table_name=name,
            synced_column="_fivetran_synced",
        )
        request.utc_delete_before.FromDatetime(before.astimezone(UTC).replace(tzinfo=None))
        if soft:
            request.soft.deleted_column = "_fivetran_deleted"
        return self.stub.Truncate(request)


@dataclass
class Lake:
    """Reads tables back with a fresh child session each time (no stale catalog cache)."""

    session: SparkSession
    catalog: str

    def rows(self, schema: str, table: str, order_by: str = "") -> list[dict[str, object]]:
        frame = self.session.newSession().table(qualified(self.catalog, schema, table))
        if order_by:
            frame = frame.orderBy(order_by)
        return [row.asDict() for row in frame.collect()]

    def snapshot_count(self, schema: str, table: str) -> int:
        name = qualified(self.catalog, schema, table) + ".snapshots"
        return self.session.newSession().table(name).count()


@pytest.fixture(scope="session")
def engine(spark: SparkSession, spark_settings: SparkSettings) -> Engine:
    configuration = {"warehouse": spark_settings.warehouse, "catalog": spark_settings.catalog}
    provider = SessionProvider.shared(spark, parse_config(configuration))
    return Engine(provider, defaults=configuration)


@pytest.fixture(scope="session")
def server_address(engine: Engine) -> Iterator[str]:
    server, port = create_server(engine, port=0)
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None)


@pytest.fixture(scope="session")
def stub(server_address: str) -> Iterator[pb_grpc.DestinationConnectorStub]:
    with grpc.insecure_channel(server_address) as channel:
        yield pb_grpc.DestinationConnectorStub(channel)


_schemas = iter(range(1_000_000))


@pytest.fixture
def dest(
    stub: pb_grpc.DestinationConnectorStub, tmp_path: Path, spark_settings: SparkSettings
) -> Destination:
    """A fresh schema per test so tests never see each other's tables."""
    return Destination(
        stub=stub, workdir=tmp_path, configuration={}, schema=f"test_{next(_schemas)}"
    )


@pytest.fixture(scope="session")
def lake(spark: SparkSession, spark_settings: SparkSettings) -> Lake:
    return Lake(session=spark, catalog=spark_settings.catalog)
