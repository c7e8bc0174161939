"""Databricks SQL over Delta Lake: rendered and parse-checked here, executed elsewhere.

Built from the IR with the same lowering as Spark + Iceberg (Databricks runs Spark's SQL
engine), with Delta's own rules where they differ. Each rule below was checked against the
Databricks / Delta Lake documentation (README, "Databricks SQL on Delta Lake").
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from spark_destination.core.model import DataType
from spark_destination.dialects.base import Dialect, KeyStyle
from spark_destination.dialects.skeletons import Skeletons
from spark_destination.dialects.spark_iceberg import SPARK_TYPE_NAMES

DATABRICKS_DELTA: Final = Dialect(
    name="databricks_delta",
    table_format="Delta",
    using="delta",
    # sqlglot's own Databricks reader keeps CAST a strict cast; its Spark reader would turn
    # every CAST into TRY_CAST when printed for Databricks (bad values -> silent NULLs).
    sqlglot_dialect="databricks",
    sqlglot_version="30.30",
    skeletons=Skeletons(
        folder="databricks_delta",
        overrides=frozenset({"create_namespace", "show_namespaces"}),
        own=frozenset({"add_primary_key", "drop_primary_key"}),
        commands=frozenset({"show_namespaces"}),
    ),
    table_properties=(
        # Renames and drops are metadata-only, and column names may hold spaces and other
        # characters Parquet refuses (Delta column mapping, reader 2 / writer 5).
        ("delta.columnMapping.mode", "name"),
        # MERGE, UPDATE and DELETE mark rows instead of rewriting files (merge-on-read).
        ("delta.enableDeletionVectors", "true"),
        # ALTER COLUMN ... TYPE widens in place (Databricks Runtime 15.4 LTS and above).
        ("delta.enableTypeWidening", "true"),
        # TIMESTAMP_NTZ columns added later need the table feature enabled up front.
        ("delta.feature.timestampNtz", "supported"),
    ),
    # Delta has SMALLINT (and every other type Spark declares); NAIVE_TIME is text.
    type_names=SPARK_TYPE_NAMES,
    stored_as=MappingProxyType({}),
    # Delta type widening, less the changes that need a manual commit or precision rules
    # (integers to DECIMAL; DECIMAL scale up): those take the rewrite path.
    widenings=frozenset(
        {
            (DataType.SHORT, DataType.INT),
            (DataType.SHORT, DataType.LONG),
            (DataType.SHORT, DataType.DOUBLE),
            (DataType.INT, DataType.LONG),
            (DataType.INT, DataType.DOUBLE),
            (DataType.FLOAT, DataType.DOUBLE),
            (DataType.NAIVE_DATE, DataType.NAIVE_DATETIME),
        }
    ),
    widens_decimal_precision=True,
    # An informational PRIMARY KEY constraint has no type restriction documented.
    key_types_refused=frozenset(),
    # Informational PRIMARY KEY constraint (Unity Catalog; Databricks Runtime 11.3 LTS+).
    key_style=KeyStyle.PRIMARY_KEY_CONSTRAINT,
    # ALTER COLUMN ... SET NOT NULL (Delta checks the existing rows) and DROP PRIMARY KEY.
    changes_key_in_place=True,
    # Delta skips files by min/max statistics for IN lists; the same bound as Iceberg's keeps
    # the rendered forms alike.
    key_filter_slots=200,
    executable=False,
    missing=(
        "this server runs Spark with the Iceberg runtime only; executing Databricks SQL on "
        "Delta Lake needs the Delta Lake jars (io.delta:delta-spark) in the session and "
        "Unity Catalog, or a Databricks SQL warehouse endpoint, and neither is configured. "
        "Use `spark-destination preview --dialect databricks_delta REQUEST.json` to render it"
    ),
)
