"""Delta tables in Spark's session catalog, which forgets them when the JVM stops.

Without a metastore, Spark's session catalog lives in memory: a Delta table written by an
earlier process is a folder ``<warehouse>/<schema>.db/<table>`` with a ``_delta_log`` that
no catalog names. ``attach`` registers every such folder once per JVM, before the first
request on Delta reads the catalog, so DescribeTable finds the table again; tables created
since are registered by Spark as they are created. One server process writes a warehouse
(``runtime.execute.warehouse_lock``), so no other process adds tables meanwhile.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlparse

from spark_destination.core.errors import ConfigurationError
from spark_destination.runtime.spark.java_values import java_class
from spark_destination.runtime.spark.session import SESSION_CATALOG, SESSION_WAREHOUSE_CONF

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

# The folder Delta keeps a table's log in: a table folder holds one.
DELTA_LOG: Final = "_delta_log"
# Spark's session catalog puts schema ``s`` in the folder ``s.db``.
SCHEMA_SUFFIX: Final = ".db"

_attached: set[tuple[int, str]] = set()
_guard = threading.Lock()


def session_warehouse(session: SparkSession) -> Path:
    """Where the session catalog keeps its tables (fixed when the JVM started)."""
    text = session.conf.get(SESSION_WAREHOUSE_CONF, "") or ""
    return Path(urlparse(text).path if text.startswith("file:") else text)


def attach(session: SparkSession, warehouse: str) -> None:
    """Check that Delta's tables live under ``warehouse``, and register the ones an earlier
    process left there (once per JVM)."""
    live = session_warehouse(session)
    if live.resolve() != Path(warehouse).resolve():
        raise ConfigurationError(
            f"Delta tables live under the warehouse this server's Spark started with ({live}); "
            f"this request's warehouse is {warehouse}. Start the destination with that "
            "warehouse (serve --warehouse) to write Delta tables there"
        )
    key = (id(session.sparkContext), str(live))
    with _guard:
        if key in _attached:
            return
        for log_folder in sorted(live.glob(f"*{SCHEMA_SUFFIX}/*/{DELTA_LOG}")):
            _register(session, log_folder.parent)
        _attached.add(key)


def _register(session: SparkSession, folder: Path) -> None:
    schema = folder.parent.name.removesuffix(SCHEMA_SUFFIX)
    catalog = _session_catalog(session)
    namespace = _names(session, schema)
    if not catalog.namespaceExists(namespace):
        catalog.createNamespace(namespace, java_class(session, "java.util.HashMap")())
    ident = java_class(session, "org.apache.spark.sql.connector.catalog.Identifier").of(
        namespace, folder.name
    )
    if catalog.tableExists(ident):
        return
    # The catalog API, not SQL (the runtime never writes statements): what ``CREATE TABLE t
    # USING delta LOCATION '…'`` asks of Delta's catalog. An empty schema makes Delta read the
    # table's own from its log.
    properties = java_class(session, "java.util.HashMap")()
    properties.put("provider", "delta")
    properties.put("location", str(folder))
    empty = java_class(session, "org.apache.spark.sql.types.StructType")()
    gateway = session.sparkContext._gateway
    assert gateway is not None
    transforms = gateway.new_array(
        java_class(session, "org.apache.spark.sql.connector.expressions.Transform"), 0
    )
    catalog.createTable(ident, empty, transforms, properties)
    log.info("registered the Delta table in %s", folder.name)


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
