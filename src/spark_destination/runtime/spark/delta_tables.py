"""Delta tables in Spark's session catalog: where it keeps them, and finding them again.

Delta's catalog is Spark's session catalog, whose store is chosen when the JVM starts
(``runtime.spark.session``): a Hive metastore when the JVM started for a ``hive`` catalog,
else memory, which forgets the tables when the JVM stops. In memory, a Delta table written by
an earlier process is a folder ``<warehouse>/<schema>.db/<table>`` (on a local disk or on S3)
with a ``_delta_log`` that no catalog names: ``attach`` registers every such folder once per
JVM, before the first request on Delta reads the catalog, so DescribeTable finds the table
again; tables created since are registered by Spark as they are created. One server process
writes a warehouse (on a local disk ``runtime.execute.warehouse_lock`` sees to it; on S3,
Delta's own log store assumes it), so no other process adds tables meanwhile. A metastore
keeps its tables itself: ``attach`` only checks that it is the JVM's session catalog.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlparse

from spark_destination.core.config import CatalogType
from spark_destination.core.errors import ConfigurationError
from spark_destination.core.parsers import is_uri
from spark_destination.runtime.spark.java_values import java_class
from spark_destination.runtime.spark.session import (
    CATALOG_IMPLEMENTATION_CONF,
    HIVE_IMPLEMENTATION,
    SESSION_CATALOG,
    SESSION_METASTORE_CONF,
    SESSION_WAREHOUSE_CONF,
    startup_conf,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_destination.runtime.spark.catalogs import CatalogSpec

log = logging.getLogger(__name__)

# The folder Delta keeps a table's log in: a table folder holds one.
DELTA_LOG: Final = "_delta_log"
# Spark's session catalog puts schema ``s`` in the folder ``s.db``.
SCHEMA_SUFFIX: Final = ".db"

_attached: set[tuple[int, str]] = set()
_guard = threading.Lock()


def session_warehouse(session: SparkSession) -> str:
    """Where the session catalog puts new schemas (fixed when the JVM started): a local path,
    or a URI (``s3://…``)."""
    text = session.conf.get(SESSION_WAREHOUSE_CONF, "") or ""
    return urlparse(text).path if text.startswith("file:") else text


def _same_place(live: str, wanted: str) -> bool:
    if is_uri(live) or is_uri(wanted):
        return live.rstrip("/") == wanted.rstrip("/")
    return Path(live).resolve() == Path(wanted).resolve()


def attach(session: SparkSession, spec: CatalogSpec) -> None:
    """Check that the session catalog keeps Delta tables where ``spec`` says (its warehouse,
    and its metastore for a ``hive`` catalog), and, without a metastore, register the tables
    an earlier process left in the warehouse (once per JVM)."""
    conf = startup_conf(session)
    metastore = (
        conf.get(SESSION_METASTORE_CONF, "")
        if conf.get(CATALOG_IMPLEMENTATION_CONF) == HIVE_IMPLEMENTATION
        else ""
    )
    wanted = spec.uri if spec.type is CatalogType.HIVE else ""
    if metastore != wanted:
        kept = f"the Hive metastore at {metastore}" if metastore else "memory"
        asked = f"the Hive metastore at {wanted}" if wanted else "no metastore"
        raise ConfigurationError(
            f"Delta tables are kept in Spark's session catalog, whose store is fixed when "
            f"Spark starts: this server's Spark keeps them in {kept}, and this request's "
            f"catalog names {asked}. Start the destination with this catalog (serve "
            "--catalog-type and --catalog-uri) to write Delta tables there"
        )
    live = session_warehouse(session)
    if not _same_place(live, spec.warehouse):
        raise ConfigurationError(
            f"Delta tables live under the warehouse this server's Spark started with ({live}); "
            f"this request's warehouse is {spec.warehouse}. Start the destination with that "
            "warehouse (serve --warehouse) to write Delta tables there"
        )
    if metastore:
        return
    key = (id(session.sparkContext), live)
    with _guard:
        if key in _attached:
            return
        for folder in _table_folders(session, live):
            _register(session, folder)
        _attached.add(key)


def _table_folders(session: SparkSession, warehouse: str) -> list[str]:
    """Every ``<warehouse>/<schema>.db/<table>`` folder whose Delta log holds a file, through
    Hadoop's file systems (a local disk, or S3 through S3A). An empty log folder is no table:
    a dropped table's folders stayed behind on the S3 server the tests run (its filer keeps
    folders), and Delta refuses to register a table without a log."""
    hadoop_path = java_class(session, "org.apache.hadoop.fs.Path")
    pattern = hadoop_path(f"{warehouse.rstrip('/')}/*{SCHEMA_SUFFIX}/*/{DELTA_LOG}/*")
    file_system = pattern.getFileSystem(session.sparkContext._jsc.hadoopConfiguration())
    found = file_system.globStatus(pattern) or []
    tables = {
        str(status.getPath().getParent().getParent().toString())
        for status in found
        if status.isFile()
    }
    return sorted(tables)


def _register(session: SparkSession, folder: str) -> None:
    schema_folder, table = folder.rstrip("/").rsplit("/", 2)[-2:]
    schema = schema_folder.removesuffix(SCHEMA_SUFFIX)
    catalog = _session_catalog(session)
    namespace = _names(session, schema)
    if not catalog.namespaceExists(namespace):
        catalog.createNamespace(namespace, java_class(session, "java.util.HashMap")())
    ident = java_class(session, "org.apache.spark.sql.connector.catalog.Identifier").of(
        namespace, table
    )
    if catalog.tableExists(ident):
        return
    # The catalog API, not SQL (the runtime never writes statements): what ``CREATE TABLE t
    # USING delta LOCATION '…'`` asks of Delta's catalog. An empty schema makes Delta read the
    # table's own from its log.
    properties = java_class(session, "java.util.HashMap")()
    properties.put("provider", "delta")
    properties.put("location", folder)
    empty = java_class(session, "org.apache.spark.sql.types.StructType")()
    gateway = session.sparkContext._gateway
    assert gateway is not None
    transforms = gateway.new_array(
        java_class(session, "org.apache.spark.sql.connector.expressions.Transform"), 0
    )
    catalog.createTable(ident, empty, transforms, properties)
    log.info("registered the Delta table in %s", table)


def _session_catalog(session: SparkSession) -> Any:
    from spark_destination.runtime.execute.table_loader import catalog_plugin

    return catalog_plugin(session, SESSION_CATALOG)


def _names(session: SparkSession, *names: str) -> Any:
    gateway = session.sparkContext._gateway
    assert gateway is not None
    array = gateway.new_array(java_class(session, "java.lang.String"), len(names))
    for index, name in enumerate(names):
        array[index] = name
    return array
