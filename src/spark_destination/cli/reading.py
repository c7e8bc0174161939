"""The last lines of ``demo`` and ``replay``: where the warehouse is and how to read a table
with other engines (Iceberg is an open format: Spark SQL, pyiceberg and DuckDB read it as is).

Every path printed is the real one: the warehouse, the table's folder and its newest metadata
file, and the folder the DuckDB extension wheels install their extensions into.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sqlglot import exp

from spark_destination.core.config import CatalogType, DestinationConfig, TableFormat
from spark_destination.dialects.quoting import qualified
from spark_destination.runtime.spark.artifacts import ARTIFACTS, ICEBERG_RUNTIME, JarGroup
from spark_destination.runtime.spark.delta_tables import SCHEMA_SUFFIX
from spark_destination.runtime.spark.provider import settings_for
from spark_destination.runtime.spark.session import (
    DELTA_CATALOG_CLASS,
    DELTA_EXTENSIONS,
    SESSION_CATALOG_CONF,
)

if TYPE_CHECKING:
    from spark_destination.local_services.object_store import ObjectStore

# The DuckDB release whose Iceberg and Avro extensions ship as wheels (they load offline).
DUCKDB_PACKAGES: Final = (
    "duckdb==1.4.4 duckdb-ext-iceberg==1.4.4.20260205 duckdb-ext-avro==1.4.4.20260205"
)
# The same DuckDB release's Delta extension (delta_scan; it reads deletion vectors).
DUCKDB_DELTA_PACKAGES: Final = "duckdb==1.4.4 duckdb-ext-delta==1.4.4.20260205"
_METADATA = re.compile(r"v(\d+)\.metadata\.json")


def duckdb_extension_dir() -> str:
    """Where the ``duckdb-ext-*`` wheels put their extensions (installed or not yet)."""
    spec = importlib.util.find_spec("duckdb_ext")
    if spec is not None and spec.submodule_search_locations:
        return str(Path(next(iter(spec.submodule_search_locations))) / "extensions")
    return str(Path(sysconfig.get_paths()["purelib"]) / "duckdb_ext" / "extensions")


def newest_metadata(table_folder: str) -> str:
    """The table's newest ``metadata/vN.metadata.json`` (Hadoop catalog layout)."""
    folder = Path(table_folder) / "metadata"
    versions = [
        (int(m.group(1)), p)
        for p in (folder.iterdir() if folder.is_dir() else ())
        if (m := _METADATA.fullmatch(p.name))
    ]
    return str(max(versions)[1]) if versions else str(folder / "vN.metadata.json")


def _duckdb(statement: exp.Expression) -> str:
    return statement.sql("duckdb", normalize_functions=False) + ";"


def _duckdb_set(name: str, value: exp.Expression) -> str:
    item = exp.SetItem(this=exp.EQ(this=exp.column(name), expression=value))
    return _duckdb(exp.Set(expressions=[item]))


def reading_hints(config: DestinationConfig, schema: str, tables: Sequence[str]) -> str:
    """~8 lines on reading the first of ``tables`` with Spark SQL, pyiceberg and DuckDB."""
    spec = settings_for(config).catalog_spec
    if spec.type is not CatalogType.HADOOP or not tables:
        return ""
    if config.table_format is TableFormat.DELTA:
        return delta_reading_hints(spec.warehouse, schema, tables[0])
    table = tables[0]
    folder = f"{spec.warehouse.rstrip('/')}/{schema}/{table}"
    prefix = f"spark.sql.catalog.{config.catalog}"
    spark_select = exp.select("*").from_(
        exp.to_table(qualified(config.catalog, schema, table), dialect="spark")
    )
    spark_sql = [
        "spark-sql",
        "--packages",
        ICEBERG_RUNTIME.coordinate,
        *("--conf", f"{prefix}=org.apache.iceberg.spark.SparkCatalog"),
        *("--conf", f"{prefix}.type=hadoop"),
        *("--conf", f"{prefix}.warehouse={spec.warehouse}"),
        *("-e", spark_select.sql("spark")),
    ]
    scan = exp.Anonymous(this="iceberg_scan", expressions=[exp.Literal.string(folder)])
    return "\n".join(
        [
            f"Warehouse: {spec.warehouse} (Iceberg tables, Hadoop catalog named "
            f"{config.catalog}). Read {schema}.{table} from elsewhere:",
            f"  Spark SQL: {shlex.join(spark_sql)}",
            "  pyiceberg: from pyiceberg.table import StaticTable; "
            f"StaticTable.from_metadata({newest_metadata(folder)!r}).scan().to_arrow()",
            f"  DuckDB, offline (pip install {DUCKDB_PACKAGES}):",
            "    " + _duckdb_set("extension_directory", exp.Literal.string(duckdb_extension_dir())),
            "    " + _duckdb_set("autoinstall_known_extensions", exp.false()) + " LOAD iceberg;",
            "    " + _duckdb(exp.select("*").from_(scan)),
            "",
        ]
    )


