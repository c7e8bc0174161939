"""Benchmark: the same writes on the Hadoop catalog and on a real Hive metastore, in one run.

Starts a Hive metastore from pyspark's jars (``local_services.metastore``) and one warm Spark
session, then, for each catalog (order alternated per round, after a warm-up on both): an
N-row upsert WriteBatch into an N-row table, and small syncs (100 upserts of random existing
keys, 20 deletes) on that table. Prints each figure's median and the ratio Hive ÷ Hadoop; asserts
nothing. Also times the setup test (``probe_catalog``) on each.

Usage:
    .venv/bin/python benchmarks/catalogs.py                  # N = 100k, 3 rounds, 7 small
    .venv/bin/python benchmarks/catalogs.py --rows 1000000   # the 1M figure
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from spark_destination.core.config import parse_config
from spark_destination.core.model import (
    Column,
    Compression,
    DataType,
    Encryption,
    FileParams,
    Table,
)
from spark_destination.core.requests import BatchFiles, CreateTableRequest, WriteBatchRequest
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.local_services.metastore import destination_configuration, hive_metastore
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.runtime.spark.session import SparkSettings, build_session

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
UNMOD = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
PARAMS = FileParams(
    compression=Compression.ZSTD,
    encryption=Encryption.AES,
    null_string=NULL,
    unmodified_string=UNMOD,
)
TABLE = Table(
    name="t",
    columns=(
        Column(name="id", type=DataType.LONG, primary_key=True),
        Column(name="a", type=DataType.INT),
        Column(name="b", type=DataType.DOUBLE),
        Column(name="c", type=DataType.STRING),
        Column(name="d", type=DataType.STRING),
        Column(name="e", type=DataType.NAIVE_DATE),
        Column(name="f", type=DataType.UTC_DATETIME),
        Column(name="g", type=DataType.BOOLEAN),
    ),
)
HEADER = [c.name for c in TABLE.columns]


def rows(ids: list[int], rng: random.Random) -> list[list[str]]:
    return [
        [
            str(i),
            str(rng.randrange(1_000_000)),
            f"{rng.random() * 1000:.3f}",
            f"name-{rng.randrange(10**6)}",
            "x" * rng.randrange(1, 30),
            f"2024-0{1 + i % 9}-1{i % 9}",
            f"2024-06-01T12:{i % 60:02d}:00.000Z",
            "true" if i % 2 else "false",
        ]
        for i in ids
    ]


class Driver:
    def __init__(self, engine: Engine, work: Path, configuration: dict[str, str]) -> None:
        self.engine, self.work, self.configuration = engine, work, configuration
        self.count = 0

    def file(self, body: list[list[str]]) -> tuple[str, bytes]:
        self.count += 1
        path = self.work / f"f{self.count}.csv.zstd.aes"
        key = new_key()
        write_batch_file(path, HEADER, body, params=PARAMS, key=key)
        return str(path), key

    def write(self, schema: str, upsert: list[list[str]], delete: list[list[str]] = ()) -> float:
        files = [self.file(upsert)] + ([self.file(list(delete))] if delete else [])
        replace = (files[0][0],)
        deletes = (files[1][0],) if delete else ()
        request = WriteBatchRequest(
            schema=schema,
            table=TABLE,
            files=BatchFiles(replace=replace, delete=deletes, params=PARAMS, keys=dict(files)),
        )
        started = time.perf_counter()
        self.engine.apply(self.configuration, request)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--small", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp, hive_metastore(Path(tmp) / "ms") as metastore:
        work = Path(tmp)
        warehouse = work / "warehouse"
        session = build_session(SparkSettings(warehouse=str(warehouse)))
        base = {"warehouse": str(warehouse)}
        engine = Engine(SessionProvider.shared(session, parse_config(base)))
        drivers = {
            "hadoop": Driver(engine, work, base),
            "hive": Driver(
                engine, work, {"catalog": "hms", **destination_configuration(metastore)}
            ),
        }
        setup: dict[str, float] = {}
        for name, driver in drivers.items():
            started = time.perf_counter()
            engine.probe_catalog(driver.configuration)
            setup[name] = time.perf_counter() - started
        upserts: dict[str, list[float]] = {n: [] for n in drivers}
        small: dict[str, list[float]] = {n: [] for n in drivers}
        ids = list(range(args.rows))
        for round_ in range(args.rounds + 1):  # round 0: warm-up, not counted
            order = list(drivers.items()) if round_ % 2 else list(reversed(drivers.items()))
            for name, driver in order:
                schema = f"b{round_}_{name}"
                engine.apply(driver.configuration, CreateTableRequest(schema=schema, table=TABLE))
                driver.write(schema, rows(ids, rng))
                seconds = driver.write(schema, rows(ids, rng))
                times = [
                    driver.write(
                        schema,
                        rows(rng.sample(ids, 100), rng),
                        [[str(i), *([NULL] * (len(HEADER) - 1))] for i in rng.sample(ids, 20)],
                    )
                    for _ in range(args.small)
                ]
                if round_:
                    upserts[name].append(seconds)
                    small[name].append(statistics.median(times))
        session.stop()
    print(f"setup test (probe): hadoop {setup['hadoop']:.2f} s, hive {setup['hive']:.2f} s")
    for label, figures in (("N-row upsert", upserts), ("small sync p50", small)):
        hadoop, hive = statistics.median(figures["hadoop"]), statistics.median(figures["hive"])
        print(
            f"{label} (N={args.rows}): hadoop {hadoop:.2f} s, hive {hive:.2f} s, "
            f"hive / hadoop {hive / hadoop:.2f}  (medians of {args.rounds} rounds: "
            f"{[round(x, 2) for x in figures['hadoop']]} / "
            f"{[round(x, 2) for x in figures['hive']]})"
        )


if __name__ == "__main__":
    main()
