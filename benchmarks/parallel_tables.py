"""Benchmark: 8 WriteBatch requests on 8 tables, one after the other vs all at once, through
gRPC on one server (one local Spark). Prints figures, asserts nothing.

Usage: .venv/bin/python benchmarks/parallel_tables.py [--rows 50000] [--tables 8]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

from spark_destination.core.config import parse_config
from spark_destination.core.model import Column, DataType, FileParams, Table
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.server.app import create_server
from spark_destination.server.mapping import table_to_proto
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc

NULL, UNMOD = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP", "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
PARAMS = FileParams(null_string=NULL, unmodified_string=UNMOD)


def table(name: str) -> Table:
    return Table(
        name=name,
        columns=(
            Column(name="id", type=DataType.LONG, primary_key=True),
            Column(name="qty", type=DataType.INT),
            Column(name="name", type=DataType.STRING),
            Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
        ),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--tables", type=int, default=8)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    work = Path(tempfile.mkdtemp(prefix="bench-parallel-"))
    configuration = {"warehouse": str(work / "warehouse")}
    engine = Engine(SessionProvider.embedded(), defaults=configuration)
    engine.sessions.root(parse_config(configuration))
    server, port = create_server(engine, port=0, workers=max(8, args.tables))
    server.start()
    stub = pb_grpc.DestinationConnectorStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
    file_params = pb.FileParams(
        compression=PARAMS.compression.value,
        encryption=PARAMS.encryption.value,
        null_string=NULL,
        unmodified_string=UNMOD,
    )
    header = ["id", "qty", "name", "_fivetran_synced"]
    files: dict[str, tuple[str, bytes]] = {}
    for i in range(args.tables):
        path, key = str(work / f"batch_{i}.csv.zstd.aes"), new_key()
        rows = (
            [str(n), str(n % 97), f"name {n}", "2024-01-01T00:00:00Z"] for n in range(args.rows)
        )
        write_batch_file(Path(path), header, rows, params=PARAMS, key=key)
        files[f"t{i}"] = (path, key)

    def write(schema: str, name: str) -> float:
        started = time.perf_counter()
        path, key = files[name]
        response = stub.WriteBatch(
            pb.WriteBatchRequest(
                schema_name=schema,
                table=table_to_proto(table(name)),
                keys={path: key},
                replace_files=[path],
                file_params=file_params,
            )
        )
        assert response.WhichOneof("response") == "success", response
        return time.perf_counter() - started

    def create_all(schema: str) -> None:
        for name in files:
            request = pb.CreateTableRequest(schema_name=schema, table=table_to_proto(table(name)))
            assert stub.CreateTable(request).WhichOneof("response") == "success"

    # Warm-up: JIT and catalog on a throwaway table.
    create_all("warm")
    write("warm", "t0")

    create_all("sequential")
    started = time.perf_counter()
    each = [write("sequential", name) for name in files]
    sequential = time.perf_counter() - started

    create_all("parallel")
    started = time.perf_counter()
    with ThreadPoolExecutor(len(files)) as pool:
        each_parallel = list(pool.map(lambda n: write("parallel", n), files))
    parallel = time.perf_counter() - started

    print(f"{args.tables} tables x {args.rows} rows, one WriteBatch each (local Spark, gRPC)")
    print(
        f"  one after the other: {sequential:.2f} s (per request {min(each):.2f}-{max(each):.2f} s)"
    )
    print(
        f"  all at once:         {parallel:.2f} s (per request "
        f"{min(each_parallel):.2f}-{max(each_parallel):.2f} s)"
    )
    print(f"  speed-up: {sequential / parallel:.2f}x")
    server.stop(grace=None)


if __name__ == "__main__":
    main()
