"""What makes a small MERGE cheap on a large Iceberg table: table layouts against ON filters.

How a small batch's latency can grow much more slowly than the table: this script is the
measurement behind the choice (the MERGE's
key-filter form): bare Spark SQL on one warm session, no connector. For each table layout it
builds an N-row table (12 columns, like ``bench.py``), stages a 120-row batch (100 upserts,
10 updates, 10 deletes) as a cached view, and times the merge-on-read MERGE with:

* ``none``: ``ON t.id = s.id`` (what a plain MERGE does: it reads the whole table);
* ``in``: plus ``AND t.id IN (<the batch's keys>)`` (the connector's key-filter form);
* ``range``: plus ``AND t.id BETWEEN <least key> AND <greatest key>``.

Key patterns: ``sequential`` (table keys 0..N-1 written in order; upserts right above the
largest key, changes among the newest 1 %) and ``random`` (table keys are 63-bit hashes;
upserts and changes anywhere). Layouts: ``plain`` (as the connector creates tables), ``sorted``
(rows range-partitioned and sorted by key when written), row groups of 4 MiB, a Parquet bloom
filter on the key (fpp 0.001), and combinations. Prints medians; asserts nothing.

Usage:
    .venv/bin/python benchmarks/small_batch_layouts.py                 # N = 165k
    .venv/bin/python benchmarks/small_batch_layouts.py --rows 1650000 --layouts plain,bloom
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 - PySpark's usual alias

from spark_destination.core.config import parse_config
from spark_destination.dialects.quoting import qualified, string_literal
from spark_destination.engine.engine import Engine, SessionProvider

GENERATE = """SELECT {key} AS id, CAST(id % 1000 AS INT) qty,
 CAST(id % 100000 / 7 AS DECIMAL(18,4)) price, rand() score,
 concat('customer number ', id) name,
 element_at(array('Berlin', 'Lisbon', 'Sao Paulo', 'NY', 'Hague'), CAST(id % 5 + 1 AS INT)) city,
 date_add(DATE'2024-01-01', CAST(id % 300 AS INT)) day, id % 2 = 0 active,
 TIMESTAMP'2024-05-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id % 100000) updated_at,
 IF(id % 3 = 0, NULL, 'note') note, TIMESTAMP'2024-06-01 12:00:00' _fivetran_synced,
 false _fivetran_deleted FROM range({n})"""
CATALOG, NAMESPACE = "lake", "layouts"
MOR = {
    "format-version": "2",
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}
ROW_GROUPS = {"write.parquet.row-group-size-bytes": str(4 << 20)}
ROW_GROUPS_8M = {"write.parquet.row-group-size-bytes": str(8 << 20)}
BLOOM = {
    "write.parquet.bloom-filter-enabled.column.id": "true",
    "write.parquet.bloom-filter-fpp.column.id": "0.001",
}
# name -> (table properties, written sorted by key)
LAYOUTS: dict[str, tuple[dict[str, str], bool]] = {
    "plain": ({}, False),
    "sorted": ({}, True),
    "rg4m": (ROW_GROUPS, False),
    "rg8m": (ROW_GROUPS_8M, False),
    "bloom": (BLOOM, False),
    "rg4m+bloom": ({**ROW_GROUPS, **BLOOM}, False),
    "sorted+rg4m+bloom": ({**ROW_GROUPS, **BLOOM}, True),
}
# The table name is quoted by the project's helper; the batch's keys bind to parameter markers
# (``:k<n>``, ``:lo``/``:hi``), as the connector's key-filter form binds them.
MERGE = """MERGE INTO {table} AS t USING src AS s ON t.id = s.id {extra}
WHEN MATCHED AND s.op = 'delete' THEN DELETE
WHEN MATCHED THEN UPDATE SET t.qty = s.qty, t.price = s.price, t.score = s.score,
 t.note = s.note, t._fivetran_synced = s._fivetran_synced
