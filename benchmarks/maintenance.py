"""Benchmark: what table maintenance buys after many small merge-on-read batches, and costs.

Prints figures, asserts nothing. On one embedded server (local Spark):

1. seed a ``--seed-rows`` table, then send ``--batches`` small WriteBatches (each ``--batch-rows``
   upserts of existing keys, a few updates and deletes: one delete file and one snapshot each);
2. measure the median small-batch latency over ``--probe`` further batches and a full scan
   (count + sum over every column kind) — before maintenance;
3. run ``maintain`` (retention 0: every snapshot older than now is expired) and time each step;
4. measure the same batch latency and scan again — after.

Usage: .venv/bin/python benchmarks/maintenance.py [--batches 200] [--seed-rows 100000]
       [--batch-rows 50] [--probe 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
from write_batch import HEADER, PARAMS, TABLE, create, rows

from spark_destination.dialects.quoting import qualified
from spark_destination.dialects.registry import DEFAULT
from spark_destination.dialects.render import render
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.planner.ir import TableHealthOp, TableRef
from spark_destination.planner.maintenance import MaintenancePolicy
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.runtime.execute.executor import Executor
from spark_destination.runtime.execute.maintenance import table_health
from spark_destination.server.app import create_server
from spark_destination.server.mapping import table_to_proto
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc

UNMOD = PARAMS.unmodified_string


def _file(folder: Path, name: str, data: list[list[str]]) -> tuple[str, bytes]:
    key = new_key()
    path = folder / name
    write_batch_file(path, HEADER, data, params=PARAMS, key=key)
    return str(path), key


def _batch(stub: pb_grpc.DestinationConnectorStub, folder: Path, n: int, args: argparse.Namespace,
           rng: random.Random) -> float:  # fmt: skip
    first = rng.randrange(0, args.seed_rows - args.batch_rows)
    upsert = _file(folder, f"u{n}.csv.zstd.aes", rows(range(first, first + args.batch_rows), rng))
    key = rng.randrange(0, args.seed_rows)
    update_row = [str(key), "7", *([UNMOD] * (len(HEADER) - 2))]
    update = _file(folder, f"p{n}.csv.zstd.aes", [update_row])
    gone = rng.randrange(0, args.seed_rows)
    delete = _file(folder, f"d{n}.csv.zstd.aes", [[str(gone), *([UNMOD] * (len(HEADER) - 1))]])
    files = [upsert, update, delete]
    request = pb.WriteBatchRequest(
        schema_name="bench",
        table=table_to_proto(TABLE),
        keys=dict(files),
        replace_files=[upsert[0]],
        update_files=[update[0]],
        delete_files=[delete[0]],
        file_params=pb.FileParams(
            compression=pb.ZSTD, encryption=pb.AES, null_string=PARAMS.null_string,
            unmodified_string=UNMOD,
        ),
    )  # fmt: skip
    started = time.perf_counter()
    response = stub.WriteBatch(request)
    assert response.WhichOneof("response") == "success", response
    for path, _ in files:
        Path(path).unlink()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--seed-rows", type=int, default=100_000)
    parser.add_argument("--batch-rows", type=int, default=50)
    parser.add_argument("--probe", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(3)
    with tempfile.TemporaryDirectory(prefix="sd-bench-maint-") as tmp:
        folder = Path(tmp)
        configuration = {"warehouse": str(folder / "warehouse")}
        engine = Engine(SessionProvider.embedded(), defaults=configuration)
        engine.sessions.root(engine.config({}))
        server, port = create_server(engine, port=0)
        server.start()
        stub = pb_grpc.DestinationConnectorStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
        create(stub, "bench", TABLE.name)
        seed = _file(folder, "seed.csv.zstd.aes", rows(range(args.seed_rows), rng))
        seed_request = pb.WriteBatchRequest(
            schema_name="bench", table=table_to_proto(TABLE), keys=dict([seed]),
            replace_files=[seed[0]],
            file_params=pb.FileParams(compression=pb.ZSTD, encryption=pb.AES,
                                      null_string=PARAMS.null_string, unmodified_string=UNMOD),
        )  # fmt: skip
        assert stub.WriteBatch(seed_request).WhichOneof("response") == "success"

        started = time.perf_counter()
        for n in range(args.batches):
            _batch(stub, folder, n, args, rng)
        loading = time.perf_counter() - started
        print(f"{args.batches} small batches into a {args.seed_rows:,}-row table: {loading:.1f} s")

        config = engine.config({})
        ref = TableRef(catalog=config.catalog, schema="bench", name=TABLE.name)
        session = engine.sessions.for_request(config)
        scan_sql = "SELECT COUNT(*), SUM(qty), SUM(price), COUNT(DISTINCT city) FROM " + qualified(
            ref.catalog, ref.schema, ref.name
        )

        (health_statement,) = render(TableHealthOp(table=ref), DEFAULT)

        def probe(label: str) -> tuple[float, float]:
            health = table_health(Executor(session), health_statement)
            latency = statistics.median(
                _batch(stub, folder, 10_000 + n + (1000 if label == "after" else 0), args, rng)
                for n in range(args.probe)
            )
            scans = []
            for _ in range(3):
                started = time.perf_counter()
                session.sql(scan_sql).collect()
                scans.append(time.perf_counter() - started)
            scan = min(scans)
            print(f"{label}: {health.text()}; small batch median {latency:.2f} s; "
                  f"full scan (best of 3) {scan:.2f} s")  # fmt: skip
            return latency, scan

        before = probe("before")
        started = time.perf_counter()
        report = engine.maintain(
            {}, "bench", TABLE.name, policy=MaintenancePolicy(retention=timedelta(0)),
            now=datetime.now(UTC),
        )  # fmt: skip
        cost = time.perf_counter() - started
        print(f"maintenance: {cost:.1f} s")
        print(report.text())
        after = probe("after")
        print()
        print("| what | before | after | after/before |")
        print("|---|---|---|---|")
        print(
            f"| small batch ({args.batch_rows} upserts + 1 update + 1 delete), median | "
            f"{before[0]:.2f} s | {after[0]:.2f} s | {after[0] / before[0]:.2f} |"
        )
        print(f"| full scan, best of 3 | {before[1]:.2f} s | {after[1]:.2f} s | "
              f"{after[1] / before[1]:.2f} |")  # fmt: skip
        print(f"| maintenance itself | {cost:.1f} s | | |")
        server.stop(grace=None)


if __name__ == "__main__":
    main()