def s3_reading_hints(
    store: ObjectStore, config: DestinationConfig, schema: str, tables: Sequence[str]
) -> str:
    """How to read the first of ``tables`` from SeaweedFS's REST catalog (while it serves)."""
    if not tables:
        return ""
    table = tables[0]
    admin = store.admin
    prefix = f"spark.sql.catalog.{config.catalog}"
    conf = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".uri": store.catalog_uri,
        ".warehouse": config.warehouse,
        ".rest.auth.type": "sigv4",
        ".rest.signing-name": config.catalog_signing_name,
        ".rest.signing-region": config.s3_region,
        ".rest.access-key-id": admin.access_key,
        ".rest.secret-access-key": "$SECRET",
        ".io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        ".client.region": config.s3_region,
        ".s3.endpoint": store.endpoint,
        ".s3.path-style-access": "true",
        ".s3.access-key-id": admin.access_key,
        ".s3.secret-access-key": "$SECRET",
    }
    spark_select = exp.select("*").from_(
        exp.to_table(qualified(config.catalog, schema, table), dialect="spark")
    )
    bundle = ICEBERG_RUNTIME.coordinate.replace(
        "iceberg-spark-runtime-3.5_2.12", "iceberg-aws-bundle"
    )
    spark_sql = [
        "spark-sql",
        "--packages",
        f"{ICEBERG_RUNTIME.coordinate},{bundle}",
        *(arg for key, value in conf.items() for arg in ("--conf", f"{prefix}{key}={value}")),
        *("-e", spark_select.sql("spark")),
    ]
    secrets = store.folder / "identities.json"
    return "\n".join(
        [
            f"Tables in SeaweedFS's Iceberg REST catalog at {store.catalog_uri} (S3 at "
            f"{store.endpoint}, warehouse {config.warehouse}); $SECRET is the admin "
            f"identity's secret in {secrets}. While scripts/object_store.sh --dir "
            f"{store.folder} serves them (it prints the ports of each start), read "
            f"{schema}.{table}:",
            "  Spark SQL: " + shlex.join(spark_sql).replace("'$SECRET'", '"$SECRET"'),
            "  pyiceberg (pip install pyiceberg boto3): from pyiceberg.catalog.rest import "
            f"RestCatalog; RestCatalog('sw', uri={store.catalog_uri!r}, "
            f"warehouse={config.warehouse!r}, **{{'rest.sigv4-enabled': 'true', "
            f"'rest.signing-name': 's3', 'rest.signing-region': {config.s3_region!r}, "
            f"'client.access-key-id': {admin.access_key!r}, 'client.secret-access-key': SECRET, "
            f"'client.region': {config.s3_region!r}, 's3.endpoint': {store.endpoint!r}}})"
            f".load_table(({schema!r}, {table!r})).scan().to_arrow()",
            "  DuckDB, offline: iceberg_scan over httpfs with an S3 secret for this endpoint "
            "(docs/operations.md, Reading from other engines).",
            "",
        ]
    )


def delta_reading_hints(warehouse: str, schema: str, table: str) -> str:
    """~8 lines on reading a Delta table with Spark SQL, delta-rs and DuckDB."""
    folder = f"{warehouse.rstrip('/')}/{schema}{SCHEMA_SUFFIX}/{table}"
    delta_jars = ",".join(a.coordinate for a in ARTIFACTS if a.jar_group is JarGroup.DELTA)
    by_path = exp.Table(this=exp.to_identifier(folder, quoted=True), db=exp.to_identifier("delta"))
    spark_sql = [
        "spark-sql",
        "--packages",
        delta_jars,
        *("--conf", f"spark.sql.extensions={DELTA_EXTENSIONS}"),
        *("--conf", f"{SESSION_CATALOG_CONF}={DELTA_CATALOG_CLASS}"),
        *("-e", exp.select("*").from_(by_path).sql("spark")),
    ]
    scan = exp.Anonymous(this="delta_scan", expressions=[exp.Literal.string(folder)])
    # delta-rs's query engine applies column mapping and deletion vectors (its plain Arrow
    # export refuses tables with either).
    everything = exp.select("*").from_("t").sql("duckdb")
    return "\n".join(
        [
            f"Warehouse: {warehouse} (Delta tables, one folder per table). Read "
            f"{schema}.{table} from elsewhere:",
            f"  Spark SQL: {shlex.join(spark_sql)}",
            "  delta-rs (pip install deltalake): from deltalake import DeltaTable, QueryBuilder; "
            f"QueryBuilder().register('t', DeltaTable({folder!r})).execute({everything!r})"
            ".read_all()",
            f"  DuckDB, offline (pip install {DUCKDB_DELTA_PACKAGES}):",
            "    " + _duckdb_set("extension_directory", exp.Literal.string(duckdb_extension_dir())),
            "    " + _duckdb_set("autoinstall_known_extensions", exp.false()) + " LOAD delta;",
            "    " + _duckdb(exp.select("*").from_(scan)),
            "",
        ]
    )