WHEN NOT MATCHED AND s.op = 'upsert' THEN INSERT *"""
# name -> (extra ON condition, its bindings for the batch's keys)
FILTERS: dict[str, Callable[[list[int]], tuple[str, dict[str, object]]]] = {
    "none": lambda keys: ("", {}),
    "in": lambda keys: (
        "AND t.id IN (" + ", ".join(f":k{n}" for n in range(len(keys))) + ")",
        {f"k{n}": key for n, key in enumerate(keys)},
    ),
    "range": lambda keys: ("AND t.id BETWEEN :lo AND :hi", {"lo": min(keys), "hi": max(keys)}),
}


def name_of(table: str) -> str:
    return qualified(CATALOG, NAMESPACE, table)


class Run:
    def __init__(self, spark: SparkSession, rows: int, runs: int) -> None:
        self.spark, self.rows, self.runs = spark, rows, runs
        self.rng = random.Random(5)

    def build(self, table: str, layout: str, random_keys: bool) -> str:
        properties, ordered = LAYOUTS[layout]
        key = "xxhash64(id) & 9223372036854775807" if random_keys else "id"
        frame = self.spark.sql(GENERATE.format(key=key, n=self.rows))
        if ordered:
            frame = frame.repartitionByRange(4, "id").sortWithinPartitions("id")
        writer = frame.writeTo(name_of(table)).using("iceberg")
        for name, value in {**MOR, **properties}.items():
            writer = writer.tableProperty(name, value)
        writer.createOrReplace()
        files = self.spark.table(name_of(table) + ".data_files")
        count, size = files.agg(F.count("*"), F.sum("file_size_in_bytes")).first()  # type: ignore[misc]
        return f"{count} files, {size / 1e6:.0f} MB"

    def batch(self, table: str, random_keys: bool) -> list[int]:
        """Stage the 120-row batch as the cached view ``src``; its keys."""
        if random_keys:
            fraction = min(1.0, max(0.0005, 100 / self.rows))  # enough rows to pick 20
            sample = self.spark.table(name_of(table)).sample(fraction=fraction, seed=5)
            changed = self.rng.sample([r[0] for r in sample.select("id").collect()], 20)
            upserts = [self.rng.getrandbits(63) for _ in range(100)]
        else:
            changed = self.rng.sample(range(self.rows - self.rows // 100, self.rows), 20)
            upserts = list(range(self.rows, self.rows + 100))
        ops = [(k, "upsert") for k in upserts] + [(k, "update") for k in changed[:10]]
        ops += [(k, "delete") for k in changed[10:]]
        source = self.spark.createDataFrame(ops, "id BIGINT, op STRING").selectExpr(
            "id",
            "CAST(7 AS INT) qty",
            "CAST(1.5 AS DECIMAL(18,4)) price",
            "0.5D score",
            "'n' name",
            "'c' city",
            "DATE'2024-02-02' day",
            "true active",
            "TIMESTAMP'2024-07-01 00:00:00' updated_at",
            "'x' note",
            "TIMESTAMP'2024-07-01 00:00:00' _fivetran_synced",
            "false _fivetran_deleted",
            "op",
        )
        source.createOrReplaceTempView("src")
        self.spark.table("src").cache().count()
        return upserts + changed

    def current_snapshot(self, table: str) -> int:
        snapshots = self.spark.table(name_of(table) + ".snapshots")
        return int(snapshots.orderBy(F.desc("committed_at")).first()["snapshot_id"])  # type: ignore[index]

    def time_merge(self, table: str, extra: str, args: dict[str, object], start: int) -> float:
        """Median MERGE time; the table goes back to snapshot ``start`` after each run."""
        # Iceberg's CALL grammar takes no parameter markers: the literal comes from the helper.
        identifier = string_literal(NAMESPACE + "." + table)
        rollback = f"CALL {CATALOG}.system.rollback_to_snapshot({identifier}, {start:d})"
        times = []
        for _ in range(self.runs):
            began = time.perf_counter()
            self.spark.sql(MERGE.format(table=name_of(table), extra=extra), args=args).collect()
            times.append(time.perf_counter() - began)
            self.spark.sql(rollback).collect()
        return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=165_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sd-layouts-") as folder:
        configuration = {"warehouse": str(Path(folder) / "warehouse")}
        engine = Engine(SessionProvider.embedded(), defaults=configuration)
        spark = engine.sessions.root(parse_config(configuration))
        spark.sql("CREATE NAMESPACE IF NOT EXISTS " + qualified(CATALOG, NAMESPACE))
        run = Run(spark, args.rows, args.runs)
        print(f"{args.rows:,}-row table, 120-row batch merged, median of {args.runs} (seconds)")
        print("keys | layout | files | none | in | range | none ÷ in")
        print("---|---|---|---|---|---|---")
        for random_keys in (False, True):
            for layout in args.layouts.split(","):
                table = f"t_{layout.replace('+', '_')}_{int(random_keys)}"
                files = run.build(table, layout, random_keys)
                start = run.current_snapshot(table)
                keys = run.batch(table, random_keys)
                none, filtered, ranged = (
                    run.time_merge(table, *FILTERS[name](keys), start)
                    for name in ("none", "in", "range")
                )
                pattern = "random" if random_keys else "sequential"
                print(
                    f"{pattern} | {layout} | {files} | {none:.2f} | {filtered:.2f} | "
                    f"{ranged:.2f} | {none / filtered:.1f}",
                    flush=True,
                )
                spark.catalog.clearCache()


if __name__ == "__main__":
    main()
