"""Many tables of different columns written in rotation, as a server syncing a connection's
tables writes them: does each table's MERGE stay compiled between its syncs?

Spark compiles each plan's pieces into classes (whole-stage code generation) that depend on the
table's columns and keeps a bounded number of them (``spark.sql.codegen.cache.maxEntries``); a
MERGE has 13-46. With too small a cache every sync of every table generates and compiles its
classes again. Here: ``--tables`` tables of different column sets (bench.COLUMNS minus some of
its middle columns), each loaded with ``--rows`` rows through the connector, then ``--rounds``
rounds of a ``--rows``-row upsert (half new keys) into each table in turn. Prints each round's
median and total seconds. One setting per process: compare runs with ``--spark-conf`` (e.g.
``spark.sql.codegen.cache.maxEntries=100`` for Spark's default cache,
``spark.sql.codegen.wholeStage=true`` for code generation in the MERGEs too). Asserts nothing.

Usage:
    .venv/bin/python benchmarks/many_tables.py [--tables 12] [--rows 200000] [--rounds 4]
        [--spark-conf 'key=value;key=value']
"""

from __future__ import annotations

import argparse
import itertools
import random
import tempfile
import time
from pathlib import Path
from statistics import median

import bench  # benchmarks/bench.py, beside this script


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=12)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--spark-conf", default="", help="the server's spark_conf")
    args = parser.parse_args()
    # The key, _fivetran_synced and _fivetran_deleted always; of the nine columns between them
    # a different set of 6-8 per table (different types and counts: different classes).
    middle = range(1, len(bench.COLUMNS) - 2)
    subsets = [c for r in (8, 7, 6) for c in itertools.combinations(middle, r)]
    rng = random.Random(9)
    rng.shuffle(subsets)
    n = args.rows
    with tempfile.TemporaryDirectory(prefix="sd-many-") as tmp:
        layout = {"spark_conf": args.spark_conf} if args.spark_conf else None
        b = bench.Bench(Path(tmp), layout=layout)
        tables = []
        for k in range(args.tables):
            keep = [0, *subsets[k], len(bench.COLUMNS) - 2, len(bench.COLUMNS) - 1]
            header = [bench.HEADER[i] for i in keep]
            table = b.table(f"t{k}", [bench.COLUMNS[i] for i in keep])

            def write(first: int, keep: list[int] = keep, header: list[str] = header) -> str:
                rows = (bench.row(j, rng) for j in range(first, first + n))
                return b.files.write([[r[i] for i in keep] for r in rows], header)

            b.csv.apply({}, b.request(table, replace=[write(0)]))
            # Each round's upsert: half the keys new, shifted a little per round.
            upserts = [write(n // 2 + 7 * q) for q in range(args.rounds)]
            tables.append((table, upserts))
        print(f"{args.tables} tables of {n:,} rows loaded; spark_conf {args.spark_conf!r}")
        for q in range(args.rounds):
            took = []
            for table, upserts in tables:
                started = time.perf_counter()
                b.csv.apply({}, b.request(table, replace=[upserts[q]]))
                took.append(time.perf_counter() - started)
            shown = ", ".join(f"{s:.2f}" for s in took)
            print(
                f"round {q + 1}: median {median(took):.2f} s, total {sum(took):.1f} s ({shown})",
                flush=True,
            )
        b.csv.sessions.stop()


if __name__ == "__main__":
    main()
