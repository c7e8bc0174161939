"""Benchmark: Delta Lake beside Iceberg, in one run on one warm Spark session (one JVM holds
both), each format's writes against its own bare-engine floor.

Prints figures and ratios; asserts nothing. Per format: an N-row upsert WriteBatch into an
N-row table; a mixed WriteBatch (60 % replace, 25 % update with unmodified columns, 15 %
delete); an N-version WriteHistoryBatch (complete versions) over N versions; a 120-row sync
(100 replace, 10 update, 10 delete, random keys) into a table of S rows. Each against its floor:
the same MERGE the connector runs (the format's own dialect), from the batch already decoded,
staged and cached; every run starts from the same table state (Iceberg
``rollback_to_snapshot``, Delta ``RESTORE TABLE … TO VERSION AS OF``). Then each Delta figure
over the same Iceberg one. Medians of warm runs, alternated connector/floor
(``bench.Bench.compare``).

Usage:
    .venv/bin/python benchmarks/table_formats.py                      # N = 100k, S = 165k
    .venv/bin/python benchmarks/table_formats.py --rows 1000000 --small-table 1650000
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from bench import (  # benchmarks/bench.py, beside this script
    HISTORY,
    PARAMS,
    SCHEMA,
    TMAX,
    Bench,
    load_rows,
    median,
    row,
    small_batch,
    update_row,
)

from spark_destination.core.requests import BatchFiles, WriteHistoryBatchRequest
from spark_destination.dialects.rendered import Form
from spark_destination.planner.history import plan_write_history_batch
from spark_destination.planner.write import plan_write_batch

FORMATS = ("iceberg", "delta")
SYNCED2 = "2024-07-01T12:00:00.000Z"


def format_figures(
    bench: Bench, n: int, small_size: int, runs: int
) -> dict[str, tuple[float, float]]:
    """(connector median, floor median) per figure, in seconds, for ``bench``'s format."""
    rng = random.Random(7)
    files = bench.files
    figures: dict[str, tuple[float, float]] = {}

    # Upsert N rows (half new) into an N-row table.
    target = bench.table("upsert")
    bench.csv.apply(
        {}, bench.request(target, replace=[files.write([row(i, rng) for i in range(n)])])
    )
    base = bench.snapshot(target)
    upsert = bench.request(
        target, replace=[files.write([row(i if i % 2 else n + i, rng) for i in range(n)])]
    )
    plan = plan_write_batch(upsert, target, catalog=bench.catalog, target=bench.dialect)
    both = bench.compare(lambda: bench.csv.apply({}, upsert), plan, runs, target, base)
    figures[f"{n:,} upsert WriteBatch"] = (median(both.connector), median(both.floor))

    # Mixed: 60 % replace (half new), 25 % update (half the columns unmodified), 15 % delete.
    ids = list(range(n))
    rng.shuffle(ids)
    replace_ids = [i if k % 2 else n + i for k, i in enumerate(ids[: n * 6 // 10])]
    mixed = bench.request(
        target,
        replace=[files.write([row(i, rng) for i in replace_ids])],
        update=[files.write([update_row(i, rng) for i in ids[n * 6 // 10 : n * 85 // 100]])],
        delete=[files.write([row(i, rng) for i in ids[n * 85 // 100 :]])],
    )
    plan = plan_write_batch(mixed, target, catalog=bench.catalog, target=bench.dialect)
    both = bench.compare(lambda: bench.csv.apply({}, mixed), plan, runs, target, base)
    figures[f"{n:,} mixed WriteBatch"] = (median(both.connector), median(both.floor))

    # History: N complete new versions over N versions.
    history = bench.table("history", HISTORY)
    header = [c.name for c in HISTORY]
    start1, start2 = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"
    first = [[*row(i, rng)[:-1], start1, TMAX, "true"] for i in range(n)]
    bench.csv.apply(
        {},
        WriteHistoryBatchRequest(
            schema=SCHEMA,
            table=history,
            earliest_start_files=(
                files.write([[str(i), start1] for i in range(n)], ["id", "_fivetran_start"]),
            ),
            files=BatchFiles(replace=(files.write(first, header),), params=PARAMS, keys=files.keys),
        ),
    )
    base_history = bench.snapshot(history)
    versions = [[*row(i, rng, SYNCED2)[:-1], start2, TMAX, "true"] for i in range(n)]
    request = WriteHistoryBatchRequest(
        schema=SCHEMA,
        table=history,
        earliest_start_files=(
            files.write([[str(i), start2] for i in range(n)], ["id", "_fivetran_start"]),
        ),
        files=BatchFiles(replace=(files.write(versions, header),), params=PARAMS, keys=files.keys),
    )
    plan = plan_write_history_batch(request, history, catalog=bench.catalog, target=bench.dialect)
    both = bench.compare(
        lambda: bench.csv.apply({}, request),
        plan,
        runs,
        history,
        base_history,
        form=Form.FULL_VERSIONS,
    )
    figures[f"{n:,}-version WriteHistoryBatch"] = (median(both.connector), median(both.floor))

    # A 120-row sync into an S-row table (loaded by Spark itself), random keys.
    table = bench.table("small")
    load_rows(bench, table, small_size)
    start = bench.snapshot(table)
    small = bench.request(table, **small_batch(files, "random", small_size, rng))
    plan = plan_write_batch(small, table, catalog=bench.catalog, target=bench.dialect)
    both = bench.compare(
        lambda: bench.csv.apply({}, small), plan, runs * 2 + 1, table, start, alternate=False
    )
    figures[f"120-row sync into {small_size:,} rows"] = (median(both.connector), median(both.floor))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="N (default 100k)")
    parser.add_argument("--small-table", type=int, default=165_000, help="S (default 165k)")
    parser.add_argument("--runs", type=int, default=3, help="warm runs per figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sd-formats-") as folder:
        results: dict[str, dict[str, tuple[float, float]]] = {}
        session = None
        files = None
        for table_format in FORMATS:
            bench = Bench(Path(folder), layout={"table_format": table_format}, session=session)
            session = bench.session
            # One folder of batch files for both formats (their names must not collide).
            bench.files = files or bench.files
            files = bench.files
            results[table_format] = format_figures(bench, args.rows, args.small_table, args.runs)
        print(f"{'figure':<44} {'format':<8} {'connector':>10} {'floor':>8} {'ratio':>6}")
        for name in results["iceberg"]:
            for table_format in FORMATS:
                connector, floor = results[table_format][name]
                print(
                    f"{name:<44} {table_format:<8} {connector:>9.2f}s {floor:>7.2f}s "
                    f"{connector / floor:>6.2f}"
                )
            delta, iceberg = results["delta"][name][0], results["iceberg"][name][0]
            print(f"{'':<44} {'delta ÷ iceberg (connector)':<27} {delta / iceberg:>6.2f}")
        print(f"(medians of {args.runs} warm runs, alternated; the sync: {args.runs * 2 + 1} runs)")


if __name__ == "__main__":
    main()
