"""Benchmark: prints figures, asserts nothing.

1. End to end through gRPC: a 1M-row upsert WriteBatch (ZSTD + AES file) into an empty table.
2. The bare MERGE of the same batch from an already-staged view (no decode, stage or check).
3. Median latency of a small (100-row) WriteBatch on a warm server, into the 1M-row table.

Usage: .venv/bin/python benchmarks/write_batch.py [--rows 1000000] [--small-runs 15]
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import grpc

from spark_destination.core.config import parse_config
from spark_destination.core.model import Column, DataType, DecimalParams, FileParams, Table
from spark_destination.core.requests import BatchFiles, WriteBatchRequest
from spark_destination.dialects.render import render_plan
from spark_destination.dialects.rendered import Form
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.planner.ir import MergeBatchOp, StageBatchOp
from spark_destination.planner.write import plan_write_batch
from spark_destination.replay.batch_writer import new_key, write_batch_file
from spark_destination.runtime.batch.staging import Stager
from spark_destination.server.app import create_server
from spark_destination.server.mapping import table_to_proto
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc

NULL, UNMOD = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP", "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
PARAMS = FileParams(null_string=NULL, unmodified_string=UNMOD)
TABLE = Table(
    name="bench",
    columns=(
        Column(name="id", type=DataType.LONG, primary_key=True),
        Column(name="qty", type=DataType.INT),
        Column(name="price", type=DataType.DECIMAL, decimal=DecimalParams(precision=18, scale=4)),
        Column(name="score", type=DataType.DOUBLE),
        Column(name="name", type=DataType.STRING),
        Column(name="city", type=DataType.STRING),
        Column(name="day", type=DataType.NAIVE_DATE),
        Column(name="active", type=DataType.BOOLEAN),
        Column(name="_fivetran_synced", type=DataType.UTC_DATETIME),
        Column(name="_fivetran_deleted", type=DataType.BOOLEAN),
    ),
)
HEADER = [c.name for c in TABLE.columns]


def rows(ids: range, rng: random.Random) -> list[list[str]]:
    cities = ["Berlin", "Lisbon", "São Paulo", "New York, NY", 'The "Hague"']
    return [
        [
            str(i),
            str(rng.randint(0, 1000)),
            f"{rng.random() * 1000:.4f}",
            repr(rng.random()),
            f"customer number {i}",
            cities[i % 5],
            f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
            "true" if i % 2 else "false",
            "2024-06-01T12:00:00.000Z",
            "false",
        ]
        for i in ids
    ]


def write_file(folder: Path, name: str, data: list[list[str]]) -> tuple[str, bytes]:
    key = new_key()
    path = folder / name
    write_batch_file(path, HEADER, data, params=PARAMS, key=key)
    return str(path), key


def request(schema: str, table: str, file: tuple[str, bytes]) -> pb.WriteBatchRequest:
    proto_table = table_to_proto(Table(name=table, columns=TABLE.columns))
    return pb.WriteBatchRequest(
        schema_name=schema,
        table=proto_table,
        keys={file[0]: file[1]},
        replace_files=[file[0]],
        file_params=pb.FileParams(
            compression=pb.ZSTD, encryption=pb.AES, null_string=NULL, unmodified_string=UNMOD
        ),
    )


def create(stub: pb_grpc.DestinationConnectorStub, schema: str, table: str) -> None:
    proto_table = table_to_proto(Table(name=table, columns=TABLE.columns))
    response = stub.CreateTable(pb.CreateTableRequest(schema_name=schema, table=proto_table))
    assert response.WhichOneof("response") == "success", response


class _StepTimes(logging.Handler):
    """Prints the engine's per-step timings (stage, check, merge) of each request."""

    def emit(self, record: logging.LogRecord) -> None:
        if self.enabled:
            print(f"   steps: {record.getMessage()}")

    enabled = False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--small-runs", type=int, default=15)
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="sd-bench-") as tmp:
        folder = Path(tmp)
        configuration = {"warehouse": str(folder / "warehouse")}
        engine = Engine(SessionProvider.embedded(), defaults=configuration)
        started = time.perf_counter()
        engine.sessions.root(engine.config({}))
        print(f"spark start-up: {time.perf_counter() - started:.1f} s")
        server, port = create_server(engine, port=0)
        server.start()
        stub = pb_grpc.DestinationConnectorStub(grpc.insecure_channel(f"127.0.0.1:{port}"))

        started = time.perf_counter()
        big = write_file(folder, "big.csv.zstd.aes", rows(range(args.rows), rng))
        size = Path(big[0]).stat().st_size / 2**20
        print(
            f"wrote {args.rows:,}-row batch file ({size:.1f} MiB) in "
            f"{time.perf_counter() - started:.1f} s"
        )

        # Warm the JVM (first MERGE and CSV read pay JIT start-up), as a running server would be.
        create(stub, "bench", "warmup")
        warm = write_file(folder, "warm.csv.zstd.aes", rows(range(1000), rng))
        stub.WriteBatch(request("bench", "warmup", warm))

        create(stub, "bench", "big")
        steps = _StepTimes()
        engine_log = logging.getLogger("spark_destination.engine.engine")
        engine_log.addHandler(steps)
        engine_log.setLevel(logging.INFO)
        steps.enabled = True
        started = time.perf_counter()
        response = stub.WriteBatch(request("bench", "big", big))
        elapsed = time.perf_counter() - started
        steps.enabled = bool(os.environ.get("SD_BENCH_ALL_STEPS"))
        assert response.WhichOneof("response") == "success", response
        print(
            f"1. end-to-end WriteBatch, {args.rows:,} upserts into an empty table: {elapsed:.1f} s"
            f" ({args.rows / elapsed:,.0f} rows/s)"
        )

        create(stub, "bench", "bare")
        config = parse_config(configuration)
        session = engine.sessions.for_request(config)
        plan = plan_write_batch(
            WriteBatchRequest(
                schema="bench",
                table=Table(name="bare", columns=TABLE.columns),
                files=BatchFiles(replace=(big[0],), params=PARAMS, keys={big[0]: big[1]}),
            ),
            TABLE,
            catalog=config.catalog,
            target=SPARK_ICEBERG,
        )
        statements = render_plan(plan, SPARK_ICEBERG)
        stage = next(s.op for s in statements if isinstance(s.op, StageBatchOp))
        merge_statement = next(s for s in statements if isinstance(s.op, MergeBatchOp))
        # The batch has no repeated key, so the runtime runs the MERGE without the fold.
        merge = merge_statement.form(Form.UNIQUE_KEYS)
        assert merge is not None
        stager = Stager(session)
        try:
            assert isinstance(stage, StageBatchOp)
            stager.stage(stage, keys={big[0]: big[1]}, params=PARAMS)
            session.table(stage.view).cache().count()
            started = time.perf_counter()
            session.sql(merge).collect()
            bare = time.perf_counter() - started
        finally:
            stager.cleanup()
        print(
            f"2. bare merge statement for the same {args.rows:,} rows from an already-staged "
            f"(cached) view: {bare:.1f} s"
        )

        small_times = []
        for run in range(args.small_runs):
            start_id = rng.randrange(0, args.rows - 100)
            small = write_file(
                folder, f"small_{run}.csv.zstd.aes", rows(range(start_id, start_id + 100), rng)
            )
            started = time.perf_counter()
            response = stub.WriteBatch(request("bench", "big", small))
            small_times.append(time.perf_counter() - started)
            assert response.WhichOneof("response") == "success", response
        print(
            f"3. 100-row WriteBatch into the {args.rows:,}-row table, warm server, "
            f"{args.small_runs} runs: median {statistics.median(small_times):.2f} s, "
            f"min {min(small_times):.2f} s, max {max(small_times):.2f} s"
        )
        server.stop(grace=None)


if __name__ == "__main__":
    main()
