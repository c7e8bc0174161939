"""A Fivetran-like driver of the destination's gRPC server, and a reader of its tables.

Shared by the Spark tests (the fixtures that build them are in ``tests/spark/conftest.py``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from spark_destination.core.config import parse_config
from spark_destination.core.model import Compression, Encryption, FileParams
from spark_destination.dialects.quoting import qualified
from spark_destination.replay.batch_writer import new_key, shuffled, write_batch_file
from spark_destination.runtime.spark.session import SESSION_CATALOG
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import (
    destination_sdk_pb2_grpc as pb_grpc,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
UNMOD = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
TYPES = {t: getattr(common, t) for t in common.DataType.keys()}  # noqa: SIM118
# The write modes a test parametrized over ``dest`` runs in (``indirect``: see conftest).
WRITE_MODES = ("merge", "deferred")
# The catalogs a test parametrized over ``catalog_kind`` runs against (``indirect``: see
# conftest): the Hadoop catalog, and a real Hive metastore.
CATALOGS = ("hadoop", "hive")
# The same, and Delta Lake tables (``table_format=delta``, the session catalog): the modules
# that run every request kind once per catalog run it on Delta too.
CATALOGS_AND_DELTA = (*CATALOGS, "delta")
# The catalog kind that is Delta Lake, its request keys, and the Spark catalog its tables
# are read from.
DELTA = "delta"
DELTA_CONFIGURATION = {"table_format": "delta"}
DELTA_CATALOG = SESSION_CATALOG
# The catalog kinds that are a Hive metastore (its tables on a local disk, or on S3): each
# refuses schema and table names outside its rules, by name, before anything runs.
METASTORES = ("hive", "hive_s3")
# Deferred mode: table ``t``'s pending batches are in table ``PENDING_PREFIX + t`` (default).
PENDING_PREFIX = parse_config({}).intermediate_table_prefix


def mode_configuration(mode: str) -> dict[str, str]:
    """The configuration keys of a write mode; deferred flushes only when asked (the ``Lake``
    flushes before it reads), so a test sees no timer."""
    if mode == "merge":
        return {"write_mode": "merge"}
    return {"write_mode": mode, "merge_interval_ms": "-1"}


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
    # The server's default write mode (``SPARK_DESTINATION_WRITE_MODE``), used when
    # ``configuration`` names none.
    server_mode: str = "merge"

    @property
    def deferred(self) -> bool:
        """Whether the server writes this destination's batches in deferred mode."""
        return self.configuration.get("write_mode", self.server_mode) == "deferred"

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
    """Reads tables back with a fresh child session each time (no stale catalog cache).

    ``flush`` runs before ``rows`` reads: deferred mode's pending batches are merged first, so
    a test reads what merge mode would have written."""

    session: SparkSession
    catalog: str
    flush: Callable[[], object] | None = None
    # Sets a fresh session up to read ``catalog`` (a catalog registered at run time, not at
    # start-up, is not in a new session's settings).
    prepare: Callable[[SparkSession], object] | None = None

    def child(self) -> SparkSession:
        """A fresh child session that reads ``catalog`` (no stale catalog cache)."""
        session = self.session.newSession()
        if self.prepare is not None:
            self.prepare(session)
        return session

    def settle(self) -> None:
        """Merge deferred mode's pending batches into their tables (none pend in merge mode)."""
        if self.flush is not None:
            self.flush()

    def rows(self, schema: str, table: str, order_by: str = "") -> list[dict[str, object]]:
        self.settle()
        frame = self.child().table(qualified(self.catalog, schema, table))
        if order_by:
            frame = frame.orderBy(order_by)
        return [row.asDict() for row in frame.collect()]

    def counted(self, schema: str, table: str, *columns: str) -> Counter[tuple[object, ...]]:
        """The table as a multiset of row tuples (all columns in table order, or ``columns``):
        a row stored twice counts twice, where a set or a dict by key would hide it."""
        rows = self.rows(schema, table)
        return Counter(tuple(r[c] for c in columns) if columns else tuple(r.values()) for r in rows)

    def by_key(self, schema: str, table: str, key: str = "id") -> dict[object, dict[str, object]]:
        """The rows by ``key``, failing if a key is stored more than once: a dict alone would
        keep one of the copies and hide that a write stored the key twice."""
        rows = self.rows(schema, table)
        repeated = {k: n for k, n in Counter(r[key] for r in rows).items() if n > 1}
        assert not repeated, f"{table}: keys stored more than once (key: copies): {repeated}"
        return {r[key]: r for r in rows}

    @property
    def on_delta(self) -> bool:
        """Whether the tables read are Delta's (Spark's session catalog)."""
        return self.catalog == DELTA_CATALOG

    def current_version(self, schema: str, table: str) -> int:
        """What ``VERSION AS OF`` takes for the table as it is: Iceberg's latest snapshot id,
        Delta's latest version."""
        name = qualified(self.catalog, schema, table)
        if self.on_delta:
            (latest,) = self.child().sql(f"DESCRIBE HISTORY {name} LIMIT 1").collect()
            return int(latest["version"])
        snapshots = self.child().sql(f"SELECT snapshot_id FROM {name}.snapshots").collect()  # noqa: S608
        return int(snapshots[-1][0])

    def snapshot_count(self, schema: str, table: str) -> int:
        """How many commits the table keeps: Iceberg's snapshots, Delta's versions."""
        if self.on_delta:
            name = qualified(self.catalog, schema, table)
            return self.child().sql(f"DESCRIBE HISTORY {name}").count()
        name = qualified(self.catalog, schema, table) + ".snapshots"
        return self.child().table(name).count()
