"""Delta Lake on Apache Spark (delta-spark 3.3 beside Iceberg in this server's JVM): executed.

The same SQL as ``databricks_delta`` (Databricks runs Spark's SQL engine on Delta) wherever
open-source Delta takes it; its own answers where it does not. Each difference was measured
on delta-spark 3.3.3 with pyspark 3.5.9 (``tests/spark/test_delta.py`` runs the requests):

- no in-place type change: with ``delta.enableTypeWidening`` set, ``ALTER COLUMN … TYPE``
  failed with ``DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP`` for INT to BIGINT, FLOAT to
  DOUBLE, DATE to TIMESTAMP_NTZ and DECIMAL(10, 2) to DECIMAL(12, 2); only SMALLINT to INT
  passed, and the property adds the ``typeWidening-preview`` table feature every reader must
  know. So the property is not set and every type change rewrites the table (Databricks
  widens in place);
- no primary-key DDL: ``ADD CONSTRAINT … PRIMARY KEY`` does not parse (a Unity Catalog
  feature), and ``ALTER COLUMN … SET NOT NULL`` on a nullable column fails ("Cannot change
  nullable column to non-nullable"); the key lives in the destination's column metadata
  (``KeyStyle.COLUMN_METADATA``), as DescribeTable reads it back;
- no ``VARCHAR(n)`` length check on writes: Databricks enforces the length, Delta OSS keeps
  the declared type as STRING, so string lengths are not declared;
- plain tables, readable by every Delta reader: no deletion vectors (a MERGE rewrites the
  files it changes), and column mapping only for a table with a column name Delta refuses
  (a space, a comma, ...). Both are reader features that delta-rs 1.6's plain reads
  (``DeltaTable.to_pyarrow_table``) refuse; so a column rename or drop rewrites the table in
  one commit, as a type change does, instead of turning column mapping on;
- schema and table names are those of Spark's session catalog: ASCII letters, digits and
  '_' only (it refused ``my-schema`` and a backtick: "not a valid name for
  tables/databases"), kept in lower case; so a table's folder under the warehouse is its
  name. Column names keep every character (column mapping, above).
"""

from __future__ import annotations

import dataclasses
import string
from typing import Final

from spark_destination.dialects.base import KeyStyle, NameRules
from spark_destination.dialects.databricks_delta import (
    DATABRICKS_DELTA,
    DELTA_COLUMN_MAPPING,
    DELTA_TABLE_PROPERTIES,
    DELTA_UNMAPPED_REFUSED,
)

# Spark's session catalog's rule for database and table names (``SessionCatalog.validateName``).
SESSION_CATALOG_NAMES: Final = NameRules(
    allowed=frozenset(string.ascii_letters + string.digits + "_"),
    allowed_text="ASCII letters, digits and '_'",
    lower_case=True,
    catalog="Spark's session catalog",
)

SPARK_DELTA: Final = dataclasses.replace(
    DATABRICKS_DELTA,
    name="spark_delta",
    # Spark's own SQL: printed and parsed back as Spark's (CAST stays a strict cast under
    # ANSI mode, which the session turns on).
    sqlglot_dialect="spark",
    table_properties=DELTA_TABLE_PROPERTIES,
    widenings=frozenset(),
    decimal_widening=None,
    key_style=KeyStyle.COLUMN_METADATA,
    # Nothing to change: no constraint and no NOT NULL is needed for a key column.
    changes_key_in_place=True,
    string_lengths=False,
    names=SESSION_CATALOG_NAMES,
    renames_columns_in_place=False,
    mapped_name_characters=DELTA_UNMAPPED_REFUSED,
    name_mapping=DELTA_COLUMN_MAPPING,
    executable=True,
    missing="",
)
