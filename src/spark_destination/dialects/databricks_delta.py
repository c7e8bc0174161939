"""Databricks SQL over Delta Lake: rendered and parse-checked here, executed elsewhere.

Built from the IR with the same lowering as Spark + Iceberg (Databricks runs Spark's SQL
engine), with Delta's own rules where they differ. Each rule was checked against the Databricks
and Delta Lake documentation (``docs/dialects.md`` lists the pages):

- names: Unity Catalog refuses a period, a space, ``/``, ASCII control characters and DEL in
  catalog, schema and table names (column names may hold them) and stores those names in lower
  case (Databricks SQL reference, "Names");
- types: type widening changes SMALLINT/INT to wider integers or DOUBLE, FLOAT to DOUBLE, DATE
  to TIMESTAMP_NTZ, and DECIMAL(p, s) to DECIMAL(p + k1, s + k2) when k1 >= k2 >= 0 ("Type
  widening"); everything else rewrites the table;
- the key: an informational PRIMARY KEY constraint (Unity Catalog, Runtime 11.3 LTS+), whose
  columns must be NOT NULL ("CONSTRAINT clause"); ``DROP PRIMARY KEY IF EXISTS``;
- string lengths: a STRING column with Fivetran's ``string_byte_length`` n is ``VARCHAR(n)``,
  whose length Delta enforces on every write ("VARCHAR type"; n characters hold any n bytes);
- maintenance: ``OPTIMIZE … ZORDER BY`` ("OPTIMIZE"), ``VACUUM … RETAIN n HOURS``, which
  refuses less than 168 hours while Delta's retention check is on ("VACUUM"), and ``DESCRIBE
  DETAIL`` for the table's file count and size ("DESCRIBE DETAIL").
"""

from __future__ import annotations

from datetime import timedelta
from types import MappingProxyType
from typing import Final

from spark_destination.core.model import DataType
from spark_destination.dialects.base import (
    FLUSH_FILTER_SLOTS,
    DecimalWidening,
    Dialect,
    KeyStyle,
    NameRules,
)
from spark_destination.dialects.skeletons import Skeletons
from spark_destination.dialects.spark_iceberg import SPARK_TYPE_NAMES
from spark_destination.planner.target import Maintenance

# Unity Catalog's refused characters in catalog, schema and table names.
UNITY_CATALOG_REFUSED: Final = frozenset({".", " ", "/", "\x7f", *map(chr, range(0x20))})

# The properties every Delta table gets, on Databricks and elsewhere: TIMESTAMP_NTZ columns
# added later need the table feature enabled up front.
DELTA_TABLE_PROPERTIES: Final = (("delta.feature.timestampNtz", "supported"),)

# Delta column mapping (reader 2 / writer 5, the ``columnMapping`` reader feature): column
# names may hold the characters Delta refuses without it, and renames and drops are
# metadata-only.
DELTA_COLUMN_MAPPING: Final = (("delta.columnMapping.mode", "name"),)
# What Delta refuses in a column name without column mapping.
DELTA_UNMAPPED_REFUSED: Final = frozenset(" ,;{}()\n\t=")

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
        own=frozenset(
            {"add_primary_key", "drop_primary_key", "optimize", "vacuum", "table_health"}
        ),
        # Outside sqlglot's Databricks grammar: SHOW SCHEMAS, OPTIMIZE, VACUUM, DESCRIBE DETAIL.
        commands=frozenset({"show_namespaces", "optimize", "vacuum", "table_health"}),
    ),
    # Databricks reads column mapping and deletion vectors, so every table gets both.
    table_properties=(
        *DELTA_COLUMN_MAPPING,
        # MERGE, UPDATE and DELETE mark rows instead of rewriting files (merge-on-read).
        ("delta.enableDeletionVectors", "true"),
        # ALTER COLUMN ... TYPE widens in place (Databricks Runtime 15.4 LTS and above).
        ("delta.enableTypeWidening", "true"),
        *DELTA_TABLE_PROPERTIES,
    ),
    # Delta has SMALLINT (and every other type Spark declares); NAIVE_TIME is text.
    type_names=SPARK_TYPE_NAMES,
    stored_as=MappingProxyType({}),
    # Delta type widening, less integers to DECIMAL (minimum precisions per type): those take
    # the rewrite path.
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
    decimal_widening=DecimalWidening.PRECISION_AND_SCALE,
    # An informational PRIMARY KEY constraint has no type restriction documented.
    key_types_refused=frozenset(),
    # Informational PRIMARY KEY constraint (Unity Catalog; Databricks Runtime 11.3 LTS+).
    key_style=KeyStyle.PRIMARY_KEY_CONSTRAINT,
    # ALTER COLUMN ... SET NOT NULL (Delta checks the existing rows) and DROP PRIMARY KEY.
    changes_key_in_place=True,
    # Delta skips files by min/max statistics for IN lists; the same bound as Iceberg's keeps
    # the rendered forms alike.
    key_filter_slots=200,
    flush_filter_slots=FLUSH_FILTER_SLOTS,
    names=NameRules(refused=UNITY_CATALOG_REFUSED, lower_case=True),
    maintenance=Maintenance.OPTIMIZE_AND_VACUUM,
    # VACUUM's safety check (spark.databricks.delta.retentionDurationCheck.enabled).
    minimum_retention=timedelta(hours=168),
    # VARCHAR(n) for STRING columns with a byte length: Delta checks the length on every
    # write (its reserved CHECK constraint ``__CHAR_VARCHAR_STRING_LENGTH_CHECK__``), so a
    # longer value fails the MERGE, or, under bad_value_policy=null, is cut to it in staging
    # and recorded TRUNCATED.
    string_lengths=True,
    executable=False,
    missing=(
        "this server runs Spark with the Iceberg runtime only; executing Databricks SQL on "
        "Delta Lake needs the Delta Lake jars (io.delta:delta-spark) in the session and "
        "Unity Catalog, or a Databricks SQL warehouse endpoint, and neither is configured. "
        "Use `spark-destination preview --dialect databricks_delta REQUEST.json` to render it"
    ),
)
