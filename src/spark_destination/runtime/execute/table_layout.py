"""Read what makes up an Iceberg table's layout from the catalog: its properties (Spark's view,
with ``format-version``), its sort order's columns and its bucket partition. The dialect turns
them into a ``TableLayout`` (``LayoutProperties.stored``); maintenance compares that with the
configured layout (``planner.layout.layout_change``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from spark_destination.planner.ir import TableRef
from spark_destination.runtime.execute.table_loader import ICEBERG_SPARK_TABLE, spark_table
from spark_destination.runtime.spark.java_values import java_list, java_map

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# How Iceberg prints a bucket transform (``Transform.toString``).
_BUCKET: Final = re.compile(r"bucket\[(\d+)\]")


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredLayout:
    properties: dict[str, str]
    sort_by: tuple[str, ...]
    # (column, buckets) of a bucket partition field.
    bucket: tuple[str, int] | None


def stored_layout(session: SparkSession, table: TableRef) -> StoredLayout | None:
    """``table``'s layout as stored; None when it is missing or not an Iceberg table."""
    loaded = spark_table(session, table)
    if loaded is None or loaded.getClass().getName() != ICEBERG_SPARK_TABLE:
        return None
    iceberg = loaded.table()
    schema = iceberg.schema()
    sort_by = tuple(
        str(schema.findColumnName(field.sourceId()))
        for field in java_list(iceberg.sortOrder().fields())
    )
    bucket = None
    for field in java_list(iceberg.spec().fields()):
        match = _BUCKET.fullmatch(str(field.transform().toString()))
        if match:
            bucket = (str(schema.findColumnName(field.sourceId())), int(match.group(1)))
    properties = java_map(loaded.properties())
    return StoredLayout(properties=properties, sort_by=sort_by, bucket=bucket)
