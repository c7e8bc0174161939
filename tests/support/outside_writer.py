"""Another writer on the destination's table, as production lakes have: a Spark process of its
own that, round after round, appends rows of its own, compacts the table and expires its
snapshots, until told to stop.

Run as ``python -m tests.support.outside_writer --uri thrift://… --warehouse DIR --table
schema.t --work DIR``. It writes ``DIR/ready`` once its Spark session runs, stops after the
round in which ``DIR/stop`` appears (or after ``--rounds``), and writes ``DIR/report.json``:
the ids of the rows each committed append added (an append that failed added none) and the
failures it met (Java class names).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from spark_destination.core.config import CatalogType
from spark_destination.runtime.execute.transient import java_classes
from spark_destination.runtime.spark.session import SparkSettings, build_session

CATALOG = "outside"
# The outside writer's ids start here (the syncs' ids stay below).
FIRST_ID = 1_000_000
ROWS_PER_APPEND = 20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--uri", required=True)
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args(argv)
    session = build_session(
        SparkSettings(
            master="local[1]",
            catalog=CATALOG,
            catalog_type=CatalogType.HIVE,
            catalog_uri=args.uri,
            warehouse=args.warehouse,
            driver_memory="1g",
        )
    )
    table = f"{CATALOG}.{args.table}"
    appended: list[int] = []
    failures: list[str] = []
    (args.work / "ready").write_text("ready")
    next_id = FIRST_ID
    for _ in range(args.rounds):
        ids = list(range(next_id, next_id + ROWS_PER_APPEND))
        next_id += ROWS_PER_APPEND
        values = ", ".join(f"({i}, 'outside')" for i in ids)
        steps = [
            ("append", f"INSERT INTO {table} (id, v) VALUES {values}"),
            ("compact", f"CALL {CATALOG}.system.rewrite_data_files(table => '{args.table}')"),
            (
                "expire",
                f"CALL {CATALOG}.system.expire_snapshots(table => '{args.table}', "
                f"older_than => TIMESTAMP '{_now()}', retain_last => 2)",
            ),
        ]
        for kind, statement in steps:
            try:
                session.sql(statement).collect()
            except Exception as exc:  # noqa: BLE001 - a lost race is part of the test
                failures.append(f"{kind}: {next(iter(java_classes(exc)), type(exc).__name__)}")
                continue
            if kind == "append":
                appended.extend(ids)
        if (args.work / "stop").exists():
            break
        time.sleep(0.2)
    (args.work / "report.json").write_text(json.dumps({"appended": appended, "failures": failures}))
    session.stop()
    return 0


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())


if __name__ == "__main__":
    raise SystemExit(main())
