"""Both ways of handing a batch to Spark give the same table: Arrow through the driver (what a
cluster master uses) and Parquet on RAM-backed tmpfs (the local default). Each run checks the
way it claims was the way taken (tmpfs staging falls back to Arrow when it has no room, which
would make both runs one way)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from spark_destination.core.config import parse_config
from spark_destination.core.model import Column, DataType, DecimalParams, FileParams, Table
from spark_destination.core.requests import BatchFiles, CreateTableRequest, WriteBatchRequest
from spark_destination.dialects.quoting import qualified
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.runtime.batch import staging
from spark_destination.runtime.batch.staging import Transport
from spark_destination.runtime.batch.staging_space import STAGING_DIR_ENV, staging_dir
from spark_destination.runtime.spark.session import SparkSettings
from tests.support.destination import Lake
from tests.support.ram_scratch import unmet


def staging_need() -> str:
    """What the tmpfs transport's tests need, said when they skip (``staging_dir``)."""
    configured = os.environ.get(STAGING_DIR_ENV, "").strip()
    if configured:
        return f"a writable staging folder (${STAGING_DIR_ENV}={configured} is not one)"
    return "a writable RAM-backed staging folder (/dev/shm)"


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


def _record_routes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which way each staged batch reached Spark: ``arrow`` or ``tmpfs``."""
    routes: list[str] = []
    arrow_frame, on_tmpfs = staging.arrow_frame, staging.Stager._stage_on_tmpfs

    def through_arrow(session: Any, table: Any) -> Any:
        routes.append("arrow")
        return arrow_frame(session, table)

    def through_tmpfs(self: staging.Stager, table: Any) -> Any:
        frame = on_tmpfs(self, table)
        if frame is not None:
            routes.append("tmpfs")
        return frame

    monkeypatch.setattr(staging, "arrow_frame", through_arrow)
    monkeypatch.setattr(staging.Stager, "_stage_on_tmpfs", through_tmpfs)
    return routes


def _engine(
    spark: SparkSession,
    spark_settings: SparkSettings,
    catalog_configuration: dict[str, str],
    transport: Transport,
    schema: str,
) -> Engine:
    """An engine staging through ``transport``, with ``TABLE`` created in ``schema``."""
    configuration = {"warehouse": spark_settings.warehouse, "catalog": spark_settings.catalog}
    engine = Engine(
        SessionProvider.shared(spark, parse_config(configuration)),
        defaults={**configuration, **catalog_configuration},
        transport=transport,
    )
    engine.apply({}, CreateTableRequest(schema=schema, table=TABLE))
    return engine


Rows = tuple[list[str], list[list[str]]]  # a batch file's header and rows


def _files(folder: Path, replace: Rows, update: Rows) -> BatchFiles:
    """A replace file and an update file, each encrypted with a key of its own."""
    paths = {"replace": folder / "r.csv", "update": folder / "u.csv"}
    keys = {str(path): new_key() for path in paths.values()}
    for kind, (header, rows) in (("replace", replace), ("update", update)):
        path = paths[kind]
        write_batch_file(path, header, rows, params=PARAMS, key=keys[str(path)])
    return BatchFiles(
        replace=(str(paths["replace"]),), update=(str(paths["update"]),), params=PARAMS, keys=keys
    )


@pytest.mark.parametrize(
    ("transport", "route"), [(Transport.ARROW, "arrow"), (Transport.TMPFS_PARQUET, "tmpfs")]
)
def test_transports_give_the_same_table(
    transport: Transport,
    route: str,
    spark: SparkSession,
    spark_settings: SparkSettings,
    catalog_configuration: dict[str, str],
    lake: Lake,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if transport is Transport.TMPFS_PARQUET and staging_dir() is None:
        pytest.skip(unmet(staging_need()))
    schema = f"transport_{transport.name.lower()}"
    engine = _engine(spark, spark_settings, catalog_configuration, transport, schema)
    files = _files(
        tmp_path,
        replace=(
            ["note", "id", "amount"],
            [["a", "1", "1.10"], ["b", "2", "NUL"], ["b2", "2", "2.20"]],
        ),
        update=(["id", "note", "amount"], [["1", "", "UNM"], ["9", "x", "9.99"]]),
    )
    routes = _record_routes(monkeypatch)
    result = engine.apply({}, WriteBatchRequest(schema=schema, table=TABLE, files=files))
    assert routes == [route]
    assert result.outcome is not None and result.outcome.staged_rows == 5
    rows = lake.child().table(qualified(lake.catalog, schema, "t")).orderBy("id").collect()
    assert [(r.id, str(r.amount), r.note) for r in rows] == [(1, "1.10", ""), (2, "2.20", "b2")]


def test_a_big_batch_staged_as_several_parquet_files_is_read_whole(
    spark: SparkSession,
    spark_settings: SparkSettings,
    catalog_configuration: dict[str, str],
    lake: Lake,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if staging_dir() is None:
        pytest.skip(unmet(staging_need()))
    # Pieces of two rows, three threads' worth: the 9 staged rows go into three files.
    monkeypatch.setattr(staging, "_ROW_GROUP_ROWS", 2)
    monkeypatch.setattr(staging, "_ROW_GROUPS_PER_PIECE", 1)
    monkeypatch.setattr(staging, "WORKERS", 3)
    written: list[int] = []
    on_tmpfs = staging.Stager._stage_on_tmpfs

    def counting(self: staging.Stager, table: Any) -> Any:
        frame = on_tmpfs(self, table)
        written.append(len(list(self._dirs[-1].glob("*.parquet"))))
        return frame

    monkeypatch.setattr(staging.Stager, "_stage_on_tmpfs", counting)
    schema = "transport_pieces"
    engine = _engine(spark, spark_settings, catalog_configuration, Transport.TMPFS_PARQUET, schema)
    files = _files(
        tmp_path,
        replace=(["id", "amount", "note"], [[str(i), f"{i}.00", f"n{i}"] for i in range(1, 8)]),
        update=(["id", "note", "amount"], [["3", "changed", "UNM"], ["8", "new", "8.00"]]),
    )
    result = engine.apply({}, WriteBatchRequest(schema=schema, table=TABLE, files=files))
    assert written == [3]
    assert result.outcome is not None and result.outcome.staged_rows == 9
    table = lake.child().table(qualified(lake.catalog, schema, "t")).orderBy("id").collect()
    expected = [(i, f"{i}.00", "changed" if i == 3 else f"n{i}") for i in range(1, 8)]
    # An update of a key the table lacks is no row (Fivetran's update semantics).
    assert [(r.id, str(r.amount), r.note) for r in table] == expected
