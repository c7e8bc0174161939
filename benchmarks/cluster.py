"""Benchmark: the same requests on local[*] and on a loopback Spark standalone cluster.

Prints figures, asserts nothing. For each master the destination runs as a server subprocess
(as in production; one process can hold one SparkContext) and a gRPC client sends:

1. a ``--rows`` upsert WriteBatch (ZSTD + AES file) into an empty table;
2. the median of ``--small-runs`` 100-row WriteBatches into that table;
3. ``--tables`` tables written at once (one thread each) vs one after the other, each batch
   ``--parallel-rows`` rows (FAIR scheduler pools, one per request thread).

On this 2-core machine master, worker, executor and driver share the cores, so the cluster is
expected to be slower; the point is that it works and what it costs.

Usage: .venv/bin/python benchmarks/cluster.py [--rows 1000000] [--small-runs 5] [--tables 4]
       [--parallel-rows 50000] [--worker-cores 2] [--worker-memory 2g] [--masters local,cluster]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from write_batch import create, request, rows, write_file

from spark_destination.local_services.cluster import standalone_cluster
from spark_destination.local_services.server_process import LOOPBACK, start_server
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc


def _write(stub: pb_grpc.DestinationConnectorStub, table: str, file: tuple[str, bytes]) -> float:
    started = time.perf_counter()
    response = stub.WriteBatch(request("bench", table, file))
    assert response.WhichOneof("response") == "success", response
    return time.perf_counter() - started


def measure(name: str, master: str, folder: Path, args: argparse.Namespace) -> dict[str, float]:
    rng = random.Random(1)
    warehouse = folder / f"warehouse-{name}"
    started = time.perf_counter()
    # Started (with Spark) when it answers and has logged that Spark is ready.
    server = start_server(
        log_file=folder / f"server-{name}.log",
        flags=["--master", master, "--warehouse", str(warehouse)],
        env={"SPARK_LOCAL_IP": LOOPBACK},
        prewarm=True,
    )
    stub = server.stub
    figures = {"start": time.perf_counter() - started}
    try:
        create(stub, "bench", "warmup")
        warm = write_file(folder, f"warm-{name}.csv.zstd.aes", rows(range(1000), rng))
        _write(stub, "warmup", warm)

        create(stub, "bench", "big")
        big = write_file(folder, f"big-{name}.csv.zstd.aes", rows(range(args.rows), rng))
        figures["big"] = _write(stub, "big", big)

        small = []
        for run in range(args.small_runs):
            first = rng.randrange(0, max(1, args.rows - 100))
            file = write_file(
                folder, f"small-{name}-{run}.csv.zstd.aes", rows(range(first, first + 100), rng)
            )
            small.append(_write(stub, "big", file))
        figures["small"] = statistics.median(small)

        files = []
        for n in range(args.tables):
            create(stub, "bench", f"seq_{n}")
            create(stub, "bench", f"par_{n}")
            files.append(
                write_file(
                    folder, f"par-{name}-{n}.csv.zstd.aes", rows(range(args.parallel_rows), rng)
                )
            )
        started = time.perf_counter()
        for n, file in enumerate(files):
            _write(stub, f"seq_{n}", file)
        figures["sequential"] = time.perf_counter() - started
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.tables) as pool:
            list(pool.map(lambda item: _write(stub, f"par_{item[0]}", item[1]), enumerate(files)))
        figures["parallel"] = time.perf_counter() - started
    finally:
        server.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--small-runs", type=int, default=5)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--parallel-rows", type=int, default=50_000)
    parser.add_argument("--worker-cores", type=int, default=2)
    parser.add_argument("--worker-memory", default="2g")
    parser.add_argument("--masters", default="local,cluster")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="sd-bench-cluster-") as tmp:
        folder = Path(tmp)
        for name in args.masters.split(","):
            if name == "local":
                results[name] = measure(name, "local[*]", folder, args)
            else:
                with standalone_cluster(
                    folder / "cluster",
                    worker_cores=args.worker_cores,
                    worker_memory=args.worker_memory,
                ) as cluster:
                    results[name] = measure(name, cluster.master_url, folder, args)
            print(f"{name}: " + ", ".join(f"{k} {v:.1f} s" for k, v in results[name].items()))
    labels = {
        "start": "server start with --prewarm (JVM, executors)",
        "big": f"{args.rows:,}-row upsert WriteBatch into an empty table",
        "small": f"100-row WriteBatch into that table, median of {args.small_runs}",
        "sequential": f"{args.tables} tables x {args.parallel_rows:,} rows, one after the other",
        "parallel": f"{args.tables} tables x {args.parallel_rows:,} rows, at once",
    }
    print()
    names = list(results)
    print("| what | " + " | ".join(names) + (" | ratio |" if len(names) == 2 else " |"))
    print("|---|" + "---|" * (len(names) + (1 if len(names) == 2 else 0)))
    for key, label in labels.items():
        cells = [f"{results[n][key]:.1f} s" for n in names]
        ratio = []
        if len(names) == 2:
            ratio = [f"{results[names[1]][key] / results[names[0]][key]:.2f}x"]
        print(f"| {label} | " + " | ".join(cells + ratio) + " |")


if __name__ == "__main__":
    main()
