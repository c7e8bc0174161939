"""Benchmark: a 1M-version WriteHistoryBatch against a 1M-row history table (prints figures).

The table is loaded with one active version per key (a history upsert batch), then a second
batch brings a new version for every key: an earliest-start file plus an update file whose rows
leave half of the columns unmodified, so the MERGE closes 1M versions and fills 1M new ones.

Usage: .venv/bin/python benchmarks/history_batch.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import grpc

from spark_destination.core.model import Column, DataType, DecimalParams, Table
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.server.app import create_server
from spark_destination.server.mapping import table_to_proto
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc

NULL, UNMOD = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP", "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
TMAX = "9999-12-31T23:59:59.999Z"
TABLE = Table(
    name="history_bench",
    columns=(
        Column(name="id", type=DataType.LONG, primary_key=True),
        Column(name="qty", type=DataType.INT),
        Column(name="price", type=DataType.DECIMAL, decimal=DecimalParams(precision=18, scale=4)),
        Column(name="name", type=DataType.STRING),
        Column(name="city", type=DataType.STRING),
        Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_start", type=DataType.UTC_DATETIME, primary_key=True),
        Column(name="_fivetran_end", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_active", type=DataType.BOOLEAN),
    ),
)
HEADER = [c.name for c in TABLE.columns]


def write(folder: Path, name: str, header: list[str], rows: list[list[str]]) -> tuple[str, bytes]:
    from spark_destination.core.model import FileParams

    key = new_key()
    path = folder / name
    params = FileParams(null_string=NULL, unmodified_string=UNMOD)
    write_batch_file(path, header, rows, params=params, key=key)
    return str(path), key


def call(stub: pb_grpc.DestinationConnectorStub, **files: tuple[str, bytes]) -> float:
    request = pb.WriteHistoryBatchRequest(
        schema_name="bench",
        table=table_to_proto(TABLE),
        keys=dict(files.values()),
        file_params=pb.FileParams(
            compression=pb.ZSTD, encryption=pb.AES, null_string=NULL, unmodified_string=UNMOD
        ),
    )
    for kind, (path, _key) in files.items():
        getattr(request, f"{kind}_files").append(path)
    started = time.perf_counter()
    response = stub.WriteHistoryBatch(request)
    elapsed = time.perf_counter() - started
    assert response.WhichOneof("response") == "success", response
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = random.Random(3)
    n = args.rows
    with tempfile.TemporaryDirectory(prefix="sd-history-bench-") as tmp:
        folder = Path(tmp)
        engine = Engine(SessionProvider.embedded(), defaults={"warehouse": str(folder / "wh")})
        server, port = create_server(engine, port=0)
        server.start()
        stub = pb_grpc.DestinationConnectorStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
        response = stub.CreateTable(
            pb.CreateTableRequest(schema_name="bench", table=table_to_proto(TABLE))
        )
        assert response.WhichOneof("response") == "success", response

        start1, start2 = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"
        load = [
            [
                str(i),
                str(rng.randint(0, 999)),
                f"{rng.random() * 100:.4f}",
                f"name {i}",
                f"city {i % 97}",
                "2024-01-01T01:00:00.000Z",
                start1,
                TMAX,
                "true",
            ]
            for i in range(n)
        ]
        initial = write(folder, "load.csv.zstd.aes", HEADER, load)
        earliest0 = write(
            folder,
            "earliest0.csv.zstd.aes",
            ["id", "_fivetran_start"],
            [[str(i), start1] for i in range(n)],
        )
        seconds = call(stub, earliest_start=earliest0, replace=initial)
        print(f"load: {n:,} versions into an empty history table: {seconds:.1f} s")

        updates = [
            [
                str(i),
                str(rng.randint(0, 999)),
                UNMOD,
                f"renamed {i}",
                UNMOD,
                "2024-02-01T01:00:00.000Z",
                start2,
                TMAX,
                "true",
            ]
            for i in range(n)
        ]
        update = write(folder, "update.csv.zstd.aes", HEADER, updates)
        earliest = write(
            folder,
            "earliest.csv.zstd.aes",
            ["id", "_fivetran_start"],
            [[str(i), start2] for i in range(n)],
        )
        seconds = call(stub, earliest_start=earliest, update=update)
        print(
            f"history batch: {n:,} new versions (half the columns unmodified) against a "
            f"{n:,}-row history table: {seconds:.1f} s ({n / seconds:,.0f} versions/s)"
        )
        server.stop(grace=None)


if __name__ == "__main__":
    main()
