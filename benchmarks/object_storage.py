"""Benchmark: what a sync costs on S3, against the same work on a local disk, in one run.

Starts SeaweedFS (``local_services.object_store``: S3 and its own Iceberg REST catalog, SigV4)
and one warm Spark session, then runs the same requests on two lakes: the Hadoop catalog on a
local folder, and SeaweedFS's REST catalog with Iceberg's S3FileIO. For each piece of work it
prints the seconds on each and the ratio S3 / local, and the S3 requests it made by kind (GET,
PUT, POST, LIST, HEAD, DELETE) with the bytes written and read, from the server's own counters
(its Prometheus endpoint; the REST catalog's requests, and the metadata files it writes
itself, are not counted there). Every piece of work runs once on both lakes first, on a small
table, as a warm-up. Asserts nothing.

The work, on a table of ``--rows`` rows (8 columns, keys 0..N-1):
- the load: an N-row upsert into the empty table;
- a small sync: 120 random existing keys upserted (what a frequent sync is);
- an N-row upsert of every existing key;
- a history batch: N/10 keys each getting a new version (history mode, its own table);
- deferred mode: an append of 120 rows, then a flush of it;
- maintenance: compaction, expiry, orphan removal of the main table.

One run per figure (the figures and the request counts are of that run). Usage:
    .venv/bin/python benchmarks/object_storage.py                  # N = 1M
    .venv/bin/python benchmarks/object_storage.py --rows 100000    # quicker
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from catalogs import HEADER, PARAMS, TABLE, rows  # noqa: E402 - the shared batch rows

from spark_destination.core.config import parse_config
from spark_destination.core.model import Column, DataType, Table
from spark_destination.core.requests import (
    BatchFiles,
    CreateTableRequest,
    WriteBatchRequest,
    WriteHistoryBatchRequest,
)
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.local_services.object_store import object_store, request_counts
from spark_destination.planner.maintenance import MaintenancePolicy
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.runtime.spark.provider import settings_for
from spark_destination.runtime.spark.session import build_session

HISTORY = Table(
    name="h",
    columns=(
        *TABLE.columns,
        Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
        Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_active", type=DataType.BOOLEAN),
    ),
)
KINDS = ("GET", "PUT", "POST", "LIST", "HEAD", "DELETE")
WARM_UP_ROWS = 2_000


class Lake:
    """One destination configuration and the batch files it is sent."""

    def __init__(self, name: str, engine: Engine, work: Path, configuration: dict[str, str]):
        self.name, self.engine, self.work, self.configuration = name, engine, work, configuration
        self.count = 0

    def file(self, header: list[str], body: list[list[str]]) -> tuple[str, bytes]:
        self.count += 1
        path = self.work / f"{self.name}-{self.count}.csv.zstd.aes"
        key = new_key()
        write_batch_file(path, header, body, params=PARAMS, key=key)
        return str(path), key

    def upsert(
        self, schema: str, body: list[list[str]], config: dict[str, str] | None = None
    ) -> None:
        path, key = self.file(HEADER, body)
        files = BatchFiles(replace=(path,), params=PARAMS, keys={path: key})
        request = WriteBatchRequest(schema=schema, table=TABLE, files=files)
        self.engine.apply(config or self.configuration, request)

    def history(self, schema: str, body: list[list[str]]) -> None:
        path, key = self.file([c.name for c in HISTORY.columns], body)
        files = BatchFiles(replace=(path,), params=PARAMS, keys={path: key})
        request = WriteHistoryBatchRequest(
            schema=schema, table=HISTORY, files=files, earliest_start_files=()
        )
        self.engine.apply(self.configuration, request)


def history_rows(ids: list[int], rng: random.Random, start: str) -> list[list[str]]:
    return [[*row, start, "9999-12-31T23:59:59.999Z", "true"] for row in rows(ids, rng)]


def measured(
    counts: Callable[[], dict[str, float]], work: Callable[[], Any]
) -> tuple[float, dict[str, float]]:
    before = counts()
    started = time.perf_counter()
    work()
    seconds = time.perf_counter() - started
    after = counts()
    return seconds, {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}


def run_lake(
    lake: Lake,
    engine: Engine,
    n: int,
    rng: random.Random,
    record: Callable[[str, Callable[[], Any]], None],
    schema: str = "bench",
) -> None:
    """The benchmark's work on one lake, each piece measured by ``record``."""
    ids = list(range(n))
    for table in (TABLE, HISTORY):
        engine.apply(lake.configuration, CreateTableRequest(schema=schema, table=table))
    load = rows(ids, rng)
    record(f"load: {n:,}-row upsert into an empty table", lambda: lake.upsert(schema, load))
    small = rows(rng.sample(ids, 120), rng)
    record(f"120-row sync into the {n:,}-row table", lambda: lake.upsert(schema, small))
    every = rows(ids, rng)
    record(f"{n:,}-row upsert of every key", lambda: lake.upsert(schema, every))
    keys = ids[: max(1, n // 10)]
    lake.history(schema, history_rows(keys, rng, "2024-01-01T00:00:00.000Z"))
    versions = history_rows(keys, rng, "2024-02-01T00:00:00.000Z")
    record(f"history batch: {len(keys):,} new versions", lambda: lake.history(schema, versions))
    deferred = {**lake.configuration, "write_mode": "deferred", "merge_interval_ms": "-1"}
    appended = rows(rng.sample(ids, 120), rng)
    record("deferred: append of 120 rows", lambda: lake.upsert(schema, appended, deferred))
    record("deferred: flush of those 120 rows", lambda: engine.flush(deferred, schema, "t"))
    now = datetime.now(UTC) + timedelta(seconds=1)
    policy = MaintenancePolicy(retention=timedelta(hours=1))
    record(
        "maintenance (compaction, expiry, orphan removal)",
        lambda: engine.maintain(lake.configuration, schema, "t", policy=policy, now=now),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = random.Random(7)
    n = args.rows
    with tempfile.TemporaryDirectory() as tmp, object_store(Path(tmp) / "s3") as store:
        work = Path(tmp)
        local = {"warehouse": str(work / "warehouse")}
        on_s3 = {"catalog": "seaweed", **store.rest_configuration()}
        session = build_session(settings_for(parse_config(local)))
        engine = Engine(SessionProvider.shared(session, parse_config(local)))
        lakes = [Lake("local", engine, work, local), Lake("s3", engine, work, on_s3)]
        figures: dict[str, dict[str, tuple[float, dict[str, float]]]] = {}

        def counts() -> dict[str, float]:
            return request_counts(store)

        def record(what: str, lake: Lake, work_: Callable[[], Any]) -> None:
            figures.setdefault(what, {})[lake.name] = measured(counts, work_)

        for lake in lakes:  # a warm-up of every piece of work on both lakes, not counted
            run_lake(lake, engine, WARM_UP_ROWS, rng, lambda _what, work_: work_(), "warm")
        for lake in lakes:
            run_lake(lake, engine, n, rng, lambda what, work_, lake=lake: record(what, lake, work_))
        session.stop()
    print(f"S3 (SeaweedFS, REST catalog + S3FileIO) against a local disk (Hadoop catalog); N={n:,}")
    print(
        "| work | local s | S3 s | S3 / local | " + " | ".join(KINDS) + " | MB written | MB read |"
    )
    print("|---|---|---|---|" + "---|" * (len(KINDS) + 2))
    for what, by_lake in figures.items():
        local_s, _ = by_lake["local"]
        s3_s, requests = by_lake["s3"]
        kinds = " | ".join(f"{requests.get(k, 0):.0f}" for k in KINDS)
        written = requests.get("bytes_received", 0) / 1e6
        read = requests.get("bytes_sent", 0) / 1e6
        print(
            f"| {what} | {local_s:.2f} | {s3_s:.2f} | {s3_s / local_s:.2f} | {kinds} | "
            f"{written:.1f} | {read:.1f} |"
        )
    others = sorted(
        {k for _, r in (v["s3"] for v in figures.values()) for k in r}
        - {*KINDS, "bytes_received", "bytes_sent"}
    )
    if others:
        print(f"(other request kinds counted: {', '.join(others)})")


if __name__ == "__main__":
    main()
