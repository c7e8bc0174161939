"""Values bound through Spark's JVM API (``runtime.execute.bound_sql``): ints and text make the
literals PySpark's own ``sql(text, args=...)`` makes; dates bind exactly on the proleptic
Gregorian calendar Spark stores, where PySpark's route fails or shifts them."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import SparkSession

from spark_destination.runtime.execute.bound_sql import bound_sql

pytestmark = pytest.mark.spark

SCALARS: dict[str, object] = {
    "small": 7,
    "wide": 2**40 + 3,
    "negative": -(2**35),
    "text": "it's \u00e9t\u00e9 -- ; ' \" \\ :small",
}
TEXT = (
    "SELECT :small AS small, :wide AS wide, :negative AS negative, :text AS text, "
    "typeof(:small) AS t_small, typeof(:wide) AS t_wide, 7L IN (:small, :wide) AS hit"
)
# Year 1 and the calendar switch (1582-10-05 .. 14 do not exist on the Julian-Gregorian
# calendar java.sql.Date uses), a Julian-era date, and ordinary ones.
DATES = [
    dt.date(1, 1, 1),
    dt.date(999, 5, 6),
    dt.date(1200, 3, 4),
    dt.date(1582, 10, 10),
    dt.date(1970, 1, 1),
    dt.date(9999, 12, 31),
]


def test_ints_and_text_bind_as_pyspark_binds_them(spark: SparkSession) -> None:
    ours = bound_sql(spark, TEXT, SCALARS).collect()
    assert ours == spark.sql(TEXT, args=SCALARS).collect()
    [row] = ours
    assert [row[name] for name in SCALARS] == list(SCALARS.values())
    assert (row.t_small, row.t_wide, row.hit) == ("int", "bigint", True)


@pytest.mark.parametrize("day", DATES, ids=str)
def test_a_date_binds_as_the_same_date(spark: SparkSession, day: dt.date) -> None:
    text = "SELECT :d AS d, typeof(:d) AS t, CAST(:d AS STRING) AS s"
    [row] = bound_sql(spark, text, {"d": day}).collect()
    assert (row.d, row.t, row.s) == (day, "date", day.isoformat())


def test_a_timestamp_is_refused(spark: SparkSession) -> None:
    with pytest.raises(TypeError, match="'ts'"):
        bound_sql(spark, "SELECT :ts", {"ts": dt.datetime(2024, 1, 1)})
