"""What a statement's scans of a table read, from its executed plan (``scan_metrics``).

The MERGE's own figures are checked where the key filter is (test_key_filter); here the plan
walk itself: scans under a subquery, which runs as a plan of its own beneath an expression
rather than as a child, count with the main query's, and a table no scan reads has none.
"""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from spark_destination.dialects.quoting import qualified
from spark_destination.runtime.execute import scan_metrics
from spark_destination.runtime.spark.session import SparkSettings

pytestmark = pytest.mark.spark

SCHEMA = "scan_metrics"


def test_a_scan_under_a_scalar_subquery_counts_with_the_main_scan(
    spark: SparkSession, spark_settings: SparkSettings
) -> None:
    catalog = spark_settings.catalog
    table = qualified(catalog, SCHEMA, "t")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {qualified(catalog, SCHEMA)}")
    spark.sql(f"CREATE OR REPLACE TABLE {table} (id BIGINT) USING iceberg")
    spark.sql(f"INSERT INTO {table} VALUES (1), (2), (3)")
    spark.sql(f"INSERT INTO {table} VALUES (4), (5), (6)")
    files = spark.sql(f"SELECT count(*) FROM {table}.files").first()[0]
    assert files >= 2
    # avg is not pushed into Iceberg's scan (min, max and count would be answered from the
    # files' statistics, without a scan), nor is ``id * 2 >``: both scans read every row.
    frame = spark.sql(f"SELECT id FROM {table} WHERE id * 2 > (SELECT avg(id) FROM {table})")
    assert sorted(r.id for r in frame.collect()) == [2, 3, 4, 5, 6]

    metrics = scan_metrics.target_scans(frame, f"{catalog}.{SCHEMA}.t")
    assert metrics is not None
    # The main scan's files and six rows, and the subquery's.
    assert (metrics.data_files, metrics.skipped_data_files, metrics.rows) == (2 * files, 0, 12)
    assert metrics.delete_files == 0 and metrics.data_file_bytes > 0

    assert scan_metrics.target_scans(frame, f"{catalog}.{SCHEMA}.other") is None
