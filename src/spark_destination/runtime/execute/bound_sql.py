"""Run a statement with values bound to its parameter markers, in one JVM call per value.

PySpark's ``SparkSession.sql(text, args=...)`` wraps every value in a Column (``lit``) before
handing the map over: several py4j round trips per value, 0.1-0.2 s for the 200 markers of a
small batch's key filter (a sixth of such a batch's time). Spark's JVM API takes the values
themselves (``sql(String, java.util.Map[String, Any])``) and makes the literals there, so here
an int or a text costs one ``put`` (py4j converts it as PySpark's route does).

Dates are bound as ``java.time.LocalDate``, the proleptic Gregorian date Spark stores. PySpark
converts a ``datetime.date`` through ``java.sql.Date.valueOf``, which refuses years below 1000
and reads older dates on the Julian calendar (1582-10-10 binds as 1582-10-20): a key filter
with such a key would fail the request or miss the stored row. Runtime layer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from spark_destination.runtime.spark.java_values import java_class

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["bound_sql"]


def bound_sql(session: SparkSession, text: str, args: Mapping[str, object]) -> DataFrame:
    """``session.sql(text, args=args)`` with fewer round trips to the JVM, and exact dates."""
    from pyspark.sql import DataFrame

    live: Any = session  # the JVM handles PySpark keeps private
    values = java_class(session, "java.util.HashMap")()
    for name, value in args.items():
        if isinstance(value, dt.datetime):
            raise TypeError(f"parameter {name!r}: timestamps are not bound (time zone)")
        if isinstance(value, dt.date):
            day = java_class(session, "java.time.LocalDate").of(value.year, value.month, value.day)
            values.put(name, day)
        else:
            values.put(name, value)
    return DataFrame(live._jsparkSession.sql(text, values), session)
