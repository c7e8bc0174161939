"""Read a table's schema, primary key and properties as structured values from the catalog.

Spark *displays* table properties redacted: ``SHOW TBLPROPERTIES`` and ``DESCRIBE EXTENDED``
replace every value whose key or value matches ``spark.sql.redaction.options.regex`` (default
``(?i)url``) or ``spark.redaction.regex`` (``(?i)secret|password|token|access[.]?key``) with
``*********(redacted)``. The Fivetran column metadata names the table's columns, so a table with a
column called ``url`` or ``password`` would read back as redacted text. This module therefore
asks Spark's catalog API (through py4j) for the table itself: ``TableCatalog.loadTable`` returns
the properties as a ``java.util.Map`` that no redaction setting touches, and the Iceberg table
its identifier fields as a set of names, not as text to parse.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute import delta_log
from spark_destination.runtime.execute.spark_errors import describe_spark_error, spark_failure
from spark_destination.runtime.spark.java_values import java_class, java_list, java_map

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

log = logging.getLogger(__name__)

# Iceberg's Spark table class: the one whose Iceberg table we can ask for identifier fields.
ICEBERG_SPARK_TABLE = "org.apache.iceberg.spark.source.SparkTable"
# The property in which Spark's view of an Iceberg table gives its format version.
FORMAT_VERSION_PROPERTY = "format-version"
# What a catalog's loadTable throws for a missing table or namespace: PySpark converts Spark's
# own exceptions (error classes); others arrive as the Java exception.
_NOT_FOUND_ERROR_CLASSES = frozenset({"TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND"})
_NOT_FOUND_EXCEPTIONS = frozenset(
    {
        "org.apache.spark.sql.catalyst.analysis.NoSuchTableException",
        "org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException",
        "org.apache.iceberg.exceptions.NoSuchTableException",
    }
)

# A REST catalog's 400 for a name it cannot hold (a load of such a name finds no table).
_BAD_REQUEST = "org.apache.iceberg.exceptions.BadRequestException"
# SeaweedFS answers "table name must start with a letter or digit" for a table, "invalid
# namespace name: only ... are allowed" for a namespace.
_NAME_REFUSED = ("name must", "invalid namespace name")


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogTable:
    """A table as the catalog holds it (never parsed from display text)."""

    schema: StructType
    properties: dict[str, str]
    identifier_fields: tuple[str, ...]


def load_table(session: SparkSession, table: TableRef) -> CatalogTable | None:
    """The table's schema, properties and identifier fields; None when it does not exist."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException
    from pyspark.sql.types import StructType

    try:
        loaded = spark_table(session, table)
        if loaded is None:
            return None
        properties = java_map(loaded.properties())
        # Spark's own JSON form of the schema: typed fields, not display text.
        schema = StructType.fromJson(json.loads(loaded.schema().json()))
        identifier_fields: tuple[str, ...] = ()
        if loaded.getClass().getName() == ICEBERG_SPARK_TABLE:
            names = java_list(loaded.table().schema().identifierFieldNames())
            identifier_fields = tuple(sorted(str(n) for n in names))
    except (Py4JError, PySparkException) as exc:
        raise spark_failure(
            f"reading table {table.name!r} from catalog {table.catalog!r} failed: "
            f"{describe_spark_error(exc)}",
            exc,
        ) from None
    return CatalogTable(schema=schema, properties=properties, identifier_fields=identifier_fields)


def spark_table(session: SparkSession, table: TableRef) -> Any:
    """The catalog's Java ``Table`` object for ``table``, or None when it does not exist."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import AnalysisException

    catalog, ident = catalog_and_identifier(session, table)
    try:
        return catalog.loadTable(ident)
    except AnalysisException as exc:
        # Told apart by Spark's error class, not its message. (py4j cannot call the
        # interface's default ``tableExists``, so absence is this exception.)
        if exc.getErrorClass() in _NOT_FOUND_ERROR_CLASSES:
            return None
        raise
    except Py4JJavaError as exc:
        error = exc.java_exception
        if error.getClass().getName() in _NOT_FOUND_EXCEPTIONS:
            return None
        message = str(error.getMessage())
        if error.getClass().getName() == _BAD_REQUEST and any(
            refused in message for refused in _NAME_REFUSED
        ):
            # A catalog that cannot hold the name (S3 Tables' rules) holds no such table.
            return None
        raise


def location_of(loaded: Any) -> str:
    """Where a loaded table (``spark_table``) keeps its files: an Iceberg table's location,
    or a Delta table's folder."""
    return (
        delta_log.path_of(loaded) if delta_log.is_delta(loaded) else str(loaded.table().location())
    )


def catalog_plugin(session: SparkSession, name: str) -> Any:
    """The session's Java catalog plugin called ``name``."""
    jsession = session._jsparkSession
    # Spark's CatalogManager resolves catalog settings through the *thread's* active session
    # (SQLConf.get): from a gRPC worker thread that is not this request's session, and the
    # catalog would be "not defined". PySpark pins each Python thread to one JVM thread.
    java_class(session, "org.apache.spark.sql.SparkSession").setActiveSession(jsession)
    return jsession.sessionState().catalogManager().catalog(name)


def catalog_and_identifier(session: SparkSession, table: TableRef) -> tuple[Any, Any]:
    gateway = session.sparkContext._gateway
    assert gateway is not None
    catalog = catalog_plugin(session, table.catalog)
    namespace = gateway.new_array(java_class(session, "java.lang.String"), 1)
    namespace[0] = table.schema
    identifier = java_class(session, "org.apache.spark.sql.connector.catalog.Identifier")
    ident = identifier.of(namespace, table.name)
    return catalog, ident


def drop_created(session: SparkSession, table: TableRef) -> None:
    """Drop ``table``, which a failed request created (its restore)."""
    catalog, ident = catalog_and_identifier(session, table)
    catalog.dropTable(ident)
    log.info("dropped %s.%s, created by the failed request", table.schema, table.name)
